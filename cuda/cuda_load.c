/* cuda_load.c: loading libcuda: dlopen, versioned symbols, devices. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

#include <hmr/fi_mr.h>

#include "cuda/cuda_api.h"
#include "base/dl.h"
#include "base/log.h"

struct hmr_cuda hmr__cuda;
hmr_CUcontext hmr__cuda_ctx[HMR_CUDA_MAX_DEVICES];
bool hmr__cuda_dmabuf[HMR_CUDA_MAX_DEVICES];
bool hmr__cuda_host_dmabuf[HMR_CUDA_MAX_DEVICES];
static void *handle;

/*
 * Every entry point by its base name, the ABI version hmr's type follows,
 * and the versioned symbol a plain dlsym needs (cuMemAlloc without _v2 is
 * the CUDA 2.0 ABI).  cuGetProcAddress picks the version itself.
 */
struct cuda_sym {
	const char *name;
	const char *dlsym_name;
	size_t offset; /* In struct hmr_cuda. */
	bool optional;
};

#define SYM(n, dl, opt)                                                        \
	{                                                                      \
#n, dl, offsetof(struct hmr_cuda, n), opt                      \
	}
static const struct cuda_sym syms[] = {
        SYM(cuGetErrorName, "cuGetErrorName", false),
        SYM(cuDeviceGetCount, "cuDeviceGetCount", false),
        SYM(cuDeviceGet, "cuDeviceGet", false),
        SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute", false),
        SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", false),
        SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", false),
        SYM(cuCtxGetCurrent, "cuCtxGetCurrent", false),
        SYM(cuCtxSetCurrent, "cuCtxSetCurrent", false),
        SYM(cuPointerGetAttributes, "cuPointerGetAttributes", false),
        SYM(cuMemGetAddressRange, "cuMemGetAddressRange_v2", false),
        SYM(cuMemcpyHtoD, "cuMemcpyHtoD_v2", false),
        SYM(cuMemcpyDtoH, "cuMemcpyDtoH_v2", false),
        SYM(cuMemHostRegister, "cuMemHostRegister_v2", false),
        SYM(cuMemHostUnregister, "cuMemHostUnregister", false),
        /* Driver 11.7 and later. */
        SYM(cuMemGetHandleForAddressRange, "cuMemGetHandleForAddressRange",
            true),
        SYM(cuIpcGetMemHandle, "cuIpcGetMemHandle", true),
        SYM(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2", true),
        SYM(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", true),
};
#undef SYM

const char *hmr__cuda_error(hmr_CUresult r, char *buf, size_t len)
{
	const char *name = NULL;

	if (hmr__cuda.cuGetErrorName &&
	    hmr__cuda.cuGetErrorName(r, &name) != HMR_CUDA_SUCCESS)
		name = NULL;
	snprintf(buf, len, "%s (%d)", name ? name : "CUDA error", r);
	return buf;
}

/* cuGetProcAddress_v2 (driver 12.0+), else v1 (11.3+), else dlsym of the
 * versioned name.  An unsupported symbol comes back as CUDA_SUCCESS with a
 * NULL pointer: both are checked. */
static void *resolve(const struct cuda_sym *s, int version,
                     hmr_cuGetProcAddress_v2_fn gpa2,
                     hmr_cuGetProcAddress_v1_fn gpa1)
{
	hmr_CUdriverProcAddressQueryResult status = 0;
	void *pfn = NULL;

	if (gpa2 &&
	    gpa2(s->name, &pfn, version, HMR_CU_GET_PROC_ADDRESS_DEFAULT,
	         &status) == HMR_CUDA_SUCCESS &&
	    pfn)
		return pfn;
	pfn = NULL;
	if (gpa1 &&
	    gpa1(s->name, &pfn, version, HMR_CU_GET_PROC_ADDRESS_DEFAULT) ==
	            HMR_CUDA_SUCCESS &&
	    pfn)
		return pfn;
	if (gpa1 || gpa2)
		return NULL; /* The driver said no; dlsym would not know more.
		              */
	return dlsym(handle, s->dlsym_name);
}

static int probe_devices(char *why, size_t why_len)
{
	hmr_CUdevice dev;
	char err[64];
	int i, v, r;

	r = hmr__cuda.cuDeviceGetCount(&hmr__cuda.device_count);
	if (r != HMR_CUDA_SUCCESS || hmr__cuda.device_count <= 0) {
		snprintf(why, why_len, "no CUDA device (%s)",
		         hmr__cuda_error(r, err, sizeof(err)));
		return -FI_ENOSYS;
	}
	if (hmr__cuda.device_count > HMR_CUDA_MAX_DEVICES)
		hmr__cuda.device_count = HMR_CUDA_MAX_DEVICES;
	for (i = 0; i < hmr__cuda.device_count; i++) {
		r = hmr__cuda.cuDeviceGet(&dev, i);
		if (r == HMR_CUDA_SUCCESS)
			r = hmr__cuda.cuDevicePrimaryCtxRetain(
			        &hmr__cuda_ctx[i], dev);
		if (r != HMR_CUDA_SUCCESS) {
			snprintf(why, why_len, "device %d: %s", i,
			         hmr__cuda_error(r, err, sizeof(err)));
			return -FI_EIO;
		}
		/* Asked per device: support is never assumed from device 0. */
		hmr__cuda_dmabuf[i] =
		        hmr__cuda.cuMemGetHandleForAddressRange &&
		        hmr__cuda.cuDeviceGetAttribute(
		                &v, HMR_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
		                dev) == HMR_CUDA_SUCCESS &&
		        v;
		hmr__cuda_host_dmabuf[i] =
		        hmr__cuda_dmabuf[i] &&
		        hmr__cuda.driver_version >= 13000 &&
		        hmr__cuda.cuDeviceGetAttribute(
		                &v,
		                HMR_CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED,
		                dev) == HMR_CUDA_SUCCESS &&
		        v;
		hmr_info("cuda device %d: dma-buf %s, host dma-buf %s", i,
		         hmr__cuda_dmabuf[i] ? "yes" : "no",
		         hmr__cuda_host_dmabuf[i] ? "yes" : "no");
	}
	return 0;
}

/* The entry points needed before cuGetProcAddress can be used. */
struct bootstrap {
	hmr_cuInit_fn init;
	hmr_cuDriverGetVersion_fn get_version;
	hmr_cuGetProcAddress_v2_fn gpa2; /* Driver 12.0 and later. */
	hmr_cuGetProcAddress_v1_fn gpa1; /* Driver 11.3 and later. */
};

static int init_driver(struct bootstrap *b, char *why, size_t why_len)
{
	const struct hmr_dl_sym boot[] = {
	        {"cuInit", (void **)&b->init, false},
	        {"cuDriverGetVersion", (void **)&b->get_version, false},
	        {"cuGetErrorName", (void **)&hmr__cuda.cuGetErrorName, true},
	        {"cuGetProcAddress_v2", (void **)&b->gpa2, true},
	        {"cuGetProcAddress", (void **)&b->gpa1, true},
	};
	char err[64];
	int r;

	r = hmr__dl_resolve(handle, boot, sizeof(boot) / sizeof(boot[0]), why,
	                    why_len);
	if (r)
		return r;
	r = b->init(0);
	if (r == HMR_CUDA_ERROR_STUB_LIBRARY || r == HMR_CUDA_ERROR_NO_DEVICE) {
		snprintf(why, why_len, "%s",
		         r == HMR_CUDA_ERROR_STUB_LIBRARY
		                 ? "libcuda is the toolkit's stub library "
		                   "(no driver installed)"
		                 : "no CUDA device");
		return -FI_ENOSYS;
	}
	if (r == HMR_CUDA_SUCCESS)
		r = b->get_version(&hmr__cuda.driver_version);
	if (r != HMR_CUDA_SUCCESS) {
		snprintf(why, why_len, "cuInit: %s",
		         hmr__cuda_error(r, err, sizeof(err)));
		return -FI_EIO;
	}
	return 0;
}

int hmr__cuda_load(char *why, size_t why_len)
{
	static const char *const names[] = {"libcuda.so.1", "libcuda.so"};
	struct bootstrap b;
	int ret, version;
	size_t i;

	ret = hmr__dl_open("HMR_CUDA_LIBRARY", names, 2, &handle, why, why_len);
	if (ret)
		return ret;
	ret = init_driver(&b, why, why_len);
	if (ret)
		goto err_close;
	version = hmr__cuda.driver_version < HMR_CUDA_API_VERSION
	                  ? hmr__cuda.driver_version
	                  : HMR_CUDA_API_VERSION;
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *p = resolve(&syms[i], version, b.gpa2, b.gpa1);

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

void hmr__cuda_unload(void)
{
	int i;

	for (i = 0; i < HMR_CUDA_MAX_DEVICES; i++) {
		if (hmr__cuda_ctx[i])
			hmr__cuda.cuDevicePrimaryCtxRelease(i);
		hmr__cuda_ctx[i] = NULL;
	}
	/* libcuda registers atexit handlers: never dlclose a started driver. */
	handle = NULL;
}

hmr_CUcontext hmr__cuda_push(int dev)
{
	hmr_CUcontext prev = NULL;

	if (hmr__cuda.cuCtxGetCurrent(&prev) != HMR_CUDA_SUCCESS)
		prev = NULL;
	if (prev != hmr__cuda_ctx[dev])
		hmr__cuda.cuCtxSetCurrent(hmr__cuda_ctx[dev]);
	return prev;
}

void hmr__cuda_pop(hmr_CUcontext previous)
{
	hmr_CUcontext now = NULL;

	if (hmr__cuda.cuCtxGetCurrent(&now) == HMR_CUDA_SUCCESS &&
	    now != previous)
		hmr__cuda.cuCtxSetCurrent(previous);
}
