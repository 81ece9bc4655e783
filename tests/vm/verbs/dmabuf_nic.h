/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dmabuf_nic.h: a test program that plays a dma-buf-importing NIC on rxe. */
#ifndef HMR_VM_DMABUF_NIC_H
#define HMR_VM_DMABUF_NIC_H

#include <stdint.h>

/*
 * rxe cannot import a dma-buf, and the simulators' dma-bufs are memfds
 * no kernel importer takes.  A program linked with dmabuf_nic.c (and
 * built with ENABLE_EXPORTS) defines ibv_reg_dmabuf_mr and ibv_dereg_mr
 * itself, so libhmr binds to them (the executable comes first in the
 * lookup scope).  For an fd whose /proc/self/fd link names vm_nic_takes,
 * it maps the fd's [offset, offset + length) and registers those pages
 * with ibv_reg_mr_iova at iova: exactly the bytes a NIC importing the
 * dma-buf would reach, so an RDMA WRITE through the rkey shows whether
 * hmr's offset was right.  Other fds, and every fd while vm_nic_on is 0,
 * go to libibverbs' real call (rxe's own refusal).
 */
extern const char *vm_nic_takes; /* e.g. "sim-synapseai:hbm" */
extern int vm_nic_on;            /* 1 by default */
extern unsigned vm_nic_imports;  /* dma-bufs imported so far */
extern uint64_t vm_nic_offset;   /* the last one's offset */

#endif /* HMR_VM_DMABUF_NIC_H */
