/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* pointer.c: cuPointerGetAttribute(s) and cuPointerSetAttribute. */
#include "sim_cuda.h"

#include <string.h>

/* Size of each attribute's value, 0 for attributes the driver lacks. */
static size_t sim_attr_size(CUpointer_attribute attr)
{
	int v = sim_cfg.driver_version;

	/* Approximate versions of the newest attributes. */
	if ((attr >= CU_POINTER_ATTRIBUTE_MAPPING_SIZE && v < 11070) ||
	    (attr >= CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE &&
	     v < 12080))
		return 0;
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		return sizeof(CUcontext);
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		return sizeof(unsigned int);
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		return sizeof(CUdeviceptr);
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		return sizeof(void *);
	case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
		return sizeof(CUDA_POINTER_ATTRIBUTE_P2P_TOKENS);
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
	case CU_POINTER_ATTRIBUTE_MAPPED:
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
	case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
		return sizeof(int);
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
	case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
		return sizeof(unsigned long long);
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
		return sizeof(size_t);
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		return sizeof(CUmemoryPool);
	}
	return 0;
}

static int sim_is_device_kind(const struct sim_alloc *a)
{
	return a->kind == SIM_KIND_DEVICE || a->kind == SIM_KIND_MANAGED ||
	       a->kind == SIM_KIND_IPC || a->kind == SIM_KIND_VMM;
}

static int sim_is_host_accessible(const struct sim_alloc *a)
{
	return a->kind == SIM_KIND_HOST || a->kind == SIM_KIND_REGISTERED ||
	       a->kind == SIM_KIND_MANAGED;
}

/*
 * Caller holds sim.lock; a is known.  Fills data (already zeroed with
 * sim_attr_size bytes); returns CUDA_ERROR_INVALID_VALUE where the singular
 * call fails for this kind of memory (the batched call leaves a zero).
 */
static CUresult sim_attr_get(struct sim_alloc *a, CUdeviceptr p,
                             CUpointer_attribute attr, void *data)
{
	CUcontext cur = sim_ctx_current();
	int dev = cur && sim_ctx_valid(cur) ? cur->device : a->device;
	struct sim_resv *r;
	unsigned long long u64;
	unsigned int u32;
	int i32;

	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		memcpy(data, &a->ctx, sizeof(a->ctx));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		/* Managed memory reports DEVICE under unified addressing. */
		u32 = sim_is_device_kind(a) ? CU_MEMORYTYPE_DEVICE
		                            : CU_MEMORYTYPE_HOST;
		memcpy(data, &u32, sizeof(u32));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		memcpy(data, &p, sizeof(p)); /* unified addressing */
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (!sim_is_host_accessible(a))
			return CUDA_ERROR_INVALID_VALUE;
		memcpy(data, &p, sizeof(p));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_P2P_TOKENS: {
		CUDA_POINTER_ATTRIBUTE_P2P_TOKENS t = {a->id, 0x51u};

		if (a->kind != SIM_KIND_DEVICE)
			return CUDA_ERROR_INVALID_VALUE;
		a->sync_memops = 1; /* documented side effect */
		memcpy(data, &t, sizeof(t));
		return CUDA_SUCCESS;
	}
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
		i32 = a->sync_memops;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		memcpy(data, &a->id, sizeof(a->id));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		i32 = a->kind == SIM_KIND_MANAGED;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		i32 = a->device;
		break;
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
		i32 = a->kind == SIM_KIND_DEVICE;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		/* VMM memory: the whole reservation, mapped or not
		 * (lab/gpu.md), not the segment. */
		if (a->kind == SIM_KIND_VMM && (r = sim_resv_holding(p, 1)))
			memcpy(data, &r->base, sizeof(r->base));
		else
			memcpy(data, &a->base, sizeof(a->base));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		if (a->kind == SIM_KIND_VMM && (r = sim_resv_holding(p, 1)))
			memcpy(data, &r->size, sizeof(r->size));
		else
			memcpy(data, &a->size, sizeof(a->size));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		memcpy(data, &a->base, sizeof(a->base));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
		memcpy(data, &a->size, sizeof(a->size));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		i32 = 1;
		break;
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		u64 = a->kind == SIM_KIND_VMM
		              ? a->phys->prop.requestedHandleTypes
		              : CU_MEM_HANDLE_TYPE_NONE;
		memcpy(data, &u64, sizeof(u64));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
		i32 = a->kind == SIM_KIND_VMM
		              ? a->phys->prop.allocFlags.gpuDirectRDMACapable !=
		                        0
		              : a->kind == SIM_KIND_DEVICE ||
		                        a->kind == SIM_KIND_IPC;
		break;
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
		i32 = a->kind == SIM_KIND_VMM
		              ? a->access[dev]
		              : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
		break;
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		return CUDA_SUCCESS; /* never from a pool: NULL */
	case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
		u64 = a->kind == SIM_KIND_VMM ? a->phys->block_id : a->id;
		memcpy(data, &u64, sizeof(u64));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
		i32 = 0;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	memcpy(data, &i32, sizeof(i32));
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuPointerGetAttribute(void *data,
                                               CUpointer_attribute attribute,
                                               CUdeviceptr ptr)
{
	struct sim_alloc *a;
	size_t size = sim_attr_size(attribute);
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	SIM_ENTER("cuPointerGetAttribute");
	if (!data || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim.lock);
	a = sim_find(ptr);
	if (a) {
		_Alignas(8) unsigned char tmp[32] = {0};

		rc = sim_attr_get(a, ptr, attribute, tmp);
		if (rc == CUDA_SUCCESS)
			memcpy(data, tmp, size);
	} else if (sim_resv_holding(ptr, 1) &&
	           attribute == CU_POINTER_ATTRIBUTE_MEMORY_TYPE) {
		/* A hole of a reservation: memory type 0 (lab/gpu.md). */
		memset(data, 0, size);
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/*
 * An unknown pointer is not an error here: every value is zero (memory
 * type 0) but the ordinal, -2, as the driver answers (lab/gpu.md).  In
 * an unmapped hole of a VMM reservation BUFFER_ID fails the call
 * (CUDA_ERROR_INVALID_VALUE); without it the hole reads as unknown.
 */
SIM_API CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes,
                                                CUpointer_attribute *attributes,
                                                void **data, CUdeviceptr ptr)
{
	struct sim_alloc *a;

	SIM_ENTER("cuPointerGetAttributes");
	if (numAttributes == 0 || !attributes || !data)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < numAttributes; i++)
		if (!data[i] || sim_attr_size(attributes[i]) == 0)
			return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim.lock);
	a = sim_find(ptr);
	if (!a && sim_resv_holding(ptr, 1)) {
		for (unsigned int i = 0; i < numAttributes; i++) {
			if (attributes[i] == CU_POINTER_ATTRIBUTE_BUFFER_ID) {
				pthread_mutex_unlock(&sim.lock);
				return CUDA_ERROR_INVALID_VALUE;
			}
		}
	}
	for (unsigned int i = 0; i < numAttributes; i++) {
		_Alignas(8) unsigned char tmp[32] = {0};
		int unknown_ordinal = -2;

		if (a)
			sim_attr_get(a, ptr, attributes[i], tmp);
		else if (attributes[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
			memcpy(tmp, &unknown_ordinal, sizeof(unknown_ordinal));
		memcpy(data[i], tmp, sim_attr_size(attributes[i]));
	}
	pthread_mutex_unlock(&sim.lock);
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuPointerSetAttribute(const void *value,
                                               CUpointer_attribute attribute,
                                               CUdeviceptr ptr)
{
	struct sim_alloc *a;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;
	int v;

	SIM_ENTER("cuPointerSetAttribute");
	if (!value || attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&v, value, sizeof(v));
	pthread_mutex_lock(&sim.lock);
	a = sim_find(ptr);
	if (a && sim_is_device_kind(a)) {
		a->sync_memops = v != 0;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}
