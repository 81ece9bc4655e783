/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dmabuf_nic.c: ibv_reg_dmabuf_mr of a NIC that imports dma-bufs, on rxe. */
#include <dlfcn.h>
#include <stdio.h>
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
	unsigned char want[SEEN], back[SEEN];
	unsigned imports = NIC_IMPORTS;
	struct fid_mr *mr;
	int fds, ret, st;
	size_t i;

	memset(want, 0x11, sizeof(want));
	for (i = 0; i < WLEN; i++)
		want[ROFF + i] = (unsigned char)(i ^ 0x5a);
	ret = hmr_hmem_copy_to((void *)(uintptr_t)p, want, sizeof(want));
	fds = vm_open_fds();
	if (!ret)
		ret = reg(p, &mr);
	if (ret) {
		vm_case_fail(w, "registration: %s", hmr_strerror(ret));
		return;
	}
	memset(s->src, 0x6b, WLEN);
	st = rc_rdma(s->pair, IBV_WR_RDMA_WRITE, s->src, WLEN, s->lkey,
	             p + WOFF, (uint32_t)fi_mr_key(mr));
	memset(want + WOFF, 0x6b, WLEN);
	ret = hmr_hmem_copy_from(back, (void *)(uintptr_t)p, sizeof(back));
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
	memset(s->src, 0, WLEN);
	st = rc_rdma(s->pair, IBV_WR_RDMA_READ, s->src, WLEN, s->lkey, p + ROFF,
	             (uint32_t)fi_mr_key(mr));
	vm_case(r, st == IBV_WC_SUCCESS && !memcmp(s->src, want + ROFF, WLEN),
	        "status %s, bytes %s", rc_status_str(st),
	        memcmp(s->src, want + ROFF, WLEN) ? "differ" : "equal");
	fi_close(&mr->fid);
}
