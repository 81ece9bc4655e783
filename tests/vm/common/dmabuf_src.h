/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dmabuf_src.h: real dma-bufs in the test VM, from udmabuf and from vgem. */
#ifndef HMR_VM_DMABUF_SRC_H
#define HMR_VM_DMABUF_SRC_H

#include <stddef.h>
#include <sys/types.h>

/*
 * A memfd of len bytes that udmabuf accepts (sealing allowed, shrinking
 * sealed), or -1 with errno set.
 */
int vm_sealed_memfd(const char *name, size_t len);

/*
 * A dma-buf of [off, off + len) of memfd through /dev/udmabuf (off and
 * len page multiples), or -1 with errno set.
 */
int vm_udmabuf(int memfd, off_t off, size_t len);

/*
 * A dma-buf of a vgem dumb buffer of at least len bytes (a page multiple):
 * memory that is no memfd of ours.  -1 with errno set, ENODEV when no
 * /dev/dri/card* is vgem.
 */
int vm_vgem_dmabuf(size_t len);

#endif /* HMR_VM_DMABUF_SRC_H */
