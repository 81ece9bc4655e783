/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* init.c: configuration from the environment, fault injection, cuInit. */
#include "sim_cuda.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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
 *                                (a Grace system); default 0, the x86 PCIe
 *                                H200's CUDA_ERROR_NOT_SUPPORTED
 *   HMR_SIM_CUDA_HOST_DMABUF     "1,0,...": per device,
 *                                CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_
 *                                SUPPORTED (146) and so whether
 *                                cuMemAllocHost memory exports; unset: 0
 *                                for every device, as the H200 (missing
 *                                entries of a set value: 1)
 *   HMR_SIM_CUDA_EXPANDABLE      1: cuMemAlloc lays memory out as
 *                                PyTorch's expandable segments do
 *                                (expandable.c)
 */

struct sim_state sim = {
        .lock = PTHREAD_MUTEX_INITIALIZER,
        .tab = SIM_TABLE_INIT(struct sim_alloc, base, span),
        .next_id = 1,
        .next_handle = 0x5100,
};
struct sim_config sim_cfg;

static pthread_once_t sim_config_once = PTHREAD_ONCE_INIT;

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

/* A rule names the base name and must give a code: a number or a name. */
static int sim_fail_rule(char *name, const char *word, long *code)
{
	CUresult named;
	char *end;

	if (!word)
		return -1;
	sim_base_name(name);
	*code = strtol(word, &end, 0);
	if (!*end && end != word)
		return 0;
	if (sim_error_by_name(word, &named))
		return -1;
	*code = named;
	return 0;
}

const struct sim_ops sim_ops = {
        .log_prefix = "sim-cuda",
        .fail_var = "HMR_SIM_CUDA_FAIL",
        .fail_rule = sim_fail_rule,
};

static void sim_config_read(void)
{
	sim.page = sim_page_size();
	sim_cfg.ndev = (int)sim_env_long("HMR_SIM_CUDA_DEVICES", 0,
	                                 SIM_MAX_DEVICES, 2);
	sim_cfg.driver_version = (int)sim_env_long(
	        "HMR_SIM_CUDA_DRIVER_VERSION", 1, 1000000, SIM_CUDA_DRIVER);
	sim_cfg.host_accessible =
	        (int)sim_env_long("HMR_SIM_CUDA_HOST_ACCESSIBLE", 0, 1, 0);
	sim_cfg.pcie_mapping =
	        (int)sim_env_long("HMR_SIM_CUDA_PCIE_MAPPING", 0, 1, 0);
	sim_cfg.expandable =
	        (int)sim_env_long("HMR_SIM_CUDA_EXPANDABLE", 0, 1, 0);
	if (sim_parse_switches(getenv("HMR_SIM_CUDA_DMABUF"), sim_cfg.dmabuf,
	                       SIM_MAX_DEVICES))
		sim_log("ignoring bad HMR_SIM_CUDA_DMABUF");
	if (!getenv("HMR_SIM_CUDA_HOST_DMABUF"))
		memset(sim_cfg.host_dmabuf, 0, sizeof(sim_cfg.host_dmabuf));
	else if (sim_parse_switches(getenv("HMR_SIM_CUDA_HOST_DMABUF"),
	                            sim_cfg.host_dmabuf, SIM_MAX_DEVICES))
		sim_log("ignoring bad HMR_SIM_CUDA_HOST_DMABUF");
	sim_fails_set(getenv("HMR_SIM_CUDA_FAIL"), 0);
}

void sim_config_load(void)
{
	pthread_once(&sim_config_once, sim_config_read);
}

/*
 * Test hook, not a driver symbol: how many times the entry points with
 * this base name (all ABI versions, however resolved) were called.
 */
SIM_API unsigned long hmr_sim_cuda_calls(const char *name)
{
	return sim_calls_get(name);
}

/* Test hook, not a driver symbol: replace the failure rules now. */
SIM_API int hmr_sim_cuda_fail(const char *spec)
{
	sim_config_load();
	return sim_fails_set(spec, 0);
}

CUresult sim_fail_check(const char *name)
{
	long code;

	sim_calls_count(name);
	sim_config_load();
	return sim_fails_check(name, &code) ? (CUresult)code : CUDA_SUCCESS;
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
	void *p = sim_reserve(len);
	CUdeviceptr base;

	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	base = sim_round_up((CUdeviceptr)(uintptr_t)p, SIM_GRANULARITY);
	for (int i = 0; i < sim_cfg.ndev; i++) {
		struct sim_device *d = &sim.dev[i];

		d->win_base = base + (CUdeviceptr)i * SIM_DEV_WINDOW;
		d->dmabuf = sim_cfg.dmabuf[i];
		d->host_dmabuf = sim_cfg.host_dmabuf[i];
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
