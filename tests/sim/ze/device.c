/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* device.c: devices, their properties, and contexts. */
#include "sim_ze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Command queue groups: ordinal 0 computes and copies, 1 only copies. */
#define SIM_NGROUPS 2
static const struct {
	ze_command_queue_group_property_flags_t flags;
	uint32_t queues;
	size_t fill;
} sim_groups[SIM_NGROUPS] = {
        {ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
                 ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY,
         1, 128},
        {ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY, 2, 4},
};

int sim_device_ok(ze_device_handle_t h)
{
	for (int i = 0; h && i < sim_cfg.ndev; i++)
		if (h == &sim.dev[i])
			return h->magic == SIM_DEV_MAGIC;
	return 0;
}

/* ordinal/index name an existing queue of the device's groups. */
int sim_queue_ok(uint32_t ordinal, uint32_t index)
{
	return ordinal < SIM_NGROUPS && index < sim_groups[ordinal].queues;
}

static ze_result_t sim_device_get(ze_driver_handle_t hDriver, uint32_t *pCount,
                                  ze_device_handle_t *phDevices)
{
	uint32_t n = (uint32_t)sim_cfg.ndev;

	SIM_ENTER("zeDeviceGet");
	if (!sim_driver_ok(hDriver))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*pCount == 0 || !phDevices) {
		*pCount = n;
		return ZE_RESULT_SUCCESS;
	}
	if (*pCount > n)
		*pCount = n;
	for (uint32_t i = 0; i < *pCount; i++)
		phDevices[i] = &sim.dev[i];
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_device_sub_devices(ze_device_handle_t hDevice,
                                          uint32_t *pCount,
                                          ze_device_handle_t *phSubdevices)
{
	(void)phSubdevices;
	SIM_ENTER("zeDeviceGetSubDevices");
	if (!sim_device_ok(hDevice))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	*pCount = 0; /* no tiles */
	return ZE_RESULT_SUCCESS;
}

/* "hmrsimze-dev-" + copy id + device index: distinct everywhere. */
static void sim_device_uuid(ze_device_handle_t d, uint8_t *id)
{
	static const char tag[] = "hmrsimze-dev-";

	memset(id, 0, ZE_MAX_DEVICE_UUID_SIZE);
	memcpy(id, tag, sizeof(tag) - 1);
	id[13] = (uint8_t)SIM_ZE_ID[0];
	id[14] = (uint8_t)SIM_ZE_INDEX;
	id[15] = (uint8_t)d->index;
}

static ze_result_t sim_device_properties(ze_device_handle_t hDevice,
                                         ze_device_properties_t *p)
{
	SIM_ENTER("zeDeviceGetProperties");
	if (!sim_device_ok(hDevice))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->type = ZE_DEVICE_TYPE_GPU;
	p->vendorId = 0x8086;
	p->deviceId = 0x0bd5; /* a discrete data-centre part */
	p->flags = ZE_DEVICE_PROPERTY_FLAG_ECC;
	p->subdeviceId = 0;
	p->coreClockRate = 1600;
	p->maxMemAllocSize = SIM_MAX_ALLOC;
	p->maxHardwareContexts = 65536;
	p->maxCommandQueuePriority = 0;
	p->numThreadsPerEU = 8;
	p->physicalEUSimdWidth = 16;
	p->numEUsPerSubslice = 8;
	p->numSubslicesPerSlice = 64;
	p->numSlices = 1;
	/* 1.2 and later structures report cycles per second, not ns. */
	p->timerResolution = p->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2
	                             ? 38400000
	                             : 26;
	p->timestampValidBits = 64;
	p->kernelTimestampValidBits = 32;
	sim_device_uuid(hDevice, p->uuid.id);
	snprintf(p->name, sizeof(p->name),
	         "hmr simulated GPU (driver %s, device %d)", SIM_ZE_ID,
	         hDevice->index);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t
sim_device_queue_groups(ze_device_handle_t hDevice, uint32_t *pCount,
                        ze_command_queue_group_properties_t *props)
{
	SIM_ENTER("zeDeviceGetCommandQueueGroupProperties");
	if (!sim_device_ok(hDevice))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*pCount == 0 || !props) {
		*pCount = SIM_NGROUPS;
		return ZE_RESULT_SUCCESS;
	}
	if (*pCount > SIM_NGROUPS)
		*pCount = SIM_NGROUPS;
	for (uint32_t i = 0; i < *pCount; i++) {
		props[i].flags = sim_groups[i].flags;
		props[i].maxMemoryFillPatternSize = sim_groups[i].fill;
		props[i].numQueues = sim_groups[i].queues;
	}
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_device_memory(ze_device_handle_t hDevice,
                                     uint32_t *pCount,
                                     ze_device_memory_properties_t *props)
{
	SIM_ENTER("zeDeviceGetMemoryProperties");
	if (!sim_device_ok(hDevice))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*pCount == 0 || !props) {
		*pCount = 1;
		return ZE_RESULT_SUCCESS;
	}
	*pCount = 1;
	props->flags = 0;
	props->maxClockRate = 1600;
	props->maxBusWidth = 4096;
	props->totalSize = SIM_DEV_MEMORY;
	snprintf(props->name, sizeof(props->name), "HBM");
	return ZE_RESULT_SUCCESS;
}

/* Which allocations export as dma-buf: the HMR_SIM_ZE_DMABUF switch. */
static ze_result_t
sim_device_external_memory(ze_device_handle_t hDevice,
                           ze_device_external_memory_properties_t *props)
{
	SIM_ENTER("zeDeviceGetExternalMemoryProperties");
	if (!sim_device_ok(hDevice))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!props)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	props->memoryAllocationImportTypes = 0;
	props->memoryAllocationExportTypes =
	        hDevice->dmabuf ? ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF : 0;
	props->imageImportTypes = 0;
	props->imageExportTypes = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_device_p2p(ze_device_handle_t hDevice,
                                  ze_device_handle_t hPeer,
                                  ze_device_p2p_properties_t *props)
{
	SIM_ENTER("zeDeviceGetP2PProperties");
	if (!sim_device_ok(hDevice) || !sim_device_ok(hPeer))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!props)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	props->flags = sim_cfg.p2p ? ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS : 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_device_can_access_peer(ze_device_handle_t hDevice,
                                              ze_device_handle_t hPeer,
                                              ze_bool_t *value)
{
	SIM_ENTER("zeDeviceCanAccessPeer");
	if (!sim_device_ok(hDevice) || !sim_device_ok(hPeer))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!value)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	*value = hDevice == hPeer || sim_cfg.p2p;
	return ZE_RESULT_SUCCESS;
}

void sim_fill_device(ze_device_dditable_t *t)
{
	t->pfnGet = sim_device_get;
	t->pfnGetSubDevices = sim_device_sub_devices;
	t->pfnGetProperties = sim_device_properties;
	t->pfnGetCommandQueueGroupProperties = sim_device_queue_groups;
	t->pfnGetMemoryProperties = sim_device_memory;
	t->pfnGetExternalMemoryProperties = sim_device_external_memory;
	t->pfnGetP2PProperties = sim_device_p2p;
	t->pfnCanAccessPeer = sim_device_can_access_peer;
}

/* Contexts.  Destroyed ones are freed: a stale handle is a use after free
 * that ASan reports in the caller, as a real driver would misbehave. */

/* Caller holds sim.lock. */
int sim_context_ok(ze_context_handle_t h)
{
	for (ze_context_handle_t c = sim.contexts; h && c; c = c->next)
		if (c == h)
			return 1;
	return 0;
}

static ze_result_t sim_context_new(ze_driver_handle_t hDriver,
                                   const ze_context_desc_t *desc,
                                   ze_context_handle_t *phContext)
{
	ze_context_handle_t c;

	if (!sim_driver_ok(hDriver))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !phContext)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->flags & ~(ze_context_flags_t)ZE_CONTEXT_FLAG_TBD)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	c->magic = SIM_CTX_MAGIC;
	pthread_mutex_lock(&sim.lock);
	c->next = sim.contexts;
	sim.contexts = c;
	pthread_mutex_unlock(&sim.lock);
	*phContext = c;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_context_create(ze_driver_handle_t hDriver,
                                      const ze_context_desc_t *desc,
                                      ze_context_handle_t *phContext)
{
	SIM_ENTER("zeContextCreate");
	return sim_context_new(hDriver, desc, phContext);
}

static ze_result_t sim_context_create_ex(ze_driver_handle_t hDriver,
                                         const ze_context_desc_t *desc,
                                         uint32_t numDevices,
                                         ze_device_handle_t *phDevices,
                                         ze_context_handle_t *phContext)
{
	SIM_ENTER("zeContextCreateEx");
	if (numDevices && !phDevices)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	for (uint32_t i = 0; i < numDevices; i++)
		if (!sim_device_ok(phDevices[i]))
			return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	return sim_context_new(hDriver, desc, phContext);
}

static ze_result_t sim_context_destroy(ze_context_handle_t hContext)
{
	ze_context_handle_t *pp;
	ze_result_t rc = ZE_RESULT_ERROR_INVALID_NULL_HANDLE;

	SIM_ENTER("zeContextDestroy");
	pthread_mutex_lock(&sim.lock);
	for (pp = &sim.contexts; *pp; pp = &(*pp)->next) {
		if (*pp == hContext) {
			*pp = hContext->next;
			hContext->magic = 0;
			free(hContext);
			rc = ZE_RESULT_SUCCESS;
			break;
		}
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

static ze_result_t sim_context_status(ze_context_handle_t hContext)
{
	int ok;

	SIM_ENTER("zeContextGetStatus");
	pthread_mutex_lock(&sim.lock);
	ok = sim_context_ok(hContext);
	pthread_mutex_unlock(&sim.lock);
	return ok ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

void sim_fill_context(ze_context_dditable_t *t)
{
	t->pfnCreate = sim_context_create;
	t->pfnCreateEx = sim_context_create_ex;
	t->pfnDestroy = sim_context_destroy;
	t->pfnGetStatus = sim_context_status;
}
