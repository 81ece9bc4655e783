/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* init.c: configuration, failure injection, call counters, zeInit. */
#include "sim_ze.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

#define SIM_MAX_FAILS 32
#define SIM_MAX_NAMES 96

struct sim_fail {
	char name[64];
	ze_result_t code;
	long skip;  /* calls still let through */
	long count; /* failures left; < 0: forever */
};

struct sim_state sim = {
        .lock = PTHREAD_MUTEX_INITIALIZER,
        .next_id = 1,
};
struct sim_config sim_cfg;

/* Calls per API name (hmr_sim_ze_calls); names are string literals. */
struct sim_calls {
	const char *name;
	unsigned long count;
};

static pthread_once_t sim_config_once = PTHREAD_ONCE_INIT;
/* Protects sim_calls and sim_ncalls. */
static pthread_mutex_t sim_calls_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_calls sim_calls[SIM_MAX_NAMES];
static int sim_ncalls;
/* Protects sim_fails and sim_nfails, which hmr_sim_ze_fail replaces. */
static pthread_mutex_t sim_fail_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_fail sim_fails[SIM_MAX_FAILS];
static int sim_nfails;

void sim_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("sim-ze-" SIM_ZE_ID ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

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
	const char *s = sim_env(var);
	char *end;
	long v;

	if (!s || !*s)
		return dflt;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < lo || v > hi) {
		sim_log("ignoring %s=%s (want %ld..%ld)", var, s, lo, hi);
		return dflt;
	}
	return (int)v;
}

static int sim_parse_long(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 0);
	return errno || end == s || *end || *out < 0 ? -1 : 0;
}

/* "name[@N][=status][:count]" */
static int sim_parse_fail_item(char *item, struct sim_fail *f)
{
	char *at, *eq, *colon;
	long code;

	memset(f, 0, sizeof(*f));
	f->count = -1;
	colon = strchr(item, ':');
	if (colon) {
		*colon = '\0';
		if (sim_parse_long(colon + 1, &f->count))
			return -1;
	}
	eq = strchr(item, '=');
	if (eq)
		*eq = '\0';
	at = strchr(item, '@');
	if (at) {
		*at = '\0';
		if (sim_parse_long(at + 1, &f->skip))
			return -1;
	}
	if (!*item || strlen(item) >= sizeof(f->name))
		return -1;
	snprintf(f->name, sizeof(f->name), "%s", item);
	f->code = sim_default_failure(f->name);
	if (eq) {
		ze_result_t named;

		if (sim_result_by_name(eq + 1, &named) == 0)
			f->code = named;
		else if (sim_parse_long(eq + 1, &code) == 0)
			f->code = (ze_result_t)code;
		else
			return -1;
	}
	return 0;
}

/* Parses spec into rules; -1 (and no rule) on any error. */
static int sim_parse_fails(const char *spec, struct sim_fail *rules, int *n)
{
	char *copy, *item, *save = NULL;
	int rc = 0;

	*n = 0;
	if (!spec || !*spec)
		return 0;
	copy = strdup(spec);
	if (!copy)
		return -1;
	for (item = strtok_r(copy, ",", &save); item && rc == 0;
	     item = strtok_r(NULL, ",", &save)) {
		if (*n == SIM_MAX_FAILS ||
		    sim_parse_fail_item(item, &rules[*n]))
			rc = -1;
		else
			(*n)++;
	}
	free(copy);
	if (rc)
		*n = 0;
	return rc;
}

static void sim_parse_dmabuf(const char *spec)
{
	for (int i = 0; i < SIM_MAX_DEVICES; i++)
		sim_cfg.dmabuf[i] = 1;
	for (int i = 0; spec && *spec && i < SIM_MAX_DEVICES; i++) {
		char *end;
		long v = strtol(spec, &end, 0);

		if (end == spec || (*end && *end != ',')) {
			sim_log("ignoring bad HMR_SIM_ZE_DMABUF");
			break;
		}
		sim_cfg.dmabuf[i] = v != 0;
		spec = *end ? end + 1 : end;
	}
}

static void sim_config_read(void)
{
	long page = sysconf(_SC_PAGESIZE);
	const char *mode = sim_env("FD_MODE");
	const char *fail = sim_env("FAIL");

	sim.page = page > 0 ? (size_t)page : 4096;
	sim_cfg.ndev = sim_env_int("DEVICES", 0, SIM_MAX_DEVICES, 2);
	sim_cfg.host_accessible = sim_env_int("HOST_ACCESSIBLE", 0, 1, 0);
	sim_cfg.host_dmabuf = sim_env_int("HOST_DMABUF", 0, 1, 1);
	sim_cfg.p2p = sim_env_int("P2P", 0, 1, 1);
	if (mode && strcmp(mode, "caller") == 0)
		sim_cfg.fd_caller = 1;
	else if (mode && *mode && strcmp(mode, "driver") != 0)
		sim_log("ignoring HMR_SIM_ZE_FD_MODE=%s", mode);
	sim_parse_dmabuf(sim_env("DMABUF"));
	if (sim_parse_fails(fail, sim_fails, &sim_nfails))
		sim_log("ignoring bad HMR_SIM_ZE_FAIL=%s", fail);
}

void sim_config_load(void)
{
	pthread_once(&sim_config_once, sim_config_read);
}

static void sim_count_call(const char *name)
{
	int i;

	pthread_mutex_lock(&sim_calls_lock);
	for (i = 0; i < sim_ncalls; i++)
		if (strcmp(sim_calls[i].name, name) == 0)
			break;
	if (i == sim_ncalls && sim_ncalls < SIM_MAX_NAMES)
		sim_calls[sim_ncalls++].name = name;
	if (i < sim_ncalls)
		sim_calls[i].count++;
	pthread_mutex_unlock(&sim_calls_lock);
}

/* Test hook: how many times the entry point with this API name ran. */
SIM_API unsigned long hmr_sim_ze_calls(const char *name)
{
	unsigned long n = 0;

	if (!name)
		return 0;
	pthread_mutex_lock(&sim_calls_lock);
	for (int i = 0; i < sim_ncalls; i++)
		if (strcmp(sim_calls[i].name, name) == 0)
			n = sim_calls[i].count;
	pthread_mutex_unlock(&sim_calls_lock);
	return n;
}

/*
 * Test hook: replaces the failure rules with spec (HMR_SIM_ZE_FAIL's
 * syntax; NULL or "" clears them).  @N counts from now.  Returns 0, or -1
 * for a bad spec, which changes nothing.
 */
SIM_API int hmr_sim_ze_fail(const char *spec)
{
	struct sim_fail rules[SIM_MAX_FAILS];
	int n;

	sim_config_load();
	if (sim_parse_fails(spec, rules, &n))
		return -1;
	pthread_mutex_lock(&sim_fail_lock);
	memcpy(sim_fails, rules, (size_t)n * sizeof(rules[0]));
	sim_nfails = n;
	pthread_mutex_unlock(&sim_fail_lock);
	return 0;
}

ze_result_t sim_fail_check(const char *name)
{
	ze_result_t rc = ZE_RESULT_SUCCESS;

	sim_count_call(name);
	sim_config_load();
	pthread_mutex_lock(&sim_fail_lock);
	for (int i = 0; i < sim_nfails; i++) {
		struct sim_fail *f = &sim_fails[i];

		if (f->count == 0 || strcmp(f->name, name) != 0)
			continue;
		if (f->skip > 0) {
			f->skip--;
			break;
		}
		if (f->count > 0)
			f->count--;
		rc = f->code;
		break;
	}
	pthread_mutex_unlock(&sim_fail_lock);
	return rc;
}

/* One reservation holds every device window. */
static ze_result_t sim_reserve_windows(void)
{
	size_t len = (size_t)sim_cfg.ndev * SIM_DEV_WINDOW + SIM_LARGE_PAGE;
	void *p = mmap(NULL, len, PROT_NONE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t base;

	if (p == MAP_FAILED) {
		sim_log("cannot reserve %zu bytes of address space: %s", len,
		        strerror(errno));
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
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
