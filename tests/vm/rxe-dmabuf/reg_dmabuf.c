/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* reg_dmabuf.c: ibv_reg_dmabuf_mr for rxe: the provider half rdma-core lacks.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "reg_dmabuf.h"

/*
 * rdma-core's rxe provider has no reg_dmabuf_mr method, so libibverbs
 * answers ibv_reg_dmabuf_mr with EOPNOTSUPP before the kernel is asked.
 * A program linked with this file (and built with ENABLE_EXPORTS, so
 * libhmr binds to it: the executable comes first in the lookup scope)
 * gets the method every provider that has one implements: the uverbs
 * REG_DMABUF_MR command through libibverbs' own ibv_cmd_reg_dmabuf_mr,
 * then the same fields libibverbs fills.  The kernel decides: stock rxe
 * refuses (EOPNOTSUPP), rdma_rxe_dmabuf imports the dma-buf.  The MR is
 * rxe's usual verbs_mr: rxe's dereg_mr calls ibv_cmd_dereg_mr and frees
 * it, so ibv_dereg_mr works unchanged.
 *
 * ibv_cmd_reg_dmabuf_mr is private ABI (IBVERBS_PRIVATE_<n>), found with
 * dlsym so that another rdma-core builds this file and fails at run time
 * with ENOSYS rather than at link time.
 */

/* libibverbs' struct verbs_mr (infiniband/driver.h, not installed by the
 * -dev package), with room to spare as rdma-core versions grow it. */
struct vm_verbs_mr {
	struct ibv_mr ibv_mr;
	int mr_type;
	int access;
	char spare[64];
};

unsigned vm_kernel_imports;
uint64_t vm_kernel_offset;

typedef int (*cmd_reg_fn)(struct ibv_pd *pd, uint64_t offset, size_t length,
                          uint64_t iova, int fd, int access,
                          struct vm_verbs_mr *vmr);

/* Exported (a build may hide symbols by default): libhmr binds here. */
__attribute__((visibility("default"))) struct ibv_mr *
ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
                  uint64_t iova, int fd, int access)
{
	cmd_reg_fn cmd =
	        (cmd_reg_fn)dlsym(RTLD_DEFAULT, "ibv_cmd_reg_dmabuf_mr");
	struct vm_verbs_mr *vmr;
	int rc;

	if (!cmd) {
		errno = ENOSYS;
		return NULL;
	}
	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	rc = cmd(pd, offset, length, iova, fd, access, vmr);
	if (rc != 0) {
		free(vmr);
		errno = rc < 0 ? -rc : rc;
		return NULL;
	}
	vmr->ibv_mr.context = pd->context;
	vmr->ibv_mr.pd = pd;
	vmr->ibv_mr.addr = (void *)(uintptr_t)iova;
	vmr->ibv_mr.length = length;
	vm_kernel_imports++;
	vm_kernel_offset = offset;
	return &vmr->ibv_mr;
}
