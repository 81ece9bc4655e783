/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ipc.c: cuIpcGetMemHandle, cuIpcOpenMemHandle_v2, cuIpcCloseMemHandle. */
#include "sim_cuda.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A handle names the exporter's memfd by pid and fd number; the importer
 * opens /proc/<pid>/fd/<fd> and checks the memfd's name, which carries the
 * buffer id, so a freed (and reused) fd is refused.
 */
struct sim_ipc_handle {
	char magic[8];
	int32_t pid;
	int32_t fd;
	int32_t device;
	uint32_t reserved;
	uint64_t size;
	uint64_t span;
	uint64_t id;
};

_Static_assert(sizeof(struct sim_ipc_handle) <= CU_IPC_HANDLE_SIZE,
               "IPC handle too large");

static const char sim_ipc_magic[8] = "SIMCUIPC";

SIM_API CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *pHandle,
                                           CUdeviceptr dptr)
{
	struct sim_ipc_handle h;
	struct sim_alloc *a;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	SIM_ENTER("cuIpcGetMemHandle");
	if (!pHandle)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sim_ctx_require(NULL); /* lab/gpu.md: 201 without one */
	if (rc != CUDA_SUCCESS)
		return rc;
	rc = CUDA_ERROR_INVALID_VALUE;
	memset(&h, 0, sizeof(h));
	pthread_mutex_lock(&sim.lock);
	a = sim_find(dptr);
	if (a && a->base == dptr && a->kind == SIM_KIND_DEVICE) {
		memcpy(h.magic, sim_ipc_magic, sizeof(h.magic));
		h.pid = (int32_t)getpid();
		h.fd = a->mem.fd;
		h.device = a->device;
		h.size = a->size;
		h.span = a->mem.size; /* page-rounded, shared pages too */
		h.id = a->id;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	if (rc == CUDA_SUCCESS) {
		memset(pHandle, 0, sizeof(*pHandle));
		memcpy(pHandle->reserved, &h, sizeof(h));
	}
	return rc;
}

/* Opens the exporter's memfd; -1 if it is gone or is not the buffer. */
static int sim_ipc_open_fd(const struct sim_ipc_handle *h)
{
	char path[64], want[96], link[128];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", h->pid, h->fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	snprintf(want, sizeof(want), "/memfd:sim-cuda:dev%d:buf%llu ",
	         h->device, (unsigned long long)h->id);
	if (strncmp(link, want, strlen(want)) != 0 || fstat(fd, &st) ||
	    (uint64_t)st.st_size < h->span) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Caller holds sim.lock. */
static CUresult sim_ipc_map(const struct sim_ipc_handle *h, CUcontext ctx,
                            CUdeviceptr *out)
{
	size_t align = h->size >= SIM_GRANULARITY ? SIM_GRANULARITY : sim.page;
	struct sim_alloc *a;
	CUdeviceptr addr;
	int fd;

	if (sim_slot_find(h->device, h->span, align, &addr))
		return CUDA_ERROR_OUT_OF_MEMORY;
	fd = sim_ipc_open_fd(h);
	if (fd < 0)
		return CUDA_ERROR_INVALID_HANDLE;
	a = calloc(1, sizeof(*a));
	if (!a) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (sim_mem_adopt(&a->mem, fd, h->span)) {
		free(a);
		return CUDA_ERROR_MAP_FAILED;
	}
	a->base = addr;
	a->size = h->size;
	a->span = h->span;
	a->kind = SIM_KIND_IPC;
	a->device = h->device;
	a->ctx = ctx;
	a->id = sim.next_id++;
	a->ipc_refs = 1;
	a->ipc_pid = h->pid;
	a->ipc_id = h->id;
	if (sim_map_device(addr, &a->mem, 0, a->span, 0) ||
	    sim_table_insert(&sim.tab, a)) {
		sim_unmap_fixed(addr, a->span);
		sim_mem_destroy(&a->mem);
		free(a);
		return CUDA_ERROR_MAP_FAILED;
	}
	*out = addr;
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr *pdptr,
                                            CUipcMemHandle handle,
                                            unsigned int Flags)
{
	struct sim_ipc_handle h;
	CUcontext ctx;
	CUresult rc;

	SIM_ENTER("cuIpcOpenMemHandle");
	if (!pdptr ||
	    (Flags & ~(unsigned int)CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&h, handle.reserved, sizeof(h));
	if (memcmp(h.magic, sim_ipc_magic, sizeof(h.magic)) != 0 ||
	    h.span == 0 || h.size > h.span)
		return CUDA_ERROR_INVALID_VALUE;
	if (h.device < 0 || h.device >= sim_cfg.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	rc = sim_ctx_require(&ctx);
	if (rc != CUDA_SUCCESS)
		return rc;
	/* The driver refuses to open a handle in the exporting process. */
	if (h.pid == (int32_t)getpid())
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&sim.lock);
	for (size_t i = 0; i < sim.tab.n; i++) {
		struct sim_alloc *a = sim_at(i);

		if (a->kind == SIM_KIND_IPC && a->ipc_pid == h.pid &&
		    a->ipc_id == h.id) {
			a->ipc_refs++;
			*pdptr = a->base;
			pthread_mutex_unlock(&sim.lock);
			return CUDA_SUCCESS;
		}
	}
	rc = sim_ipc_map(&h, ctx, pdptr);
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	struct sim_alloc *a;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	SIM_ENTER("cuIpcCloseMemHandle");
	rc = sim_ctx_require(NULL); /* lab/gpu.md: 201 without one */
	if (rc != CUDA_SUCCESS)
		return rc;
	rc = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim.lock);
	a = sim_find(dptr);
	if (a && a->base == dptr && a->kind == SIM_KIND_IPC) {
		if (--a->ipc_refs == 0)
			sim_free_alloc(a);
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}
