/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* alloc.c: calloc/realloc with one injectable failure for tests. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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

void hmr__alloc_fail_after(long after)
{
	atomic_store(&fail_in, after < 0 ? -1 : after);
}

int hmr__alloc_armed(void)
{
	return atomic_load(&fail_in) >= 0;
}
