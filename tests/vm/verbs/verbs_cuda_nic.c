/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_cuda_nic.c: simulated CUDA memory through the dma-buf path to a NIC. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "dmabuf_nic.h"
#ifdef VM_NIC_KERNEL
#include "reg_dmabuf.h"
#endif
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
typedef int (*cu_free_fn)(unsigned long long);

static cu_alloc_fn cu_alloc;
static cu_free_fn cu_free;

static int app_start(void)
{
	void *h = dlopen(SIM, RTLD_NOW), *ctx;
	cu_init_fn init = h ? (cu_init_fn)dlsym(h, "cuInit") : NULL;
	cu_retain_fn retain =
	        h ? (cu_retain_fn)dlsym(h, "cuDevicePrimaryCtxRetain") : NULL;
	cu_set_fn set = h ? (cu_set_fn)dlsym(h, "cuCtxSetCurrent") : NULL;

	cu_alloc = h ? (cu_alloc_fn)dlsym(h, "cuMemAlloc_v2") : NULL;
	cu_free = h ? (cu_free_fn)dlsym(h, "cuMemFree_v2") : NULL;
	if (!init || !retain || !set || !cu_alloc || !cu_free)
		return -1;
	return init(0) || retain(&ctx, 0) || set(ctx) ? -1 : 0;
}

#ifdef VM_NIC_KERNEL
/* hmr exports from the page holding p: p is at its page offset. */
static uint64_t cuda_offset(const struct vm_nic_dev *dev, uint64_t p)
{
	(void)dev;
	return p & 4095;
}

/* Local rights only: what the registration cache serves. */
static int reg_local(struct fid_domain *d, uint64_t p, struct fid_mr **mr)
{
	struct iovec iov = {(void *)(uintptr_t)p, DLEN};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_READ | FI_WRITE,
	                          .iface = FI_HMEM_CUDA};

	return fi_mr_regattr(d, &attr, 0, mr);
}

/* An RDMA WRITE of 256 bytes of device memory at p, through mr's lkey,
 * into the host buffer dst (rkey); 1 when dst then holds `want`. */
static int device_bytes_sent(const struct vm_nic_src *s, struct fid_mr *mr,
                             uint64_t p, struct fid_mr *dst_mr,
                             unsigned char *dst, int want)
{
	const struct hmr_verbs_desc *desc = fi_mr_desc(mr);
	int st, i;

	memset(dst, 0, 256);
	st = rc_rdma(s->pair, IBV_WR_RDMA_WRITE,
	             (void *)(uintptr_t)hmr_verbs_sge_addr(
	                     desc, (void *)(uintptr_t)p),
	             256, desc->lkey, (uintptr_t)dst,
	             (uint32_t)fi_mr_key(dst_mr));
	for (i = 0; i < 256 && dst[i] == want; i++)
		;
	return st == IBV_WC_SUCCESS && i == 256;
}

static struct hmr_mr_cache_stats cache_stats(struct fid_domain *d)
{
	struct hmr_mr_cache_stats st = HMR_MR_CACHE_STATS_INIT;

	hmr_mr_cache_stats(d, &st);
	return st;
}

/* A fresh allocation filled with `byte`, registered local-only; 0 for p. */
static uint64_t filled(int byte)
{
	static unsigned char buf[256];
	unsigned long long p;

	memset(buf, byte, sizeof(buf));
	if (cu_alloc(&p, DLEN) ||
	    hmr_hmem_copy_to((void *)(uintptr_t)p, buf, sizeof(buf)))
		return 0;
	return p;
}

/*
 * The registration cache on the dma-buf path: a second local-only
 * registration of device memory is a hit (no second import) whose lkey
 * moves the memory's bytes; after cuMemFree and a cuMemAlloc at the
 * same address (a new buffer id) the next one misses, is imported anew
 * and moves the new allocation's bytes, never the freed pages that the
 * old registration pinned.
 */
static void cache_cases(const struct vm_nic_dev *dev, struct fid_domain *d,
                        const struct vm_nic_src *s)
{
	const char *hit = "rxe_dmabuf_cuda_cache_serves_device_memory";
	const char *gone = "rxe_dmabuf_cuda_cache_misses_after_free";
	unsigned char *dst = aligned_alloc(4096, 4096);
	struct fid_mr *dst_mr = NULL, *mr = NULL;
	struct hmr_mr_cache_stats a, b;
	unsigned imports = vm_kernel_imports;
	uint64_t p = filled(0x21), q;
	int ok, ret;

	(void)dev;
	ret = !p || !dst ? -FI_ENOMEM
	                 : fi_mr_reg(d, dst, 4096, FI_REMOTE_WRITE, 0, 0, 0,
	                             &dst_mr, NULL);
	if (!ret)
		ret = reg_local(d, p, &mr);
	if (ret) {
		vm_case_fail(hit, "setup: %s", hmr_strerror(ret));
		goto out;
	}
	fi_close(&mr->fid);
	a = cache_stats(d);
	ret = reg_local(d, p, &mr);
	b = cache_stats(d);
	ok = !ret && device_bytes_sent(s, mr, p, dst_mr, dst, 0x21);
	vm_case(hit,
	        ok && b.hits == a.hits + 1 && vm_kernel_imports == imports + 1,
	        "%s, bytes %s, hits %llu, imports %u, cache %s",
	        hmr_strerror(ret), ok ? "moved" : "wrong",
	        (unsigned long long)(b.hits - a.hits),
	        vm_kernel_imports - imports, b.active ? "on" : b.why);
	if (ret)
		goto out;
	fi_close(&mr->fid);
	mr = NULL;
	/* From before the free: the simulator's cuMemFree unmaps, so the
	 * memory monitor may drop the entry there; the real driver keeps
	 * the range reserved, and the next miss at the address drops it. */
	a = cache_stats(d);
	cu_free(p);
	q = filled(0x42);
	ret = q ? reg_local(d, q, &mr) : -FI_ENOMEM;
	b = cache_stats(d);
	ok = !ret && device_bytes_sent(s, mr, q, dst_mr, dst, 0x42);
	vm_case(gone,
	        q == p && ok && b.misses == a.misses + 1 &&
	                vm_kernel_imports == imports + 2 &&
	                b.entries == a.entries &&
	                b.invalidations == a.invalidations + 1,
	        "%s, same address %s, bytes %s, misses %llu, imports %u, "
	        "entries %zu -> %zu, invalidations %llu",
	        hmr_strerror(ret), q == p ? "yes" : "no",
	        ok ? "new" : "stale or lost",
	        (unsigned long long)(b.misses - a.misses),
	        vm_kernel_imports - imports, a.entries, b.entries,
	        (unsigned long long)(b.invalidations - a.invalidations));
out:
	if (mr)
		fi_close(&mr->fid);
	if (dst_mr)
		fi_close(&dst_mr->fid);
	free(dst);
}

/* The same backend through the kernel: vm_nic_kernel_main's cases, from
 * an allocation's base and from inside it, then the cache's. */
int main(void)
{
	struct vm_nic_dev dev = {.name = "rxe_dmabuf_cuda",
	                         .iface = FI_HMEM_CUDA,
	                         .offset_of = cuda_offset,
	                         .more = cache_cases};
	unsigned long long first, p;

	/* Before hmr's first memory call: backends start once.
	 * rdma_rxe_dmabuf imports real dma-bufs: udmabuf's, of the
	 * simulator's memfd; hmr asks rxe itself whether it imports. */
	setenv("HMR_CUDA_LIBRARY", SIM, 1);
	setenv("HMR_SIM_DMABUF", "udmabuf", 1);
	/* Not the first of the device window. */
	if (!app_start() && !cu_alloc(&first, DLEN) && !cu_alloc(&p, DLEN))
		dev.base = p;
	return vm_nic_kernel_main(&dev, SIM);
}
#else
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
#endif /* VM_NIC_KERNEL */
