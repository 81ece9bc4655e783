/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dmabuf_util.h: a memfd standing in for a dma-buf, and its fi_mr_attr. */
#ifndef HMR_TESTS_DMABUF_UTIL_H
#define HMR_TESTS_DMABUF_UTIL_H

/* Needs _GNU_SOURCE (memfd_create) before the first include. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core_util.h"

#define DMABUF_SIZE (4 * 4096)

/* A memfd of DMABUF_SIZE bytes standing in for a dma-buf. */
static inline int make_memfd(void)
{
	int fd = memfd_create("hmr-dmabuf", MFD_CLOEXEC);

	ASSERT_GE(fd, 0);
	ASSERT_OK(ftruncate(fd, DMABUF_SIZE));
	return fd;
}

static inline void dmabuf_attr(struct fi_mr_attr *attr,
                               struct fi_mr_dmabuf *dmabuf, int fd,
                               uint64_t offset, size_t len, void *base,
                               uint64_t key)
{
	memset(attr, 0, sizeof(*attr));
	dmabuf->fd = fd;
	dmabuf->offset = offset;
	dmabuf->len = len;
	dmabuf->base_addr = base;
	attr->dmabuf = dmabuf;
	attr->iov_count = 1;
	attr->access = REMOTE_RW;
	attr->requested_key = key;
}

#endif /* HMR_TESTS_DMABUF_UTIL_H */
