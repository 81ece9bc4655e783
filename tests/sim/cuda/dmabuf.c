/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dmabuf.c: cuMemGetHandleForAddressRange, as lab/gpu.md measured it. */
#include "sim_cuda.h"

#include <fcntl.h>
#include <linux/udmabuf.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * The driver (lab/gpu.md) exports any range whose start and length are
 * page multiples: a sub-range of an allocation, two adjacent allocations,
 * two VMM segments.  It refuses a range with an unmapped part, and
 * cuMemAllocHost memory where attribute 146 is 0.  The fd is described in
 * sim_cuda.h.
 */
#if SIM_HAS(11070)

static int sim_device_kind(const struct sim_alloc *a)
{
	return a->kind == SIM_KIND_DEVICE || a->kind == SIM_KIND_IPC ||
	       a->kind == SIM_KIND_VMM;
}

/*
 * Caller holds sim.lock.  Every page of [p, end) meets device memory of
 * `dev` (a page that small allocations share is mapped as a whole, as the
 * driver's 2 MiB pages are).  0: a page is unmapped.
 */
static int sim_device_pages(CUdeviceptr p, CUdeviceptr end, int dev)
{
	size_t i = sim_table_index(&sim.tab, p);

	/* The entry before p may reach into p's page. */
	if (i > 0)
		i--;
	while (p < end) {
		struct sim_alloc *a = NULL;
		CUdeviceptr a_end;

		for (; i < sim.tab.n; i++) {
			a = sim_at(i);
			if (a->base + a->span > p)
				break;
		}
		if (i == sim.tab.n || a->base >= p + sim.page ||
		    !sim_device_kind(a) || a->device != dev)
			return 0;
		a_end = sim_round_up(a->base + a->span, sim.page);
		p = a_end > p ? a_end : p + sim.page;
	}
	return 1;
}

/*
 * The memfd that holds the whole range, with dptr at *off in it, or -1:
 * then no one memfd can stand for the range.  A dup of the memfd shows
 * the range only where dptr is its byte 0; a udmabuf
 * (HMR_SIM_DMABUF=udmabuf) starts wherever it is asked to.
 */
static int sim_alias_fd(const struct sim_alloc *a, CUdeviceptr dptr,
                        size_t size, off_t *off)
{
	int vmm = a->kind == SIM_KIND_VMM;
	const struct sim_mem *m = vmm ? &a->phys->mem : &a->mem;
	size_t at = (vmm ? a->offset : 0) + (size_t)(dptr - a->base);

	if (a->shared_page || m->fd < 0 || (at != 0 && !sim_dmabuf_real()))
		return -1;
	if (at > m->size || size > m->size - at)
		return -1;
	*off = (off_t)at;
	return m->fd;
}

/*
 * Under HMR_SIM_DMABUF=udmabuf, a range no one memfd holds (it meets
 * several allocations or VMM chunks, every page checked by
 * sim_device_pages): the memfd piece of each, in address order, for one
 * udmabuf of them all.  Their count, with *out to free, or 0: a part
 * shares its page with another allocation or has no memfd of its own
 * (such a range keeps the opaque fd), or no memory for the list.
 */
static unsigned sim_pieces(CUdeviceptr p, CUdeviceptr end,
                           struct udmabuf_create_item **out)
{
	size_t first = sim_table_index(&sim.tab, p), i;
	struct udmabuf_create_item *it;
	unsigned n = 0;

	/* The entry holding p is the one before: its base is at or below p. */
	first = first > 0 ? first - 1 : 0;
	for (i = first; i < sim.tab.n && sim_at(i)->base < end; i++)
		;
	it = calloc(i - first + 1, sizeof(*it));
	for (i = first; it && p < end && i < sim.tab.n; i++, n++) {
		const struct sim_alloc *a = sim_at(i);
		int vmm = a->kind == SIM_KIND_VMM;
		const struct sim_mem *m = vmm ? &a->phys->mem : &a->mem;
		size_t at = (vmm ? a->offset : 0) + (size_t)(p - a->base);
		CUdeviceptr a_end = a->base + a->span;
		size_t len = (size_t)((a_end < end ? a_end : end) - p);

		if (a->base > p || a_end <= p || a->shared_page || m->fd < 0 ||
		    at % sim.page || len % sim.page || at > m->size ||
		    len > m->size - at)
			break;
		it[n].memfd = (uint32_t)m->fd;
		it[n].offset = at;
		it[n].size = len;
		p += len;
	}
	if (!it || p < end) {
		free(it);
		return 0;
	}
	*out = it;
	return n;
}

/* An fd the CPU cannot map, whose name and size say what it exports. */
static int sim_opaque_fd(int dev, CUdeviceptr dptr, size_t size)
{
	char name[96], path[64];
	int fd, opaque;

	snprintf(name, sizeof(name), "sim-cuda:dmabuf:dev%d:%#llx+%#zx", dev,
	         (unsigned long long)dptr, size);
	fd = sim_memfd(name, size);
	if (fd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	opaque = open(path, O_PATH | O_CLOEXEC);
	close(fd);
	return opaque;
}

/* Caller holds sim.lock. */
static CUresult sim_export(CUdeviceptr dptr, size_t size,
                           unsigned long long flags, int *out)
{
	struct udmabuf_create_item *items = NULL;
	struct sim_alloc *a = sim_find(dptr);
	off_t off = 0;
	unsigned n;
	int fd;

	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->kind == SIM_KIND_HOST) {
		/* CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED */
		if (sim_cfg.driver_version < 13000 ||
		    !sim.dev[a->device].host_dmabuf)
			return CUDA_ERROR_INVALID_VALUE;
		if (size > sim_round_up(a->size, sim.page) - (dptr - a->base))
			return CUDA_ERROR_INVALID_VALUE;
	} else if (!sim_device_kind(a) ||
	           !sim_device_pages(dptr, dptr + size, a->device)) {
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (!sim.dev[a->device].dmabuf)
		return CUDA_ERROR_NOT_SUPPORTED;
	if ((flags & CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) &&
	    !sim_cfg.pcie_mapping)
		return CUDA_ERROR_NOT_SUPPORTED;
	fd = sim_alias_fd(a, dptr, size, &off);
	if (fd >= 0)
		fd = sim_dmabuf_fd(fd, off, size);
	else if (sim_dmabuf_real() &&
	         (n = sim_pieces(dptr, dptr + size, &items)) > 0)
		fd = sim_dmabuf_list_fd(items, n);
	else
		fd = sim_opaque_fd(a->device, dptr, size);
	free(items);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim.last_export = dptr;
	sim.last_export_size = size;
	sim.exports++;
	*out = fd;
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemGetHandleForAddressRange(
        void *handle, CUdeviceptr dptr, size_t size,
        CUmemRangeHandleType handleType, unsigned long long flags)
{
	CUresult rc;

	SIM_ENTER("cuMemGetHandleForAddressRange");
	if (!handle || handleType != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD ||
	    (flags & ~(unsigned long long)
	                     CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) ||
	    size == 0 || dptr % sim.page || size % sim.page ||
	    dptr + size < dptr)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sim_ctx_require(NULL); /* lab/gpu.md: 201 without one */
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&sim.lock);
	rc = sim_export(dptr, size, flags, (int *)handle);
	pthread_mutex_unlock(&sim.lock);
	return rc;
}
#endif

/* Test hook, not a driver symbol: the last range exported, and how many
 * exports succeeded so far. */
SIM_API unsigned long hmr_sim_cuda_last_export(CUdeviceptr *dptr, size_t *size)
{
	unsigned long n;

	pthread_mutex_lock(&sim.lock);
	if (dptr)
		*dptr = sim.last_export;
	if (size)
		*size = sim.last_export_size;
	n = sim.exports;
	pthread_mutex_unlock(&sim.lock);
	return n;
}
