/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rxe_dmabuf_rocr.c: simulated ROCr memory through the kernel's dma-buf path.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <hmr/hmr.h>

#include "dmabuf_nic.h"
#include "vm_case.h"

/*
 * The simulated ROCm 5.6 runtime (tests/sim/rocr) exports its GPU memory
 * as a udmabuf of the whole allocation (HMR_SIM_DMABUF=udmabuf), which
 * rdma_rxe_dmabuf imports: hmr's verbs domain registers it with
 * ibv_reg_dmabuf_mr at the offset hsa_amd_portable_export_dmabuf
 * reports (where the pointer lies in the allocation), and RDMA reaches
 * the very pages the runtime's copies read.  The GPU memory stays
 * inaccessible to the CPU at its device address.
 */
#define SIM  "/payload/libhsa-runtime64.so.1"
#define DLEN (1 << 20)

static hsa_amd_memory_pool_t pool;
static __typeof__(&hsa_agent_get_info) agent_info;
static __typeof__(&hsa_amd_agent_iterate_memory_pools) iterate_pools;
static __typeof__(&hsa_amd_memory_pool_allocate) pool_alloc;
static __typeof__(&hsa_amd_memory_pool_free) pool_free;

static hsa_status_t take_pool(hsa_amd_memory_pool_t p, void *found)
{
	pool = p;
	*(int *)found = 1;
	return HSA_STATUS_INFO_BREAK;
}

/* The first GPU's first pool. */
static hsa_status_t first_gpu(hsa_agent_t agent, void *found)
{
	hsa_device_type_t type;

	if (*(int *)found ||
	    agent_info(agent, HSA_AGENT_INFO_DEVICE, &type) != 0 ||
	    type != HSA_DEVICE_TYPE_GPU)
		return HSA_STATUS_SUCCESS;
	iterate_pools(agent, take_pool, found);
	return HSA_STATUS_INFO_BREAK;
}

/* The application's side of the runtime: GPU 0 memory, or 0. */
static uint64_t gpu_alloc(void)
{
	void *h = dlopen(SIM, RTLD_NOW), *p = NULL;
	__typeof__(&hsa_init) init;
	__typeof__(&hsa_iterate_agents) agents;
	int found = 0;

	if (!h)
		return 0;
	*(void **)&init = dlsym(h, "hsa_init");
	*(void **)&agents = dlsym(h, "hsa_iterate_agents");
	*(void **)&agent_info = dlsym(h, "hsa_agent_get_info");
	*(void **)&iterate_pools =
	        dlsym(h, "hsa_amd_agent_iterate_memory_pools");
	*(void **)&pool_alloc = dlsym(h, "hsa_amd_memory_pool_allocate");
	*(void **)&pool_free = dlsym(h, "hsa_amd_memory_pool_free");
	if (!init || !agents || !agent_info || !iterate_pools || !pool_alloc ||
	    !pool_free || init())
		return 0;
	agents(first_gpu, &found);
	if (!found || pool_alloc(pool, DLEN, 0, &p))
		return 0;
	return (uintptr_t)p;
}

/* The application's pool allocations and frees, for the cache cases:
 * hmr learns of the free by its deallocation callback. */
static uint64_t rocr_alloc(const struct vm_nic_dev *dev, size_t len)
{
	void *p = NULL;

	(void)dev;
	return pool_alloc(pool, len, 0, &p) ? 0 : (uintptr_t)p;
}

static void rocr_free(const struct vm_nic_dev *dev, uint64_t p)
{
	(void)dev;
	pool_free((void *)(uintptr_t)p);
}

/* ROCr's fd is the whole allocation: p's offset is p - base. */
static uint64_t rocr_offset(const struct vm_nic_dev *dev, uint64_t p)
{
	return p - dev->base;
}

int main(void)
{
	struct vm_nic_dev dev = {.name = "rxe_dmabuf_rocr",
	                         .iface = FI_HMEM_ROCR,
	                         .offset_of = rocr_offset,
	                         .alloc = rocr_alloc,
	                         .free = rocr_free,
	                         .cache_setting =
	                                 "FI_MR_ROCR_CACHE_MONITOR_ENABLED"};
	FILE *f = fopen("/tmp/hmr-rocr-kconfig", "w");

	/* What amdgpu's dma-bufs need, for the backend's kernel check;
	 * before hmr's first memory call: backends start once. */
	if (f) {
		fputs("CONFIG_DMABUF_MOVE_NOTIFY=y\nCONFIG_PCI_P2PDMA=y\n", f);
		fclose(f);
	}
	setenv("HMR_ROCR_KERNEL_CONFIG", "/tmp/hmr-rocr-kconfig", 1);
	setenv("HMR_ROCR_LIBRARY", SIM, 1);
	setenv("HMR_SIM_DMABUF", "udmabuf", 1);
	dev.base = gpu_alloc();
	return vm_nic_kernel_main(&dev, SIM);
}
