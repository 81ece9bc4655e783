/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* fault_shim.c: fail libibverbs calls on demand, for the VM fault walk. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Linked into the test program ahead of libibverbs, these definitions
 * take the place of libibverbs' for every caller in the process, libhmr
 * included (ELF symbol lookup finds the program's libraries in link
 * order).  vm_fault_arm(k): the k-th call from now to any of them fails
 * as the real one does (NULL or an error, errno set); 0 disarms.
 * vm_fault_fired() says whether the armed call came.  The declarations
 * are written out, not taken from verbs.h, whose macros rename the calls.
 */
static long countdown;
static int fired;

void vm_fault_arm(long k)
{
	countdown = k;
	if (k)
		fired = 0; /* Disarming keeps the answer for vm_fault_fired. */
}

int vm_fault_fired(void)
{
	return fired;
}

static int fail_now(void)
{
	if (countdown > 0 && --countdown == 0) {
		fired = 1;
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

#define NEXT(name)                                                             \
	static __typeof__(name) *next_;                                        \
	if (!next_)                                                            \
	next_ = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

void *ibv_reg_mr_iova2(void *pd, void *addr, size_t len, uint64_t iova,
                       unsigned int access);
void *ibv_reg_mr_iova2(void *pd, void *addr, size_t len, uint64_t iova,
                       unsigned int access)
{
	NEXT(ibv_reg_mr_iova2);
	return fail_now() ? NULL : next_(pd, addr, len, iova, access);
}

void *ibv_reg_mr_iova(void *pd, void *addr, size_t len, uint64_t iova,
                      int access);
void *ibv_reg_mr_iova(void *pd, void *addr, size_t len, uint64_t iova,
                      int access)
{
	NEXT(ibv_reg_mr_iova);
	return fail_now() ? NULL : next_(pd, addr, len, iova, access);
}

void *ibv_reg_dmabuf_mr(void *pd, uint64_t offset, size_t len, uint64_t iova,
                        int fd, int access);
void *ibv_reg_dmabuf_mr(void *pd, uint64_t offset, size_t len, uint64_t iova,
                        int fd, int access)
{
	NEXT(ibv_reg_dmabuf_mr);
	return fail_now() ? NULL : next_(pd, offset, len, iova, fd, access);
}

void *ibv_alloc_pd(void *ctx);
void *ibv_alloc_pd(void *ctx)
{
	NEXT(ibv_alloc_pd);
	return fail_now() ? NULL : next_(ctx);
}

void *ibv_open_device(void *dev);
void *ibv_open_device(void *dev)
{
	NEXT(ibv_open_device);
	return fail_now() ? NULL : next_(dev);
}

void **ibv_get_device_list(int *n);
void **ibv_get_device_list(int *n)
{
	NEXT(ibv_get_device_list);
	if (fail_now()) {
		if (n)
			*n = 0;
		return NULL;
	}
	return next_(n);
}

int ibv_dereg_mr(void *mr);
int ibv_dereg_mr(void *mr)
{
	NEXT(ibv_dereg_mr);
	/* A failed dereg leaves the MR registered: the walk checks hmr
	 * keeps the MR open and says so (ibv_dereg_mr(3)). */
	return fail_now() ? EBUSY : next_(mr);
}
