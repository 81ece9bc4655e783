/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rxe_dmabuf_synapseai.c: simulated Gaudi HBM through the kernel's dma-buf
 * path. */
#include <dlfcn.h>
#include <stdlib.h>

#include <hmr/hmr.h>

#include "dmabuf_nic.h"
#include "syn_decl.h" /* tests/sim/synapseai: the application's calls */
#include "vm_case.h"

/*
 * The simulated Gaudi stack (tests/sim/synapseai) with libhl-thunk, the
 * route hmr exports by: hlthunk_device_mapped_memory_export_dmabuf_fd
 * from the HBM base with offset 0 and a size reaching the buffer's end.
 * Under HMR_SIM_DMABUF=udmabuf the simulated driver makes a udmabuf of
 * exactly [offset, offset + size) of its HBM memfd, as the kernel's
 * dma-buf starts at addr + offset on hardware; rdma_rxe_dmabuf imports
 * it, and hmr's offset (the buffer's distance from the HBM base) must
 * put RDMA on the buffer's bytes, not on the runtime's own 2 MiB.
 */
#define SIM  "/payload/libSynapse.so"
#define DLEN (1 << 20)

static synDeviceInfoV2 info;
static __typeof__(synDeviceMalloc) *dev_malloc;
static __typeof__(synDeviceFree) *dev_free;

/* The application's side: the device acquired, one buffer of its HBM. */
static uint64_t hbm_alloc(void)
{
	void *h = dlopen(SIM, RTLD_NOW);
	__typeof__(synInitialize) *init;
	__typeof__(synDeviceAcquireByModuleId) *acquire;
	__typeof__(synDeviceGetInfoV2) *get_info;
	synDeviceId id;
	uint64_t p = 0;

	if (!h)
		return 0;
	*(void **)&init = dlsym(h, "synInitialize");
	*(void **)&acquire = dlsym(h, "synDeviceAcquireByModuleId");
	*(void **)&get_info = dlsym(h, "synDeviceGetInfoV2");
	*(void **)&dev_malloc = dlsym(h, "synDeviceMalloc");
	*(void **)&dev_free = dlsym(h, "synDeviceFree");
	if (!init || !acquire || !get_info || !dev_malloc || !dev_free ||
	    init() || acquire(&id, 0) || get_info(0, &info) ||
	    dev_malloc(0, DLEN, 0, 0, &p))
		return 0;
	return p;
}

/* The application's synDeviceMalloc and synDeviceFree, for the cache
 * cases: a freed and reallocated address keeps its HBM pages. */
static uint64_t hbm_cache_alloc(const struct vm_nic_dev *dev, size_t len)
{
	uint64_t p = 0;

	(void)dev;
	return dev_malloc(0, len, 0, 0, &p) ? 0 : p;
}

static void hbm_cache_free(const struct vm_nic_dev *dev, uint64_t p)
{
	(void)dev;
	dev_free(0, p, 0);
}

/* Byte 0 of hmr's dma-buf is the HBM base: p is at p - base. */
static uint64_t hbm_offset(const struct vm_nic_dev *dev, uint64_t p)
{
	(void)dev;
	return p - info.globalHbmBaseAddress;
}

int main(void)
{
	struct vm_nic_dev dev = {
	        .name = "rxe_dmabuf_synapseai",
	        .iface = FI_HMEM_SYNAPSEAI,
	        .offset_of = hbm_offset,
	        .alloc = hbm_cache_alloc,
	        .free = hbm_cache_free,
	        .free_keeps_pages = 1,
	        .cache_setting = "HMR_MR_SYNAPSEAI_CACHE_MONITOR_ENABLED"};

	/* Before hmr's first memory call: backends start once. */
	setenv("HMR_SYNAPSEAI_LIBRARY", SIM, 1);
	setenv("HMR_HLTHUNK_LIBRARY", "/payload/libhl-thunk.so", 1);
	setenv("HMR_SIM_SYNAPSEAI_HBM_MIB", "64", 1);
	setenv("HMR_SIM_DMABUF", "udmabuf", 1);
	dev.base = hbm_alloc();
	return vm_nic_kernel_main(&dev, SIM);
}
