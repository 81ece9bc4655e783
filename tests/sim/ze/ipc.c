/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ipc.c: zeMemGetIpcHandle, zeMemOpenIpcHandle, zeMemCloseIpcHandle. */
#include "sim_ze.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The handle starts, as compute-runtime's does, with the exporter's
 * driver-owned dma-buf fd (libfabric reads and rewrites those 4 bytes).
 * The rest names the exporter: an importer in another process opens
 * /proc/<pid>/fd/<fd> (standing in for the pidfd_getfd the real driver
 * uses) and checks the memfd's name, which carries the allocation id, so
 * a freed (and reused) fd is refused.  A handle whose other bytes are
 * zero carries a fd of THIS process, passed by the application itself
 * (SCM_RIGHTS, as libfabric's shm provider does); the driver dups it and
 * the caller keeps its own.
 */
struct sim_ipc_handle {
	int32_t fd;
	char magic[8];
	int32_t pid;
	int32_t device;
	uint32_t reserved;
	uint64_t size;
	uint64_t span;
	uint64_t id;
};

_Static_assert(sizeof(struct sim_ipc_handle) <= ZE_MAX_IPC_HANDLE_SIZE,
               "IPC handle too large");

static const char sim_ipc_magic[8] = "SIMZEIPC";

static ze_result_t sim_get_ipc_handle(ze_context_handle_t hContext,
                                      const void *ptr,
                                      ze_ipc_mem_handle_t *pIpcHandle)
{
	struct sim_ipc_handle h;
	struct sim_alloc *a;
	ze_result_t rc = ZE_RESULT_ERROR_INVALID_ARGUMENT;
	int fd = -1;

	SIM_ENTER("zeMemGetIpcHandle");
	if (!ptr || !pIpcHandle)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	memset(&h, 0, sizeof(h));
	pthread_mutex_lock(&sim.lock);
	a = sim_find((uintptr_t)ptr);
	if (!sim_context_ok(hContext)) {
		rc = ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	} else if (a && a->base == (uintptr_t)ptr &&
	           a->kind == SIM_KIND_DEVICE) {
		/* The spec wants the base of a device allocation. */
		rc = sim_driver_fd(a, &fd);
		h.fd = fd;
		memcpy(h.magic, sim_ipc_magic, sizeof(h.magic));
		h.pid = (int32_t)getpid();
		h.device = a->dev->index;
		h.size = a->size;
		h.span = a->span;
		h.id = a->id;
	}
	pthread_mutex_unlock(&sim.lock);
	if (rc == ZE_RESULT_SUCCESS) {
		memset(pIpcHandle, 0, sizeof(*pIpcHandle));
		memcpy(pIpcHandle->data, &h, sizeof(h));
	}
	return rc;
}

/* A fd of ours for the handle's memfd, or -1. */
static int sim_ipc_fd(const struct sim_ipc_handle *h, int named)
{
	char path[64];

	if (!named || h->pid == (int32_t)getpid())
		return fcntl(h->fd, F_DUPFD_CLOEXEC, 0);
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", h->pid, h->fd);
	return open(path, O_RDWR | O_CLOEXEC);
}

/* fd is a simulated allocation's memfd (of any copy of the driver). */
static int sim_ipc_fd_ok(int fd, const struct sim_ipc_handle *h, int named,
                         size_t *span)
{
	char path[64], link[160];
	unsigned long long id;
	struct stat st;
	ssize_t n;
	int dev;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	if (strncmp(link, "/memfd:sim-ze-", 14) != 0 ||
	    sscanf(link + 15, ":dev%d:buf%llu", &dev, &id) != 2 ||
	    fstat(fd, &st) || st.st_size <= 0 || (size_t)st.st_size % sim.page)
		return 0;
	if (named && (id != h->id || (uint64_t)st.st_size < h->span))
		return 0;
	*span = named ? h->span : (size_t)st.st_size;
	return 1;
}

/* Caller holds sim.lock.  Takes ownership of fd. */
static ze_result_t sim_ipc_map(int fd, size_t size, size_t span,
                               ze_device_handle_t dev, void **out)
{
	size_t align = size >= SIM_LARGE_PAGE ? SIM_LARGE_PAGE : sim.page;
	struct sim_alloc *a;
	uintptr_t addr;

	if (sim_slot_find(dev, span, align, &addr)) {
		close(fd);
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	}
	a = sim_alloc_new(SIM_KIND_IPC, dev);
	if (!a) {
		close(fd);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	if (sim_mem_adopt(&a->mem, fd, span)) {
		free(a);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	a->base = addr;
	a->size = size;
	a->span = span;
	a->page_size = align;
	if (sim_map_device(addr, &a->mem, 0) || sim_table_insert(&sim.tab, a)) {
		sim_unmap_fixed(addr, span);
		sim_mem_destroy(&a->mem);
		free(a);
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	}
	*out = (void *)addr;
	return ZE_RESULT_SUCCESS;
}

/* Every open maps anew: the spec promises unique pointers. */
static ze_result_t sim_open_ipc_handle(ze_context_handle_t hContext,
                                       ze_device_handle_t hDevice,
                                       ze_ipc_mem_handle_t handle,
                                       ze_ipc_memory_flags_t flags, void **pptr)
{
	struct sim_ipc_handle h;
	ze_result_t rc;
	size_t span;
	int named, fd;

	SIM_ENTER("zeMemOpenIpcHandle");
	if (!sim_device_ok(hDevice))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (flags & ~(ze_ipc_memory_flags_t)(ZE_IPC_MEMORY_FLAG_BIAS_CACHED |
	                                     ZE_IPC_MEMORY_FLAG_BIAS_UNCACHED))
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (!pptr)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	memcpy(&h, handle.data, sizeof(h));
	named = memcmp(h.magic, sim_ipc_magic, sizeof(h.magic)) == 0;
	if (named && (h.span == 0 || h.size > h.span))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	fd = sim_ipc_fd(&h, named);
	if (fd < 0)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (!sim_ipc_fd_ok(fd, &h, named, &span)) {
		close(fd);
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	pthread_mutex_lock(&sim.lock);
	if (sim_context_ok(hContext)) {
		rc = sim_ipc_map(fd, named ? h.size : span, span, hDevice,
		                 pptr);
	} else {
		close(fd);
		rc = ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

static ze_result_t sim_close_ipc_handle(ze_context_handle_t hContext,
                                        const void *ptr)
{
	struct sim_alloc *a;
	ze_result_t rc = ZE_RESULT_ERROR_INVALID_ARGUMENT;

	SIM_ENTER("zeMemCloseIpcHandle");
	if (!ptr)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	pthread_mutex_lock(&sim.lock);
	a = sim_find((uintptr_t)ptr);
	if (!sim_context_ok(hContext)) {
		rc = ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	} else if (a && a->base == (uintptr_t)ptr && a->kind == SIM_KIND_IPC) {
		sim_free_alloc(a);
		rc = ZE_RESULT_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

void sim_fill_ipc(ze_mem_dditable_t *t)
{
	t->pfnGetIpcHandle = sim_get_ipc_handle;
	t->pfnOpenIpcHandle = sim_open_ipc_handle;
	t->pfnCloseIpcHandle = sim_close_ipc_handle;
}
