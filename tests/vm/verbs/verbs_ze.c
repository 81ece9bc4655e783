/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_ze.c: simulated Level Zero memory through hmr's verbs domain. */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hmr/hmr.h>
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>

#include "rc_pair.h"
#include "vm_case.h"

/*
 * The payload carries Debian's real loader (libze_loader.so.1) and the
 * simulated driver (libze_sim_a.so); run-vm.sh copies what the loader
 * links (libstdc++...) into the guest.  hmr and this program load the
 * same loader by its path; the loader loads the driver by
 * ZE_ENABLE_ALT_DRIVERS.  Device memory is host-accessible in the guest
 * (HMR_SIM_ZE_HOST_ACCESSIBLE=1), as soft-RoCE would need to pin it.
 *
 * rxe has no dma-buf MRs (ibv_reg_dmabuf_mr: EOPNOTSUPP on 6.1 and 6.12)
 * and no peer-memory module exists for Intel GPUs: device memory cannot
 * be registered on rxe, and the cases show hmr takes the dma-buf path
 * for real and fails cleanly.  Host allocations of Level Zero are
 * registered as host memory, and RDMA WRITEs land in them.
 */
#define LOADER "/payload/libze_loader.so.1"
#define DRIVER "/payload/libze_sim_a.so"
#define LEN    (1 << 16)

static struct {
	ze_pfnInit_t init;
	ze_pfnDriverGet_t driver_get;
	ze_pfnDeviceGet_t device_get;
	ze_pfnContextCreate_t context_create;
	ze_pfnMemAllocDevice_t alloc_device;
	ze_pfnMemAllocHost_t alloc_host;
	ze_pfnMemFree_t free;
	ze_context_handle_t ctx;
	ze_device_handle_t dev;
	unsigned long (*calls)(const char *);
	unsigned long (*fd_errors)(void);
} ze;

static int load_ze(void)
{
	ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
	ze_driver_handle_t drv;
	uint32_t n = 1;
	void *h = dlopen(LOADER, RTLD_NOW), *d;

	if (!h)
		return -1;
	*(void **)&ze.init = dlsym(h, "zeInit");
	*(void **)&ze.driver_get = dlsym(h, "zeDriverGet");
	*(void **)&ze.device_get = dlsym(h, "zeDeviceGet");
	*(void **)&ze.context_create = dlsym(h, "zeContextCreate");
	*(void **)&ze.alloc_device = dlsym(h, "zeMemAllocDevice");
	*(void **)&ze.alloc_host = dlsym(h, "zeMemAllocHost");
	*(void **)&ze.free = dlsym(h, "zeMemFree");
	if (!ze.init || !ze.driver_get || !ze.device_get ||
	    !ze.context_create || !ze.alloc_device || !ze.alloc_host ||
	    !ze.free || ze.init(0) || ze.driver_get(&n, &drv) ||
	    ze.device_get(drv, &n, &ze.dev) ||
	    ze.context_create(drv, &cdesc, &ze.ctx))
		return -1;
	d = dlopen(DRIVER, RTLD_NOW | RTLD_NOLOAD);
	*(void **)&ze.calls = d ? dlsym(d, "hmr_sim_ze_calls") : NULL;
	*(void **)&ze.fd_errors = d ? dlsym(d, "hmr_sim_ze_fd_errors") : NULL;
	return ze.calls && ze.fd_errors ? 0 : -1;
}

static void *alloc(int device)
{
	ze_device_mem_alloc_desc_t dd = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	ze_host_mem_alloc_desc_t hd = {
	        .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
	void *p = NULL;

	if (device ? ze.alloc_device(ze.ctx, &dd, LEN, 0, ze.dev, &p)
	           : ze.alloc_host(ze.ctx, &hd, LEN, 0, &p))
		return NULL;
	return p;
}

static int open_domain(struct ibv_pd *pd, uint64_t caps, struct fid_domain **d)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = "rxe0";
	attr.caps = caps;
	attr.pd = pd;
	return hmr_domain_open(&attr, d);
}

static int reg_ze(struct fid_domain *d, void *p, uint64_t flags,
                  struct fid_mr **mr)
{
	struct iovec iov = {p, LEN};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_WRITE | FI_REMOTE_READ,
	                          .iface = FI_HMEM_ZE};

	attr.device.ze = fi_hmem_ze_device(0, 0);
	return fi_mr_regattr(d, &attr, flags, mr);
}

/* A zeMemAllocHost buffer, registered as Level Zero memory: the NIC
 * writes into it through the rkey hmr handed out. */
static void case_host_alloc_write(struct rc_pair *p, struct fid_domain *d,
                                  char *src, uint32_t src_lkey)
{
	/* fi_mr: F88 */
	const char *name = "verbs_ze_host_alloc_rdma_write_lands";
	char *dst = alloc(0), back[256];
	struct fid_mr *mr;
	int ret, st;

	if (!dst) {
		vm_case_fail(name, "zeMemAllocHost");
		return;
	}
	ret = reg_ze(d, dst, FI_HMEM_HOST_ALLOC, &mr);
	if (ret) {
		vm_case_fail(name, "registration: %s", hmr_strerror(ret));
		ze.free(ze.ctx, dst);
		return;
	}
	memset(src, 0x3c, sizeof(back));
	memset(dst, 0, LEN);
	st = rc_rdma(p, IBV_WR_RDMA_WRITE, src, sizeof(back), src_lkey,
	             (uintptr_t)dst + 4096, (uint32_t)fi_mr_key(mr));
	ret = hmr_hmem_copy_from(back, dst + 4096, sizeof(back));
	vm_case(name,
	        st == IBV_WC_SUCCESS && !ret &&
	                !memcmp(back, src, sizeof(back)),
	        "status %s, copy %s, bytes %s", rc_status_str(st),
	        hmr_strerror(ret),
	        memcmp(back, src, sizeof(back)) ? "differ" : "equal");
	fi_close(&mr->fid);
	ze.free(ze.ctx, dst);
}

/*
 * Device memory with the dma-buf probe skipped (HMR_VERBS_DMABUF=on):
 * hmr exports the allocation (the classification's query, then the
 * export's query and its two exports: four zeMemGetAllocProperties), rxe
 * refuses the fd, no peer-memory path exists: refused,
 * with every fd hmr opened closed and the driver's own fd left alone.
 * With the probe (the default), rxe's refusal is known first: no export.
 */
static void case_device(struct ibv_pd *pd, const char *name, int skip_probe)
{
	unsigned long calls;
	struct fid_domain *d;
	struct fid_mr *mr;
	char *dev = alloc(1);
	int ret, fds;

	if (skip_probe)
		setenv("HMR_VERBS_DMABUF", "on", 1);
	ret = dev ? open_domain(pd, FI_HMEM, &d) : -1;
	unsetenv("HMR_VERBS_DMABUF");
	if (ret) {
		vm_case_fail(name, "set-up");
		return;
	}
	fds = vm_open_fds();
	calls = ze.calls("zeMemGetAllocProperties");
	ret = reg_ze(d, dev, 0, &mr);
	calls = ze.calls("zeMemGetAllocProperties") - calls;
	/* Driver-owned fds (the simulator's default): the driver keeps one
	 * for the allocation once it has been exported. */
	vm_case(name,
	        ret == -FI_EOPNOTSUPP && calls == (skip_probe ? 4u : 1u) &&
	                vm_open_fds() == fds + skip_probe &&
	                ze.fd_errors() == 0,
	        "ret %s, %lu driver queries, fds %d -> %d, fd errors %lu",
	        hmr_strerror(ret), calls, fds, vm_open_fds(), ze.fd_errors());
	if (!ret)
		fi_close(&mr->fid);
	fi_close(&d->fid);
	ze.free(ze.ctx, dev);
}

int main(void)
{
	struct fid_domain *host, *hmem;
	struct fid_mr *src_mr;
	struct rc_pair pair;
	char *src = aligned_alloc(4096, LEN);
	int ret;

	/* Before hmr's first memory query: backends start once. */
	setenv("HMR_ZE_LIBRARY", LOADER, 1);
	setenv("ZE_ENABLE_ALT_DRIVERS", DRIVER, 1);
	setenv("HMR_SIM_ZE_HOST_ACCESSIBLE", "1", 1);
	if (load_ze()) {
		vm_case_fail("verbs_ze_setup", "%s or %s: %s", LOADER, DRIVER,
		             dlerror());
		return vm_case_exit();
	}
	ret = open_domain(NULL, 0, &host);
	if (!ret)
		ret = open_domain(hmr_verbs_pd(host), FI_HMEM, &hmem);
	if (ret || rc_wait_gid(hmr_verbs_pd(host)->context, 0, 10000) ||
	    rc_pair_create(&pair, hmr_verbs_pd(host), hmr_verbs_pd(host), 0) ||
	    fi_mr_reg(host, src, LEN, FI_WRITE | FI_READ, 0, 0, 0, &src_mr,
	              NULL)) {
		vm_case_fail("verbs_ze_setup", "verbs domain on rxe0: %s",
		             hmr_strerror(ret));
		return vm_case_exit();
	}
	ret = hmr_hmem_status(FI_HMEM_ZE, NULL, 0);
	vm_case("verbs_ze_backend_present_in_the_guest", ret == 0, "%s",
	        hmr_strerror(ret));
	case_host_alloc_write(
	        &pair, hmem, src,
	        ((struct hmr_verbs_desc *)fi_mr_desc(src_mr))->lkey);
	case_device(hmr_verbs_pd(host),
	            "verbs_ze_device_dmabuf_exported_then_refused_by_rxe", 1);
	case_device(hmr_verbs_pd(host),
	            "verbs_ze_device_not_exported_when_rxe_probe_refuses", 0);
	fi_close(&src_mr->fid);
	rc_pair_destroy(&pair);
	fi_close(&hmem->fid);
	fi_close(&host->fid);
	free(src);
	return vm_case_exit();
}
