/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* init.c: configuration from the environment, fault injection, cuInit. */
#include "sim_cuda.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * Environment (read once, at the first driver call):
 *   HMR_SIM_CUDA_DEVICES         number of devices, default 2; 0 makes
 *                                cuInit return CUDA_ERROR_NO_DEVICE
 *   HMR_SIM_CUDA_DMABUF          "1,0,...": dma-buf support per device
 *                                (missing entries: 1)
 *   HMR_SIM_CUDA_DRIVER_VERSION  cuDriverGetVersion, default the build's
 *                                (13000, or 11040 for the old variant)
 *   HMR_SIM_CUDA_FAIL            "name[@N]=code[:count],...": the entry
 *                                point with that base name (cuMemAlloc,
 *                                not cuMemAlloc_v2) lets N calls through
 *                                (default 0), then returns code (a number
 *                                or a CUDA_ERROR_* name) count times, or
 *                                forever without :count.  The hook
 *                                hmr_sim_cuda_fail(spec) replaces the
 *                                rules at run time (N counts from then).
 *   HMR_SIM_CUDA_HOST_ACCESSIBLE 1: device memory is mapped read/write
 *   HMR_SIM_CUDA_PCIE_MAPPING    1: accept
 *                                CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE
 */

#define SIM_MAX_FAILS 32

struct sim_fail {
	char name[64];
	CUresult code;
	long count; /* < 0: forever */
	long skip;  /* Calls let through before the first failure. */
};

struct sim_state sim = {
        .lock = PTHREAD_MUTEX_INITIALIZER,
        .next_id = 1,
        .next_handle = 0x5100,
};
struct sim_config sim_cfg;

#define SIM_MAX_NAMES 160

/* Calls per base name, for tests (hmr_sim_cuda_calls). */
struct sim_calls {
	const char *name; /* a string literal */
	unsigned long count;
};

static pthread_once_t sim_config_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t sim_calls_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_calls sim_calls[SIM_MAX_NAMES];
static int sim_ncalls;
static pthread_mutex_t sim_fail_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_fail sim_fails[SIM_MAX_FAILS];
static int sim_nfails;

void sim_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("sim-cuda: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int sim_env_int(const char *var, long lo, long hi, int dflt)
{
	const char *s = getenv(var);
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

/* "cuMemcpyHtoD_v2_ptds" -> "cuMemcpyHtoD" */
static void sim_base_name(char *name)
{
	size_t n = strlen(name);

	if (n > 5 && (strcmp(name + n - 5, "_ptds") == 0 ||
	              strcmp(name + n - 5, "_ptsz") == 0))
		name[n -= 5] = '\0';
	while (n > 0 && isdigit((unsigned char)name[n - 1]))
		n--;
	if (n > 2 && name[n - 1] == 'v' && name[n - 2] == '_' &&
	    name[n] != '\0')
		name[n - 2] = '\0';
}

static void sim_parse_fail_item(char *item)
{
	struct sim_fail *f;
	char *eq = strchr(item, '='), *colon, *end, *at;
	long code;

	if (!eq || eq == item || sim_nfails == SIM_MAX_FAILS) {
		sim_log("ignoring HMR_SIM_CUDA_FAIL item '%s'", item);
		return;
	}
	*eq = '\0';
	f = &sim_fails[sim_nfails];
	f->skip = 0;
	at = strchr(item, '@');
	if (at) {
		*at = '\0';
		f->skip = strtol(at + 1, &end, 0);
		if (*end || f->skip < 0) {
			sim_log("bad @N in HMR_SIM_CUDA_FAIL for %s", item);
			return;
		}
	}
	snprintf(f->name, sizeof(f->name), "%s", item);
	sim_base_name(f->name);
	f->count = -1;
	colon = strchr(eq + 1, ':');
	if (colon) {
		*colon = '\0';
		f->count = strtol(colon + 1, &end, 0);
		if (*end || f->count < 0) {
			sim_log("bad count in HMR_SIM_CUDA_FAIL for %s", item);
			return;
		}
	}
	code = strtol(eq + 1, &end, 0);
	if (*end || end == eq + 1) {
		CUresult named;

		if (sim_error_by_name(eq + 1, &named)) {
			sim_log("bad code in HMR_SIM_CUDA_FAIL for %s", item);
			return;
		}
		code = named;
	}
	f->code = (CUresult)code;
	sim_nfails++;
}

static void sim_parse_fails(const char *spec)
{
	char *copy, *item, *save = NULL;

	if (!spec || !*spec)
		return;
	copy = strdup(spec);
	if (!copy)
		return;
	for (item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save))
		sim_parse_fail_item(item);
	free(copy);
}

static void sim_parse_dmabuf(const char *spec)
{
	int i;

	for (i = 0; i < SIM_MAX_DEVICES; i++)
		sim_cfg.dmabuf[i] = 1;
	for (i = 0; spec && *spec && i < SIM_MAX_DEVICES; i++) {
		char *end;
		long v = strtol(spec, &end, 0);

		if (end == spec || (*end && *end != ',')) {
			sim_log("ignoring bad HMR_SIM_CUDA_DMABUF");
			break;
		}
		sim_cfg.dmabuf[i] = v != 0;
		spec = *end ? end + 1 : end;
	}
}

static void sim_config_read(void)
{
	long page = sysconf(_SC_PAGESIZE);

	sim.page = page > 0 ? (size_t)page : 4096;
	sim_cfg.ndev =
	        sim_env_int("HMR_SIM_CUDA_DEVICES", 0, SIM_MAX_DEVICES, 2);
	sim_cfg.driver_version = sim_env_int("HMR_SIM_CUDA_DRIVER_VERSION", 1,
	                                     1000000, SIM_CUDA_DRIVER);
	sim_cfg.host_accessible =
	        sim_env_int("HMR_SIM_CUDA_HOST_ACCESSIBLE", 0, 1, 0);
	sim_cfg.pcie_mapping =
	        sim_env_int("HMR_SIM_CUDA_PCIE_MAPPING", 0, 1, 0);
	sim_parse_dmabuf(getenv("HMR_SIM_CUDA_DMABUF"));
	sim_parse_fails(getenv("HMR_SIM_CUDA_FAIL"));
}

void sim_config_load(void)
{
	pthread_once(&sim_config_once, sim_config_read);
}

void sim_count_call(const char *name)
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

/*
 * Test hook, not a driver symbol: how many times the entry points with
 * this base name (all ABI versions, however resolved) were called.
 */
SIM_API unsigned long hmr_sim_cuda_calls(const char *name)
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

/* Test hook, not a driver symbol: replace the failure rules now. */
SIM_API int hmr_sim_cuda_fail(const char *spec)
{
	sim_config_load();
	pthread_mutex_lock(&sim_fail_lock);
	sim_nfails = 0;
	sim_parse_fails(spec);
	pthread_mutex_unlock(&sim_fail_lock);
	return sim_nfails;
}

CUresult sim_fail_check(const char *name)
{
	CUresult rc = CUDA_SUCCESS;

	sim_count_call(name);
	sim_config_load();
	if (sim_nfails == 0)
		return CUDA_SUCCESS;
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

CUresult sim_check_init(void)
{
	return __atomic_load_n(&sim.initialized, __ATOMIC_ACQUIRE)
	               ? CUDA_SUCCESS
	               : CUDA_ERROR_NOT_INITIALIZED;
}

/* One reservation holds every device window, then the VMM window. */
static CUresult sim_reserve_windows(void)
{
	size_t len = (size_t)sim_cfg.ndev * SIM_DEV_WINDOW + SIM_VMM_WINDOW +
	             SIM_GRANULARITY;
	void *p = mmap(NULL, len, PROT_NONE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CUdeviceptr base;

	if (p == MAP_FAILED) {
		sim_log("cannot reserve %zu bytes of address space: %s", len,
		        strerror(errno));
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	base = sim_round_up((CUdeviceptr)(uintptr_t)p, SIM_GRANULARITY);
	for (int i = 0; i < sim_cfg.ndev; i++) {
		struct sim_device *d = &sim.dev[i];

		d->win_base = base + (CUdeviceptr)i * SIM_DEV_WINDOW;
		d->dmabuf = sim_cfg.dmabuf[i];
		d->primary.magic = SIM_CTX_MAGIC;
		d->primary.device = i;
		d->primary.primary = 1;
	}
	sim.vmm_base = base + (CUdeviceptr)sim_cfg.ndev * SIM_DEV_WINDOW;
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuInit(unsigned int Flags)
{
	CUresult rc = CUDA_SUCCESS;

	SIM_ENTER_NOINIT("cuInit");
	if (Flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (sim_cfg.ndev == 0)
		return CUDA_ERROR_NO_DEVICE;
	pthread_mutex_lock(&sim.lock);
	if (!sim.initialized) {
		rc = sim_reserve_windows();
		if (rc == CUDA_SUCCESS)
			__atomic_store_n(&sim.initialized, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/* Works before cuInit, as with the driver. */
SIM_API CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
	SIM_ENTER_NOINIT("cuDriverGetVersion");
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = sim_cfg.driver_version;
	return CUDA_SUCCESS;
}
