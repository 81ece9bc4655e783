/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* neuron_info.c: what the Neuron backend reports before registering. */
#include <stdio.h>

#include "hmem/hmem.h"
#include "neuron/neuron_api.h"

/*
 * Devices are NeuronCores, as nrt_get_total_nc_count counts them.  No
 * address-free question tells whether a core's memory exports: the
 * runtime answers only by exporting, and Neuron advises against making
 * dma-bufs nobody uses, so support is "unknown until a registration
 * tries" wherever an export call exists.  hmr_hmem_alloc is not offered:
 * allocating needs nrt_init, which belongs to the application.
 */
int hmr__neuron_describe(struct hmr_hmem_backend_info *info)
{
	snprintf(info->library, sizeof(info->library), "%s",
	         hmr__neuron.library);
	snprintf(info->version, sizeof(info->version), "%u NeuronCores",
	         hmr__neuron.cores);
	info->devices = hmr__neuron.cores;
	return 0;
}

int hmr__neuron_device(uint32_t index, struct hmr_hmem_device_info *info)
{
	if (index >= hmr__neuron.cores)
		return -FI_ENOENT;
	info->device = index;
	snprintf(info->name, sizeof(info->name), "NeuronCore %u", index);
	if (hmr__neuron.nrt_get_dmabuf_fd_v2 || hmr__neuron.nrt_get_dmabuf_fd) {
		info->dmabuf = -1;
		snprintf(info->dmabuf_why, sizeof(info->dmabuf_why),
		         "the runtime exports on request only (%s); the first "
		         "registration for a NIC tries",
		         hmr__neuron.nrt_get_dmabuf_fd_v2
		                 ? "nrt_get_dmabuf_fd_v2"
		                 : "nrt_get_dmabuf_fd, allocation starts only");
	} else {
		info->dmabuf = 0;
		snprintf(info->dmabuf_why, sizeof(info->dmabuf_why),
		         "libnrt has no nrt_get_dmabuf_fd");
	}
	return 0;
}
