/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* pages_util.h: fresh pages for the tests that unmap what they registered
 * (_GNU_SOURCE defined: MAP_ANONYMOUS). */
#ifndef HMR_TESTS_PAGES_UTIL_H
#define HMR_TESTS_PAGES_UTIL_H

#include <sys/mman.h>

#include "core_util.h"

/* n fresh anonymous read-write pages, each byte `fill`, or never touched
 * (fill < 0). */
static inline char *map_pages_filled(size_t n, int fill)
{
	void *p = mmap(NULL, n * page_size(), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(p != MAP_FAILED);
	if (fill >= 0)
		memset(p, fill, n * page_size());
	return p;
}

#endif /* HMR_TESTS_PAGES_UTIL_H */
