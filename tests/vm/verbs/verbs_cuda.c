/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_cuda.c: simulated CUDA memory through hmr's verbs device paths. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "rc_pair.h"
#include "verbs_vm.h"
#include "vm_case.h"

/*
 * The simulated libcuda (tests/sim/cuda) runs in the VM with its device
 * memory host-accessible (HMR_SIM_CUDA_HOST_ACCESSIBLE=1), because rxe
 * pins peer memory as plain pages.  A fake sysfs (HMR_SYSFS_ROOT) says
 * whether a peer-memory module is loaded.
 */
#define DLEN (1 << 20)

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_retain_fn)(void **, int);
typedef int (*cu_set_fn)(void *);
typedef int (*cu_alloc_fn)(unsigned long long *, size_t);
typedef int (*cu_free_fn)(unsigned long long);

typedef unsigned long (*calls_fn)(const char *);

static cu_alloc_fn cu_alloc;
static cu_free_fn cu_free;
static cu_retain_fn cu_retain;
static cu_set_fn cu_set;
static calls_fn sim_calls;

void hmr_vm_cuda_env(void)
{
	/* Before hmr's first memory query: backends start once. */
	setenv("HMR_CUDA_LIBRARY", HMR_VM_SIM_CUDA, 0);
	setenv("HMR_SIM_CUDA_HOST_ACCESSIBLE", "1", 0);
}

/* The application's side: a driver, device 0's context current. */
static int load_sim(void)
{
	void *h = dlopen(getenv("HMR_CUDA_LIBRARY"), RTLD_NOW), *ctx;
	cu_init_fn init = h ? (cu_init_fn)dlsym(h, "cuInit") : NULL;
	cu_retain_fn retain =
	        h ? (cu_retain_fn)dlsym(h, "cuDevicePrimaryCtxRetain") : NULL;
	cu_set_fn set = h ? (cu_set_fn)dlsym(h, "cuCtxSetCurrent") : NULL;

	cu_alloc = h ? (cu_alloc_fn)dlsym(h, "cuMemAlloc_v2") : NULL;
	cu_free = h ? (cu_free_fn)dlsym(h, "cuMemFree_v2") : NULL;
	sim_calls = h ? (calls_fn)dlsym(h, "hmr_sim_cuda_calls") : NULL;
	cu_retain = retain;
	cu_set = set;
	if (!init || !retain || !set || !cu_alloc || !cu_free || !sim_calls)
		return -1;
	return init(0) || retain(&ctx, 0) || set(ctx) ? -1 : 0;
}

/* A fake sysfs root, with or without the nvidia_peermem module. */
static const char *sysfs(int with_module)
{
	static const char *root[] = {"/tmp/hmr-sysfs-none",
	                             "/tmp/hmr-sysfs-peermem"};

	mkdir(root[0], 0755);
	mkdir(root[1], 0755);
	mkdir("/tmp/hmr-sysfs-peermem/module", 0755);
	mkdir("/tmp/hmr-sysfs-peermem/module/nvidia_peermem", 0755);
	return root[with_module];
}

static int reg_cuda_on(struct fid_domain *d, void *p, int device,
                       struct fid_mr **mr)
{
	struct iovec iov = {p, DLEN};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_WRITE | FI_REMOTE_READ,
	                          .iface = FI_HMEM_CUDA};

	attr.device.cuda = device;
	return fi_mr_regattr(d, &attr, 0, mr);
}

static int reg_cuda(struct fid_domain *d, void *p, struct fid_mr **mr)
{
	return reg_cuda_on(d, p, 0, mr);
}

static int open_hmem_domain(struct ibv_pd *pd, struct fid_domain **d)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.kind = HMR_DOMAIN_VERBS;
	attr.caps = FI_HMEM;
	attr.pd = pd; /* The QPs' protection domain. */
	return hmr_domain_open(&attr, d);
}

/* Device memory on device `dev` (its primary context made current). */
static unsigned long long alloc_on(int dev)
{
	unsigned long long p = 0;
	void *ctx;

	if (cu_retain(&ctx, dev) || cu_set(ctx) || cu_alloc(&p, DLEN))
		return 0;
	return p;
}

/*
 * With the probe skipped (HMR_VERBS_DMABUF=on), rxe's real refusal of the
 * first dma-buf demotes that GPU only: device 0 is not exported again,
 * device 1 still is once.  Peer memory carries every registration.
 */
static void case_demotion(struct ibv_pd *pd)
{
	const char *name = "verbs_cuda_dmabuf_refusal_demotes_that_device_only";
	unsigned long long d0 = alloc_on(0), d1 = alloc_on(1);
	unsigned long c[4];
	struct fid_domain *d;
	struct fid_mr *mr[3] = {NULL, NULL, NULL};
	int ret[3], i;

	setenv("HMR_VERBS_DMABUF", "on", 1);
	setenv("HMR_SYSFS_ROOT", sysfs(1), 1);
	if (!d0 || !d1 || open_hmem_domain(pd, &d)) {
		vm_case_fail(name, "set-up");
		unsetenv("HMR_VERBS_DMABUF");
		return;
	}
	unsetenv("HMR_VERBS_DMABUF");
	c[0] = sim_calls("cuMemGetHandleForAddressRange");
	ret[0] = reg_cuda(d, (void *)(uintptr_t)d0, &mr[0]);
	c[1] = sim_calls("cuMemGetHandleForAddressRange");
	ret[1] = reg_cuda_on(d, (void *)(uintptr_t)d0, 0, &mr[1]);
	c[2] = sim_calls("cuMemGetHandleForAddressRange");
	ret[2] = reg_cuda_on(d, (void *)(uintptr_t)d1, 1, &mr[2]);
	c[3] = sim_calls("cuMemGetHandleForAddressRange");
	vm_case(name,
	        !ret[0] && !ret[1] && !ret[2] && c[1] == c[0] + 1 &&
	                c[2] == c[1] && c[3] == c[2] + 1,
	        "regs %d %d %d, exports %lu %lu %lu", ret[0], ret[1], ret[2],
	        c[1] - c[0], c[2] - c[1], c[3] - c[2]);
	for (i = 0; i < 3; i++)
		if (mr[i])
			fi_close(&mr[i]->fid);
	fi_close(&d->fid);
	cu_free(d0);
	cu_free(d1);
}

int hmr_vm_cuda_cases(struct rc_pair *p, struct fid_mr *src_mr, char *src)
{
	struct fid_domain *d;
	struct fid_mr *mr;
	unsigned long long dev;
	char back[256];
	int ret, st, status;

	if (load_sim() || cu_alloc(&dev, DLEN)) {
		vm_case_fail("verbs_cuda_setup",
		             "simulator %s: no device memory",
		             getenv("HMR_CUDA_LIBRARY"));
		return -1;
	}
	if (open_hmem_domain(p->pd_b, &d)) {
		vm_case_fail("verbs_cuda_setup", "FI_HMEM verbs domain");
		return -1;
	}

	setenv("HMR_SYSFS_ROOT", sysfs(0), 1);
	ret = reg_cuda(d, (void *)(uintptr_t)dev, &mr);
	/* fi_mr: V20 */
	vm_case("verbs_cuda_without_dmabuf_or_peermem_is_eopnotsupp",
	        ret == -FI_EOPNOTSUPP, "ret %s", hmr_strerror(ret));
	if (!ret)
		fi_close(&mr->fid);

	/* rxe refused the dma-buf probe: the peer-memory path is taken. */
	setenv("HMR_SYSFS_ROOT", sysfs(1), 1);
	ret = reg_cuda(d, (void *)(uintptr_t)dev, &mr);
	if (ret) {
		vm_case_fail("verbs_cuda_peermem_rdma_write_lands",
		             "registration: %s", hmr_strerror(ret));
	} else {
		memset(src, 0x6b, 256);
		st = rc_rdma(
		        p, IBV_WR_RDMA_WRITE, src, 256,
		        ((struct hmr_verbs_desc *)fi_mr_desc(src_mr))->lkey,
		        dev + 4096, (uint32_t)fi_mr_key(mr));
		memset(back, 0, sizeof(back));
		ret = hmr_hmem_copy_from(back, (void *)(uintptr_t)(dev + 4096),
		                         sizeof(back));
		vm_case("verbs_cuda_peermem_rdma_write_lands",
		        st == IBV_WC_SUCCESS && !ret &&
		                !memcmp(back, src, sizeof(back)),
		        "status %s, copy %s, bytes %s", rc_status_str(st),
		        hmr_strerror(ret),
		        memcmp(back, src, sizeof(back)) ? "differ" : "equal");
		fi_close(&mr->fid);
	}
	fi_close(&d->fid);

	case_demotion(p->pd_b);

	/* FI_HMEM_DISABLE_P2P is read once per process: a child checks it. */
	fflush(stdout);
	if (fork() == 0) {
		setenv("FI_HMEM_DISABLE_P2P", "1", 1);
		execl("/proc/self/exe", "verbs_suite", "p2p-child",
		      (char *)NULL);
		_exit(127);
	}
	wait(&status);
	/* fi_mr: F112 */
	vm_case("verbs_cuda_disable_p2p_forbids_device_paths",
	        WIFEXITED(status) && WEXITSTATUS(status) == 0,
	        "child status %d", status);
	/* Expandable segments: the simulator reads its layout once, so a
	 * child runs those cases (it prints their lines itself). */
	fflush(stdout);
	if (fork() == 0) {
		setenv("HMR_SIM_CUDA_EXPANDABLE", "1", 1);
		execl("/proc/self/exe", "verbs_suite", "expandable-child",
		      (char *)NULL);
		_exit(127);
	}
	wait(&status);
	vm_case("verbs_cuda_expandable_child_ran",
	        WIFEXITED(status) && WEXITSTATUS(status) == 0,
	        "child status %d", status);
	cu_free(dev);
	return 0;
}

typedef unsigned long (*last_export_fn)(unsigned long long *, size_t *);

/* The dma-buf hmr exports for [p, p + len): its page-aligned span. */
static int expandable_reg(struct fid_domain *d, last_export_fn last,
                          const char *name, int dev, unsigned long long p,
                          size_t len)
{
	unsigned long long at = 0, lo = p & ~4095ull;
	unsigned long long hi = (p + len + 4095) & ~4095ull;
	struct iovec iov = {(void *)(uintptr_t)p, len};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_WRITE | FI_REMOTE_READ,
	                          .iface = FI_HMEM_CUDA};
	unsigned long n0 = last(NULL, NULL), n;

	attr.device.cuda = dev;
	struct fid_mr *mr = NULL;
	int fds = vm_open_fds(), ret;
	size_t size = 0;

	ret = fi_mr_regattr(d, &attr, 0, &mr);
	n = last(&at, &size);
	vm_case(name,
	        !ret && n == n0 + 1 && at == lo && size == hi - lo &&
	                vm_open_fds() == fds,
	        "reg %s, exports %lu, exported [%#llx, +%zu) for [%#llx, "
	        "+%zu): want [%#llx, +%llu), fds %d -> %d",
	        hmr_strerror(ret), n - n0, at, size, p, len, lo, hi - lo, fds,
	        vm_open_fds());
	if (mr)
		fi_close(&mr->fid);
	return ret;
}

/*
 * Child, with HMR_SIM_CUDA_EXPANDABLE=1 (read once by the simulator):
 * tensors laid out as PyTorch's expandable segments, one reservation of
 * 20 MiB chunks.  hmr is made to try the dma-buf path (HMR_VERBS_DMABUF=
 * on): it must export the pages of the tensor, not the reservation (which
 * the driver refuses), release the fd when rxe refuses the dma-buf, and
 * register through peer memory.  A tensor across two chunks too.
 */
static int expandable_child(void)
{
	last_export_fn last;
	unsigned long long a, b, c;
	struct fid_domain *d;
	void *h;

	if (load_sim())
		return 3;
	h = dlopen(getenv("HMR_CUDA_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
	last = h ? (last_export_fn)dlsym(h, "hmr_sim_cuda_last_export") : NULL;
	/* rxe's refusal of a dma-buf demotes that device (case_demotion):
	 * the second case is on device 1. */
	if (!last || cu_alloc(&a, 12 << 10) || cu_alloc(&b, 64 << 10))
		return 4;
	c = alloc_on(1);
	if (!c || cu_alloc(&c, 20 << 20))
		return 4;
	setenv("HMR_VERBS_DMABUF", "on", 1);
	setenv("HMR_SYSFS_ROOT", sysfs(1), 1);
	if (open_hmem_domain(NULL, &d))
		return 5;
	expandable_reg(d, last,
	               "verbs_cuda_expandable_tensor_exports_its_pages", 0,
	               b + 256, (60 << 10) + 100);
	/* Device 1's reservation: a 1 MiB tensor (alloc_on), then c from
	 * 1 MiB to 21 MiB: chunk 0 and into chunk 1. */
	expandable_reg(d, last,
	               "verbs_cuda_expandable_tensor_across_chunks_exports_"
	               "its_pages",
	               1, c + 4096, (20 << 20) - 8192);
	fi_close(&d->fid);
	return 0;
}

/* Child: with peer memory present, FI_HMEM_DISABLE_P2P still refuses. */
int hmr_vm_child(int argc, char **argv)
{
	struct fid_domain *d;
	struct fid_mr *mr;
	unsigned long long dev;
	int ret;

	if (argc == 2 && !strcmp(argv[1], "expandable-child"))
		return expandable_child();
	if (argc != 2 || strcmp(argv[1], "p2p-child") != 0)
		return 2;
	if (load_sim() || cu_alloc(&dev, DLEN) || open_hmem_domain(NULL, &d))
		return 3;
	setenv("HMR_SYSFS_ROOT", sysfs(1), 1);
	ret = reg_cuda(d, (void *)(uintptr_t)dev, &mr);
	if (!ret)
		fi_close(&mr->fid);
	fi_close(&d->fid);
	cu_free(dev);
	return ret == -FI_EOPNOTSUPP ? 0 : 1;
}
