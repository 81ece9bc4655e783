/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* memory.c: pool allocations, deallocation callbacks, access, ids. */
#include "sim_rocr.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static uint32_t sim_all_agents(void)
{
	return (uint32_t)((1ull << sim.nagents) - 1);
}

/* Caller holds sim.lock.  The memfd, its shadow, and the device mapping. */
static int sim_back(struct sim_alloc *a, const struct sim_agent *owner)
{
	char name[64];

	if (owner->type == HSA_DEVICE_TYPE_GPU)
		snprintf(name, sizeof(name), "sim-rocr:gpu%d:buf%llu",
		         owner->index - 1, a->id);
	else
		snprintf(name, sizeof(name), "sim-rocr:cpu:buf%llu", a->id);
	a->fd = sim_memfd(name, a->span);
	if (a->fd < 0)
		return -1;
	a->shadow = sim_map_shadow(a->fd, a->span);
	if (!a->shadow)
		return -1;
	if (owner->type != HSA_DEVICE_TYPE_GPU) {
		a->base = (uintptr_t)a->shadow; /* host memory: one mapping */
		return 0;
	}
	if (sim_slot_find(owner->index - 1, a->span, &a->base))
		return -1;
	return sim_map_device(a->base, a->fd, a->span);
}

/* Caller holds sim.lock. */
static hsa_status_t sim_pool_alloc(struct sim_agent *owner, size_t size,
                                   void **ptr)
{
	size_t total = owner->type == HSA_DEVICE_TYPE_GPU ? SIM_DEV_MEMORY
	                                                  : SIM_SYS_MEMORY;
	size_t span = sim_round_up(size, sim.page);
	struct sim_alloc *a;

	if (size > total) /* above HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE */
		return HSA_STATUS_ERROR_INVALID_ALLOCATION;
	if (owner->used + span > total)
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	a = calloc(1, sizeof(*a));
	if (!a)
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	a->id = sim.next_id++;
	a->size = size;
	a->span = span;
	a->kind = owner->type == HSA_DEVICE_TYPE_GPU ? SIM_KIND_GPU
	                                             : SIM_KIND_SYS;
	a->owner = owner->index;
	a->access =
	        a->kind == SIM_KIND_GPU ? 1u << owner->index : sim_all_agents();
	if (sim_back(a, owner) || sim_table_insert(&sim.tab, a)) {
		sim_destroy_alloc(a);
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	}
	owner->used += span;
	*ptr = (void *)a->base;
	return HSA_STATUS_SUCCESS;
}

SIM_API hsa_status_t HSA_API
hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t memory_pool, size_t size,
                             uint32_t flags, void **ptr)
{
	/* 5.2.3 wants flags 0; 5.6 also takes HSA_AMD_MEMORY_POOL_PCIE_FLAG. */
	uint32_t ok_flags = SIM_HAS_DMABUF ? SIM_POOL_PCIE_FLAG : 0;
	struct sim_agent *owner;
	hsa_status_t rc;

	SIM_ENTER("hsa_amd_memory_pool_allocate");
	if (size == 0 || !ptr || (flags & ~ok_flags))
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim.lock);
	owner = sim_pool_owner(memory_pool);
	rc = owner ? sim_pool_alloc(owner, size, ptr)
	           : (hsa_status_t)HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/*
 * As ROCr's Runtime::FreeMemory: the allocation leaves the table first,
 * then its deallocation callbacks run without the lock (they may call
 * the runtime), then the memory goes.  The entry stays "dying" in the
 * table meanwhile, so no allocation can take its address before the
 * callbacks are done.
 */
static hsa_status_t sim_free(void *ptr)
{
	struct sim_notifier *n, *next;
	struct sim_alloc *a;

	if (!ptr)
		return HSA_STATUS_SUCCESS;
	pthread_mutex_lock(&sim.lock);
	a = sim_find((uintptr_t)ptr);
	if (!a || a->base != (uintptr_t)ptr) {
		pthread_mutex_unlock(&sim.lock);
		return HSA_STATUS_ERROR_INVALID_ALLOCATION;
	}
	if (a->kind == SIM_KIND_IPC) { /* detach, not free, releases it */
		pthread_mutex_unlock(&sim.lock);
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	}
	a->dying = 1;
	n = a->notify;
	a->notify = NULL;
	pthread_mutex_unlock(&sim.lock);
	for (; n; n = next) {
		next = n->next;
		n->callback(n->ptr, n->user_data);
		free(n);
	}
	pthread_mutex_lock(&sim.lock);
	(void)sim_table_remove(&sim.tab, a);
	if (a->owner < sim.nagents)
		sim.agents[a->owner].used -= a->span;
	sim_destroy_alloc(a);
	pthread_mutex_unlock(&sim.lock);
	return HSA_STATUS_SUCCESS;
}

SIM_API hsa_status_t HSA_API hsa_amd_memory_pool_free(void *ptr)
{
	SIM_ENTER("hsa_amd_memory_pool_free");
	return sim_free(ptr);
}

/* ROCr's hsa_amd_memory_pool_free is this very call. */
SIM_API hsa_status_t HSA_API hsa_memory_free(void *ptr)
{
	SIM_ENTER("hsa_memory_free");
	return sim_free(ptr);
}

/* ptr may point anywhere in a pool allocation; it is what callback gets. */
SIM_API hsa_status_t HSA_API hsa_amd_register_deallocation_callback(
        void *ptr, hsa_amd_deallocation_callback_t callback, void *user_data)
{
	struct sim_notifier *n, **tail;
	struct sim_alloc *a;
	hsa_status_t rc = HSA_STATUS_ERROR_INVALID_ALLOCATION;

	SIM_ENTER("hsa_amd_register_deallocation_callback");
	if (!ptr || !callback)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	n = calloc(1, sizeof(*n));
	if (!n)
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	n->ptr = ptr;
	n->callback = callback;
	n->user_data = user_data;
	pthread_mutex_lock(&sim.lock);
	a = sim_find((uintptr_t)ptr);
	if (a && a->kind != SIM_KIND_IPC) { /* ROCr: not for imports */
		for (tail = &a->notify; *tail; tail = &(*tail)->next)
			;
		*tail = n; /* callbacks run in registration order */
		n = NULL;
		rc = HSA_STATUS_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	free(n);
	return rc;
}

/* Removes every registration of (ptr, callback), as ROCr does. */
SIM_API hsa_status_t HSA_API hsa_amd_deregister_deallocation_callback(
        void *ptr, hsa_amd_deallocation_callback_t callback)
{
	hsa_status_t rc = HSA_STATUS_ERROR_INVALID_ARGUMENT;
	struct sim_notifier **pp, *gone = NULL;
	struct sim_alloc *a;

	SIM_ENTER("hsa_amd_deregister_deallocation_callback");
	if (!ptr || !callback)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim.lock);
	a = sim_find((uintptr_t)ptr);
	for (pp = a ? &a->notify : &gone; *pp;) {
		struct sim_notifier *n = *pp;

		if (n->ptr == ptr && n->callback == callback) {
			*pp = n->next;
			free(n);
			rc = HSA_STATUS_SUCCESS;
		} else {
			pp = &n->next;
		}
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API hsa_status_t HSA_API
hsa_amd_agents_allow_access(uint32_t num_agents, const hsa_agent_t *agents,
                            const uint32_t *flags, const void *ptr)
{
	hsa_status_t rc = HSA_STATUS_SUCCESS;
	struct sim_alloc *a;
	uint32_t mask;

	SIM_ENTER("hsa_amd_agents_allow_access");
	if (num_agents == 0 || !agents || flags || !ptr)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim.lock);
	mask = sim_agent_mask(num_agents, agents);
	a = sim_find((uintptr_t)ptr);
	if (!mask)
		rc = HSA_STATUS_ERROR_INVALID_AGENT;
	else if (!a || a->base != (uintptr_t)ptr)
		rc = HSA_STATUS_ERROR_INVALID_ARGUMENT;
	else if (a->kind != SIM_KIND_IPC) /* imports: granted at attach */
		a->access |= mask;
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/* Test hook, not a ROCr symbol: the allocation id of ROCr memory, or 0. */
SIM_API unsigned long long hmr_sim_rocr_buffer_id(const void *ptr)
{
	unsigned long long id = 0;
	struct sim_alloc *a;

	pthread_mutex_lock(&sim.lock);
	a = sim_find((uintptr_t)ptr);
	if (a && (uintptr_t)ptr - a->base < a->size)
		id = a->id;
	pthread_mutex_unlock(&sim.lock);
	return id;
}
