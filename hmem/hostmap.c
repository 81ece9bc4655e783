/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* hostmap.c: whether a host range is mapped readable, asked of the kernel. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "hmem/hmem.h"

/*
 * The memtype cache remembers a host answer only for pages mapped
 * readable now.  A freed device address is either unmapped (the
 * simulators, Neuron) or back in its runtime's PROT_NONE reservation
 * (CUDA's and ROCr's virtual address space, Level Zero's heaps): the
 * runtime may hand it out again without any mmap the monitor could see,
 * so an answer there must not be remembered.  (msync would say "mapped"
 * for a PROT_NONE reservation.)
 *
 * Asked with PROCMAP_QUERY (Linux 6.11: one ioctl per mapping the range
 * spans, about a microsecond), else by reading /proc/self/maps up to the
 * range.  Only the insert path asks: once per host range learned (open,
 * ioctl and close: 2.0-2.7 us here, medians of 10,000).
 */

/* include/uapi/linux/fs.h (Linux 6.11); Debian 12's headers predate it.
 * Only the fields read here are named; the ioctl number encodes the size. */
struct vma_query {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags;
	uint64_t unused[7];
};
_Static_assert(sizeof(struct vma_query) == 104, "PROCMAP_QUERY arg");
#define VMA_QUERY   _IOWR('f', 17, struct vma_query)
#define VMA_READ_OK 0x01 /* PROCMAP_QUERY_VMA_READABLE */

static atomic_bool no_ioctl; /* The kernel refused PROCMAP_QUERY once. */

/* 1 readable to `end`, 0 not, -1 the kernel cannot say this way.  The
 * fd is opened per question, not kept: a library must not hold an fd the
 * application did not ask for (fd-leak checks, closefrom, fork). */
static int ask_ioctl(uintptr_t addr, uintptr_t end)
{
	struct vma_query q;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), r = 1;

	if (fd < 0)
		return -1;
	while (r == 1 && addr < end) {
		q = (struct vma_query){.size = sizeof(q), .query_addr = addr};
		if (ioctl(fd, VMA_QUERY, &q) != 0)
			r = errno == ENOENT ? 0 : -1;
		else if (!(q.vma_flags & VMA_READ_OK) || q.vma_start > addr)
			r = 0;
		else
			addr = (uintptr_t)q.vma_end;
	}
	close(fd);
	return r;
}

/* Lines come sorted by address and the mappings tile the range only if
 * each starts where the last ended. */
static bool ask_reading(uintptr_t addr, uintptr_t end)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long lo, hi;
	char *line = NULL, r;
	size_t cap = 0;
	bool ok = false;

	if (!f)
		return false;
	while (addr < end && getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%lx-%lx %c", &lo, &hi, &r) != 3 || hi <= addr)
			continue;
		if (lo > addr || r != 'r')
			break;
		addr = hi;
	}
	ok = addr >= end;
	free(line);
	fclose(f);
	return ok;
}

bool hmr__hmem_host_accessible(uintptr_t start, uintptr_t end)
{
	int r = -1;

	if (end <= start)
		return false;
	if (!atomic_load_explicit(&no_ioctl, memory_order_relaxed)) {
		r = ask_ioctl(start, end);
		if (r < 0)
			atomic_store(&no_ioctl, true);
	}
	return r < 0 ? ask_reading(start, end) : r == 1;
}
