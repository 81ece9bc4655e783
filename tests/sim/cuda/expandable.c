/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* expandable.c: cuMemAlloc laid out as PyTorch's expandable segments. */
#include "sim_cuda.h"

#include <stdlib.h>
#include <string.h>

/*
 * HMR_SIM_CUDA_EXPANDABLE=1.  PyTorch with
 * PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (lab/gpu.md) reserves
 * one large VA range per device (157 GiB there; SIM_EXPAND_RESV here),
 * maps 20 MiB physical chunks (cuMemCreate + cuMemMap) at its end as it
 * grows, and places tensors inside them; a tensor may span chunks.  The
 * driver sees only the reservation and the chunks: every tensor's
 * RANGE_START_ADDR/RANGE_SIZE is the reservation, cuMemGetAddressRange
 * and BUFFER_ID its chunk.  Here cuMemAlloc plays the allocator: a bump
 * pointer from the reservation's start, 512-byte aligned; cuMemFree
 * forgets the tensor and keeps the chunks mapped, as the caching
 * allocator does.  A test may unmap and replace a chunk with the VMM
 * calls.  All functions here expect sim.lock held.
 */

/* Map one more chunk at the end of the mapped part. */
static CUresult sim_expand_grow(int device, struct sim_expand *x)
{
	CUmemAllocationProp prop;
	struct sim_phys *p;
	CUresult rc;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = device;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	prop.allocFlags.gpuDirectRDMACapable = 1;
	if (x->mapped + SIM_EXPAND_CHUNK > SIM_EXPAND_RESV)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = sim_phys_create(&prop, SIM_EXPAND_CHUNK, &p);
	if (rc != CUDA_SUCCESS)
		return rc;
	rc = sim_vmm_map(x->base + x->mapped, SIM_EXPAND_CHUNK, 0, p);
	/* The mapping holds the memory: unmapping the chunk frees it. */
	p->handle_refs--;
	if (rc != CUDA_SUCCESS) {
		sim_phys_put(p);
		return rc;
	}
	/* PyTorch grants its device read/write (cuMemSetAccess). */
	sim_find(x->base + x->mapped)->access[device] =
	        CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	x->mapped += SIM_EXPAND_CHUNK;
	return CUDA_SUCCESS;
}

static int sim_expand_track(struct sim_expand *x, CUdeviceptr p)
{
	if (x->nlive == x->caplive) {
		size_t cap = x->caplive ? x->caplive * 2 : 64;
		CUdeviceptr *t = realloc(x->live, cap * sizeof(*t));

		if (!t)
			return -1;
		x->live = t;
		x->caplive = cap;
	}
	x->live[x->nlive++] = p;
	return 0;
}

CUresult sim_expand_alloc(int device, size_t size, CUdeviceptr *out)
{
	struct sim_expand *x = &sim.dev[device].expand;
	CUresult rc = CUDA_SUCCESS;
	size_t at;

	if (!x->base) {
		rc = sim_resv_add(SIM_EXPAND_RESV, SIM_GRANULARITY, 0,
		                  &x->base);
		if (rc != CUDA_SUCCESS)
			return rc;
	}
	at = sim_round_up(x->top, SIM_SMALL_ALIGN);
	if (size > SIM_EXPAND_RESV - at)
		return CUDA_ERROR_OUT_OF_MEMORY;
	while (rc == CUDA_SUCCESS && x->mapped < at + size)
		rc = sim_expand_grow(device, x);
	if (rc == CUDA_SUCCESS && sim_expand_track(x, x->base + at))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc != CUDA_SUCCESS)
		return rc;
	x->top = at + size;
	*out = x->base + at;
	return CUDA_SUCCESS;
}

int sim_expand_free(CUdeviceptr p, CUresult *rc)
{
	for (int d = 0; d < sim_cfg.ndev; d++) {
		struct sim_expand *x = &sim.dev[d].expand;

		if (!x->base || p < x->base || p - x->base >= SIM_EXPAND_RESV)
			continue;
		*rc = CUDA_ERROR_INVALID_VALUE;
		for (size_t i = 0; i < x->nlive; i++) {
			if (x->live[i] == p) {
				x->live[i] = x->live[--x->nlive];
				*rc = CUDA_SUCCESS;
				break;
			}
		}
		return 1;
	}
	return 0;
}
