/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* alloc.c: calloc/realloc with one injectable failure for tests. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/alloc.h"

/* Allocations left before the injected failure; -1: none armed.  Atomic:
 * allocations happen on any thread. */
static _Atomic long fail_in = -1;

static int fail_now(void)
{
	long n = atomic_load_explicit(&fail_in, memory_order_relaxed);

	while (n >= 0) {
		if (atomic_compare_exchange_weak(&fail_in, &n, n - 1))
			return n == 0;
	}
	return 0;
}

void *hmr__calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : calloc(n, size);
}

void *hmr__realloc(void *p, size_t size)
{
	return fail_now() ? NULL : realloc(p, size);
}

void *hmr__aligned_calloc(size_t align, size_t size)
{
	void *p = NULL;

	if (fail_now() || posix_memalign(&p, align, size))
		return NULL;
	memset(p, 0, size);
	return p;
}

static size_t page_up(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) & ~(pg - 1);
}

void *hmr__map_aligned(size_t size, size_t align)
{
	size_t len = page_up(size) + align;
	char *p, *q;

	if (fail_now())
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	         -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	q = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	/* The slack before and after goes back at once. */
	if (q > p)
		munmap(p, (size_t)(q - p));
	if (p + len > q + page_up(size))
		munmap(q + page_up(size),
		       (size_t)(p + len - (q + page_up(size))));
	return q;
}

void hmr__unmap_pages(void *p, size_t size)
{
	if (p)
		munmap(p, page_up(size));
}

void hmr__map_huge(void *p, size_t len)
{
	if (p && len)
		(void)madvise(p, page_up(len), MADV_HUGEPAGE);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void hmr__map_populate(void *p, size_t len)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)p;

	/* Whole pages around [p, p + len): madvise wants a page start. */
	if (p && len)
		(void)madvise((void *)(a & ~(pg - 1)),
		              page_up((a & (pg - 1)) + len),
		              MADV_POPULATE_WRITE);
}

void hmr__alloc_fail_after(long after)
{
	atomic_store(&fail_in, after < 0 ? -1 : after);
}

int hmr__alloc_armed(void)
{
	return atomic_load(&fail_in) >= 0;
}
