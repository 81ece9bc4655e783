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
#define WOFF (4096 + 512)
#define ROFF 6144
#define WLEN 256
#define SEEN 8192

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

static int reg_cuda(struct fid_domain *d, unsigned long long p,
                    struct fid_mr **mr)
{
	struct iovec iov = {(void *)(uintptr_t)p, DLEN};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_WRITE | FI_REMOTE_READ,
	                          .iface = FI_HMEM_CUDA};

	return fi_mr_regattr(d, &attr, 0, mr);
}

static void case_rdma(struct fid_domain *d, struct rc_pair *pair,
                      unsigned char *src, uint32_t lkey)
{
	const char *w = "verbs_cuda_dmabuf_rdma_write_lands";
	const char *r = "verbs_cuda_dmabuf_rdma_read_returns";
	unsigned char want[SEEN], back[SEEN];
	unsigned long long first, p;
	unsigned imports = vm_nic_imports;
	struct fid_mr *mr;
	int fds, ret, st;
	size_t i;

	if (cu_alloc(&first, DLEN) || cu_alloc(&p, DLEN)) {
		vm_case_fail(w, "cuMemAlloc");
		return;
	}
	memset(want, 0x11, sizeof(want));
	for (i = 0; i < WLEN; i++)
		want[ROFF + i] = (unsigned char)(i ^ 0x5a);
	ret = hmr_hmem_copy_to((void *)(uintptr_t)p, want, sizeof(want));
	fds = vm_open_fds();
	if (!ret)
		ret = reg_cuda(d, p, &mr);
	if (ret) {
		vm_case_fail(w, "registration: %s", hmr_strerror(ret));
		return;
	}
	memset(src, 0x6b, WLEN);
	st = rc_rdma(pair, IBV_WR_RDMA_WRITE, src, WLEN, lkey, p + WOFF,
	             (uint32_t)fi_mr_key(mr));
	memset(want + WOFF, 0x6b, WLEN);
	ret = hmr_hmem_copy_from(back, (void *)(uintptr_t)p, sizeof(back));
	/* A whole allocation from its first page: the fd's offset is 0. */
	vm_case(w,
	        st == IBV_WC_SUCCESS && !ret && !memcmp(back, want, SEEN) &&
	                vm_nic_imports == imports + 1 && vm_nic_offset == 0 &&
	                vm_open_fds() == fds,
	        "status %s, copy %s, bytes %s, imports %u, offset %#llx, fds "
	        "%d -> %d",
	        rc_status_str(st), hmr_strerror(ret),
	        memcmp(back, want, SEEN) ? "differ" : "equal",
	        vm_nic_imports - imports, (unsigned long long)vm_nic_offset,
	        fds, vm_open_fds());
	memset(src, 0, WLEN);
	st = rc_rdma(pair, IBV_WR_RDMA_READ, src, WLEN, lkey, p + ROFF,
	             (uint32_t)fi_mr_key(mr));
	vm_case(r, st == IBV_WC_SUCCESS && !memcmp(src, want + ROFF, WLEN),
	        "status %s, bytes %s", rc_status_str(st),
	        memcmp(src, want + ROFF, WLEN) ? "differ" : "equal");
	fi_close(&mr->fid);
}

int main(void)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	unsigned char *src = aligned_alloc(4096, 4096);
	struct fid_domain *d;
	struct fid_mr *src_mr;
	struct rc_pair pair;

	/* Before hmr's first memory call: backends start once. */
	setenv("HMR_CUDA_LIBRARY", SIM, 1);
	/* Not rxe's answer to the probe: this program's NIC imports. */
	setenv("HMR_VERBS_DMABUF", "on", 1);
	vm_nic_takes = "sim-cuda:dev";
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
	    fi_mr_reg(d, src, 4096, FI_READ | FI_WRITE, 0, 0, 0, &src_mr,
	              NULL)) {
		vm_case_fail("verbs_cuda_nic_setup", "rc pair: %s", pair.err);
		return vm_case_exit();
	}
	case_rdma(d, &pair, src,
	          ((struct hmr_verbs_desc *)fi_mr_desc(src_mr))->lkey);
	fi_close(&src_mr->fid);
	rc_pair_destroy(&pair);
	fi_close(&d->fid);
	free(src);
	return vm_case_exit();
}
