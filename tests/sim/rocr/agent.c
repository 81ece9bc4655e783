/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* agent.c: agents, their memory pools, and the questions about both. */
#include "sim_rocr.h"

#include <stdio.h>
#include <string.h>

/*
 * Handles are addresses inside sim.agents, checked by arithmetic before
 * any dereference, so a stale or made-up handle is refused, not followed.
 * Callers hold sim.lock.
 */
struct sim_agent *sim_agent_from(hsa_agent_t h)
{
	uintptr_t lo = (uintptr_t)&sim.agents[0];
	uintptr_t off = (uintptr_t)h.handle - lo;

	if ((uintptr_t)h.handle < lo || off % sizeof(sim.agents[0]) ||
	    off / sizeof(sim.agents[0]) >= (uintptr_t)sim.nagents)
		return NULL;
	return &sim.agents[off / sizeof(sim.agents[0])];
}

hsa_agent_t sim_agent_handle(int index)
{
	hsa_agent_t h = {(uint64_t)(uintptr_t)&sim.agents[index]};

	return h;
}

/* Caller holds sim.lock.  Agent bits, or 0 if an agent is invalid. */
uint32_t sim_agent_mask(uint32_t num, const hsa_agent_t *agents)
{
	uint32_t mask = 0;

	for (uint32_t i = 0; i < num; i++) {
		struct sim_agent *a = sim_agent_from(agents[i]);

		if (!a)
			return 0;
		mask |= 1u << a->index;
	}
	return mask;
}

static struct sim_pool *sim_pool_from(hsa_amd_memory_pool_t h)
{
	for (int i = 0; i < sim.nagents; i++)
		if (h.handle == (uint64_t)(uintptr_t)&sim.agents[i].pool)
			return &sim.agents[i].pool;
	return NULL;
}

/* The callback runs without sim.lock, so it may call back in. */
SIM_API hsa_status_t HSA_API hsa_iterate_agents(
        hsa_status_t (*callback)(hsa_agent_t agent, void *data), void *data)
{
	int n;

	SIM_ENTER("hsa_iterate_agents");
	if (!callback)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim.lock);
	n = sim.nagents;
	pthread_mutex_unlock(&sim.lock);
	for (int i = 0; i < n; i++) {
		hsa_status_t rc = callback(sim_agent_handle(i), data);

		if (rc != HSA_STATUS_SUCCESS)
			return rc;
	}
	return HSA_STATUS_SUCCESS;
}

/* char[len] attributes: the name, NUL-padded. */
static void sim_put_name(void *value, size_t len, const char *name)
{
	memset(value, 0, len);
	snprintf(value, len, "%s", name);
}

static hsa_status_t sim_amd_agent_info(const struct sim_agent *a, int attr,
                                       void *value)
{
	int gpu = a->type == HSA_DEVICE_TYPE_GPU;
	char uuid[21];

	switch (attr) {
	case HSA_AMD_AGENT_INFO_CHIP_ID:
		*(uint32_t *)value = gpu ? 0x740f : 0;
		break;
	case HSA_AMD_AGENT_INFO_CACHELINE_SIZE:
		*(uint32_t *)value = gpu ? 128 : 64;
		break;
	case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT:
		*(uint32_t *)value = gpu ? 104 : 4;
		break;
	case HSA_AMD_AGENT_INFO_DRIVER_NODE_ID:
		*(uint32_t *)value = (uint32_t)a->index;
		break;
	case HSA_AMD_AGENT_INFO_BDFID: /* bus << 8 | device << 3 | function */
		*(uint32_t *)value = gpu ? (uint32_t)(0x10 + a->index) << 8 : 0;
		break;
	case HSA_AMD_AGENT_INFO_DOMAIN:
		*(uint32_t *)value = 0;
		break;
	case HSA_AMD_AGENT_INFO_PRODUCT_NAME:
		sim_put_name(value, 64,
		             gpu ? "hmr simulated GPU" : "hmr simulated CPU");
		break;
	case HSA_AMD_AGENT_INFO_UUID: /* char[21]: a type header, 16 hex */
		if (gpu)
			snprintf(uuid, sizeof(uuid), "GPU-%016llx",
			         0x53494d524f435200ull + (unsigned)a->index);
		else
			snprintf(uuid, sizeof(uuid), "CPU-XX");
		sim_put_name(value, sizeof(uuid), uuid);
		break;
	default:
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	}
	return HSA_STATUS_SUCCESS;
}

static hsa_status_t sim_agent_info(const struct sim_agent *a, int attr,
                                   void *value)
{
	int gpu = a->type == HSA_DEVICE_TYPE_GPU;

	switch (attr) {
	case HSA_AGENT_INFO_NAME:
		sim_put_name(value, 64, gpu ? "gfx90a" : "hmr-sim-cpu");
		break;
	case HSA_AGENT_INFO_VENDOR_NAME:
		sim_put_name(value, 64, gpu ? "AMD" : "CPU");
		break;
	case HSA_AGENT_INFO_FEATURE:
		*(hsa_agent_feature_t *)value =
		        gpu ? HSA_AGENT_FEATURE_KERNEL_DISPATCH
		            : HSA_AGENT_FEATURE_AGENT_DISPATCH;
		break;
	case HSA_AGENT_INFO_MACHINE_MODEL:
		*(hsa_machine_model_t *)value = HSA_MACHINE_MODEL_LARGE;
		break;
	case HSA_AGENT_INFO_PROFILE:
		*(hsa_profile_t *)value =
		        gpu ? HSA_PROFILE_BASE : HSA_PROFILE_FULL;
		break;
	case HSA_AGENT_INFO_WAVEFRONT_SIZE:
		*(uint32_t *)value = gpu ? 64 : 0;
		break;
	case HSA_AGENT_INFO_QUEUES_MAX:
		*(uint32_t *)value = gpu ? 128 : 0;
		break;
	case HSA_AGENT_INFO_NODE:
		*(uint32_t *)value = (uint32_t)a->index;
		break;
	case HSA_AGENT_INFO_DEVICE:
		*(hsa_device_type_t *)value = a->type;
		break;
	case HSA_AGENT_INFO_VERSION_MAJOR:
	case HSA_AGENT_INFO_VERSION_MINOR:
		*(uint16_t *)value = 1;
		break;
	default:
		return sim_amd_agent_info(a, attr, value);
	}
	return HSA_STATUS_SUCCESS;
}

SIM_API hsa_status_t HSA_API hsa_agent_get_info(hsa_agent_t agent,
                                                hsa_agent_info_t attribute,
                                                void *value)
{
	struct sim_agent *a;
	hsa_status_t rc;

	SIM_ENTER("hsa_agent_get_info");
	if (!value)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim.lock);
	a = sim_agent_from(agent);
	rc = a ? sim_agent_info(a, (int)attribute, value)
	       : HSA_STATUS_ERROR_INVALID_AGENT;
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/* One pool per agent: GPU coarse-grained VRAM, CPU fine-grained system. */
SIM_API hsa_status_t HSA_API hsa_amd_agent_iterate_memory_pools(
        hsa_agent_t agent,
        hsa_status_t (*callback)(hsa_amd_memory_pool_t memory_pool, void *data),
        void *data)
{
	hsa_amd_memory_pool_t pool = {0};
	struct sim_agent *a;

	SIM_ENTER("hsa_amd_agent_iterate_memory_pools");
	if (!callback)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim.lock);
	a = sim_agent_from(agent);
	if (a)
		pool.handle = (uint64_t)(uintptr_t)&a->pool;
	pthread_mutex_unlock(&sim.lock);
	if (!a)
		return HSA_STATUS_ERROR_INVALID_AGENT;
	return callback(pool, data);
}

static hsa_status_t sim_pool_info(const struct sim_pool *p, int attr,
                                  void *value)
{
	int gpu = p->owner->type == HSA_DEVICE_TYPE_GPU;
	size_t total = gpu ? SIM_DEV_MEMORY : SIM_SYS_MEMORY;

	switch (attr) {
	case HSA_AMD_MEMORY_POOL_INFO_SEGMENT:
		*(hsa_amd_segment_t *)value = HSA_AMD_SEGMENT_GLOBAL;
		break;
	case HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS:
		*(uint32_t *)value =
		        gpu ? HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED
		            : HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED |
		                        HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT;
		break;
	case HSA_AMD_MEMORY_POOL_INFO_SIZE:
	case HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE:
		*(size_t *)value = total;
		break;
	case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED:
		*(bool *)value = true;
		break;
	case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE:
	case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT:
		*(size_t *)value = sim.page;
		break;
	case HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL:
		*(bool *)value = !gpu;
		break;
	default:
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	}
	return HSA_STATUS_SUCCESS;
}

SIM_API hsa_status_t HSA_API
hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t memory_pool,
                             hsa_amd_memory_pool_info_t attribute, void *value)
{
	struct sim_pool *p;
	hsa_status_t rc;

	SIM_ENTER("hsa_amd_memory_pool_get_info");
	if (!value)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim.lock);
	p = sim_pool_from(memory_pool);
	rc = p ? sim_pool_info(p, (int)attribute, value)
	       : (hsa_status_t)HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/*
 * ACCESS only: allowed by default to the owner, and to everyone for the
 * system pool; a GPU pool is disallowed by default to any other agent
 * (hsa_amd_agents_allow_access grants it per allocation).
 */
SIM_API hsa_status_t HSA_API hsa_amd_agent_memory_pool_get_info(
        hsa_agent_t agent, hsa_amd_memory_pool_t memory_pool,
        hsa_amd_agent_memory_pool_info_t attribute, void *value)
{
	hsa_status_t rc = HSA_STATUS_SUCCESS;
	struct sim_agent *a;
	struct sim_pool *p;

	SIM_ENTER("hsa_amd_agent_memory_pool_get_info");
	if (!value)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim.lock);
	a = sim_agent_from(agent);
	p = sim_pool_from(memory_pool);
	if (!a)
		rc = HSA_STATUS_ERROR_INVALID_AGENT;
	else if (!p)
		rc = (hsa_status_t)HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
	else if (attribute != HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS)
		rc = HSA_STATUS_ERROR_INVALID_ARGUMENT;
	else if (p->owner == a || p->owner->type == HSA_DEVICE_TYPE_CPU)
		*(hsa_amd_memory_pool_access_t *)value =
		        HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT;
	else
		*(hsa_amd_memory_pool_access_t *)value =
		        HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT;
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/* The pool's owner, for memory.c; caller holds sim.lock. */
struct sim_agent *sim_pool_owner(hsa_amd_memory_pool_t h)
{
	struct sim_pool *p = sim_pool_from(h);

	return p ? p->owner : NULL;
}
