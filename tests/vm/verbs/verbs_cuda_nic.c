/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_cuda_nic.c: simulated CUDA memory through the dma-buf path to a NIC. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
typedef int (*cu_range_fn)(unsigned long long *, size_t *, unsigned long long);

static cu_alloc_fn cu_alloc;
static cu_free_fn cu_free;
static cu_range_fn cu_range;

static int app_start(void)
{
	void *h = dlopen(SIM, RTLD_NOW), *ctx;
	cu_init_fn init = h ? (cu_init_fn)dlsym(h, "cuInit") : NULL;
	cu_retain_fn retain =
	        h ? (cu_retain_fn)dlsym(h, "cuDevicePrimaryCtxRetain") : NULL;
	cu_set_fn set = h ? (cu_set_fn)dlsym(h, "cuCtxSetCurrent") : NULL;

	cu_alloc = h ? (cu_alloc_fn)dlsym(h, "cuMemAlloc_v2") : NULL;
	cu_free = h ? (cu_free_fn)dlsym(h, "cuMemFree_v2") : NULL;
	cu_range = h ? (cu_range_fn)dlsym(h, "cuMemGetAddressRange_v2") : NULL;
	if (!init || !retain || !set || !cu_alloc || !cu_free || !cu_range)
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

/* The application's cuMemAlloc and cuMemFree, for the cache cases. */
static uint64_t cuda_alloc(const struct vm_nic_dev *dev, size_t len)
{
	unsigned long long p;

	(void)dev;
	return cu_alloc(&p, len) ? 0 : p;
}

static void cuda_free(const struct vm_nic_dev *dev, uint64_t p)
{
	(void)dev;
	cu_free(p);
}

/* A tensor of the expandable layout across a 20 MiB chunk boundary: it
 * starts ACROSS_BEFORE bytes below it, inside a page (the bump pointer
 * places tensors at 512-byte multiples), so its export is one dma-buf of
 * two chunks' memory from that page. */
#define ACROSS_LEN    (64 << 10)
#define ACROSS_BEFORE (32768 - 1536)

static struct {
	struct fid_domain *domain;
	uint64_t t;
} across;

/* The whole tensor, whichever 8 KiB of it the cases look at. */
static int across_reg(uint64_t p, struct fid_mr **mr)
{
	struct iovec iov = {(void *)(uintptr_t)across.t, ACROSS_LEN};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_WRITE | FI_REMOTE_READ,
	                          .iface = FI_HMEM_CUDA};

	(void)p;
	return fi_mr_regattr(across.domain, &attr, 0, mr);
}

/* Pads the bump pointer up to ACROSS_BEFORE below the end of its chunk
 * (of the next one where it is past that), then allocates the tensor
 * there: its address and *boundary, or 0. */
static uint64_t across_alloc(uint64_t *boundary)
{
	unsigned long long q, pad, t, chunk;
	size_t size;

	if (cu_alloc(&q, 512) || cu_range(&chunk, &size, q))
		return 0;
	*boundary = chunk + size;
	if (q + 512 > *boundary - ACROSS_BEFORE)
		*boundary += size;
	pad = *boundary - ACROSS_BEFORE - (q + 512);
	if ((pad && cu_alloc(&q, pad)) || cu_alloc(&t, ACROSS_LEN))
		return 0;
	return t == *boundary - ACROSS_BEFORE ? t : 0;
}

/* vm_nic_dev.more on the expandable layout: the tensor registered whole
 * and imported by the kernel (at its page offset), a READ and then a
 * WRITE of 256 bytes across the chunk boundary, the 8 KiB around it
 * compared. */
static void cuda_across_chunks(const struct vm_nic_dev *dev,
                               struct fid_domain *domain,
                               const struct vm_nic_src *s)
{
	const struct vm_nic_at at = {.write = 4096 - 128, .read = 4096 - 64};
	char w[96], r[96];
	uint64_t boundary = 0;

	snprintf(w, sizeof(w), "%s_across_chunks_write_lands", dev->name);
	snprintf(r, sizeof(r), "%s_across_chunks_read_returns", dev->name);
	across.domain = domain;
	across.t = across_alloc(&boundary);
	if (!across.t) {
		vm_case_fail(w, "no tensor at %#llx, below a chunk's end",
		             (unsigned long long)(boundary - ACROSS_BEFORE));
		return;
	}
	vm_nic_rdma_at(s, boundary - 4096, &at, across_reg,
	               cuda_offset(dev, across.t), w, r);
}

/* The same cases on PyTorch's expandable-segment layout (the simulator
 * reads HMR_SIM_CUDA_EXPANDABLE once, so in a child of its own): tensors
 * inside 20 MiB VMM chunks of one reservation, whose every tensor the
 * driver describes as the reservation; hmr must export the tensor's
 * pages, not the reservation; then a tensor across two chunks
 * (cuda_across_chunks).  The cache cases are the plain layout's (the
 * simulator's caching allocator never reuses an address). */
static int expandable_child_ran(void)
{
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		setenv("HMR_SIM_CUDA_EXPANDABLE", "1", 1);
		execl("/proc/self/exe", "rxe_dmabuf_cuda", "expandable",
		      (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	return vm_case("rxe_dmabuf_cuda_expandable_child_ran",
	               WIFEXITED(status) && WEXITSTATUS(status) == 0,
	               "child status %d", status);
}

/* The same backend through the kernel: vm_nic_kernel_main's cases, from
 * an allocation's base and from inside it, then the cache's
 * (vm_nic_cache_cases); then all but the cache's again on the
 * expandable-segment layout, and a tensor across two of its chunks
 * (argument "expandable", in a child). */
int main(int argc, char **argv)
{
	int expandable = argc == 2 && !strcmp(argv[1], "expandable");
	struct vm_nic_dev dev = {.name = "rxe_dmabuf_cuda",
	                         .iface = FI_HMEM_CUDA,
	                         .offset_of = cuda_offset,
	                         .alloc = cuda_alloc,
	                         .free = cuda_free,
	                         .cache_setting =
	                                 "FI_MR_CUDA_CACHE_MONITOR_ENABLED"};
	unsigned long long first, p;

	if (expandable) {
		dev.name = "rxe_dmabuf_cuda_expandable";
		dev.alloc = NULL;
		dev.free = NULL;
		dev.more = cuda_across_chunks;
	} else {
		expandable_child_ran();
	}
	/* Before hmr's first memory call: backends start once.
	 * rdma_rxe_dmabuf imports real dma-bufs: udmabuf's, of the
	 * simulator's memfd; hmr asks rxe itself whether it imports. */
	setenv("HMR_CUDA_LIBRARY", SIM, 1);
	setenv("HMR_SIM_DMABUF", "udmabuf", 1);
	/* Not the first of the device window (of the first chunk). */
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
