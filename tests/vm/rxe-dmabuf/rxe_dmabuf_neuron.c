/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rxe_dmabuf_neuron.c: simulated Neuron memory through the kernel's dma-buf
 * path. */
#include <dlfcn.h>
#include <stdlib.h>

#include <hmr/hmr.h>

#include "dmabuf_nic.h"
#include "vm_case.h"

/*
 * The simulated libnrt (tests/sim/neuron) exports a device tensor as a
 * udmabuf of the whole tensor (HMR_SIM_DMABUF=udmabuf), which
 * rdma_rxe_dmabuf imports: hmr's verbs domain registers it with
 * ibv_reg_dmabuf_mr at the offset nrt_get_dmabuf_fd_v2 reports (where
 * the VA lies in the tensor), and RDMA reaches the pages that
 * nrt_tensor_read sees.
 */
#define SIM  "/payload/libnrt.so.1"
#define DLEN (1u << 20)

static void *tensor;
static uint64_t tensor_base;
static int (*tensor_read)(const void *, void *, size_t, size_t);
static int (*tensor_alloc)(int, int, size_t, const char *, void **);
static void *(*tensor_va_of)(const void *);
static void (*tensor_free)(void **);

/* hmr's Neuron backend copies to the device only: the cases read back
 * through nrt_tensor_read. */
static int read_back(void *host, const void *dev, size_t len)
{
	return tensor_read(tensor, host, (uintptr_t)dev - tensor_base, len)
	               ? -FI_EIO
	               : 0;
}

/* The application's side: the runtime started, one device tensor's VA. */
static uint64_t tensor_va(void)
{
	void *h = dlopen(SIM, RTLD_NOW);
	int (*init)(int, const char *, const char *);

	if (!h)
		return 0;
	*(void **)&init = dlsym(h, "nrt_init");
	*(void **)&tensor_alloc = dlsym(h, "nrt_tensor_allocate");
	*(void **)&tensor_va_of = dlsym(h, "nrt_tensor_get_va");
	*(void **)&tensor_read = dlsym(h, "nrt_tensor_read");
	*(void **)&tensor_free = dlsym(h, "nrt_tensor_free");
	if (!init || !tensor_alloc || !tensor_va_of || !tensor_read ||
	    !tensor_free || init(1 /* NO_FW */, "2.0", "") ||
	    tensor_alloc(0 /* DEVICE */, 0, DLEN, "vm", &tensor))
		return 0;
	tensor_base = (uintptr_t)tensor_va_of(tensor);
	return tensor_base;
}

/* The cache cases' tensors, one at a time: nrt_tensor_free takes the
 * tensor, the cases hold its VA. */
static void *cache_tensor;

static uint64_t neuron_alloc(const struct vm_nic_dev *dev, size_t len)
{
	(void)dev;
	if (cache_tensor ||
	    tensor_alloc(0 /* DEVICE */, 0, len, "vm-cache", &cache_tensor))
		return 0;
	return (uintptr_t)tensor_va_of(cache_tensor);
}

static void neuron_free(const struct vm_nic_dev *dev, uint64_t p)
{
	(void)dev;
	if (cache_tensor && (uintptr_t)tensor_va_of(cache_tensor) == p)
		tensor_free(&cache_tensor);
	cache_tensor = NULL;
}

/* The v2 export's fd is the whole tensor: p's offset is p - base. */
static uint64_t neuron_offset(const struct vm_nic_dev *dev, uint64_t p)
{
	return p - dev->base;
}

int main(void)
{
	struct vm_nic_dev dev = {.name = "rxe_dmabuf_neuron",
	                         .iface = FI_HMEM_NEURON,
	                         .offset_of = neuron_offset,
	                         .alloc = neuron_alloc,
	                         .free = neuron_free,
	                         .cache_setting =
	                                 "HMR_MR_NEURON_CACHE_MONITOR_ENABLED"};

	/* Before hmr's first memory call: backends start once. */
	setenv("HMR_NEURON_LIBRARY", SIM, 1);
	setenv("HMR_SIM_DMABUF", "udmabuf", 1);
	dev.base = tensor_va();
	vm_nic_copy_from = read_back;
	return vm_nic_kernel_main(&dev, SIM);
}
