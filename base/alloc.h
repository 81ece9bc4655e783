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
/*
 * Hints for pages of hmr__map_aligned, both best effort (an old kernel,
 * or transparent huge pages set to "never", leaves the pages as they
 * were; nothing fails).  Why: metadata written once per registration
 * costs a page fault per fresh page, which on a virtual machine with
 * shadow or nested paging is microseconds, more than the rest of a cache
 * miss (perf: the first write to a fresh slab entry was half of it).
 *  - hmr__map_huge: back [p, p + len) with transparent huge pages where
 *    it covers whole aligned huge pages: one fault per 2 MiB, and fewer
 *    TLB misses for what reads it; resident in 2 MiB steps, so only for
 *    memory that will be used.
 *  - hmr__map_populate: back the pages of [p, p + len) now, in one system
 *    call, instead of a fault each (MADV_POPULATE_WRITE, Linux 5.14).
 */
void hmr__map_huge(void *p, size_t len);
void hmr__map_populate(void *p, size_t len);

/* Tests: after `after` more allocations succeed, the next one fails, once;
 * a negative `after` disarms.  hmr__alloc_armed: not yet triggered. */
void hmr__alloc_fail_after(long after);
int hmr__alloc_armed(void);

#endif /* HMR_BASE_ALLOC_H */
