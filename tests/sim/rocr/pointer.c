/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* pointer.c: hsa_amd_pointer_info and host memory locking. */
#include "sim_rocr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Caller holds sim.lock.  Fills ret from an entry; the accessible mask. */
static uint32_t sim_describe(uintptr_t p, hsa_amd_pointer_info_t *ret)
{
	struct sim_alloc *a = sim_find(p);
	struct sim_lock *l;

	/* ROCr matches allocations on their requested size. */
	if (a && p - a->base < a->size) {
		int gpu = sim.agents[a->owner].type == HSA_DEVICE_TYPE_GPU;

		ret->type = a->kind == SIM_KIND_IPC ? HSA_EXT_POINTER_TYPE_IPC
		                                    : HSA_EXT_POINTER_TYPE_HSA;
		/*
		 * ROCr reports hostBaseAddress == agentBaseAddress for every
		 * allocation in its map (core/runtime/runtime.cpp PtrInfo),
		 * GPU memory included: the owner agent's type, not a NULL
		 * host base, tells device from host memory.
		 */
		ret->agentBaseAddress = (void *)a->base;
		ret->hostBaseAddress = (void *)a->base;
		ret->sizeInBytes = a->size;
		ret->userData = a->user_data;
		ret->agentOwner = sim_agent_handle(a->owner);
		ret->global_flags =
		        gpu ? HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED
		            : HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED;
		return a->access;
	}
	l = sim_lock_find(p);
	if (l) {
		/* Locked system memory: owned by the CPU, mapped to GPUs. */
		ret->type = HSA_EXT_POINTER_TYPE_LOCKED;
		ret->agentBaseAddress = (void *)l->host;
		ret->hostBaseAddress = (void *)l->host;
		ret->sizeInBytes = l->size;
		ret->agentOwner = sim_agent_handle(0);
		ret->global_flags =
		        HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
		return l->access;
	}
	ret->type = HSA_EXT_POINTER_TYPE_UNKNOWN;
	return 0;
}

/*
 * info->size must be set by the caller; only min(info->size, our size)
 * bytes are written, and info->size says how many.  Memory ROCr does not
 * know is HSA_EXT_POINTER_TYPE_UNKNOWN with every other field zero.  The
 * accessible list is returned only when alloc, num_agents_accessible and
 * accessible are all given.
 */
SIM_API hsa_status_t HSA_API hsa_amd_pointer_info(
        const void *ptr, hsa_amd_pointer_info_t *info, void *(*alloc)(size_t),
        uint32_t *num_agents_accessible, hsa_agent_t **accessible)
{
	hsa_agent_t list[SIM_MAX_AGENTS];
	hsa_amd_pointer_info_t ret;
	uint32_t mask, n = 0;

	SIM_ENTER("hsa_amd_pointer_info");
	if (!ptr || !info || info->size == 0)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	memset(&ret, 0, sizeof(ret));
	ret.size = info->size < sizeof(ret) ? info->size : sizeof(ret);
	pthread_mutex_lock(&sim.lock);
	mask = sim_describe((uintptr_t)ptr, &ret);
	for (int i = 0; i < sim.nagents; i++)
		if (mask & (1u << i))
			list[n++] = sim_agent_handle(i);
	pthread_mutex_unlock(&sim.lock);
	memcpy(info, &ret, ret.size);
	if (ret.type == HSA_EXT_POINTER_TYPE_UNKNOWN || !alloc ||
	    !num_agents_accessible || !accessible)
		return HSA_STATUS_SUCCESS;
	*accessible = alloc(sizeof(hsa_agent_t) * n);
	if (!*accessible)
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	memcpy(*accessible, list, sizeof(hsa_agent_t) * n);
	*num_agents_accessible = n;
	return HSA_STATUS_SUCCESS;
}

/* Only the first byte of an allocation, as ROCr's allocation map. */
SIM_API hsa_status_t HSA_API hsa_amd_pointer_info_set_userdata(const void *ptr,
                                                               void *userdata)
{
	hsa_status_t rc = HSA_STATUS_ERROR_INVALID_ARGUMENT;
	struct sim_alloc *a;

	SIM_ENTER("hsa_amd_pointer_info_set_userdata");
	if (!ptr)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim.lock);
	a = sim_find((uintptr_t)ptr);
	if (a && a->base == (uintptr_t)ptr) {
		a->user_data = userdata;
		rc = HSA_STATUS_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
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

/* Caller holds sim.lock: records [p, p + size) as locked for gpus. */
static hsa_status_t sim_lock_range(uintptr_t p, size_t size, uint32_t gpus)
{
	struct sim_lock *l;

	if (sim_find(p)) /* ROCr memory is already GPU accessible */
		return HSA_STATUS_SUCCESS;
	if (p + size < p || sim_in_window(p) || sim_in_window(p + size - 1) ||
	    !sim_host_mapped(p, size))
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES; /* KFD refuses */
	for (l = sim.locks; l; l = l->next) {
		if (l->host == p && l->size == size) {
			l->refs++;
			l->access |= gpus;
			return HSA_STATUS_SUCCESS;
		}
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	l->host = p;
	l->size = size;
	l->refs = 1;
	l->access = gpus;
	l->next = sim.locks;
	sim.locks = l;
	return HSA_STATUS_SUCCESS;
}

/*
 * As ROCr's MemoryRegion::Lock: agents NULL means every GPU; CPU agents
 * in the list are skipped, and a list without GPUs locks nothing.  The
 * agent pointer is host_ptr (the KFD maps user pages at their own
 * address in the GPU's SVM aperture).
 */
SIM_API hsa_status_t HSA_API hsa_amd_memory_lock(void *host_ptr, size_t size,
                                                 hsa_agent_t *agents,
                                                 int num_agent,
                                                 void **agent_ptr)
{
	hsa_status_t rc = HSA_STATUS_SUCCESS;
	uint32_t gpus, cpu = 1;

	SIM_ENTER("hsa_amd_memory_lock");
	if (size == 0 || !host_ptr || !agent_ptr)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	*agent_ptr = NULL;
	if ((agents && num_agent <= 0) || (!agents && num_agent != 0))
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim.lock);
	if (agents) {
		gpus = sim_agent_mask((uint32_t)num_agent, agents);
		if (!gpus)
			rc = HSA_STATUS_ERROR_INVALID_AGENT;
	} else {
		gpus = (uint32_t)((1ull << sim.nagents) - 1);
	}
	gpus &= ~cpu;
	if (rc == HSA_STATUS_SUCCESS && gpus)
		rc = sim_lock_range((uintptr_t)host_ptr, size, gpus);
	pthread_mutex_unlock(&sim.lock);
	if (rc == HSA_STATUS_SUCCESS)
		*agent_ptr = host_ptr;
	return rc;
}

/* ROCr succeeds whatever host_ptr is; one unlock undoes one lock. */
SIM_API hsa_status_t HSA_API hsa_amd_memory_unlock(void *host_ptr)
{
	struct sim_lock **pp;

	SIM_ENTER("hsa_amd_memory_unlock");
	pthread_mutex_lock(&sim.lock);
	for (pp = &sim.locks; *pp; pp = &(*pp)->next) {
		struct sim_lock *l = *pp;

		if (l->host != (uintptr_t)host_ptr)
			continue;
		if (--l->refs == 0) {
			*pp = l->next;
			free(l);
		}
		break;
	}
	pthread_mutex_unlock(&sim.lock);
	return HSA_STATUS_SUCCESS;
}
