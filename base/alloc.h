/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* alloc.h: the library's heap allocations, each a point a test can fail. */
#ifndef HMR_BASE_ALLOC_H
#define HMR_BASE_ALLOC_H

#include <stddef.h>

/*
 * Every allocation of core/, hmem/ and the registrars goes through these,
 * as SQLite's system calls go through swappable pointers: a test can make
 * exactly the Nth one fail and walk every failure point of a registration
 * (tests/unit/test_alloc_faults.c).  Disarmed, the cost is one relaxed
 * load per allocation; allocations are off the registration fast path
 * (the closed-MR spare is reused).
 */
void *hmr__calloc(size_t n, size_t size);
void *hmr__realloc(void *p, size_t size);
/* Zeroed, aligned to `align` (a power of two, a multiple of a pointer). */
void *hmr__aligned_calloc(size_t align, size_t size);
/* Zeroed pages at a multiple of `align` (a power of two, at least a
 * page), mapped, never written here: a large aligned block costs only
 * the pages used (a heap block's slack would be cleared by calloc).
 * Freed with hmr__unmap_pages(p, size). */
void *hmr__map_aligned(size_t size, size_t align);
void hmr__unmap_pages(void *p, size_t size);

/* Tests: after `after` more allocations succeed, the next one fails, once;
 * a negative `after` disarms.  hmr__alloc_armed: not yet triggered. */
void hmr__alloc_fail_after(long after);
int hmr__alloc_armed(void);

#endif /* HMR_BASE_ALLOC_H */
