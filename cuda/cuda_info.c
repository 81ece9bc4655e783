/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cuda_info.c: what the CUDA backend reports, and its self-check memory. */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "cuda/cuda_api.h"
#include "hmem/hmem.h"

int hmr__cuda_describe(struct hmr_hmem_backend_info *info)
{
	hmr__cuda_library(info->library, sizeof(info->library));
	snprintf(info->version, sizeof(info->version), "driver %d.%d",
	         hmr__cuda.driver_version / 1000,
	         hmr__cuda.driver_version % 1000 / 10);
	info->devices = (uint32_t)hmr__cuda.device_count;
	return 0;
}

int hmr__cuda_device(uint32_t index, struct hmr_hmem_device_info *info)
{
	if (index >= (uint32_t)hmr__cuda.device_count)
		return -FI_ENOENT;
	info->device = index;
	if (!hmr__cuda.cuDeviceGetName ||
	    hmr__cuda.cuDeviceGetName(info->name, (int)sizeof(info->name),
	                              (hmr_CUdevice)index) != HMR_CUDA_SUCCESS)
		snprintf(info->name, sizeof(info->name), "CUDA device %u",
		         index);
	info->dmabuf = hmr__cuda.dmabuf[index];
	if (!hmr__cuda.cuMemGetHandleForAddressRange)
		snprintf(info->dmabuf_why, sizeof(info->dmabuf_why),
		         "driver %d lacks cuMemGetHandleForAddressRange "
		         "(11.7 and later)",
		         hmr__cuda.driver_version);
	else if (!info->dmabuf)
		snprintf(info->dmabuf_why, sizeof(info->dmabuf_why),
		         "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0");
	return 0;
}

int hmr__cuda_alloc(uint64_t device, size_t len, void **ptr)
{
	hmr_CUdeviceptr d = 0;
	hmr_CUcontext prev;
	int ret;

	if (!hmr__cuda.cuMemAlloc)
		return -FI_ENOSYS;
	if (device >= (uint64_t)hmr__cuda.device_count)
		return -FI_EINVAL;
	prev = hmr__cuda_push((int)device);
	ret = HMR_CU(cuMemAlloc, &d, len);
	hmr__cuda_pop(prev);
	*ptr = (void *)(uintptr_t)d;
	return ret;
}

int hmr__cuda_free(void *ptr)
{
	if (!hmr__cuda.cuMemFree)
		return -FI_ENOSYS;
	/* The range is no longer this backend's memory. */
	hmr__memtype_remove_at((uintptr_t)ptr);
	return HMR_CU(cuMemFree, (hmr_CUdeviceptr)(uintptr_t)ptr);
}
