/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* host.c: mapped-range and page-size checks for host memory. */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hmr/fi_mr.h>

#include "base/range.h"
#include "base/host.h"
#include "base/log.h"

size_t hmr__host_page_size(void)
{
	/* Every thread that fills it writes the same value. */
	static atomic_size_t page;
	size_t p = atomic_load_explicit(&page, memory_order_relaxed);

	if (!p) {
		p = (size_t)sysconf(_SC_PAGESIZE);
		atomic_store_explicit(&page, p, memory_order_relaxed);
	}
	return p;
}

/*
 * msync(MS_ASYNC) walks the mappings, not the pages: it fails with ENOMEM
 * when any page of the range is unmapped and otherwise does nothing (no
 * write-back since Linux 2.6.19).  So the proof of backing costs one
 * system call whatever the length: a range of terabytes (a fuzzer found
 * one inside ASan's shadow) is answered as fast as one page, where a
 * mincore walk took seconds.  Any failure (ENOMEM, or EINVAL above the
 * user address space) means "not mapped".
 */
static int range_mapped(uintptr_t start, size_t len)
{
	size_t page = hmr__host_page_size();
	uintptr_t addr = start & ~(uintptr_t)(page - 1);
	uint64_t end;

	if (!hmr__range_end(start, len, &end)) {
		hmr_info("range [%#lx, +%zu) wraps", (unsigned long)start, len);
		return -FI_EINVAL;
	}
	if (msync((void *)addr, (size_t)(end - addr), MS_ASYNC) != 0) {
		hmr_info("range [%#lx, +%zu) has an unmapped page (%s)",
		         (unsigned long)start, len, strerror(errno));
		return -FI_EFAULT;
	}
	return 0;
}

int hmr__host_range_mapped(const struct iovec *iov, size_t count)
{
	size_t i;
	int ret;

	for (i = 0; i < count; i++) {
		ret = range_mapped((uintptr_t)iov[i].iov_base, iov[i].iov_len);
		if (ret)
			return ret;
	}
	return 0;
}

bool hmr__host_page_size_valid(size_t page_size)
{
	char name[64];
	struct dirent *e;
	unsigned long kb;
	bool found = false;
	DIR *dir;

	if (page_size == 0 || page_size == hmr__host_page_size())
		return true;
	dir = opendir("/sys/kernel/mm/hugepages");
	if (!dir)
		return false;
	while (!found && (e = readdir(dir))) {
		if (sscanf(e->d_name, "hugepages-%lukB%63s", &kb, name) >= 1 &&
		    kb * 1024 == page_size)
			found = true;
	}
	closedir(dir);
	return found;
}
