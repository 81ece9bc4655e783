/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ze_register.c: allocate Level Zero device memory, register it, print it.
 */
#include <stdio.h>
#include <stdlib.h>

#include <hmr/hmr.h>
#include <level_zero/ze_api.h>

/*
 *   ze_register [DRIVER DEVICE]      (default: 0 0)
 *
 * Allocates 2 MiB on device DEVICE of driver DRIVER (their positions in
 * the arrays zeDriverGet and zeDeviceGet return), registers it with
 * fi_mr_regattr (iface FI_HMEM_ZE, device from fi_hmem_ze_device), and
 * prints what a peer needs and the dma-buf a NIC would import.
 */
static int pick(uint32_t want_drv, uint32_t want_dev, ze_driver_handle_t *drv,
                ze_device_handle_t *dev)
{
	ze_driver_handle_t drivers[16];
	ze_device_handle_t devices[64];
	uint32_t n = 16, m = 64;

	if (zeInit(0) || zeDriverGet(&n, drivers) || want_drv >= n)
		return fprintf(stderr, "no Level Zero driver %u\n", want_drv),
		       -1;
	*drv = drivers[want_drv];
	if (zeDeviceGet(*drv, &m, devices) || want_dev >= m)
		return fprintf(stderr, "driver %u has no device %u\n", want_drv,
		               want_dev),
		       -1;
	*dev = devices[want_dev];
	return 0;
}

static int reg(void *buf, size_t len, int device, struct fid_domain **domain,
               struct fid_mr **mr)
{
	struct hmr_domain_attr dattr = HMR_DOMAIN_ATTR_INIT;
	struct fi_mr_attr attr = {0};
	struct iovec iov = {buf, len};
	int ret;

	dattr.caps = FI_HMEM;
	ret = hmr_domain_open(&dattr, domain);
	if (ret)
		return fprintf(stderr, "domain: %s\n", hmr_strerror(ret)), ret;
	attr.mr_iov = &iov;
	attr.iov_count = 1;
	attr.access = FI_REMOTE_READ | FI_REMOTE_WRITE;
	attr.iface = FI_HMEM_ZE;
	attr.device.ze = device; /* Where the memory is: driver and device. */
	ret = fi_mr_regattr(*domain, &attr, FI_HMEM_DEVICE_ONLY, mr);
	if (ret) {
		fprintf(stderr, "regattr: %s\n", hmr_strerror(ret));
		fi_close(&(*domain)->fid);
	}
	return ret;
}

int main(int argc, char **argv)
{
	ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
	ze_device_mem_alloc_desc_t mdesc = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	uint32_t want_drv = argc > 2 ? (uint32_t)atoi(argv[1]) : 0;
	uint32_t want_dev = argc > 2 ? (uint32_t)atoi(argv[2]) : 0;
	int device = fi_hmem_ze_device((int)want_drv, (int)want_dev);
	ze_driver_handle_t drv;
	ze_device_handle_t dev;
	ze_context_handle_t ctx;
	struct fid_domain *domain;
	struct fid_mr *mr;
	size_t len = 2 << 20;
	uint64_t offset;
	void *buf;
	int fd, ret;

	if (device < 0 || pick(want_drv, want_dev, &drv, &dev) ||
	    zeContextCreate(drv, &cdesc, &ctx) ||
	    zeMemAllocDevice(ctx, &mdesc, len, 0, dev, &buf))
		return fprintf(stderr, "Level Zero set-up failed\n"), 1;
	if (reg(buf, len, device, &domain, &mr))
		return 1;
	printf("iface %s device %#x (driver %u, device %u) desc %p key %#llx\n",
	       hmr_hmem_iface_name(FI_HMEM_ZE), device, want_drv, want_dev,
	       fi_mr_desc(mr), (unsigned long long)fi_mr_key(mr));

	/* What a verbs registration hands to ibv_reg_dmabuf_mr; the fd is
	 * hmr's own copy, given back with hmr_hmem_dmabuf_put. */
	ret = hmr_hmem_dmabuf_get(buf, len, 0, &fd, &offset);
	if (ret == 0) {
		printf("dma-buf fd %d offset %llu\n", fd,
		       (unsigned long long)offset);
		hmr_hmem_dmabuf_put(buf, fd);
	} else {
		printf("dma-buf: %s\n", hmr_strerror(ret));
	}
	fi_close(&mr->fid);
	fi_close(&domain->fid);
	zeMemFree(ctx, buf);
	zeContextDestroy(ctx);
	return 0;
}
