/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* mem.c: memfds, shadow views and fixed mappings in a reservation. */
#include "sim_common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "udmabuf.h"

size_t sim_page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (size_t)page : 4096;
}

/* A memfd of size bytes (its name shows in /proc/self/maps), or -1. */
int sim_memfd(const char *name, size_t size)
{
	/* Sealable: sim_dmabuf_fd seals it against shrinking for udmabuf. */
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd >= 0 && ftruncate(fd, (off_t)size) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The simulator's read/write view of fd, or NULL. */
void *sim_map_shadow(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Maps [off, off + len) of fd at addr with prot; 0 or -1. */
int sim_map_fixed(uint64_t addr, size_t len, int prot, int fd, off_t off)
{
	void *p = mmap((void *)(uintptr_t)addr, len, prot,
	               MAP_SHARED | MAP_FIXED, fd, off);

	return p == MAP_FAILED ? -1 : 0;
}

/* Gives [addr, addr + len) back to the PROT_NONE reservation. */
void sim_unmap_fixed(uint64_t addr, size_t len)
{
	mmap((void *)(uintptr_t)addr, len, PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

/*
 * len bytes of address space that nothing else will be mapped in, so
 * device addresses never alias host memory; NULL (logged) on failure.
 */
void *sim_reserve(size_t len)
{
	void *p = mmap(NULL, len, PROT_NONE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p != MAP_FAILED)
		return p;
	sim_log("cannot reserve %zu bytes of address space: %s", len,
	        strerror(errno));
	return NULL;
}

/*
 * Maps m->fd read/write at an align-aligned address (align: a power of
 * two); over-reserves, then trims, when align exceeds a page.
 */
static int mem_map(struct sim_mem *m, size_t align)
{
	unsigned char *p;
	size_t len;
	uintptr_t at;

	if (align <= sim_page_size()) {
		m->shadow = sim_map_shadow(m->fd, m->size);
		return m->shadow ? 0 : -1;
	}
	len = m->size + align;
	p = mmap(NULL, len, PROT_NONE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	at = sim_round_up((uintptr_t)p, align);
	if (at > (uintptr_t)p)
		munmap(p, at - (uintptr_t)p);
	if ((uintptr_t)p + len > at + m->size)
		munmap((void *)(at + m->size),
		       (uintptr_t)p + len - at - m->size);
	if (sim_map_fixed(at, m->size, PROT_READ | PROT_WRITE, m->fd, 0)) {
		munmap((void *)at, m->size);
		return -1;
	}
	m->shadow = (unsigned char *)at;
	return 0;
}

/* A new memfd of size bytes (a page multiple) and its read/write view. */
int sim_mem_create(struct sim_mem *m, size_t size, size_t align,
                   const char *name)
{
	m->shadow = NULL;
	m->size = size;
	m->fd = sim_memfd(name, size);
	if (m->fd < 0)
		return -1;
	if (mem_map(m, align) == 0)
		return 0;
	close(m->fd);
	m->fd = -1;
	return -1;
}

/* Takes ownership of fd, even on failure. */
int sim_mem_adopt(struct sim_mem *m, int fd, size_t size)
{
	m->fd = fd;
	m->size = size;
	m->shadow = NULL;
	if (mem_map(m, 0) == 0)
		return 0;
	close(fd);
	m->fd = -1;
	return -1;
}

void sim_mem_destroy(struct sim_mem *m)
{
	if (m->shadow)
		munmap(m->shadow, m->size);
	if (m->fd >= 0)
		close(m->fd);
	m->shadow = NULL;
	m->fd = -1;
}

/*
 * The fd a dma-buf export hands out for [off, off + len) of memfd (both
 * page multiples): a dup of the memfd, whose offsets stay the memfd's,
 * as the simulators have always done; or, with HMR_SIM_DMABUF=udmabuf
 * (the test VM's importing-rxe suites, tests/vm/rxe-dmabuf), a real
 * dma-buf of exactly that range from /dev/udmabuf, whose offset 0 is
 * the memfd's off.  The memfd is sealed against shrinking first, as
 * udmabuf requires.  -1 with errno set; udmabuf's failure is never
 * hidden behind a dup.
 */
int sim_dmabuf_real(void)
{
	const char *mode = getenv("HMR_SIM_DMABUF");

	return mode && strcmp(mode, "udmabuf") == 0;
}

/* udmabuf refuses a memfd that could shrink under the dma-buf. */
static int seal(int memfd)
{
	int e;

	if (fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) == 0)
		return 0;
	e = errno;
	sim_log("udmabuf: cannot seal memfd %d: %s", memfd, strerror(e));
	errno = e;
	return -1;
}

/* Why udmabuf made no dma-buf, errno kept: /dev/udmabuf did not open
 * (no udmabuf in this kernel), or it refused the request fmt says. */
static void __attribute__((format(printf, 2, 3)))
failed(bool opened, const char *fmt, ...)
{
	int e = errno;
	char what[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!opened)
		sim_log("udmabuf: /dev/udmabuf: %s", strerror(e));
	else
		sim_log("udmabuf: %s: %s", what, strerror(e));
	errno = e;
}

int sim_dmabuf_fd(int memfd, off_t off, size_t len)
{
	bool opened;
	int fd;

	if (!sim_dmabuf_real())
		return fcntl(memfd, F_DUPFD_CLOEXEC, 0);
	if (seal(memfd))
		return -1;
	fd = udmabuf_fd(memfd, off, len, &opened);
	if (fd < 0)
		failed(opened, "UDMABUF_CREATE of %#zx bytes at %#llx", len,
		       (unsigned long long)off);
	return fd;
}

/*
 * As sim_dmabuf_fd under HMR_SIM_DMABUF=udmabuf, for a range that no one
 * memfd holds (over two allocations or VMM chunks): one udmabuf of the n
 * pieces end to end, each memfd sealed first.  A dup cannot stand for
 * several memfds, so the caller asks only where sim_dmabuf_real().
 */
int sim_dmabuf_list_fd(const struct udmabuf_create_item *items, unsigned n)
{
	unsigned long long len = 0;
	bool opened;
	int fd;

	for (unsigned i = 0; i < n; i++) {
		if (seal((int)items[i].memfd))
			return -1;
		len += items[i].size;
	}
	fd = udmabuf_list_fd(items, n, &opened);
	if (fd < 0)
		failed(opened, "UDMABUF_CREATE_LIST of %u pieces, %#llx bytes",
		       n, len);
	return fd;
}
