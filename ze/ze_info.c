/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ze_info.c: what the Level Zero backend reports, and self-check memory. */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/range.h"
#include "ze/ze.h"

/* "loader 1.8.0" from the loader's own list of components. */
static void loader_version(char *buf, size_t len)
{
	hmr_zel_component_version_t v[8];
	size_t n = 8, i;

	snprintf(buf, len, "loader (version unknown)");
	if (!hmr__ze.zelLoaderGetVersions ||
	    hmr__ze.zelLoaderGetVersions(&n, NULL) != 0 || n > 8 ||
	    hmr__ze.zelLoaderGetVersions(&n, v) != 0)
		return;
	for (i = 0; i < n; i++) {
		if (strcmp(v[i].component_name, "loader") == 0)
			snprintf(buf, len, "loader %d.%d.%d",
			         v[i].component_lib_version.major,
			         v[i].component_lib_version.minor,
			         v[i].component_lib_version.patch);
	}
}

int hmr__ze_describe(struct hmr_hmem_backend_info *info)
{
	char loader[40];
	uint32_t i;

	hmr__ze_library(info->library, sizeof(info->library));
	loader_version(loader, sizeof(loader));
	snprintf(info->version, sizeof(info->version), "%s, %u drivers", loader,
	         hmr__ze.driver_count);
	for (i = 0; i < hmr__ze.driver_count; i++)
		info->devices += hmr__ze.drivers[i].device_count;
	return 0;
}

/* Devices are counted driver after driver, in zeDriverGet's order. */
static bool nth_device(uint32_t index, uint32_t *d, uint32_t *i)
{
	for (*d = 0; *d < hmr__ze.driver_count; ++*d) {
		if (index < hmr__ze.drivers[*d].device_count) {
			*i = index;
			return true;
		}
		index -= hmr__ze.drivers[*d].device_count;
	}
	return false;
}

/* Whether the driver exports the device's allocations as dma-bufs. */
static void dmabuf_support(hmr_ze_device_handle_t dev,
                           struct hmr_hmem_device_info *info)
{
	struct hmr_ze_device_external_memory_properties p = {
	        .stype =
	                HMR_ZE_STRUCTURE_TYPE_DEVICE_EXTERNAL_MEMORY_PROPERTIES};
	hmr_ze_result_t r =
	        hmr__ze.zeDeviceGetExternalMemoryProperties(dev, &p);
	char name[64];

	if (r) {
		info->dmabuf = -1;
		snprintf(info->dmabuf_why, sizeof(info->dmabuf_why),
		         "zeDeviceGetExternalMemoryProperties: %s",
		         hmr__ze_result_name(r, name, sizeof(name)));
		return;
	}
	info->dmabuf = !!(p.memoryAllocationExportTypes &
	                  HMR_ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF);
	if (!info->dmabuf)
		snprintf(info->dmabuf_why, sizeof(info->dmabuf_why),
		         "the driver exports none of this device's allocations "
		         "as a dma-buf");
}

int hmr__ze_device(uint32_t index, struct hmr_hmem_device_info *info)
{
	struct hmr_ze_device_properties p = {
	        .stype = HMR_ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
	hmr_ze_device_handle_t dev;
	uint32_t d, i;
	size_t n;

	if (!nth_device(index, &d, &i))
		return -FI_ENOENT;
	dev = hmr__ze.drivers[d].devices[i].handle;
	info->device = hmr__ze_encode(d, i);
	if (hmr__ze.zeDeviceGetProperties(dev, &p) == 0 && p.name[0]) {
		/* The driver's name, cut to fit (it may lack its NUL). */
		n = strnlen(p.name, sizeof(p.name));
		n = n < sizeof(info->name) ? n : sizeof(info->name) - 1;
		memcpy(info->name, p.name, n);
		info->name[n] = '\0';
	} else {
		snprintf(info->name, sizeof(info->name),
		         "ze driver %u device %u", d, i);
	}
	dmabuf_support(dev, info);
	return 0;
}

/* Device memory of `device` (hmr's number), in its driver's context. */
int hmr__ze_alloc(uint64_t device, size_t len, void **ptr)
{
	struct hmr_ze_device_mem_alloc_desc desc = {
	        .stype = HMR_ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	struct hmr_ze_driver *drv;
	struct hmr_ze_device *dev;

	if (!hmr__ze_decode(device, &drv, &dev))
		return -FI_EINVAL;
	return HMR_ZE(zeMemAllocDevice, drv->ctx, &desc, len, 0, dev->handle,
	              ptr);
}

int hmr__ze_free(void *ptr)
{
	struct hmr_hmem_info info;
	struct hmr_ze_owner o;
	uint64_t end;
	int ret = hmr__ze_query(ptr, &o, &info);

	if (ret)
		return ret == -FI_ENOENT ? -FI_EINVAL : ret;
	ret = HMR_ZE(zeMemFree, o.drv->ctx, ptr);
	/* The range is no longer this backend's memory. */
	if (!ret && hmr__range_end(info.base, info.size, &end))
		hmr__memtype_remove(info.base, end);
	return ret;
}
