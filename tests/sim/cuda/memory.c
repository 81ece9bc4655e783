/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* memory.c: device, managed and host allocations, ranges, dma-buf export. */
#include "sim_cuda.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Caller holds sim.lock.  DEVICE (counted against the device) or MANAGED. */
static CUresult sim_new_device_alloc(enum sim_kind kind, int device,
                                     CUcontext ctx, size_t size,
                                     CUdeviceptr *out)
{
	/* Under a page: 512-byte placement, pages shared (sim_cuda.h). */
	int shared = kind == SIM_KIND_DEVICE && size < sim.page &&
	             !sim_cfg.host_accessible;
	size_t span = sim_round_up(size, shared ? SIM_SMALL_ALIGN : sim.page);
	size_t align = size >= SIM_GRANULARITY ? SIM_GRANULARITY
	               : shared                ? SIM_SMALL_ALIGN
	                                       : sim.page;
	struct sim_alloc *a;
	CUdeviceptr addr;
	char name[64];

	if (kind == SIM_KIND_DEVICE &&
	    sim.dev[device].used + span > SIM_DEV_MEMORY)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (sim_slot_find(device, span, align, &addr))
		return CUDA_ERROR_OUT_OF_MEMORY;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a->id = sim.next_id++;
	snprintf(name, sizeof(name), "sim-cuda:dev%d:buf%llu", device, a->id);
	if (sim_mem_create(&a->mem, sim_round_up(size, sim.page), 0, name)) {
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a->base = addr;
	a->size = size;
	a->span = span;
	a->kind = kind;
	a->device = device;
	a->ctx = ctx;
	a->shared_page = shared;
	if ((!shared && sim_map_device(addr, &a->mem, 0, span,
	                               kind == SIM_KIND_MANAGED)) ||
	    sim_table_insert(&sim.tab, a)) {
		if (!shared)
			sim_unmap_fixed(addr, span);
		sim_mem_destroy(&a->mem);
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (kind == SIM_KIND_DEVICE)
		sim.dev[device].used += span;
	*out = addr;
	return CUDA_SUCCESS;
}

static CUresult sim_alloc_in_ctx(enum sim_kind kind, CUdeviceptr *dptr,
                                 size_t size)
{
	CUcontext ctx;
	CUresult rc;

	if (!dptr || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sim_ctx_require(&ctx);
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&sim.lock);
	rc = sim_new_device_alloc(kind, ctx->device, ctx, size, dptr);
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
	CUcontext ctx;
	CUresult rc;

	SIM_ENTER("cuMemAlloc");
	if (!sim_cfg.expandable)
		return sim_alloc_in_ctx(SIM_KIND_DEVICE, dptr, bytesize);
	if (!dptr || bytesize == 0)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sim_ctx_require(&ctx);
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&sim.lock);
	rc = sim_expand_alloc(ctx->device, bytesize, dptr);
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
                                           unsigned int flags)
{
	SIM_ENTER("cuMemAllocManaged");
	if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	return sim_alloc_in_ctx(SIM_KIND_MANAGED, dptr, bytesize);
}

/* Frees the allocation based at p if its kind is one of mask's. */
static CUresult sim_free_base(CUdeviceptr p, unsigned int mask)
{
	struct sim_alloc *a;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&sim.lock);
	a = sim_find(p);
	if ((mask & (1u << SIM_KIND_DEVICE)) && sim_expand_free(p, &rc)) {
		pthread_mutex_unlock(&sim.lock);
		return rc;
	}
	if (a && a->base == p && (mask & (1u << a->kind))) {
		sim_free_alloc(a);
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API CUresult CUDAAPI cuMemFree(CUdeviceptr dptr)
{
	SIM_ENTER("cuMemFree");
	if (dptr == 0)
		return CUDA_SUCCESS;
	return sim_free_base(dptr,
	                     1u << SIM_KIND_DEVICE | 1u << SIM_KIND_MANAGED);
}

static CUresult sim_host_alloc(void **pp, size_t size, unsigned int flags)
{
	struct sim_alloc *a;
	CUcontext ctx;
	CUresult rc;
	char name[64];

	if (!pp || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sim_ctx_require(&ctx);
	if (rc != CUDA_SUCCESS)
		return rc;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&sim.lock);
	a->id = sim.next_id++;
	snprintf(name, sizeof(name), "sim-cuda:host:buf%llu", a->id);
	a->span = sim_round_up(size, sim.page);
	if (sim_mem_create(&a->mem, a->span, 0, name) == 0) {
		a->base = (CUdeviceptr)(uintptr_t)a->mem.shadow;
		a->size = size;
		a->kind = SIM_KIND_HOST;
		a->device = ctx->device;
		a->ctx = ctx;
		a->flags = flags;
		if (sim_table_insert(&sim.tab, a) == 0) {
			*pp = a->mem.shadow;
			a = NULL;
		} else {
			sim_mem_destroy(&a->mem);
		}
	}
	pthread_mutex_unlock(&sim.lock);
	free(a);
	return a ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemAllocHost(void **pp, size_t bytesize)
{
	SIM_ENTER("cuMemAllocHost");
	return sim_host_alloc(pp, bytesize, 0);
}

SIM_API CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize,
                                        unsigned int Flags)
{
	SIM_ENTER("cuMemHostAlloc");
	if (Flags & ~(unsigned int)(CU_MEMHOSTALLOC_PORTABLE |
	                            CU_MEMHOSTALLOC_DEVICEMAP |
	                            CU_MEMHOSTALLOC_WRITECOMBINED))
		return CUDA_ERROR_INVALID_VALUE;
	return sim_host_alloc(pp, bytesize, Flags);
}

SIM_API CUresult CUDAAPI cuMemFreeHost(void *p)
{
	SIM_ENTER("cuMemFreeHost");
	return sim_free_base((CUdeviceptr)(uintptr_t)p, 1u << SIM_KIND_HOST);
}

/* Every page of [p, p + len) is mapped in this process. */
static int sim_host_mapped(uintptr_t p, size_t len)
{
	uintptr_t lo = p / sim.page * sim.page;
	uintptr_t hi = sim_round_up(p + len, sim.page);
	unsigned char vec[256];

	while (lo < hi) {
		size_t n = (hi - lo) / sim.page;

		if (n > sizeof(vec))
			n = sizeof(vec);
		if (mincore((void *)lo, n * sim.page, vec) && errno == ENOMEM)
			return 0;
		lo += n * sim.page;
	}
	return 1;
}

SIM_API CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize,
                                           unsigned int Flags)
{
	CUdeviceptr base = (CUdeviceptr)(uintptr_t)p;
	struct sim_alloc *a;
	CUcontext ctx;
	CUresult rc;

	SIM_ENTER("cuMemHostRegister");
	if (!p || bytesize == 0 || base + bytesize < base ||
	    (Flags & ~(unsigned int)(CU_MEMHOSTREGISTER_PORTABLE |
	                             CU_MEMHOSTREGISTER_DEVICEMAP |
	                             CU_MEMHOSTREGISTER_IOMEMORY |
	                             CU_MEMHOSTREGISTER_READ_ONLY)))
		return CUDA_ERROR_INVALID_VALUE;
	if (Flags & CU_MEMHOSTREGISTER_IOMEMORY)
		return CUDA_ERROR_NOT_SUPPORTED;
	rc = sim_ctx_require(&ctx);
	if (rc != CUDA_SUCCESS)
		return rc;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&sim.lock);
	if (sim_in_window(base) || sim_in_window(base + bytesize - 1) ||
	    !sim_host_mapped(base, bytesize)) {
		rc = CUDA_ERROR_INVALID_VALUE;
	} else if (sim_table_overlap(&sim.tab, base, bytesize)) {
		rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	} else {
		a->base = base;
		a->size = a->span = bytesize;
		a->kind = SIM_KIND_REGISTERED;
		a->device = ctx->device;
		a->ctx = ctx;
		a->flags = Flags;
		a->mem.fd = -1;
		a->id = sim.next_id++;
		rc = sim_table_insert(&sim.tab, a) ? CUDA_ERROR_OUT_OF_MEMORY
		                                   : CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	if (rc != CUDA_SUCCESS)
		free(a);
	return rc;
}

SIM_API CUresult CUDAAPI cuMemHostUnregister(void *p)
{
	CUresult rc;

	SIM_ENTER("cuMemHostUnregister");
	rc = sim_free_base((CUdeviceptr)(uintptr_t)p,
	                   1u << SIM_KIND_REGISTERED);
	return rc == CUDA_SUCCESS ? rc : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

SIM_API CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p,
                                                   unsigned int Flags)
{
	struct sim_alloc *a;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	SIM_ENTER("cuMemHostGetDevicePointer");
	if (!pdptr || Flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim.lock);
	a = sim_find((CUdeviceptr)(uintptr_t)p);
	if (a && (a->kind == SIM_KIND_HOST || a->kind == SIM_KIND_REGISTERED)) {
		*pdptr = (CUdeviceptr)(uintptr_t)p; /* unified addressing */
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/* The allocation, or for VMM memory the mapped segment, holding dptr. */
SIM_API CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize,
                                              CUdeviceptr dptr)
{
	struct sim_alloc *a;
	CUresult rc = CUDA_ERROR_NOT_FOUND;

	SIM_ENTER("cuMemGetAddressRange");
	rc = sim_ctx_require(NULL); /* lab/gpu.md: 201 without one */
	if (rc != CUDA_SUCCESS)
		return rc;
	rc = CUDA_ERROR_NOT_FOUND;
	pthread_mutex_lock(&sim.lock);
	a = sim_find(dptr);
	if (a) {
		if (pbase)
			*pbase = a->base;
		if (psize)
			*psize = a->size;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API CUresult CUDAAPI cuMemGetInfo(size_t *free_bytes, size_t *total)
{
	CUcontext ctx;
	CUresult rc;

	SIM_ENTER("cuMemGetInfo");
	if (!free_bytes || !total)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sim_ctx_require(&ctx);
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&sim.lock);
	*total = SIM_DEV_MEMORY;
	*free_bytes = SIM_DEV_MEMORY - sim.dev[ctx->device].used;
	pthread_mutex_unlock(&sim.lock);
	return CUDA_SUCCESS;
}
