/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dmabuf.c: the ROCm 5.6 dma-buf calls (built into that variant only). */
#include "sim_rocr.h"

#include <fcntl.h>
#include <unistd.h>

/*
 * As ROCr's Runtime::DmaBufExport (core/runtime/runtime.cpp): the range
 * must lie in one allocation of ROCr's map (checked against its page
 * rounded size), made from a GPU pool; the KFD then exports the whole
 * buffer object and reports where ptr lies in it (libhsakmt fmm.c
 * hsakmt_fmm_export_dma_buf_fd: offset = ptr - object start).
 *
 * Here the buffer object is the allocation: the fd is a dup of its memfd
 * (or a udmabuf of all of it, sim_dmabuf_fd),
 * offset 0 of the fd is the allocation's first byte and *offset is
 * ptr - allocation base.  No alignment is required, as with the KFD.
 *
 *   not ROCr memory, or the range leaves the allocation
 *                      HSA_STATUS_ERROR_INVALID_ALLOCATION
 *   CPU pool memory    HSA_STATUS_ERROR_INVALID_AGENT
 *   an IPC import      HSA_STATUS_ERROR_INVALID_ALLOCATION (ROCr keeps no
 *                      pool for imports; it would dereference NULL)
 *   HMR_SIM_ROCR_DMABUF=0  HSA_STATUS_ERROR (ROCr's answer when the
 *                      thunk says NOT_SUPPORTED: a KFD older than 1.12)
 */
SIM_API hsa_status_t hsa_amd_portable_export_dmabuf(const void *ptr,
                                                    size_t size, int *dmabuf,
                                                    uint64_t *offset)
{
	hsa_status_t rc = HSA_STATUS_ERROR_INVALID_ALLOCATION;
	uintptr_t p = (uintptr_t)ptr;
	struct sim_alloc *a;
	int fd;

	SIM_ENTER("hsa_amd_portable_export_dmabuf");
	if (!ptr || !dmabuf || !offset || size == 0)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim.lock);
	a = sim_find(p);
	if (!a || a->kind == SIM_KIND_IPC || size > a->span - (p - a->base))
		goto out;
	rc = HSA_STATUS_ERROR_INVALID_AGENT;
	if (a->kind != SIM_KIND_GPU)
		goto out;
	rc = HSA_STATUS_ERROR;
	if (!sim_cfg.dmabuf)
		goto out;
	rc = HSA_STATUS_ERROR_OUT_OF_RESOURCES; /* fd table full */
	fd = sim_dmabuf_fd(a->fd, 0, a->span);
	if (fd < 0)
		goto out;
	*dmabuf = fd;
	*offset = p - a->base;
	rc = HSA_STATUS_SUCCESS;
out:
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/* hsa_ext_amd.h: HSA_STATUS_ERROR_RESOURCE_FREE if close fails. */
SIM_API hsa_status_t hsa_amd_portable_close_dmabuf(int dmabuf)
{
	SIM_ENTER("hsa_amd_portable_close_dmabuf");
	return close(dmabuf) == 0 ? HSA_STATUS_SUCCESS
	                          : HSA_STATUS_ERROR_RESOURCE_FREE;
}
