/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dmabuf_nic.c: ibv_reg_dmabuf_mr of a NIC that imports dma-bufs, on rxe. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include <hmr/hmr.h>

#include "dmabuf_nic.h"
#ifdef VM_NIC_KERNEL
#include "reg_dmabuf.h"
#endif
#include "rc_pair.h"
#include "vm_case.h"

/* What dmabuf_nic.h says; the mappings of the MRs it made, to undo. */
const char *vm_nic_takes;
int vm_nic_on = 1;
unsigned vm_nic_imports;
uint64_t vm_nic_offset;
int (*vm_nic_copy_from)(void *host, const void *dev,
                        size_t len) = hmr_hmem_copy_from;

#ifndef VM_NIC_KERNEL
static struct {
	struct ibv_mr *mr;
	void *map;
	size_t span;
} shim_mrs[8];

/* fd is one of the simulator's, by its /proc/self/fd link. */
static int taken_fd(int fd)
{
	char path[64], target[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = '\0';
	return vm_nic_takes && strstr(target, vm_nic_takes) != NULL;
}

/* Exported (the build hides symbols by default) so that libhmr binds here. */
#define SHIM_EXPORT __attribute__((visibility("default")))

SHIM_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
                                             size_t length, uint64_t iova,
                                             int fd, int access)
{
	struct ibv_mr *(*real)(struct ibv_pd *, uint64_t, size_t, uint64_t, int,
	                       int);
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE),
	         start = offset & ~(pg - 1);
	size_t span = (size_t)(offset - start) + length;
	struct ibv_mr *mr;
	unsigned i;
	void *map;

	if (!vm_nic_on || !taken_fd(fd)) {
		*(void **)&real = dlsym(RTLD_NEXT, "ibv_reg_dmabuf_mr");
		return real(pd, offset, length, iova, fd, access);
	}
	for (i = 0; i < 8 && shim_mrs[i].mr; i++)
		;
	map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	           (off_t)start);
	if (i == 8 || map == MAP_FAILED)
		return NULL;
	mr = ibv_reg_mr_iova(pd, (char *)map + (offset - start), length, iova,
	                     access);
	if (!mr) {
		munmap(map, span);
		return NULL;
	}
	shim_mrs[i].mr = mr;
	shim_mrs[i].map = map;
	shim_mrs[i].span = span;
	vm_nic_imports++;
	vm_nic_offset = offset;
	return mr;
}

SHIM_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	int (*real)(struct ibv_mr *);
	void *map = NULL;
	size_t span = 0;
	unsigned i;
	int ret;

	*(void **)&real = dlsym(RTLD_NEXT, "ibv_dereg_mr");
	for (i = 0; i < 8; i++) {
		if (mr && shim_mrs[i].mr == mr) {
			map = shim_mrs[i].map;
			span = shim_mrs[i].span;
			shim_mrs[i].mr = NULL;
		}
	}
	ret = real(mr);
	if (map)
		munmap(map, span);
	return ret;
}

#endif /* VM_NIC_KERNEL */

/* With VM_NIC_KERNEL the kernel imports (rxe-dmabuf/reg_dmabuf.c). */
#ifdef VM_NIC_KERNEL
#define NIC_IMPORTS vm_kernel_imports
#define NIC_OFFSET  vm_kernel_offset
#else
#define NIC_IMPORTS vm_nic_imports
#define NIC_OFFSET  vm_nic_offset
#endif

#define WOFF (4096 + 512) /* where the WRITE lands in the buffer */
#define ROFF 6144         /* where the READ reads: bytes hmr copied in */
#define WLEN 256
#define SEEN 8192 /* bytes checked around it */

void vm_nic_rdma_cases(const struct vm_nic_src *s, uint64_t p,
                       int (*reg)(uint64_t p, struct fid_mr **mr),
                       uint64_t want_offset, const char *w, const char *r)
{
	const struct vm_nic_at at = {.write = WOFF, .read = ROFF};

	vm_nic_rdma_at(s, p, &at, reg, want_offset, w, r);
}

void vm_nic_rdma_at(const struct vm_nic_src *s, uint64_t p,
                    const struct vm_nic_at *at,
                    int (*reg)(uint64_t p, struct fid_mr **mr),
                    uint64_t want_offset, const char *w, const char *r)
{
	unsigned char want[SEEN], back[SEEN];
	unsigned imports = NIC_IMPORTS;
	struct fid_mr *mr;
	int fds, ret, st, st_r, read_equal;
	size_t i;

	memset(want, 0x11, sizeof(want));
	for (i = 0; i < WLEN; i++)
		want[at->read + i] = (unsigned char)(i ^ 0x5a);
	ret = hmr_hmem_copy_to((void *)(uintptr_t)p, want, sizeof(want));
	fds = vm_open_fds();
	if (!ret)
		ret = reg(p, &mr);
	if (ret) {
		vm_case_fail(w, "registration: %s", hmr_strerror(ret));
		return;
	}
	/* The READ first: where it crosses the WRITE's bytes it still
	 * fetches what hmr copied in. */
	memset(s->src, 0, WLEN);
	st_r = rc_rdma(s->pair, IBV_WR_RDMA_READ, s->src, WLEN, s->lkey,
	               p + at->read, (uint32_t)fi_mr_key(mr));
	read_equal = !memcmp(s->src, want + at->read, WLEN);
	memset(s->src, 0x6b, WLEN);
	st = rc_rdma(s->pair, IBV_WR_RDMA_WRITE, s->src, WLEN, s->lkey,
	             p + at->write, (uint32_t)fi_mr_key(mr));
	memset(want + at->write, 0x6b, WLEN);
	ret = vm_nic_copy_from(back, (void *)(uintptr_t)p, sizeof(back));
	vm_case(w,
	        st == IBV_WC_SUCCESS && !ret && !memcmp(back, want, SEEN) &&
	                NIC_IMPORTS == imports + 1 &&
	                NIC_OFFSET == want_offset && vm_open_fds() == fds,
	        "status %s, copy %s, bytes %s, imports %u, offset %#llx (want "
	        "%#llx), fds %d -> %d",
	        rc_status_str(st), hmr_strerror(ret),
	        memcmp(back, want, SEEN) ? "differ" : "equal",
	        NIC_IMPORTS - imports, (unsigned long long)NIC_OFFSET,
	        (unsigned long long)want_offset, fds, vm_open_fds());
	vm_case(r, st_r == IBV_WC_SUCCESS && read_equal, "status %s, bytes %s",
	        rc_status_str(st_r), read_equal ? "equal" : "differ");
	fi_close(&mr->fid);
}

#ifdef VM_NIC_KERNEL
/* The kernel's cases (vm_nic_kernel_main) from here on. */

/* A verbs domain on rxe0, a loopback QP pair on its protection domain
 * and the registered source buffer. */
struct vm_nic_env {
	struct fid_domain *domain;
	struct fid_mr *src_mr;
	struct vm_nic_src s;
};

static int nic_open(struct vm_nic_env *e, const char *setup_case)
{
	static struct rc_pair pair;
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	int ret;

	memset(e, 0, sizeof(*e));
	e->s.pair = &pair;
	e->s.src = aligned_alloc(4096, 4096);
	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = "rxe0";
	attr.caps = FI_HMEM;
	ret = e->s.src ? hmr_domain_open(&attr, &e->domain) : -FI_ENOMEM;
	if (ret) {
		vm_case_fail(setup_case, "verbs domain on rxe0: %s",
		             hmr_strerror(ret));
		return -1;
	}
	if (rc_wait_gid(hmr_verbs_pd(e->domain)->context, 0, 10000) ||
	    rc_pair_create(&pair, hmr_verbs_pd(e->domain),
	                   hmr_verbs_pd(e->domain), 0) ||
	    fi_mr_reg(e->domain, e->s.src, 4096, FI_READ | FI_WRITE, 0, 0, 0,
	              &e->src_mr, NULL)) {
		vm_case_fail(setup_case, "rc pair: %s", pair.err);
		return -1;
	}
	e->s.lkey = ((struct hmr_verbs_desc *)fi_mr_desc(e->src_mr))->lkey;
	return 0;
}

static void nic_close(struct vm_nic_env *e)
{
	fi_close(&e->src_mr->fid);
	rc_pair_destroy(e->s.pair);
	fi_close(&e->domain->fid);
	free(e->s.src);
}

/* What vm_nic_kernel_cases registers, for the callback vm_nic_rdma_cases
 * takes (one program, one thread). */
static struct {
	struct fid_domain *domain;
	const struct vm_nic_dev *dev;
	size_t len;
	uint64_t access; /* 0: FI_REMOTE_WRITE | FI_REMOTE_READ */
} kc;

static int kernel_reg(uint64_t p, struct fid_mr **mr)
{
	struct iovec iov = {(void *)(uintptr_t)p, kc.len};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = kc.access ? kc.access
	                                              : FI_REMOTE_WRITE |
	                                                        FI_REMOTE_READ,
	                          .iface = (enum fi_hmem_iface)kc.dev->iface};

	attr.device.reserved = kc.dev->device;
	return fi_mr_regattr(kc.domain, &attr, 0, mr);
}

static void case_name(char *out, size_t n, const struct vm_nic_dev *dev,
                      const char *what)
{
	snprintf(out, n, "%s_%s", dev->name, what);
}

static void kernel_path(const struct vm_nic_dev *dev)
{
	enum hmr_verbs_path path = HMR_VERBS_PATH_NONE;
	char why[256] = "", name[96];
	int ret = hmr_verbs_reg_path((enum fi_hmem_iface)dev->iface,
	                             dev->device, 0, &path, why, sizeof(why));

	case_name(name, sizeof(name), dev, "reg_path");
	vm_case(name, !ret && path == HMR_VERBS_PATH_DMABUF, "%s, path %d: %s",
	        hmr_strerror(ret), (int)path, why);
}

#define IOFF   (4096 + 2560) /* the interior registration's start */
#define ILEN   8192          /* and length: it meets three pages */
#define IWRITE (8192 - 128)  /* a WRITE across the first boundary in it */
#define IREAD  (12288 - 64)  /* a READ across the second */
#define ISEEN  16384         /* bytes checked from the allocation's base */

/* The closed MR's rkey, tried with a WRITE over bytes that must stay. */
static void kernel_closed(const struct vm_nic_src *s,
                          const struct vm_nic_dev *dev, uint32_t rkey,
                          const unsigned char *want)
{
	unsigned char back[ISEEN];
	char name[96];
	int st, ret;

	memset(s->src, 0xe7, WLEN);
	st = rc_rdma(s->pair, IBV_WR_RDMA_WRITE, s->src, WLEN, s->lkey,
	             dev->base + IWRITE, rkey);
	ret = vm_nic_copy_from(back, (void *)(uintptr_t)dev->base, ISEEN);
	case_name(name, sizeof(name), dev, "closed_rkey_refused");
	vm_case(name,
	        st == IBV_WC_REM_ACCESS_ERR && !ret &&
	                !memcmp(back, want, ISEEN),
	        "status %s, copy %s, bytes %s", rc_status_str(st),
	        hmr_strerror(ret),
	        memcmp(back, want, ISEEN) ? "differ" : "kept");
}

/* CYCLES registrations of the interior range: each one imported, no fd
 * left. */
#define CYCLES 10000
static void kernel_cycles(const struct vm_nic_dev *dev)
{
	unsigned imports = NIC_IMPORTS;
	int fds = vm_open_fds(), i, ret = 0;
	struct fid_mr *mr;
	char name[96];

	for (i = 0; i < CYCLES && !ret; i++) {
		ret = kernel_reg(dev->base + IOFF, &mr);
		if (!ret)
			fi_close(&mr->fid);
	}
	case_name(name, sizeof(name), dev, "cycles_fd_flat");
	vm_case(name,
	        !ret && NIC_IMPORTS - imports == CYCLES && vm_open_fds() == fds,
	        "cycle %d: %s, imports %u, fds %d -> %d", i, hmr_strerror(ret),
	        NIC_IMPORTS - imports, fds, vm_open_fds());
}

/* Rights as for host memory: a region a peer may only read refuses its
 * WRITE (the bytes stay) and serves its READ. */
static void kernel_rights(const struct vm_nic_src *s,
                          const struct vm_nic_dev *dev)
{
	unsigned char want[ISEEN], back[ISEEN];
	struct fid_mr *mr;
	char name[96];
	int ret, st_w = -1, st_r = -1;

	case_name(name, sizeof(name), dev, "read_only_refuses_write");
	ret = vm_nic_copy_from(want, (void *)(uintptr_t)dev->base, ISEEN);
	kc.access = FI_REMOTE_READ;
	if (!ret)
		ret = kernel_reg(dev->base + IOFF, &mr);
	kc.access = 0;
	if (ret) {
		vm_case_fail(name, "registration: %s", hmr_strerror(ret));
		return;
	}
	memset(s->src, 0x5a, WLEN);
	st_w = rc_rdma(s->pair, IBV_WR_RDMA_WRITE, s->src, WLEN, s->lkey,
	               dev->base + IWRITE, (uint32_t)fi_mr_key(mr));
	ret = vm_nic_copy_from(back, (void *)(uintptr_t)dev->base, ISEEN);
	memset(s->src, 0, WLEN);
	st_r = rc_rdma(s->pair, IBV_WR_RDMA_READ, s->src, WLEN, s->lkey,
	               dev->base + IREAD, (uint32_t)fi_mr_key(mr));
	fi_close(&mr->fid);
	vm_case(name,
	        st_w == IBV_WC_REM_ACCESS_ERR && !ret &&
	                !memcmp(back, want, ISEEN) && st_r == IBV_WC_SUCCESS &&
	                !memcmp(s->src, want + IREAD, WLEN),
	        "write %s, bytes %s, read %s", rc_status_str(st_w),
	        memcmp(back, want, ISEEN) ? "changed" : "kept",
	        rc_status_str(st_r));
}

static void kernel_interior(const struct vm_nic_src *s,
                            const struct vm_nic_dev *dev)
{
	unsigned char want[ISEEN], back[ISEEN];
	uint64_t p = dev->base + IOFF, off = dev->offset_of(dev, p);
	unsigned imports = NIC_IMPORTS;
	char w[96], r[96];
	struct fid_mr *mr;
	uint32_t rkey;
	int ret, st;
	size_t i;

	case_name(w, sizeof(w), dev, "interior_write_across_page");
	case_name(r, sizeof(r), dev, "interior_read_returns");
	for (i = 0; i < ISEEN; i++)
		want[i] = (unsigned char)(i * 7 + 3);
	ret = hmr_hmem_copy_to((void *)(uintptr_t)dev->base, want, ISEEN);
	kc.len = ILEN;
	if (!ret)
		ret = kernel_reg(p, &mr);
	if (ret) {
		vm_case_fail(w, "registration: %s", hmr_strerror(ret));
		return;
	}
	rkey = (uint32_t)fi_mr_key(mr);
	memset(s->src, 0x6b, WLEN);
	st = rc_rdma(s->pair, IBV_WR_RDMA_WRITE, s->src, WLEN, s->lkey,
	             dev->base + IWRITE, rkey);
	memset(want + IWRITE, 0x6b, WLEN);
	ret = vm_nic_copy_from(back, (void *)(uintptr_t)dev->base, ISEEN);
	vm_case(w,
	        st == IBV_WC_SUCCESS && !ret && !memcmp(back, want, ISEEN) &&
	                NIC_IMPORTS == imports + 1 && NIC_OFFSET == off,
	        "status %s, copy %s, bytes %s, imports %u, offset %#llx "
	        "(want %#llx)",
	        rc_status_str(st), hmr_strerror(ret),
	        memcmp(back, want, ISEEN) ? "differ" : "equal",
	        NIC_IMPORTS - imports, (unsigned long long)NIC_OFFSET,
	        (unsigned long long)off);
	memset(s->src, 0, WLEN);
	st = rc_rdma(s->pair, IBV_WR_RDMA_READ, s->src, WLEN, s->lkey,
	             dev->base + IREAD, rkey);
	vm_case(r, st == IBV_WC_SUCCESS && !memcmp(s->src, want + IREAD, WLEN),
	        "status %s, bytes %s", rc_status_str(st),
	        memcmp(s->src, want + IREAD, WLEN) ? "differ" : "equal");
	fi_close(&mr->fid);
	kernel_closed(s, dev, rkey, want);
}

int vm_nic_kernel_main(const struct vm_nic_dev *dev, const char *sim)
{
	struct vm_nic_env env, *e = &env;
	char w[96], r[96];

	case_name(w, sizeof(w), dev, "setup");
	if (!dev->base) {
		vm_case_fail(w, "simulator %s: no device memory", sim);
		return vm_case_exit();
	}
	if (nic_open(e, w))
		return vm_case_exit();

	kc.domain = e->domain;
	kc.dev = dev;
	kc.len = 1 << 16;
	kernel_path(dev);
	case_name(w, sizeof(w), dev, "rdma_write_lands");
	case_name(r, sizeof(r), dev, "rdma_read_returns");
	vm_nic_rdma_cases(&e->s, dev->base, kernel_reg,
	                  dev->offset_of(dev, dev->base), w, r);
	kernel_interior(&e->s, dev);
	kc.len = ILEN;
	kernel_rights(&e->s, dev);
	kernel_cycles(dev);
	if (dev->alloc && dev->free)
		vm_nic_cache_cases(dev, e->domain, &e->s);
	if (dev->more)
		dev->more(dev, e->domain, &e->s);
	nic_close(e);
	return vm_case_exit();
}
#endif /* VM_NIC_KERNEL */
