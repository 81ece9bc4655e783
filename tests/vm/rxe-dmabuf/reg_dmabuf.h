/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* reg_dmabuf.h: what reg_dmabuf.c's ibv_reg_dmabuf_mr has registered. */
#ifndef HMR_VM_REG_DMABUF_H
#define HMR_VM_REG_DMABUF_H

#include <stdint.h>

/* dma-bufs the kernel registered so far, and the last one's offset. */
extern unsigned vm_kernel_imports;
extern uint64_t vm_kernel_offset;

#endif /* HMR_VM_REG_DMABUF_H */
