/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* memory.c: device, host and shared allocations, queries, dma-buf export. */
#include "sim_ze.h"

#include <stdio.h>
#include <stdlib.h>

#define SIM_DEVICE_FLAGS 0x7u /* ze_device_mem_alloc_flags_t */
#define SIM_HOST_FLAGS   0xfu /* ze_host_mem_alloc_flags_t */

static int sim_ctx_check(ze_context_handle_t hContext)
{
	int ok;

	pthread_mutex_lock(&sim.lock);
	ok = sim_context_ok(hContext);
	pthread_mutex_unlock(&sim.lock);
	return ok;
}

/* The checks every zeMemAlloc* makes, in the order the spec lists them. */
static ze_result_t sim_alloc_args(size_t size, size_t alignment)
{
	if (size == 0 || size > SIM_MAX_ALLOC)
		return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
	if (alignment & (alignment - 1))
		return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_device_desc(const ze_device_mem_alloc_desc_t *desc)
{
	const ze_base_desc_t *ext;

	if (desc->flags & ~SIM_DEVICE_FLAGS)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (desc->ordinal != 0) /* one memory per device */
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	for (ext = desc->pNext; ext; ext = ext->pNext)
		if (ext->stype == ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD)
			return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	return ZE_RESULT_SUCCESS;
}

static size_t sim_align_for(size_t size, size_t alignment)
{
	size_t align = size >= SIM_LARGE_PAGE ? SIM_LARGE_PAGE : sim.page;

	return alignment > align ? alignment : align;
}

/*
 * Caller holds sim.lock.  DEVICE or SHARED memory in win's window;
 * report is the device zeMemGetAllocProperties names.
 */
static ze_result_t sim_window_alloc(enum sim_kind kind, ze_device_handle_t win,
                                    ze_device_handle_t report, size_t size,
                                    size_t alignment, void **out)
{
	size_t span = sim_round_up(size, sim.page);
	size_t align = sim_align_for(size, alignment);
	struct sim_alloc *a;
	uintptr_t addr;
	char name[64];

	if (kind == SIM_KIND_DEVICE && win->used + span > SIM_DEV_MEMORY)
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	if (sim_slot_find(win, span, align, &addr))
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	a = sim_alloc_new(kind, report);
	if (!a)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	snprintf(name, sizeof(name), "sim-ze-%s:dev%d:buf%llu", SIM_ZE_ID,
	         win->index, (unsigned long long)a->id);
	if (sim_mem_create(&a->mem, span, sim.page, name)) {
		free(a);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	a->base = addr;
	a->size = size;
	a->span = span;
	a->page_size = align;
	if (sim_map_device(addr, &a->mem, kind == SIM_KIND_SHARED) ||
	    sim_table_insert(&sim.tab, a)) {
		sim_unmap_fixed(addr, span);
		sim_mem_destroy(&a->mem);
		free(a);
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	}
	if (kind == SIM_KIND_DEVICE)
		win->used += span;
	*out = (void *)addr;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_mem_alloc_device(ze_context_handle_t hContext,
                                        const ze_device_mem_alloc_desc_t *desc,
                                        size_t size, size_t alignment,
                                        ze_device_handle_t hDevice, void **pptr)
{
	ze_result_t rc;

	SIM_ENTER("zeMemAllocDevice");
	if (!sim_ctx_check(hContext) || !sim_device_ok(hDevice))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !pptr)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	rc = sim_device_desc(desc);
	if (rc == ZE_RESULT_SUCCESS)
		rc = sim_alloc_args(size, alignment);
	if (rc != ZE_RESULT_SUCCESS)
		return rc;
	pthread_mutex_lock(&sim.lock);
	rc = sim_window_alloc(SIM_KIND_DEVICE, hDevice, hDevice, size,
	                      alignment, pptr);
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/* Unbound shared memory lives in device 0's window, reporting no device. */
static ze_result_t sim_mem_alloc_shared(ze_context_handle_t hContext,
                                        const ze_device_mem_alloc_desc_t *ddesc,
                                        const ze_host_mem_alloc_desc_t *hdesc,
                                        size_t size, size_t alignment,
                                        ze_device_handle_t hDevice, void **pptr)
{
	ze_result_t rc;

	SIM_ENTER("zeMemAllocShared");
	if (!sim_ctx_check(hContext) || (hDevice && !sim_device_ok(hDevice)))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!ddesc || !hdesc || !pptr)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (hdesc->flags & ~SIM_HOST_FLAGS)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	rc = sim_device_desc(ddesc);
	if (rc == ZE_RESULT_SUCCESS)
		rc = sim_alloc_args(size, alignment);
	if (rc != ZE_RESULT_SUCCESS)
		return rc;
	pthread_mutex_lock(&sim.lock);
	rc = sim_window_alloc(SIM_KIND_SHARED, hDevice ? hDevice : &sim.dev[0],
	                      hDevice, size, alignment, pptr);
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

static ze_result_t sim_mem_alloc_host(ze_context_handle_t hContext,
                                      const ze_host_mem_alloc_desc_t *desc,
                                      size_t size, size_t alignment,
                                      void **pptr)
{
	struct sim_alloc *a;
	ze_result_t rc;
	char name[64];

	SIM_ENTER("zeMemAllocHost");
	if (!sim_ctx_check(hContext))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !pptr)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->flags & ~SIM_HOST_FLAGS)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	rc = sim_alloc_args(size, alignment);
	if (rc != ZE_RESULT_SUCCESS)
		return rc;
	pthread_mutex_lock(&sim.lock);
	rc = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	a = sim_alloc_new(SIM_KIND_HOST, NULL);
	if (a) {
		snprintf(name, sizeof(name), "sim-ze-%s:host:buf%llu",
		         SIM_ZE_ID, (unsigned long long)a->id);
		a->span = sim_round_up(size, sim.page);
		a->size = size;
		a->page_size = sim_align_for(0, alignment);
		if (sim_mem_create(&a->mem, a->span, a->page_size, name) == 0) {
			a->base = (uintptr_t)a->mem.shadow;
			if (sim_table_insert(&sim.tab, a) == 0) {
				*pptr = a->mem.shadow;
				rc = ZE_RESULT_SUCCESS;
			} else {
				sim_mem_destroy(&a->mem);
			}
		}
		if (rc != ZE_RESULT_SUCCESS)
			free(a);
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/* Frees the USM allocation based at ptr; IPC mappings are refused. */
static ze_result_t sim_free(ze_context_handle_t hContext, void *ptr)
{
	struct sim_alloc *a;
	ze_result_t rc = ZE_RESULT_ERROR_INVALID_ARGUMENT;

	pthread_mutex_lock(&sim.lock);
	if (!sim_context_ok(hContext)) {
		rc = ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	} else if (!ptr) {
		rc = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	} else {
		a = sim_find((uintptr_t)ptr);
		if (!a || a->base != (uintptr_t)ptr || !sim_is_usm(a)) {
			rc = ZE_RESULT_ERROR_INVALID_ARGUMENT;
		} else if (a->kind == SIM_KIND_IPC) {
			sim_log("zeMemFree(%p): an IPC mapping, which "
			        "zeMemCloseIpcHandle releases",
			        ptr);
		} else {
			sim_free_alloc(a);
			rc = ZE_RESULT_SUCCESS;
		}
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

static ze_result_t sim_mem_free(ze_context_handle_t hContext, void *ptr)
{
	SIM_ENTER("zeMemFree");
	return sim_free(hContext, ptr);
}

/* Both policies free at once: the simulator's copies never linger. */
static ze_result_t sim_mem_free_ext(ze_context_handle_t hContext,
                                    const ze_memory_free_ext_desc_t *desc,
                                    void *ptr)
{
	SIM_ENTER("zeMemFreeExt");
	if (!desc)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->freePolicy & ~(ze_driver_memory_free_policy_ext_flags_t)0x3)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	return sim_free(hContext, ptr);
}

static ze_memory_type_t sim_type_of(const struct sim_alloc *a)
{
	switch (a->kind) {
	case SIM_KIND_HOST:
		return ZE_MEMORY_TYPE_HOST;
	case SIM_KIND_SHARED:
		return ZE_MEMORY_TYPE_SHARED;
	case SIM_KIND_DEVICE:
	case SIM_KIND_IPC:
		return ZE_MEMORY_TYPE_DEVICE;
	default:
		return ZE_MEMORY_TYPE_UNKNOWN;
	}
}

/* Caller holds sim.lock.  A chained ze_external_memory_export_fd_t. */
static ze_result_t sim_export(struct sim_alloc *a,
                              ze_external_memory_export_fd_t *ex)
{
	ze_result_t rc;
	int fd = -1;

	if (ex->flags & ZE_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD ||
	    !(ex->flags & ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF))
		return ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
	if (a->kind == SIM_KIND_SHARED ||
	    (a->kind == SIM_KIND_HOST && !sim_cfg.host_dmabuf) ||
	    (a->dev && !a->dev->dmabuf))
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	rc = sim_export_fd(a, &fd);
	if (rc == ZE_RESULT_SUCCESS)
		ex->fd = fd;
	return rc;
}

/*
 * Memory this driver did not allocate is ZE_MEMORY_TYPE_UNKNOWN with
 * ZE_RESULT_SUCCESS, and then (as in compute-runtime) id, pageSize,
 * *phDevice and any chained export are left untouched.
 */
static ze_result_t sim_mem_properties(ze_context_handle_t hContext,
                                      const void *ptr,
                                      ze_memory_allocation_properties_t *props,
                                      ze_device_handle_t *phDevice)
{
	ze_base_properties_t *ext;
	struct sim_alloc *a;
	ze_result_t rc = ZE_RESULT_SUCCESS;

	SIM_ENTER("zeMemGetAllocProperties");
	pthread_mutex_lock(&sim.lock);
	if (!sim_context_ok(hContext)) {
		rc = ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
		goto out;
	}
	if (!ptr || !props) {
		rc = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
		goto out;
	}
	a = sim_find((uintptr_t)ptr);
	if (!a || !sim_is_usm(a)) {
		props->type = ZE_MEMORY_TYPE_UNKNOWN;
		goto out;
	}
	props->type = sim_type_of(a);
	props->id = a->id;
	props->pageSize = a->page_size;
	if (phDevice)
		*phDevice = a->dev;
	for (ext = props->pNext; ext && rc == ZE_RESULT_SUCCESS;
	     ext = ext->pNext) {
		if (ext->stype == ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_FD)
			rc = sim_export(a,
			                (ze_external_memory_export_fd_t *)ext);
		else
			rc = ZE_RESULT_ERROR_INVALID_ENUMERATION;
	}
out:
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/* Any pointer inside a USM allocation; ERROR_UNKNOWN otherwise. */
static ze_result_t sim_mem_address_range(ze_context_handle_t hContext,
                                         const void *ptr, void **pBase,
                                         size_t *pSize)
{
	struct sim_alloc *a;
	ze_result_t rc = ZE_RESULT_ERROR_UNKNOWN;

	SIM_ENTER("zeMemGetAddressRange");
	if (!ptr)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	pthread_mutex_lock(&sim.lock);
	a = sim_find((uintptr_t)ptr);
	if (!sim_context_ok(hContext)) {
		rc = ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	} else if (a && sim_is_usm(a)) {
		if (pBase)
			*pBase = (void *)a->base;
		if (pSize)
			*pSize = a->size;
		rc = ZE_RESULT_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

void sim_fill_mem(ze_mem_dditable_t *t)
{
	t->pfnAllocShared = sim_mem_alloc_shared;
	t->pfnAllocDevice = sim_mem_alloc_device;
	t->pfnAllocHost = sim_mem_alloc_host;
	t->pfnFree = sim_mem_free;
	t->pfnFreeExt = sim_mem_free_ext;
	t->pfnGetAllocProperties = sim_mem_properties;
	t->pfnGetAddressRange = sim_mem_address_range;
}
