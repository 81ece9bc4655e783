/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* init.c: configuration, failure injection, call counters, zeInit. */
#include "sim_ze.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Environment, read once at the driver's first call (normally zeInit).
 * Each variable HMR_SIM_ZE_<X> may be given per copy of the driver as
 * HMR_SIM_ZE_A_<X> or HMR_SIM_ZE_B_<X>, which then wins for that copy.
 *   HMR_SIM_ZE_DEVICES          devices, default 2 (at most 8); 0 makes
 *                               zeInit fail with ZE_RESULT_ERROR_
 *                               UNINITIALIZED, as a driver without a GPU
 *   HMR_SIM_ZE_FD_MODE          "driver" (default) or "caller": who owns
 *                               an exported dma-buf fd, see export.c
 *   HMR_SIM_ZE_DMABUF           "1,0,...": dma-buf export per device
 *                               (missing entries: 1)
 *   HMR_SIM_ZE_HOST_DMABUF      0: host allocations refuse export, as
 *                               compute-runtime before 2023 (default 1)
 *   HMR_SIM_ZE_HOST_ACCESSIBLE  1: device memory is mapped read/write
 *   HMR_SIM_ZE_P2P              0: zeDeviceCanAccessPeer answers false
 *   HMR_SIM_ZE_FAIL             "name[@N][=status][:count],...": the entry
 *                               point with that API name (zeMemAllocDevice)
 *                               lets N calls through, then returns status
 *                               (a number or a ZE_RESULT_* name; default
 *                               per call, see errors.c) count times, or
 *                               forever without :count
 */

struct sim_state sim = {
        .lock = PTHREAD_MUTEX_INITIALIZER,
        .tab = SIM_TABLE_INIT(struct sim_alloc, base, span),
        .next_id = 1,
};
struct sim_config sim_cfg;

static pthread_once_t sim_config_once = PTHREAD_ONCE_INIT;

/* HMR_SIM_ZE_<ID>_<var>, else HMR_SIM_ZE_<var>. */
static const char *sim_env(const char *var)
{
	char name[96];
	const char *s;

	snprintf(name, sizeof(name), "HMR_SIM_ZE_%c_%s",
	         toupper((unsigned char)SIM_ZE_ID[0]), var);
	s = getenv(name);
	if (s)
		return s;
	snprintf(name, sizeof(name), "HMR_SIM_ZE_%s", var);
	return getenv(name);
}

static int sim_env_int(const char *var, long lo, long hi, int dflt)
{
	return (int)sim_env_value(var, sim_env(var), lo, hi, dflt);
}

/* The status defaults per call (errors.c); a name or a number. */
static int sim_fail_rule(char *name, const char *word, long *code)
{
	ze_result_t named;
	unsigned long n;

	*code = sim_default_failure(name);
	if (!word)
		return 0;
	if (sim_result_by_name(word, &named) == 0)
		*code = named;
	else if (sim_parse_count(word, &n) == 0 && n <= LONG_MAX)
		*code = (long)n;
	else
		return -1;
	return 0;
}

const struct sim_ops sim_ops = {
        .log_prefix = "sim-ze-" SIM_ZE_ID,
        .fail_var = "HMR_SIM_ZE_FAIL",
        .fail_rule = sim_fail_rule,
};

static void sim_config_read(void)
{
	const char *mode = sim_env("FD_MODE");
	const char *fail = sim_env("FAIL");

	sim.page = sim_page_size();
	sim_cfg.ndev = sim_env_int("DEVICES", 0, SIM_MAX_DEVICES, 2);
	sim_cfg.host_accessible = sim_env_int("HOST_ACCESSIBLE", 0, 1, 0);
	sim_cfg.host_dmabuf = sim_env_int("HOST_DMABUF", 0, 1, 1);
	sim_cfg.p2p = sim_env_int("P2P", 0, 1, 1);
	if (mode && strcmp(mode, "caller") == 0)
		sim_cfg.fd_caller = 1;
	else if (mode && *mode && strcmp(mode, "driver") != 0)
		sim_log("ignoring HMR_SIM_ZE_FD_MODE=%s", mode);
	if (sim_parse_switches(sim_env("DMABUF"), sim_cfg.dmabuf,
	                       SIM_MAX_DEVICES))
		sim_log("ignoring bad HMR_SIM_ZE_DMABUF");
	if (sim_fails_set(fail, 1) < 0)
		sim_log("ignoring bad HMR_SIM_ZE_FAIL=%s", fail);
}

void sim_config_load(void)
{
	pthread_once(&sim_config_once, sim_config_read);
}

/* Test hook: how many times the entry point with this API name ran. */
SIM_API unsigned long hmr_sim_ze_calls(const char *name)
{
	return sim_calls_get(name);
}

/*
 * Test hook: replaces the failure rules with spec (HMR_SIM_ZE_FAIL's
 * syntax; NULL or "" clears them).  @N counts from now.  Returns 0, or -1
 * for a bad spec, which changes nothing.
 */
SIM_API int hmr_sim_ze_fail(const char *spec)
{
	sim_config_load();
	return sim_fails_set(spec, 1) < 0 ? -1 : 0;
}

ze_result_t sim_fail_check(const char *name)
{
	long code;

	sim_calls_count(name);
	sim_config_load();
	return sim_fails_check(name, &code) ? (ze_result_t)code
	                                    : ZE_RESULT_SUCCESS;
}

/* One reservation holds every device window. */
static ze_result_t sim_reserve_windows(void)
{
	size_t len = (size_t)sim_cfg.ndev * SIM_DEV_WINDOW + SIM_LARGE_PAGE;
	void *p = sim_reserve(len);
	uintptr_t base;

	if (!p)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	base = sim_round_up((uintptr_t)p, SIM_LARGE_PAGE);
	sim.driver.magic = SIM_DRV_MAGIC;
	for (int i = 0; i < sim_cfg.ndev; i++) {
		struct _ze_device_handle_t *d = &sim.dev[i];

		d->magic = SIM_DEV_MAGIC;
		d->index = i;
		d->win_base = base + (uintptr_t)i * SIM_DEV_WINDOW;
		d->dmabuf = sim_cfg.dmabuf[i];
	}
	return ZE_RESULT_SUCCESS;
}

/* The Global table's pfnInit, which the loader's zeInit calls. */
static ze_result_t sim_init(ze_init_flags_t flags)
{
	ze_result_t rc = sim_fail_check("zeInit");

	if (rc != ZE_RESULT_SUCCESS)
		return rc;
	if (flags &
	    ~(ze_init_flags_t)(ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY))
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	/* A GPU driver has nothing to offer a VPU-only init. */
	if (flags == ZE_INIT_FLAG_VPU_ONLY || sim_cfg.ndev == 0)
		return ZE_RESULT_ERROR_UNINITIALIZED;
	pthread_mutex_lock(&sim.lock);
	if (!sim.initialized) {
		rc = sim_reserve_windows();
		if (rc == ZE_RESULT_SUCCESS)
			__atomic_store_n(&sim.initialized, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

void sim_fill_global(ze_global_dditable_t *t)
{
	t->pfnInit = sim_init;
}
