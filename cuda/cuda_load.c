/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cuda_load.c: loading libcuda: dlopen, versioned symbols, devices. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

#include <hmr/fi_mr.h>

#include "base/config.h"
#include "base/dl.h"
#include "base/log.h"
#include "cuda/cuda_api.h"

HMR_CONFIG_VAR(HMR_CUDA_LIBRARY, NULL,
               "the CUDA driver library to load instead of libcuda.so.1");

struct hmr_cuda hmr__cuda;
static void *handle;

/* One row per entry of HMR_CUDA_CALLS: its base name (what
 * cuGetProcAddress takes), the versioned symbol a plain dlsym needs
 * (cuMemcpyHtoD without _v2 is the CUDA 2.0 ABI), where it goes. */
struct cuda_sym {
	const char *name;
	const char *dlsym_name;
	size_t offset; /* In struct hmr_cuda. */
	bool optional;
};

#define REQ false
#define OPT true
#define CALL_ROW(n, sym, ver, req, params)                                     \
	{#n, #sym, offsetof(struct hmr_cuda, n), req},
static const struct cuda_sym syms[] = {HMR_CUDA_CALLS(CALL_ROW)};
#undef CALL_ROW

/* "CUDA_ERROR_INVALID_VALUE (1)" for log lines. */
static const char *error_name(hmr_CUresult r, char *buf, size_t len)
{
	const char *name = NULL;

	if (hmr__cuda.cuGetErrorName &&
	    hmr__cuda.cuGetErrorName(r, &name) != HMR_CUDA_SUCCESS)
		name = NULL;
	snprintf(buf, len, "%s (%d)", name ? name : "CUDA error", r);
	return buf;
}

static int to_errno(hmr_CUresult r)
{
	switch (r) {
	case HMR_CUDA_SUCCESS:
		return 0;
	case HMR_CUDA_ERROR_INVALID_VALUE:
		return -FI_EINVAL;
	case HMR_CUDA_ERROR_OUT_OF_MEMORY:
		return -FI_ENOMEM;
	case HMR_CUDA_ERROR_NOT_SUPPORTED:
		return -FI_EOPNOTSUPP;
	case HMR_CUDA_ERROR_NO_DEVICE:
	case HMR_CUDA_ERROR_INVALID_DEVICE:
		return -FI_ENODEV;
	default:
		return -FI_EIO;
	}
}

int hmr__cuda_check(const char *call, hmr_CUresult r)
{
	char err[64];

	if (r == HMR_CUDA_SUCCESS)
		return 0;
	hmr_warn("%s: %s", call, error_name(r, err, sizeof(err)));
	return to_errno(r);
}

/* cuGetProcAddress_v2 (driver 12.0+), else v1 (11.3+), else dlsym of the
 * versioned name.  An unsupported symbol comes back as CUDA_SUCCESS with a
 * NULL pointer: both are checked. */
static void *resolve(const struct cuda_sym *s, int version)
{
	hmr_CUdriverProcAddressQueryResult status = 0;
	void *pfn = NULL;

	if (hmr__cuda.cuGetProcAddress_v2 &&
	    hmr__cuda.cuGetProcAddress_v2(s->name, &pfn, version,
	                                  HMR_CU_GET_PROC_ADDRESS_DEFAULT,
	                                  &status) == HMR_CUDA_SUCCESS &&
	    pfn)
		return pfn;
	pfn = NULL;
	if (hmr__cuda.cuGetProcAddress_v1 &&
	    hmr__cuda.cuGetProcAddress_v1(s->name, &pfn, version,
	                                  HMR_CU_GET_PROC_ADDRESS_DEFAULT) ==
	            HMR_CUDA_SUCCESS &&
	    pfn)
		return pfn;
	if (hmr__cuda.cuGetProcAddress_v2 || hmr__cuda.cuGetProcAddress_v1)
		return NULL; /* The driver said no; dlsym would not know. */
	return dlsym(handle, s->dlsym_name);
}

static bool attribute(hmr_CUdevice dev, hmr_CUdevice_attribute a)
{
	int v = 0;

	return hmr__cuda.cuDeviceGetAttribute(&v, a, dev) == HMR_CUDA_SUCCESS &&
	       v;
}

static int probe_devices(char *why, size_t why_len)
{
	struct hmr_cuda *c = &hmr__cuda;
	hmr_CUdevice dev;
	char err[64];
	int i, r;

	r = c->cuDeviceGetCount(&c->device_count);
	if (r != HMR_CUDA_SUCCESS || c->device_count <= 0) {
		snprintf(why, why_len, "no CUDA device (%s)",
		         error_name(r, err, sizeof(err)));
		return -FI_ENOSYS;
	}
	if (c->device_count > HMR_MAX_DEVICES) {
		hmr_warn("%d CUDA devices: hmr uses the first %d",
		         c->device_count, HMR_MAX_DEVICES);
		c->device_count = HMR_MAX_DEVICES;
	}
	for (i = 0; i < c->device_count; i++) {
		r = c->cuDeviceGet(&dev, i);
		if (r == HMR_CUDA_SUCCESS)
			r = c->cuDevicePrimaryCtxRetain(&c->ctx[i], dev);
		if (r != HMR_CUDA_SUCCESS) {
			snprintf(why, why_len, "device %d: %s", i,
			         error_name(r, err, sizeof(err)));
			return -FI_EIO;
		}
		/* Asked per device: support is never assumed from device 0. */
		c->dmabuf[i] =
		        c->cuMemGetHandleForAddressRange &&
		        attribute(dev,
		                  HMR_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED);
		c->host_dmabuf[i] =
		        c->dmabuf[i] && c->driver_version >= 13000 &&
		        attribute(
		                dev,
		                HMR_CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED);
		hmr_info("cuda device %d: dma-buf %s, host dma-buf %s", i,
		         c->dmabuf[i] ? "yes" : "no",
		         c->host_dmabuf[i] ? "yes" : "no");
	}
	return 0;
}

static int init_driver(char *why, size_t why_len)
{
#define BOOT_ROW(n, sym, ver, req, params) {#sym, (void **)&hmr__cuda.n, req},
	const struct hmr_dl_sym boot[] = {HMR_CUDA_BOOT(BOOT_ROW)};
#undef BOOT_ROW
	char err[64];
	int r;

	r = hmr__dl_resolve(handle, boot, sizeof(boot) / sizeof(boot[0]), why,
	                    why_len);
	if (r)
		return r;
	r = hmr__cuda.cuInit(0);
	if (r == HMR_CUDA_ERROR_STUB_LIBRARY || r == HMR_CUDA_ERROR_NO_DEVICE) {
		snprintf(why, why_len, "%s",
		         r == HMR_CUDA_ERROR_STUB_LIBRARY
		                 ? "libcuda is the toolkit's stub library "
		                   "(no driver installed)"
		                 : "no CUDA device");
		return -FI_ENOSYS;
	}
	if (r == HMR_CUDA_SUCCESS)
		r = hmr__cuda.cuDriverGetVersion(&hmr__cuda.driver_version);
	if (r != HMR_CUDA_SUCCESS) {
		snprintf(why, why_len, "cuInit: %s",
		         error_name(r, err, sizeof(err)));
		return -FI_EIO;
	}
	return 0;
}

int hmr__cuda_load(char *why, size_t why_len)
{
	static const char *const names[] = {"libcuda.so.1", "libcuda.so"};
	int ret, version;
	size_t i;

	ret = hmr__dl_open("HMR_CUDA_LIBRARY", names, 2, &handle, why, why_len);
	if (ret)
		return ret;
	ret = init_driver(why, why_len);
	if (ret)
		goto err_close;
	version = hmr__cuda.driver_version < HMR_CUDA_API_VERSION
	                  ? hmr__cuda.driver_version
	                  : HMR_CUDA_API_VERSION;
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *p = resolve(&syms[i], version);

		*(void **)((char *)&hmr__cuda + syms[i].offset) = p;
		if (!p && !syms[i].optional) {
			snprintf(why, why_len, "driver %d lacks %s",
			         hmr__cuda.driver_version, syms[i].name);
			ret = -FI_ENOSYS;
			goto err_close;
		}
	}
	ret = probe_devices(why, why_len);
	if (ret)
		goto err_release;
	return 0;

err_release:
	hmr__cuda_unload();
	return ret;
err_close:
	dlclose(handle);
	handle = NULL;
	return ret;
}

void hmr__cuda_library(char *buf, size_t len)
{
	hmr__dl_path(handle, buf, len);
}

void hmr__cuda_unload(void)
{
	int i;

	for (i = 0; i < HMR_MAX_DEVICES; i++) {
		if (hmr__cuda.ctx[i])
			hmr__cuda.cuDevicePrimaryCtxRelease(i);
		hmr__cuda.ctx[i] = NULL;
	}
	/* libcuda registers atexit handlers: never dlclose a started driver. */
	handle = NULL;
}

hmr_CUcontext hmr__cuda_push(int dev)
{
	hmr_CUcontext prev = NULL;

	if (hmr__cuda.cuCtxGetCurrent(&prev) != HMR_CUDA_SUCCESS)
		prev = NULL;
	if (prev != hmr__cuda.ctx[dev])
		hmr__cuda.cuCtxSetCurrent(hmr__cuda.ctx[dev]);
	return prev;
}

void hmr__cuda_pop(hmr_CUcontext previous)
{
	hmr_CUcontext now = NULL;

	if (hmr__cuda.cuCtxGetCurrent(&now) == HMR_CUDA_SUCCESS &&
	    now != previous)
		hmr__cuda.cuCtxSetCurrent(previous);
}
