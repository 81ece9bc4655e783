/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ze.c: the Level Zero backend's ops: query, copies, host import, IPC. */
#include <string.h>

#include "base/log.h"
#include "base/range.h"
#include "base/config.h"
#include "hmem/hmem.h"
#include "ze/ze.h"

HMR_CONFIG_VAR(FI_MR_ZE_CACHE_MONITOR_ENABLED, "1",
               "The registration cache keeps registrations of ze device "
               "memory (a reallocation gets a new buffer id and misses)");

static int ze_init(char *why, size_t why_len)
{
	return hmr__ze_load(why, why_len);
}

static void ze_fini(void)
{
	hmr__ze_unload();
}

/*
 * The driver that allocated ptr: each driver's context is asked in turn
 * (a pointer may belong to any of them).  A driver answers UNKNOWN with
 * success for memory not its own; any failure is an error, never "not
 * mine".  -FI_ENOENT: no driver knows ptr.
 */
int hmr__ze_owner(const void *ptr, struct hmr_ze_owner *o)
{
	uint32_t i;
	int ret;

	for (i = 0; i < hmr__ze.driver_count; i++) {
		memset(&o->props, 0, sizeof(o->props));
		o->props.stype =
		        HMR_ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
		/* NULL first: a wrapping loader converts whatever is left
		 * here, even for UNKNOWN memory. */
		o->device_handle = NULL;
		ret = HMR_ZE(zeMemGetAllocProperties, hmr__ze.drivers[i].ctx,
		             ptr, &o->props, &o->device_handle);
		if (ret)
			return ret;
		if (o->props.type != HMR_ZE_MEMORY_TYPE_UNKNOWN) {
			o->index = i;
			o->drv = &hmr__ze.drivers[i];
			return 0;
		}
	}
	return -FI_ENOENT;
}

/* The device index of the handle the driver named, by handle: hmr never
 * guesses (libfabric matches UUIDs and falls back to device 0). */
static int device_index(const struct hmr_ze_owner *o, uint32_t *index)
{
	uint32_t i;

	for (i = 0; i < o->drv->device_count; i++) {
		if (o->drv->devices[i].handle == o->device_handle) {
			*index = i;
			return 0;
		}
	}
	hmr_warn("ze driver %u names device handle %p, none of its %u "
	         "devices",
	         o->index, (void *)o->device_handle, o->drv->device_count);
	return -FI_ENODEV;
}

/*
 * Host allocations belong to no device: fi_mr(3) says FI_HMEM_HOST_ALLOC
 * ignores the device field, and hmr reports device index 0 of the owning
 * driver.  So does unbound shared memory, which migrates.  Device memory
 * must name its device.
 */
static int describe_memory(const void *ptr, const struct hmr_ze_owner *o,
                           struct hmr_hmem_info *info)
{
	uint32_t type = o->props.type, index = 0;
	void *base = NULL;
	size_t size = 0;
	int ret = 0;

	if (o->device_handle || type == HMR_ZE_MEMORY_TYPE_DEVICE)
		ret = device_index(o, &index);
	if (!ret)
		ret = HMR_ZE(zeMemGetAddressRange, o->drv->ctx, ptr, &base,
		             &size);
	if (ret)
		return ret;
	memset(info, 0, sizeof(*info));
	info->iface = FI_HMEM_ZE;
	info->device = hmr__ze_encode(o->index, index);
	info->base = (uintptr_t)base;
	info->size = size;
	info->buffer_id = o->props.id;
	if (type == HMR_ZE_MEMORY_TYPE_DEVICE)
		info->flags = HMR_HMEM_DEVICE_ONLY;
	else if (type == HMR_ZE_MEMORY_TYPE_HOST)
		info->flags = HMR_HMEM_HOST_ALLOC;
	else
		info->flags = HMR_HMEM_MANAGED;
	return 0;
}

int hmr__ze_query(const void *ptr, struct hmr_ze_owner *o,
                  struct hmr_hmem_info *info)
{
	int ret = hmr__ze_owner(ptr, o);

	return ret ? ret : describe_memory(ptr, o, info);
}

static int ze_query(const void *ptr, size_t len, struct hmr_hmem_info *info)
{
	struct hmr_ze_owner o;

	(void)len;
	return hmr__ze_query(ptr, &o, info);
}

/* [ptr, ptr + len) of one allocation, and the device to copy with (NULL:
 * host memory, which the CPU reaches itself). */
static int copy_target(const void *ptr, size_t len, struct hmr_ze_owner *o,
                       struct hmr_ze_device **dev)
{
	struct hmr_hmem_info info;
	int ret = hmr__ze_query(ptr, o, &info);

	if (ret)
		return ret == -FI_ENOENT ? -FI_EINVAL : ret;
	if (!hmr__range_inside((uintptr_t)ptr, len, info.base, info.size)) {
		hmr_warn("copy of [%p, +%zu) runs past its ze allocation "
		         "[%#llx, +%llu)",
		         ptr, len, (unsigned long long)info.base,
		         (unsigned long long)info.size);
		return -FI_EINVAL;
	}
	*dev = NULL;
	if (o->device_handle)
		*dev = &o->drv->devices[info.device & (HMR_ZE_MAX_DEVICES - 1)];
	return 0;
}

/* Either direction: `ze_side` is the ZE memory, whose device copies. */
static int copy(void *dst, const void *src, const void *ze_side, size_t len)
{
	struct hmr_ze_device *dev;
	struct hmr_ze_owner o;
	int ret = copy_target(ze_side, len, &o, &dev);

	if (ret)
		return ret;
	if (!dev) {
		memcpy(dst, src, len);
		return 0;
	}
	return hmr__ze_copy(o.drv, dev, dst, src, len);
}

static int ze_copy_to(void *dst, const void *src, size_t len)
{
	return copy(dst, src, dst, len);
}

static int ze_copy_from(void *dst, const void *src, size_t len)
{
	return copy(dst, src, src, len);
}

/*
 * Level Zero's core API has no host registration; Intel's extension
 * imports into every driver that offers it (as CUDA's portable
 * registration reaches every device), or into none.
 */
static int ze_host_register(void *ptr, size_t len)
{
	struct hmr_ze_driver *drv;
	uint32_t i, done = 0;
	int ret = 0;

	for (i = 0; i < hmr__ze.driver_count; i++) {
		drv = &hmr__ze.drivers[i];
		if (!drv->zexDriverImportExternalPointer)
			continue;
		ret = hmr__ze_check("zexDriverImportExternalPointer",
		                    drv->zexDriverImportExternalPointer(
		                            drv->own, ptr, len));
		if (ret)
			break;
		done++;
	}
	if (ret) {
		while (i-- > 0) { /* Undo the imports that were made. */
			drv = &hmr__ze.drivers[i];
			if (drv->zexDriverReleaseImportedPointer)
				drv->zexDriverReleaseImportedPointer(drv->own,
				                                     ptr);
		}
		return ret;
	}
	if (!done) {
		hmr_info("Level Zero has no host registration in its core "
		         "API, and no driver offers "
		         "zexDriverImportExternalPointer");
		return -FI_ENOSYS;
	}
	return 0;
}

static int ze_host_unregister(void *ptr)
{
	struct hmr_ze_driver *drv;
	uint32_t i, done = 0;
	int ret = 0, r;

	for (i = 0; i < hmr__ze.driver_count; i++) {
		drv = &hmr__ze.drivers[i];
		if (!drv->zexDriverReleaseImportedPointer)
			continue;
		r = hmr__ze_check(
		        "zexDriverReleaseImportedPointer",
		        drv->zexDriverReleaseImportedPointer(drv->own, ptr));
		ret = ret ? ret : r;
		done++;
	}
	if (!done) {
		hmr_info("no Level Zero driver offers "
		         "zexDriverReleaseImportedPointer");
		return -FI_ENOSYS;
	}
	return ret;
}

/* The 64-byte ze_ipc_mem_handle_t, from the owning driver's context. */
static int ze_ipc_get(const void *ptr, void *handle, size_t *handle_size)
{
	struct hmr_ze_owner o;
	int ret;

	if (*handle_size < sizeof(hmr_ze_ipc_mem_handle_t)) {
		*handle_size = sizeof(hmr_ze_ipc_mem_handle_t);
		return -FI_ETOOSMALL;
	}
	*handle_size = sizeof(hmr_ze_ipc_mem_handle_t);
	ret = hmr__ze_owner(ptr, &o);
	if (ret)
		return ret == -FI_ENOENT ? -FI_EINVAL : ret;
	return HMR_ZE(zeMemGetIpcHandle, o.drv->ctx, ptr, handle);
}

/* device: hmr's number (fi_hmem_ze_device) of the device to map on. */
static int ze_ipc_open(uint64_t device, const void *handle, size_t handle_size,
                       void **ptr)
{
	hmr_ze_ipc_mem_handle_t h;
	struct hmr_ze_driver *drv;
	struct hmr_ze_device *dev;

	if (handle_size != sizeof(h)) {
		hmr_warn("ze IPC handle of %zu bytes (want %zu)", handle_size,
		         sizeof(h));
		return -FI_EINVAL;
	}
	if (!hmr__ze_decode(device, &drv, &dev))
		return -FI_EINVAL;
	memcpy(&h, handle, sizeof(h));
	return HMR_ZE(zeMemOpenIpcHandle, drv->ctx, dev->handle, h, 0, ptr);
}

static int ze_ipc_close(void *ptr)
{
	struct hmr_hmem_info info;
	struct hmr_ze_owner o;
	uint64_t end;
	int ret = hmr__ze_query(ptr, &o, &info);

	if (ret)
		return ret == -FI_ENOENT ? -FI_EINVAL : ret;
	ret = HMR_ZE(zeMemCloseIpcHandle, o.drv->ctx, ptr);
	/* The mapping's range is no longer this process's device memory. */
	if (!ret && hmr__range_end(info.base, info.size, &end))
		hmr__memtype_remove(info.base, end);
	return ret;
}

/* No peer-memory module is known for Intel GPUs (nothing like
 * nvidia_peermem or amdgpu's): device memory reaches a NIC as a dma-buf
 * only, so peermem_modules stays NULL. */
const struct hmr_backend_ops hmr__ze_backend = {
        .iface = FI_HMEM_ZE,
        .peermem_modules = NULL,
        .cache_setting = "FI_MR_ZE_CACHE_MONITOR_ENABLED",
        .init = ze_init,
        .fini = ze_fini,
        .query = ze_query,
        .host_register = ze_host_register,
        .host_unregister = ze_host_unregister,
        .copy_to = ze_copy_to,
        .copy_from = ze_copy_from,
        .dmabuf_get = hmr__ze_dmabuf_get,
        .dmabuf_put = hmr__ze_dmabuf_put,
        .ipc_get = ze_ipc_get,
        .ipc_open = ze_ipc_open,
        .ipc_close = ze_ipc_close,
        .describe = hmr__ze_describe,
        .device = hmr__ze_device,
        .alloc = hmr__ze_alloc,
        .free = hmr__ze_free,
};
