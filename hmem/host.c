/* host.c: mapped-range and page-size checks for host memory. */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hmr/fi_mr.h>

#include "host.h"
#include "log.h"

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

/* mincore() fails with ENOMEM on the first unmapped page; it needs one
 * vector byte per page, so walk big ranges in chunks. */
static int range_mapped(uintptr_t start, size_t len)
{
	enum { CHUNK_PAGES = 4096 };
	unsigned char vec[CHUNK_PAGES];
	size_t page = hmr__host_page_size(), n;
	uintptr_t addr = start & ~(uintptr_t)(page - 1);
	uintptr_t end = start + len;

	while (addr < end) {
		n = (end - addr + page - 1) / page;
		if (n > CHUNK_PAGES)
			n = CHUNK_PAGES;
		if (mincore((void *)addr, n * page, vec) != 0) {
			if (errno == ENOMEM) {
				hmr_info("range [%#lx, +%zu) has an unmapped "
				         "page near %#lx",
				         (unsigned long)start, len,
				         (unsigned long)addr);
				return -FI_EFAULT;
			}
			return -errno;
		}
		addr += n * page;
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
