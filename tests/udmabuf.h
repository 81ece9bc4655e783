/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* udmabuf.h: real dma-bufs of memfd ranges, from /dev/udmabuf. */
#ifndef HMR_TESTS_UDMABUF_H
#define HMR_TESTS_UDMABUF_H

#include <errno.h>
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * A dma-buf (close-on-exec) of [off, off + len) of memfd, both page
 * multiples; the memfd must already be sealed against shrinking, as
 * udmabuf requires.  -1 with errno set; *opened (where not NULL) says
 * whether /dev/udmabuf itself opened, so a caller can tell a kernel
 * without udmabuf from a range it refused.  Header-only: the simulators
 * (tests/sim/common) build it into shared objects that link nothing new,
 * and the VM's programs (tests/vm/common) use the same code.
 */
static inline int udmabuf_fd(int memfd, off_t off, size_t len, bool *opened)
{
	struct udmabuf_create c = {
	        .memfd = (uint32_t)memfd,
	        .flags = UDMABUF_FLAGS_CLOEXEC,
	        .offset = (uint64_t)off,
	        .size = len,
	};
	int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	int fd, e;

	if (opened)
		*opened = dev >= 0;
	if (dev < 0)
		return -1;
	fd = ioctl(dev, UDMABUF_CREATE, &c);
	e = errno;
	close(dev); /* the dma-buf does not need the device open */
	errno = e;
	return fd;
}

/*
 * One dma-buf (close-on-exec) of n pieces laid end to end in the order
 * given, each a page-multiple range of a memfd sealed as udmabuf_fd's
 * must be; the memfds may differ (memory that no one memfd holds, as a
 * range over two allocations).  The kernel caps n (list_limit, 1024) and
 * the total (size_limit_mb, 64 MiB).  Errors as udmabuf_fd's.
 */
static inline int udmabuf_list_fd(const struct udmabuf_create_item *items,
                                  unsigned n, bool *opened)
{
	struct udmabuf_create_list *c;
	int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	int fd = -1, e;

	if (opened)
		*opened = dev >= 0;
	if (dev < 0)
		return -1;
	c = malloc(sizeof(*c) + (size_t)n * sizeof(*items));
	if (c) {
		c->flags = UDMABUF_FLAGS_CLOEXEC;
		c->count = n;
		memcpy(c->list, items, (size_t)n * sizeof(*items));
		fd = ioctl(dev, UDMABUF_CREATE_LIST, c);
	}
	e = errno;
	close(dev);
	free(c);
	errno = e;
	return fd;
}

#endif /* HMR_TESTS_UDMABUF_H */
