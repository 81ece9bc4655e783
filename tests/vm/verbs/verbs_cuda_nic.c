/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_cuda_nic.c: simulated CUDA memory through the dma-buf path to a NIC. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "dmabuf_nic.h"
#include "rc_pair.h"
#include "vm_case.h"

/*
 * hmr registers a simulated CUDA allocation on rxe0 through the verbs
 * domain's dma-buf path: the backend exports the registered pages
 * (cuMemGetHandleForAddressRange), this program's stand-in NIC
 * (dmabuf_nic.h) imports the fd at hmr's offset, and an RDMA WRITE and
 * READ through the rkey must land on and return exactly the buffer's
 * bytes, as checked through the driver's own copies.  The simulator's
 * export of a whole allocation is a mappable alias of its memory; an
 * export of part of one is not (as the real driver's fds refuse mmap),
 * so the registration covers one whole allocation, not the first of the
 * device window.
 */
#define SIM  "/payload/libcuda.so.1"
#define DLEN (1 << 20)

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_retain_fn)(void **, int);
typedef int (*cu_set_fn)(void *);
typedef int (*cu_alloc_fn)(unsigned long long *, size_t);

static cu_alloc_fn cu_alloc;

static int app_start(void)
{
	void *h = dlopen(SIM, RTLD_NOW), *ctx;
	cu_init_fn init = h ? (cu_init_fn)dlsym(h, "cuInit") : NULL;
	cu_retain_fn retain =
	        h ? (cu_retain_fn)dlsym(h, "cuDevicePrimaryCtxRetain") : NULL;
	cu_set_fn set = h ? (cu_set_fn)dlsym(h, "cuCtxSetCurrent") : NULL;

	cu_alloc = h ? (cu_alloc_fn)dlsym(h, "cuMemAlloc_v2") : NULL;
	if (!init || !retain || !set || !cu_alloc)
		return -1;
	return init(0) || retain(&ctx, 0) || set(ctx) ? -1 : 0;
}

static struct fid_domain *domain;

static int reg_cuda(uint64_t p, struct fid_mr **mr)
{
	struct iovec iov = {(void *)(uintptr_t)p, DLEN};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_WRITE | FI_REMOTE_READ,
	                          .iface = FI_HMEM_CUDA};

	return fi_mr_regattr(domain, &attr, 0, mr);
}

/* A whole allocation, not the first of the window: the fd's offset is 0
 * (hmr exports from the page holding the pointer). */
static void case_rdma(const struct vm_nic_src *s)
{
	/* fi_mr: V16 */
	const char *w = "verbs_cuda_dmabuf_rdma_write_lands";
	/* fi_mr: V16 */
	const char *r = "verbs_cuda_dmabuf_rdma_read_returns";
	unsigned long long first, p;

	if (cu_alloc(&first, DLEN) || cu_alloc(&p, DLEN)) {
		vm_case_fail(w, "cuMemAlloc");
		return;
	}
	vm_nic_rdma_cases(s, p, reg_cuda, 0, w, r);
}

/* hmr says which path CUDA memory takes on rxe0 before registering. */
static void case_path(void)
{
	enum hmr_verbs_path path = HMR_VERBS_PATH_NONE;
	char why[256] = "";
	int ret =
	        hmr_verbs_reg_path(FI_HMEM_CUDA, 0, 0, &path, why, sizeof(why));

	vm_case("verbs_cuda_dmabuf_reg_path",
	        !ret && path == HMR_VERBS_PATH_DMABUF, "%s, path %d: %s",
	        hmr_strerror(ret), (int)path, why);
}

int main(void)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct rc_pair pair;
	struct vm_nic_src s = {&pair, aligned_alloc(4096, 4096), 0};
	struct fid_domain *d;
	struct fid_mr *src_mr;

	/* Before hmr's first memory call: backends start once. */
	setenv("HMR_CUDA_LIBRARY", SIM, 1);
#ifdef VM_NIC_KERNEL
	/* rdma_rxe_dmabuf imports real dma-bufs: udmabuf's, of the
	 * simulator's memfd; hmr asks rxe itself whether it imports. */
	setenv("HMR_SIM_DMABUF", "udmabuf", 1);
#else
	/* Not rxe's answer to the probe: this program's NIC imports. */
	setenv("HMR_VERBS_DMABUF", "on", 1);
	vm_nic_takes = "sim-cuda:dev";
#endif
	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = "rxe0";
	attr.caps = FI_HMEM;
	if (app_start() || hmr_domain_open(&attr, &d)) {
		vm_case_fail("verbs_cuda_nic_setup", "simulator %s or rxe0",
		             SIM);
		return vm_case_exit();
	}
	if (rc_wait_gid(hmr_verbs_pd(d)->context, 0, 10000) ||
	    rc_pair_create(&pair, hmr_verbs_pd(d), hmr_verbs_pd(d), 0) ||
	    fi_mr_reg(d, s.src, 4096, FI_READ | FI_WRITE, 0, 0, 0, &src_mr,
	              NULL)) {
		vm_case_fail("verbs_cuda_nic_setup", "rc pair: %s", pair.err);
		return vm_case_exit();
	}
	s.lkey = ((struct hmr_verbs_desc *)fi_mr_desc(src_mr))->lkey;
	domain = d;
	case_path();
	case_rdma(&s);
	fi_close(&src_mr->fid);
	rc_pair_destroy(&pair);
	fi_close(&d->fid);
	free(s.src);
	return vm_case_exit();
}
