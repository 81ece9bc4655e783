/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* vmm.c: the virtual memory management API (cuMemCreate, cuMemMap...). */
#include "sim_cuda.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Reservations come first fit from the VMM window.  A physical handle is
 * a memfd; each cuMemMap is one table entry (a "segment") mapping part of
 * it PROT_NONE (read/write with HMR_SIM_CUDA_HOST_ACCESSIBLE) at its VA.
 */

static CUresult sim_prop_check(const CUmemAllocationProp *prop)
{
	if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	switch (prop->location.type) {
	case CU_MEM_LOCATION_TYPE_DEVICE:
		break;
	case CU_MEM_LOCATION_TYPE_HOST:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
		return CUDA_ERROR_NOT_SUPPORTED;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (prop->location.id < 0 || prop->location.id >= sim_cfg.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	if (prop->requestedHandleTypes &
	    ~(unsigned int)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED;
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemGetAllocationGranularity(
        size_t *granularity, const CUmemAllocationProp *prop,
        CUmemAllocationGranularity_flags option)
{
	CUresult rc;

	SIM_ENTER("cuMemGetAllocationGranularity");
	if (!granularity || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
	                     option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
		return CUDA_ERROR_INVALID_VALUE;
	rc = sim_prop_check(prop);
	if (rc == CUDA_SUCCESS)
		*granularity = SIM_GRANULARITY;
	return rc;
}

/* Caller holds sim.lock.  A new handle over mem (owned from now on). */
static struct sim_phys *sim_phys_new(const CUmemAllocationProp *prop,
                                     struct sim_mem *mem)
{
	struct sim_phys *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->mem = *mem;
	p->prop = *prop;
	p->handle = sim.next_handle++;
	p->handle_refs = 1;
	p->next = sim.phys;
	sim.phys = p;
	sim.dev[prop->location.id].used += mem->size;
	return p;
}

/* Caller holds sim.lock.  A new physical allocation of size bytes. */
CUresult sim_phys_create(const CUmemAllocationProp *prop, size_t size,
                         struct sim_phys **out)
{
	int dev = prop->location.id;
	struct sim_phys *p = NULL;
	struct sim_mem mem;
	char name[64];

	if (sim.dev[dev].used + size > SIM_DEV_MEMORY)
		return CUDA_ERROR_OUT_OF_MEMORY;
	snprintf(name, sizeof(name), "sim-cuda:dev%d:mem%llu", dev,
	         sim.next_id);
	if (sim_mem_create(&mem, size, 0, name) == 0) {
		p = sim_phys_new(prop, &mem);
		if (!p)
			sim_mem_destroy(&mem);
	}
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p->block_id = sim.next_id++;
	*out = p;
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle,
                                     size_t size,
                                     const CUmemAllocationProp *prop,
                                     unsigned long long flags)
{
	struct sim_phys *p;
	CUresult rc;

	SIM_ENTER("cuMemCreate");
	if (!handle || flags != 0 || size == 0 || size % SIM_GRANULARITY)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sim_prop_check(prop);
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&sim.lock);
	rc = sim_phys_create(prop, size, &p);
	if (rc == CUDA_SUCCESS)
		*handle = p->handle;
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct sim_phys *p;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	SIM_ENTER("cuMemRelease");
	pthread_mutex_lock(&sim.lock);
	p = sim_phys_find(handle);
	if (p) {
		p->handle_refs--;
		sim_phys_put(p);
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(
        CUmemAllocationProp *prop, CUmemGenericAllocationHandle handle)
{
	struct sim_phys *p;

	SIM_ENTER("cuMemGetAllocationPropertiesFromHandle");
	if (!prop)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim.lock);
	p = sim_phys_find(handle);
	if (p)
		*prop = p->prop;
	pthread_mutex_unlock(&sim.lock);
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Reservations: a sorted array.  Caller holds sim.lock. */
static size_t sim_resv_index(CUdeviceptr p)
{
	size_t i = 0;

	while (i < sim.nresv && sim.resv[i].base <= p)
		i++;
	return i;
}

struct sim_resv *sim_resv_holding(CUdeviceptr p, size_t len)
{
	size_t i = sim_resv_index(p);
	struct sim_resv *r = i ? &sim.resv[i - 1] : NULL;

	if (r && p - r->base < r->size && len <= r->size - (p - r->base))
		return r;
	return NULL;
}

static int sim_resv_fits(CUdeviceptr at, size_t size)
{
	CUdeviceptr lo = sim.vmm_base, hi = lo + SIM_VMM_WINDOW;
	size_t i = sim_resv_index(at);

	if (at < lo || at > hi || size > hi - at)
		return 0;
	if (i && sim.resv[i - 1].base + sim.resv[i - 1].size > at)
		return 0;
	return i == sim.nresv || sim.resv[i].base >= at + size;
}

static int sim_resv_place(size_t size, size_t align, CUdeviceptr hint,
                          CUdeviceptr *out)
{
	CUdeviceptr cand = sim_round_up(sim.vmm_base, align);

	if (hint && hint % align == 0 && sim_resv_fits(hint, size)) {
		*out = hint;
		return 0;
	}
	for (size_t i = 0; i < sim.nresv; i++) {
		struct sim_resv *r = &sim.resv[i];

		if (r->base >= cand + size)
			break;
		if (r->base + r->size > cand)
			cand = sim_round_up(r->base + r->size, align);
	}
	if (!sim_resv_fits(cand, size))
		return -1;
	*out = cand;
	return 0;
}

/* Caller holds sim.lock.  A new reservation, at hint if it fits. */
CUresult sim_resv_add(size_t size, size_t alignment, CUdeviceptr hint,
                      CUdeviceptr *out)
{
	CUdeviceptr at;
	size_t i;

	if (sim.nresv == sim.capresv) {
		size_t cap = sim.capresv ? sim.capresv * 2 : 16;
		struct sim_resv *t = realloc(sim.resv, cap * sizeof(*t));

		if (t) {
			sim.resv = t;
			sim.capresv = cap;
		}
	}
	if (sim.nresv == sim.capresv ||
	    sim_resv_place(size, alignment, hint, &at))
		return CUDA_ERROR_OUT_OF_MEMORY;
	i = sim_resv_index(at);
	memmove(&sim.resv[i + 1], &sim.resv[i],
	        (sim.nresv - i) * sizeof(*sim.resv));
	sim.resv[i].base = at;
	sim.resv[i].size = size;
	sim.nresv++;
	*out = at;
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size,
                                             size_t alignment, CUdeviceptr addr,
                                             unsigned long long flags)
{
	CUresult rc;

	SIM_ENTER("cuMemAddressReserve");
	if (!ptr || size == 0 || size % sim.page || addr % sim.page ||
	    flags != 0 || (alignment & (alignment - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	if (alignment == 0)
		alignment = SIM_GRANULARITY;
	if (alignment < sim.page)
		alignment = sim.page;
	pthread_mutex_lock(&sim.lock);
	rc = sim_resv_add(size, alignment, addr, ptr);
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;
	size_t i;

	SIM_ENTER("cuMemAddressFree");
	pthread_mutex_lock(&sim.lock);
	i = sim_resv_index(ptr);
	/* The whole reservation, with nothing mapped in it any more. */
	if (i && sim.resv[i - 1].base == ptr && sim.resv[i - 1].size == size &&
	    !sim_table_overlap(&sim.tab, ptr, size)) {
		i--;
		memmove(&sim.resv[i], &sim.resv[i + 1],
		        (sim.nresv - i - 1) * sizeof(*sim.resv));
		sim.nresv--;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/* Caller holds sim.lock.  Maps [offset, offset + size) of p at ptr. */
CUresult sim_vmm_map(CUdeviceptr ptr, size_t size, size_t offset,
                     struct sim_phys *p)
{
	struct sim_alloc *a;

	if (offset > p->mem.size || size > p->mem.size - offset ||
	    !sim_resv_holding(ptr, size) ||
	    sim_table_overlap(&sim.tab, ptr, size))
		return CUDA_ERROR_INVALID_VALUE;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a->base = ptr;
	a->size = a->span = size;
	a->kind = SIM_KIND_VMM;
	a->device = p->prop.location.id;
	a->id = sim.next_id++;
	a->phys = p;
	a->offset = offset;
	a->mem.fd = -1;
	if (sim_map_device(ptr, &p->mem, offset, size, 0) ||
	    sim_table_insert(&sim.tab, a)) {
		sim_unmap_fixed(ptr, size);
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	p->map_refs++;
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                  CUmemGenericAllocationHandle handle,
                                  unsigned long long flags)
{
	struct sim_phys *p;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	SIM_ENTER("cuMemMap");
	if (flags != 0 || size == 0 || ptr % SIM_GRANULARITY ||
	    size % SIM_GRANULARITY || offset % SIM_GRANULARITY)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim.lock);
	p = sim_phys_find(handle);
	if (p)
		rc = sim_vmm_map(ptr, size, offset, p);
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/*
 * Caller holds sim.lock.  The index of the first segment of [ptr, ptr +
 * size) if consecutive segments cover it exactly (whole = 1: starting and
 * ending on segment boundaries), else -1.
 */
static long sim_segments(CUdeviceptr ptr, size_t size, int whole)
{
	size_t i = sim_table_index(&sim.tab, ptr), first;
	CUdeviceptr at = ptr, end = ptr + size;

	if (i == 0 || size == 0 || end < ptr)
		return -1;
	first = --i;
	for (; at < end; i++) {
		struct sim_alloc *a = i < sim.tab.n ? sim_at(i) : NULL;

		if (!a || a->kind != SIM_KIND_VMM || a->base > at ||
		    at - a->base >= a->size || (whole && a->base != at))
			return -1;
		at = a->base + a->size;
	}
	return whole && at != end ? -1 : (long)first;
}

SIM_API CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;
	long i;

	SIM_ENTER("cuMemUnmap");
	pthread_mutex_lock(&sim.lock);
	i = sim_segments(ptr, size, 1);
	if (i >= 0) {
		while ((size_t)i < sim.tab.n && sim_at(i)->base < ptr + size)
			sim_free_alloc(sim_at(i));
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size,
                                        const CUmemAccessDesc *desc,
                                        size_t count)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;
	long first;

	SIM_ENTER("cuMemSetAccess");
	if (!desc || count == 0)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t k = 0; k < count; k++) {
		if (desc[k].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
			return CUDA_ERROR_INVALID_VALUE;
		if (desc[k].location.id < 0 ||
		    desc[k].location.id >= sim_cfg.ndev)
			return CUDA_ERROR_INVALID_DEVICE;
		if (desc[k].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
		    desc[k].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
		    desc[k].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
			return CUDA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&sim.lock);
	first = sim_segments(ptr, size, 0);
	for (size_t i = (size_t)first;
	     first >= 0 && i < sim.tab.n && sim_at(i)->base < ptr + size; i++) {
		for (size_t k = 0; k < count; k++)
			sim_at(i)->access[desc[k].location.id] =
			        (unsigned char)desc[k].flags;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API CUresult CUDAAPI cuMemGetAccess(unsigned long long *flags,
                                        const CUmemLocation *location,
                                        CUdeviceptr ptr)
{
	struct sim_alloc *a;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	SIM_ENTER("cuMemGetAccess");
	if (!flags || !location ||
	    location->type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (location->id < 0 || location->id >= sim_cfg.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&sim.lock);
	a = sim_find(ptr);
	if (a && a->kind == SIM_KIND_VMM) {
		*flags = a->access[location->id];
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API CUresult CUDAAPI
cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
	struct sim_alloc *a;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	SIM_ENTER("cuMemRetainAllocationHandle");
	if (!handle)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim.lock);
	a = sim_find((CUdeviceptr)(uintptr_t)addr);
	if (a && a->kind == SIM_KIND_VMM) {
		a->phys->handle_refs++;
		*handle = a->phys->handle;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API CUresult CUDAAPI cuMemExportToShareableHandle(
        void *shareableHandle, CUmemGenericAllocationHandle handle,
        CUmemAllocationHandleType handleType, unsigned long long flags)
{
	struct sim_phys *p;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;
	int fd;

	SIM_ENTER("cuMemExportToShareableHandle");
	if (!shareableHandle || flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&sim.lock);
	p = sim_phys_find(handle);
	if (p && (p->prop.requestedHandleTypes &
	          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
		fd = fcntl(p->mem.fd, F_DUPFD_CLOEXEC, 0);
		rc = fd < 0 ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
		if (fd >= 0)
			*(int *)shareableHandle = fd;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/* The fd must be one that cuMemExportToShareableHandle gave out. */
SIM_API CUresult CUDAAPI cuMemImportFromShareableHandle(
        CUmemGenericAllocationHandle *handle, void *osHandle,
        CUmemAllocationHandleType shHandleType)
{
	CUmemAllocationProp prop = {0};
	int fd = (int)(intptr_t)osHandle, dev;
	char path[64], link[128];
	struct sim_phys *p = NULL;
	struct sim_mem mem;
	struct stat st;
	ssize_t n;

	SIM_ENTER("cuMemImportFromShareableHandle");
	if (!handle || shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	if (sscanf(link, "/memfd:sim-cuda:dev%d:mem", &dev) != 1 || dev < 0 ||
	    dev >= sim_cfg.ndev || fstat(fd, &st) || st.st_size <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	pthread_mutex_lock(&sim.lock);
	if (sim_mem_adopt(&mem, fd, (size_t)st.st_size) == 0) {
		p = sim_phys_new(&prop, &mem);
		if (!p)
			sim_mem_destroy(&mem);
	}
	if (p) {
		p->block_id = sim.next_id++;
		*handle = p->handle;
	}
	pthread_mutex_unlock(&sim.lock);
	return p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
