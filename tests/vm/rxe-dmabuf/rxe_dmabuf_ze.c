/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rxe_dmabuf_ze.c: simulated Level Zero memory through the kernel's dma-buf
 * path. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hmr/hmr.h>
#include <level_zero/ze_api.h>

#include "dmabuf_nic.h"
#include "vm_case.h"

/*
 * Debian's real Level Zero loader with the simulated driver
 * (tests/sim/ze, by ZE_ENABLE_ALT_DRIVERS), whose dma-buf export is a
 * udmabuf of the whole allocation (HMR_SIM_DMABUF=udmabuf).  The driver
 * owns that fd, as compute-runtime does: it hands out the same one at
 * every export, checks it is still its own (kcmp against its private
 * dup) and closes it at zeMemFree; hmr registers a dup of it with
 * ibv_reg_dmabuf_mr at ptr - base.  One export before the cases makes
 * the driver's fd, so that their fd counts see only what hmr opens.
 */
#define LOADER "/payload/libze_loader.so.1"
#define DRIVER "/payload/libze_sim_a.so"
#define DLEN   (1 << 20)

static __typeof__(&zeMemAllocDevice) mem_alloc;
static __typeof__(&zeMemFree) mem_free;
static ze_context_handle_t ctx;
static ze_device_handle_t zdev;

/* The application's side: device memory of the first device, or 0. */
static uint64_t ze_alloc(void)
{
	ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
	ze_device_mem_alloc_desc_t dd = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	void *h = dlopen(LOADER, RTLD_NOW), *p = NULL;
	__typeof__(&zeInit) init;
	__typeof__(&zeDriverGet) driver_get;
	__typeof__(&zeDeviceGet) device_get;
	__typeof__(&zeContextCreate) context_create;
	ze_driver_handle_t drv;
	uint32_t n = 1;

	if (!h)
		return 0;
	*(void **)&init = dlsym(h, "zeInit");
	*(void **)&driver_get = dlsym(h, "zeDriverGet");
	*(void **)&device_get = dlsym(h, "zeDeviceGet");
	*(void **)&context_create = dlsym(h, "zeContextCreate");
	*(void **)&mem_alloc = dlsym(h, "zeMemAllocDevice");
	*(void **)&mem_free = dlsym(h, "zeMemFree");
	if (!init || !driver_get || !device_get || !context_create ||
	    !mem_alloc || !mem_free || init(0) || driver_get(&n, &drv) ||
	    device_get(drv, &n, &zdev) || context_create(drv, &cdesc, &ctx) ||
	    mem_alloc(ctx, &dd, DLEN, 0, zdev, &p))
		return 0;
	return (uintptr_t)p;
}

/* The application's zeMemAllocDevice and zeMemFree, for the cache cases
 * (Level Zero reports no free: the simulator unmaps, a real driver may
 * not, and then the miss at the address drops the old entry). */
static uint64_t ze_cache_alloc(const struct vm_nic_dev *d, size_t len)
{
	ze_device_mem_alloc_desc_t dd = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	void *p = NULL;

	(void)d;
	return mem_alloc(ctx, &dd, len, 0, zdev, &p) ? 0 : (uintptr_t)p;
}

static void ze_cache_free(const struct vm_nic_dev *d, uint64_t p)
{
	(void)d;
	mem_free(ctx, (void *)(uintptr_t)p);
}

/* Level Zero's fd is the whole allocation: p's offset is p - base. */
static uint64_t ze_offset(const struct vm_nic_dev *dev, uint64_t p)
{
	return p - dev->base;
}

/* The first export: the driver's fd is a dma-buf, not its memfd. */
static void case_driver_fd(uint64_t p)
{
	char path[64], link[128] = "";
	uint64_t offset = 1;
	ssize_t n = -1;
	int fd = -1, ret;

	ret = hmr_hmem_dmabuf_get((void *)(uintptr_t)p, 4096, 0, &fd, &offset);
	if (!ret) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
		hmr_hmem_dmabuf_put((void *)(uintptr_t)p, fd);
	}
	vm_case("rxe_dmabuf_ze_export_is_a_dmabuf",
	        !ret && offset == 0 && strstr(link, "dmabuf") &&
	                !strstr(link, "memfd:"),
	        "%s, offset %#llx, fd names %s", hmr_strerror(ret),
	        (unsigned long long)offset, link);
}

int main(void)
{
	struct vm_nic_dev dev = {.name = "rxe_dmabuf_ze",
	                         .iface = FI_HMEM_ZE,
	                         .offset_of = ze_offset,
	                         .alloc = ze_cache_alloc,
	                         .free = ze_cache_free,
	                         .cache_setting =
	                                 "FI_MR_ZE_CACHE_MONITOR_ENABLED"};
	unsigned long (*fd_errors)(void);
	void *d;
	int rc;

	/* Before hmr's first memory call: backends start once. */
	setenv("HMR_ZE_LIBRARY", LOADER, 1);
	setenv("ZE_ENABLE_ALT_DRIVERS", DRIVER, 1);
	setenv("HMR_SIM_DMABUF", "udmabuf", 1);
	dev.base = ze_alloc();
	if (dev.base)
		case_driver_fd(dev.base);
	rc = vm_nic_kernel_main(&dev, DRIVER);
	/* Every export of the cases found the driver's fd still its own. */
	d = dlopen(DRIVER, RTLD_NOW | RTLD_NOLOAD);
	*(void **)&fd_errors = d ? dlsym(d, "hmr_sim_ze_fd_errors") : NULL;
	vm_case("rxe_dmabuf_ze_driver_fd_never_closed",
	        fd_errors && fd_errors() == 0, "%lu driver-owned fds closed",
	        fd_errors ? fd_errors() : 0);
	return rc | vm_case_exit();
}
