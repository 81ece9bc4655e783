/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* patch.h: writing a jump at a function's entry, safely for running threads. */
#ifndef HMR_MONITOR_PATCH_H
#define HMR_MONITOR_PATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One function to redirect: after hmr__patch_apply, a call of `entry`
 * runs `hook`, and `next` is what the hook calls to do the real work:
 * either a trampoline running the instructions our jump replaced then the
 * rest of the original, or the target of a jump another library (UCX,
 * libfabric) had written there first (chaining: both hooks run).
 *
 * Threads may be running the function while it is patched; the rules
 * that keep them safe (patch.c):
 * - the bytes that change lie inside one aligned 8-byte word, written with
 *   one atomic compare-and-swap: no thread fetches half an instruction;
 * - the jump replaces whole instructions only (a thread stopped between
 *   two of them resumes on an instruction boundary of the new code):
 *   where the first instruction is shorter than a 5-byte jump, a 2-byte
 *   jump goes to a 5-byte one written first into the alignment padding
 *   before the function, which no thread executes;
 * - the code the jump leads to (a page near the function, then our hook)
 *   is never unmapped: hooks.c pins the library in memory.
 */
struct hmr__patch {
	const char *name;
	void *entry;
	void (*hook)(void);
	void (*_Atomic next)(void);
	uint64_t *word; /* The aligned word our patch changed. */
	uint64_t mine;  /* Its value with our patch. */
};

/* Patch every function or none (when one cannot be patched, `why` names
 * it).  0 or a negative code. */
int hmr__patch_apply(struct hmr__patch *p, size_t n, char *why, size_t why_len);

/* Our patch is still what `entry` starts with. */
bool hmr__patch_intact(const struct hmr__patch *p);

#endif /* HMR_MONITOR_PATCH_H */
