/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ze_load.c: loading the Level Zero loader: every driver, device, context. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hmr/hmr.h>

#include "base/config.h"
#include "base/dl.h"
#include "base/log.h"
#include "ze/ze_api.h"

HMR_CONFIG_VAR(HMR_ZE_LIBRARY, NULL,
               "the Level Zero loader to load instead of libze_loader.so.1");

struct hmr_ze hmr__ze;
static void *handle;

const char *hmr__ze_result_name(hmr_ze_result_t r, char *buf, size_t len)
{
	const char *name = "unknown ze_result_t";

	switch (r) {
#define HMR_ZE_RESULT_CASE(n, value)                                           \
	case HMR_ZE_RESULT_##n:                                                \
		name = "ZE_RESULT_" #n;                                        \
		break;
		HMR_ZE_RESULTS(HMR_ZE_RESULT_CASE)
#undef HMR_ZE_RESULT_CASE
	}
	snprintf(buf, len, "%s (%#x)", name, (unsigned)r);
	return buf;
}

int hmr__ze_errno(hmr_ze_result_t r)
{
	switch (r) {
	case HMR_ZE_RESULT_SUCCESS:
		return 0;
	case HMR_ZE_RESULT_NOT_READY:
		return -FI_EAGAIN;
	case HMR_ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
	case HMR_ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
		return -FI_ENOMEM;
	case HMR_ZE_RESULT_ERROR_INVALID_ARGUMENT:
	case HMR_ZE_RESULT_ERROR_INVALID_NULL_HANDLE:
	case HMR_ZE_RESULT_ERROR_INVALID_NULL_POINTER:
	case HMR_ZE_RESULT_ERROR_INVALID_SIZE:
	case HMR_ZE_RESULT_ERROR_INVALID_ENUMERATION:
		return -FI_EINVAL;
	case HMR_ZE_RESULT_ERROR_UNSUPPORTED_VERSION:
	case HMR_ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
	case HMR_ZE_RESULT_ERROR_UNSUPPORTED_SIZE:
	case HMR_ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT:
	case HMR_ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION:
		return -FI_EOPNOTSUPP;
	case HMR_ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE:
		return -FI_EBUSY;
	case HMR_ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS:
		return -FI_EACCES;
	default: /* Device lost, uninitialized, unknown, ... */
		return -FI_EIO;
	}
}

int hmr__ze_check(const char *call, hmr_ze_result_t r)
{
	char name[64];

	if (r == HMR_ZE_RESULT_SUCCESS)
		return 0;
	hmr_warn("%s: %s", call, hmr__ze_result_name(r, name, sizeof(name)));
	return hmr__ze_errno(r);
}

bool hmr__ze_decode(uint64_t device, struct hmr_ze_driver **drv,
                    struct hmr_ze_device **dev)
{
	uint64_t d = device >> HMR_ZE_DEVICE_BITS;
	uint64_t i = device & (HMR_ZE_MAX_DEVICES - 1);

	if (d >= hmr__ze.driver_count || i >= hmr__ze.drivers[d].device_count) {
		hmr_warn("ze device %#llx (driver %llu, device %llu) names no "
		         "device: %u drivers",
		         (unsigned long long)device, (unsigned long long)d,
		         (unsigned long long)i, hmr__ze.driver_count);
		return false;
	}
	*drv = &hmr__ze.drivers[d];
	*dev = &drv[0]->devices[i];
	return true;
}

/* Intel's host import, when the driver offers both halves.  Asked with
 * the loader's handle (the loader translates it); called with the
 * driver's own (the loader does not see these calls). */
static void find_extensions(struct hmr_ze_driver *drv, uint32_t index)
{
	void *own = NULL;

	drv->own = drv->handle;
	if (hmr__ze.zelLoaderTranslateHandle &&
	    hmr__ze.zelLoaderTranslateHandle(HMR_ZEL_HANDLE_DRIVER, drv->handle,
	                                     &own) == 0 &&
	    own)
		drv->own = own;
#define HMR_ZE_EXT_FIND(name, params)                                          \
	if (hmr__ze.zeDriverGetExtensionFunctionAddress(                       \
	            drv->handle, #name, (void **)&drv->name) != 0)             \
		drv->name = NULL;
	HMR_ZE_EXTENSIONS(HMR_ZE_EXT_FIND)
#undef HMR_ZE_EXT_FIND
	if (!drv->zexDriverImportExternalPointer ||
	    !drv->zexDriverReleaseImportedPointer) {
		drv->zexDriverImportExternalPointer = NULL;
		drv->zexDriverReleaseImportedPointer = NULL;
	}
	hmr_info("ze driver %u: %u devices, host import %s", index,
	         drv->device_count,
	         drv->zexDriverImportExternalPointer ? "yes" : "no");
}

/* The handles of one driver's devices, in zeDeviceGet's order: the
 * index is the device half of hmr's device number. */
static int get_devices(struct hmr_ze_driver *drv, uint32_t index)
{
	hmr_ze_device_handle_t *h;
	uint32_t n = 0, i;
	int ret = HMR_ZE(zeDeviceGet, drv->handle, &n, NULL);

	if (ret || !n)
		return ret;
	if (n > HMR_ZE_MAX_DEVICES) {
		hmr_warn("ze driver %u: %u devices; fi_hmem_ze_device encodes "
		         "%u",
		         index, n, HMR_ZE_MAX_DEVICES);
		n = HMR_ZE_MAX_DEVICES;
	}
	h = calloc(n, sizeof(*h));
	drv->devices = calloc(n, sizeof(*drv->devices));
	ret = h && drv->devices ? HMR_ZE(zeDeviceGet, drv->handle, &n, h)
	                        : -FI_ENOMEM;
	for (i = 0; !ret && i < n; i++) {
		drv->devices[i].handle = h[i];
		pthread_mutex_init(&drv->devices[i].lock, NULL);
		drv->device_count = i + 1;
	}
	free(h);
	return ret;
}

/* One driver: its devices and a context of its own. */
static int open_driver(uint32_t index, char *why, size_t why_len)
{
	struct hmr_ze_context_desc desc = {
	        .stype = HMR_ZE_STRUCTURE_TYPE_CONTEXT_DESC};
	struct hmr_ze_driver *drv = &hmr__ze.drivers[index];
	int ret = get_devices(drv, index);

	if (ret) {
		snprintf(why, why_len, "ze driver %u: zeDeviceGet: %s", index,
		         hmr_strerror(ret));
		return ret;
	}
	ret = HMR_ZE(zeContextCreate, drv->handle, &desc, &drv->ctx);
	if (ret) {
		drv->ctx = NULL;
		snprintf(why, why_len, "ze driver %u: zeContextCreate: %s",
		         index, hmr_strerror(ret));
		return ret;
	}
	find_extensions(drv, index);
	return 0;
}

/* Every driver, in zeDriverGet's order: the index is the driver half of
 * hmr's device number (libfabric opens only the first). */
static int open_drivers(char *why, size_t why_len)
{
	hmr_ze_driver_handle_t *h = NULL;
	uint32_t n = 0, i, devices = 0;
	int ret = HMR_ZE(zeDriverGet, &n, NULL);

	if (!ret && !n) {
		snprintf(why, why_len, "the Level Zero loader found no driver");
		return -FI_ENOSYS;
	}
	if (!ret && n > HMR_ZE_MAX_DRIVERS) {
		hmr_warn("%u ze drivers; fi_hmem_ze_device encodes %u", n,
		         HMR_ZE_MAX_DRIVERS);
		n = HMR_ZE_MAX_DRIVERS;
	}
	if (!ret) {
		h = calloc(n, sizeof(*h));
		hmr__ze.drivers = calloc(n, sizeof(*hmr__ze.drivers));
		ret = h && hmr__ze.drivers ? HMR_ZE(zeDriverGet, &n, h)
		                           : -FI_ENOMEM;
	}
	if (ret) {
		snprintf(why, why_len, "zeDriverGet: %s", hmr_strerror(ret));
		free(h);
		return ret;
	}
	for (i = 0; !ret && i < n; i++) {
		hmr__ze.drivers[i].handle = h[i];
		hmr__ze.driver_count = i + 1;
		ret = open_driver(i, why, why_len);
		devices += hmr__ze.drivers[i].device_count;
	}
	free(h);
	if (!ret && !devices) {
		snprintf(why, why_len, "%u Level Zero drivers, no device", n);
		ret = -FI_ENOSYS;
	}
	return ret;
}

/*
 * Intel's compute-runtime (22.43, Debian 12) dlopens libraries with
 * RTLD_DEEPBIND while it probes, and the ASan/TSan runtimes abort the
 * process at such a dlopen (google/sanitizers#611).  An hmr built with
 * them therefore lets the loader load only the drivers named in
 * ZE_ENABLE_ALT_DRIVERS, never search the installed ones.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HMR_ZE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||     \
        __has_feature(memory_sanitizer)
#define HMR_ZE_SANITIZED 1
#endif
#endif
#ifndef HMR_ZE_SANITIZED
#define HMR_ZE_SANITIZED 0
#endif

static int start(char *why, size_t why_len)
{
#define HMR_ZE_ROW(name, req, params) {#name, (void **)&hmr__ze.name, req},
#define REQ                           false
#define OPT                           true
	const struct hmr_dl_sym syms[] = {HMR_ZE_CALLS(HMR_ZE_ROW)};
#undef REQ
#undef OPT
#undef HMR_ZE_ROW
	char err[64];
	hmr_ze_result_t r;
	int ret;

	ret = hmr__dl_resolve(handle, syms, sizeof(syms) / sizeof(syms[0]), why,
	                      why_len);
	if (ret)
		return ret;
	/* The loader's own variable, read where the loader reads it. */
	if (HMR_ZE_SANITIZED && !getenv("ZE_ENABLE_ALT_DRIVERS")) {
		snprintf(why, why_len,
		         "this hmr is built with a sanitizer, which aborts at "
		         "the RTLD_DEEPBIND dlopen of Intel's driver: set "
		         "ZE_ENABLE_ALT_DRIVERS");
		return -FI_ENOSYS;
	}
	/* Every driver type (flags 0): a GPU_ONLY zeInit would make the
	 * loader drop the other drivers, and shift the application's own
	 * driver indexes. */
	r = hmr__ze.zeInit(0);
	if (r) {
		snprintf(why, why_len,
		         "zeInit: %s: no Level Zero driver started (none "
		         "installed, or it found no device)",
		         hmr__ze_result_name(r, err, sizeof(err)));
		return -FI_ENOSYS;
	}
	return 0;
}

int hmr__ze_load(char *why, size_t why_len)
{
	static const char *const names[] = {"libze_loader.so.1",
	                                    "libze_loader.so"};
	int ret;

	*why = '\0';
	ret = hmr__dl_open("HMR_ZE_LIBRARY", names, 2, &handle, why, why_len);
	if (ret)
		return ret;
	ret = start(why, why_len);
	if (ret)
		return ret; /* The loader stays: it may have started. */
	ret = open_drivers(why, why_len);
	if (ret) {
		hmr__ze_unload();
		return ret;
	}
	/*
	 * Release the lists and contexts while the loader still works.
	 * hmem's destructor comes too late at exit: the loader's own
	 * teardown has run by then, and a wrapped handle crashes it.  An
	 * atexit handler registered now, after the loader started, runs
	 * before that teardown (and at a dlclose of libhmr).
	 */
	if (atexit(hmr__ze_unload))
		hmr_warn("atexit: the ze contexts outlive the loader");
	return 0;
}

void hmr__ze_unload(void)
{
	struct hmr_ze_driver *drv;
	uint32_t i, j;

	for (i = 0; i < hmr__ze.driver_count; i++) {
		drv = &hmr__ze.drivers[i];
		for (j = 0; j < drv->device_count; j++) {
			hmr__ze_copy_fini(&drv->devices[j]);
			pthread_mutex_destroy(&drv->devices[j].lock);
		}
		free(drv->devices);
		if (drv->ctx)
			HMR_ZE(zeContextDestroy, drv->ctx);
	}
	free(hmr__ze.drivers);
	hmr__ze.drivers = NULL;
	hmr__ze.driver_count = 0;
	/* Never dlclose a started loader: its drivers keep state. */
}

void hmr__ze_library(char *buf, size_t len)
{
	hmr__dl_path(handle, buf, len);
}
