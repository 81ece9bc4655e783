/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rocr_info.c: what the ROCr backend reports before registering. */
#include <stdio.h>

#include "hmem/hmem.h"
#include "rocr/rocr_api.h"

/*
 * Devices are the GPU agents, in the order whose index a device hint
 * names.  dma-buf support is decided once for the whole runtime and kernel
 * (rocr_dmabuf.c), so every GPU reports the same answer and reason.
 * hmr_hmem_alloc is not offered: allocating needs the application's
 * choice of memory pool.
 */
int hmr__rocr_describe(struct hmr_hmem_backend_info *info)
{
	uint16_t major = 0, minor = 0;

	snprintf(info->library, sizeof(info->library), "%s", hmr__rocr.library);
	if (hmr__rocr.hsa_system_get_info(HMR_HSA_SYSTEM_INFO_VERSION_MAJOR,
	                                  &major) == HMR_HSA_STATUS_SUCCESS &&
	    hmr__rocr.hsa_system_get_info(HMR_HSA_SYSTEM_INFO_VERSION_MINOR,
	                                  &minor) == HMR_HSA_STATUS_SUCCESS)
		snprintf(info->version, sizeof(info->version), "HSA %u.%u",
		         major, minor);
	info->devices = (uint32_t)hmr__rocr.gpu_count;
	return 0;
}

int hmr__rocr_device(uint32_t index, struct hmr_hmem_device_info *info)
{
	char name[64] = "";

	if (index >= (uint32_t)hmr__rocr.gpu_count)
		return -FI_ENOENT;
	info->device = index;
	if (hmr__rocr.hsa_agent_get_info(hmr__rocr.gpu[index],
	                                 HMR_HSA_AGENT_INFO_NAME,
	                                 name) != HMR_HSA_STATUS_SUCCESS ||
	    !name[0])
		snprintf(name, sizeof(name), "GPU agent %u", index);
	snprintf(info->name, sizeof(info->name), "%.63s", name);
	info->dmabuf = hmr__rocr.dmabuf == HMR_ROCR_DMABUF_YES       ? 1
	               : hmr__rocr.dmabuf == HMR_ROCR_DMABUF_UNKNOWN ? -1
	                                                             : 0;
	snprintf(info->dmabuf_why, sizeof(info->dmabuf_why), "%.127s",
	         hmr__rocr.dmabuf_why);
	return 0;
}
