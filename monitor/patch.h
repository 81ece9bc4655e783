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
 * libfabric, another copy of hmr) had written there first (chaining: both
 * hooks run).
 *
 * Threads may be running the function while it is patched; the rules
 * that keep them safe (patch.c):
 * - the bytes that change lie inside one aligned 8-byte word, written with
 *   one atomic compare-and-swap: no thread fetches half an instruction;
 * - the jump replaces one whole instruction (a thread stopped before it
 *   resumes on our jump; none can be stopped inside it): a 5-byte jump
 *   where that instruction is long enough and the jump fits the word,
 *   else a 2-byte jump to a 5-byte one written first into the alignment
 *   padding before the function, which no thread executes;
 * - a CET entry keeps its endbr64 (indirect calls through the PLT land
 *   on it) and the jump goes after it; leading pushes may be passed over
 *   too (the stub pops what they pushed before the hook runs, the
 *   trampoline pushes again).  Only where nothing after endbr64 can be
 *   patched is endbr64 itself replaced by the 2-byte jump: that shape
 *   would fault under enforced indirect-branch tracking, so it is refused
 *   there, as is a hook without endbr64 (doc/cache.md);
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
	uint8_t *pad;   /* Our 5-byte jump in the padding, or NULL. */
	char how[96];   /* What was done, for hmr_info: "jmp8 at +4 ...". */
};

/* Indirect-branch tracking is enforced in this process (Linux lists
 * "ibt" among x86_Thread_features in /proc/self/status; no kernel does
 * in user space yet).  Tests may force the answer: 1 yes, 0 no, -1 ask
 * the kernel. */
bool hmr__patch_ibt(void);
void hmr__patch_test_ibt(int force);

/* Patch every function or none (when one cannot be patched, `why` names
 * it).  0 or a negative code. */
int hmr__patch_apply(struct hmr__patch *p, size_t n, char *why, size_t why_len);

/* Our patch is still what `entry` starts with. */
bool hmr__patch_intact(const struct hmr__patch *p);

#endif /* HMR_MONITOR_PATCH_H */
