/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* hash.h: the one 64-bit mixer (key map slots, raw-key checks). */
#ifndef HMR_BASE_HASH_H
#define HMR_BASE_HASH_H

#include <stdint.h>

/* MurmurHash3's 64-bit finaliser: every input bit flips about half of the
 * output bits, so sequential keys spread over a power-of-two table and a
 * forged raw key cannot aim at a known check value bit by bit. */
static inline uint64_t hmr__hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif /* HMR_BASE_HASH_H */
