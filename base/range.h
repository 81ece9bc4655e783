/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* range.h: overflow-safe address ranges, the one place an end is computed. */
#ifndef HMR_BASE_RANGE_H
#define HMR_BASE_RANGE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A range is a security boundary: a peer's right to write is decided by
 * comparing ends.  [start, start + len) is a range of the address space
 * only when its end is representable: a range ending exactly at 2^64 wraps
 * to 0 and is refused like any other overflow, as fi_mr(3) promises
 * -FI_EINVAL "when addr + len overflows".  Every `start + len` in hmr goes
 * through these helpers; none is written out by hand.
 */

/* *end = start + len; false (and *end untouched) when that overflows. */
static inline bool hmr__range_end(uint64_t start, uint64_t len, uint64_t *end)
{
	uint64_t e;

	if (__builtin_add_overflow(start, len, &e))
		return false;
	*end = e;
	return true;
}

/* A non-empty range that does not overflow. */
static inline bool hmr__range_valid(uint64_t start, uint64_t len)
{
	uint64_t end;

	return len && hmr__range_end(start, len, &end);
}

/* [s, s + len) lies inside [bs, bs + blen); false when either overflows
 * or the inner range is empty. */
static inline bool hmr__range_inside(uint64_t s, uint64_t len, uint64_t bs,
                                     uint64_t blen)
{
	uint64_t e, be;

	return len && hmr__range_end(s, len, &e) &&
	       hmr__range_end(bs, blen, &be) && s >= bs && e <= be;
}

/* *out = v rounded up to a multiple of align (a power of two); false when
 * that overflows. */
static inline bool hmr__align_up(uint64_t v, uint64_t align, uint64_t *out)
{
	uint64_t e;

	if (!hmr__range_end(v, align - 1, &e))
		return false;
	*out = e & ~(align - 1);
	return true;
}

/* The two ranges share at least one byte (both must be valid). */
static inline bool hmr__range_overlap(uint64_t s, uint64_t len, uint64_t bs,
                                      uint64_t blen)
{
	uint64_t e, be;

	return len && blen && hmr__range_end(s, len, &e) &&
	       hmr__range_end(bs, blen, &be) && s < be && bs < e;
}

#endif /* HMR_BASE_RANGE_H */
