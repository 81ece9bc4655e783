/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* init.c: environment, failure injection, call counters, hsa_init. */
#include "sim_rocr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Environment (read once, at the first call of any entry point):
 *   HMR_SIM_ROCR_DEVICES          number of GPU agents, default 2, at most
 *                                 16; 0 makes hsa_init fail with
 *                                 HSA_STATUS_ERROR_OUT_OF_RESOURCES, as
 *                                 ROCr does on a machine without GPUs
 *   HMR_SIM_ROCR_DMABUF           0: no dma-buf (ROCm 5.6 variant):
 *                                 HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED is
 *                                 false and export fails with
 *                                 HSA_STATUS_ERROR, as ROCr on a KFD older
 *                                 than 1.12; default 1
 *   HMR_SIM_ROCR_HOST_ACCESSIBLE  1: GPU memory is mapped read/write at its
 *                                 device address; default 0 (it faults)
 *   HMR_SIM_ROCR_FAIL             "item,item,...", each item
 *                                 name[@N][=status][:count]: the entry
 *                                 point with that exact name lets its
 *                                 first N calls through (default 0), then
 *                                 returns status (a number or an
 *                                 HSA_STATUS_* name; default
 *                                 HSA_STATUS_ERROR) count times (default:
 *                                 every later call).  "hsa_amd_memory_lock
 *                                 @2:1" fails only the third call.
 */

struct sim_state sim = {
        .lock = PTHREAD_MUTEX_INITIALIZER,
        .tab = SIM_TABLE_INIT(struct sim_alloc, base, span),
        .next_id = 1,
};
struct sim_config sim_cfg;

static pthread_once_t sim_config_once = PTHREAD_ONCE_INIT;

/* "123" or "HSA_STATUS_ERROR_INVALID_ARGUMENT"; -1 if neither. */
static int sim_parse_status(const char *s, hsa_status_t *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (end != s && !*end && !errno && v >= 0 && v <= 0xffff) {
		*out = (hsa_status_t)v;
		return 0;
	}
	return sim_status_by_name(s, out);
}

/* Any exact entry point name; the status defaults to HSA_STATUS_ERROR. */
static int sim_fail_rule(char *name, const char *word, long *code)
{
	hsa_status_t status = HSA_STATUS_ERROR;

	(void)name;
	if (word && sim_parse_status(word, &status))
		return -1;
	*code = status;
	return 0;
}

const struct sim_ops sim_ops = {
        .log_prefix = "sim-rocr",
        .fail_var = "HMR_SIM_ROCR_FAIL",
        .fail_flags = SIM_FAIL_SKIP_FIRST,
        .fail_rule = sim_fail_rule,
};

static void sim_config_read(void)
{
	sim.page = sim_page_size();
	sim_cfg.ngpu =
	        (int)sim_env_long("HMR_SIM_ROCR_DEVICES", 0, SIM_MAX_GPUS, 2);
	sim_cfg.host_accessible =
	        (int)sim_env_long("HMR_SIM_ROCR_HOST_ACCESSIBLE", 0, 1, 0);
	sim_cfg.dmabuf =
	        SIM_HAS_DMABUF && sim_env_long("HMR_SIM_ROCR_DMABUF", 0, 1, 1);
	sim_fails_set(getenv("HMR_SIM_ROCR_FAIL"), 0);
}

void sim_config_load(void)
{
	pthread_once(&sim_config_once, sim_config_read);
}

/*
 * Test hook, not a ROCr symbol: how many times the entry point with this
 * exact name was called (failed and injected calls included).
 */
SIM_API unsigned long hmr_sim_rocr_calls(const char *name)
{
	return sim_calls_get(name);
}

hsa_status_t sim_fail_check(const char *name)
{
	long code;

	sim_calls_count(name);
	sim_config_load();
	return sim_fails_check(name, &code) ? (hsa_status_t)code
	                                    : HSA_STATUS_SUCCESS;
}

/* ROCr's IS_OPEN(): the reference count is not zero. */
hsa_status_t sim_check_init(void)
{
	return __atomic_load_n(&sim.refs, __ATOMIC_ACQUIRE) > 0
	               ? HSA_STATUS_SUCCESS
	               : HSA_STATUS_ERROR_NOT_INITIALIZED;
}

/* Caller holds sim.lock: the agents and their windows, for refs 0 -> 1. */
static hsa_status_t sim_open(void)
{
	if (sim_cfg.ngpu == 0) {
		sim_log("no GPU agents (HMR_SIM_ROCR_DEVICES=0)");
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	}
	sim.nagents = 1 + sim_cfg.ngpu;
	for (int i = 0; i < sim.nagents; i++) {
		struct sim_agent *a = &sim.agents[i];

		a->index = i;
		a->type = i == 0 ? HSA_DEVICE_TYPE_CPU : HSA_DEVICE_TYPE_GPU;
		a->used = 0;
		a->pool.owner = a;
	}
	if (sim_windows_reserve()) {
		sim.nagents = 0;
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	}
	return HSA_STATUS_SUCCESS;
}

/*
 * Reference counted (hsa.h): the first call opens the runtime, each
 * further call only counts.  Callable before initialization, of course.
 */
SIM_API hsa_status_t HSA_API hsa_init(void)
{
	hsa_status_t rc = HSA_STATUS_SUCCESS;

	SIM_ENTER_NOINIT("hsa_init");
	pthread_mutex_lock(&sim.lock);
	if (sim.refs == INT32_MAX)
		rc = HSA_STATUS_ERROR_REFCOUNT_OVERFLOW;
	else if (sim.refs == 0)
		rc = sim_open();
	if (rc == HSA_STATUS_SUCCESS)
		__atomic_store_n(&sim.refs, sim.refs + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/*
 * The last call releases everything the runtime holds, as ROCr's Unload
 * does: allocations, locks, IPC mappings and signals (no deallocation
 * callbacks run), and the address windows.
 */
SIM_API hsa_status_t HSA_API hsa_shut_down(void)
{
	SIM_ENTER("hsa_shut_down");
	pthread_mutex_lock(&sim.lock);
	if (sim.refs == 0) { /* lost a race with another hsa_shut_down */
		pthread_mutex_unlock(&sim.lock);
		return HSA_STATUS_ERROR_NOT_INITIALIZED;
	}
	__atomic_store_n(&sim.refs, sim.refs - 1, __ATOMIC_RELEASE);
	if (sim.refs == 0) {
		sim_free_everything();
		sim_signals_destroy_all(); /* lock order: sim.lock, signals */
		sim_windows_release();
		sim.nagents = 0;
	}
	pthread_mutex_unlock(&sim.lock);
	return HSA_STATUS_SUCCESS;
}

static uint64_t sim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *sim_build_version(void)
{
	return SIM_HAS_DMABUF ? "hmr-sim-rocm-5.6.0" : "hmr-sim-rocm-5.2.3";
}

/* The attributes ROCr answers; others are HSA_STATUS_ERROR_INVALID_ARGUMENT. */
SIM_API hsa_status_t HSA_API hsa_system_get_info(hsa_system_info_t attribute,
                                                 void *value)
{
	SIM_ENTER("hsa_system_get_info");
	if (!value)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	switch ((int)attribute) {
	case HSA_SYSTEM_INFO_VERSION_MAJOR:
		*(uint16_t *)value = 1;
		break;
	case HSA_SYSTEM_INFO_VERSION_MINOR:
		*(uint16_t *)value = 1;
		break;
	case HSA_SYSTEM_INFO_TIMESTAMP:
		*(uint64_t *)value = sim_now_ns();
		break;
	case HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY:
		*(uint64_t *)value = 1000000000u; /* timestamps are in ns */
		break;
	case HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT:
		*(uint64_t *)value = UINT64_MAX;
		break;
	case HSA_SYSTEM_INFO_ENDIANNESS:
		*(hsa_endianness_t *)value = HSA_ENDIANNESS_LITTLE;
		break;
	case HSA_SYSTEM_INFO_MACHINE_MODEL:
		*(hsa_machine_model_t *)value = HSA_MACHINE_MODEL_LARGE;
		break;
	case HSA_SYSTEM_INFO_EXTENSIONS:
		memset(value, 0, 128); /* uint8_t[128] bit mask */
		((uint8_t *)value)[HSA_EXTENSION_AMD_PROFILER / 8] |=
		        1u << (HSA_EXTENSION_AMD_PROFILER % 8);
		break;
	case HSA_AMD_SYSTEM_INFO_BUILD_VERSION:
		*(const char **)value = sim_build_version();
		break;
	case HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED:
		*(bool *)value = true;
		break;
	case HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT:
		*(bool *)value = false; /* no XNACK: GPUs fault on pageable */
		break;
#if SIM_HAS_DMABUF
	case SIM_SYSTEM_INFO_DMABUF_SUPPORTED:
		*(bool *)value = sim_cfg.dmabuf != 0;
		break;
#endif
	default:
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	}
	return HSA_STATUS_SUCCESS;
}
