/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* reloc.h: relocation hooks: other objects' calls reach our hooks by GOT. */
#ifndef HMR_MONITOR_RELOC_H
#define HMR_MONITOR_RELOC_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The second way in, for a function whose entry cannot be patched (an
 * instruction we cannot move, a foreign patch we do not understand) or
 * when the setting HMR_MEMHOOKS_MODE says reloc: the GOT entry of the
 * function in every loaded object is rewritten to point at our hook, and
 * dlopen is hooked the same way so that objects loaded later are
 * rewritten too (UCX's "reloc" mode works so).
 *
 * Its limit: a C library's calls of its own functions do not go through
 * its GOT (free() unmapping a large chunk calls __munmap directly), and
 * neither do raw system calls.  hooks.c therefore also hooks free and
 * realloc by GOT when glibc's malloc is the allocator and one of the
 * functions malloc uses (munmap, mremap, madvise, brk) is hooked only by
 * relocation: the chunk handed back is reported before it goes
 * (doc/cache.md says what that costs).
 *
 * Each entry: `hook` is written into the GOT entries named `name`;
 * `next` is what the hook calls: the definition every object's GOT
 * resolves to (dlsym(RTLD_DEFAULT)), or another library's relocation
 * hook found in a GOT entry first (chaining).  Entries with a NULL hook
 * are skipped.
 */
struct hmr__reloc {
	const char *name;
	void (*hook)(void);
	void (*_Atomic next)(void);
	void (*real)(void);  /* What the GOT entries resolve to (set by
	                      * hmr__reloc_apply). */
	unsigned long slots; /* GOT entries rewritten so far. */
};

/* Rewrite every loaded object's GOT entries of r[0..n), and from now on
 * those of every object dlopen loads.  r must live as long as the
 * process (the dlopen hook walks it).  Called again, it walks again
 * (entries put back by someone else are rewritten).  0, or a negative
 * code with why.  Limit: a library that rewrites a GOT entry of ours
 * later takes those calls without our hook seeing them (nothing checks
 * GOT entries on every lookup; doc/cache.md). */
int hmr__reloc_apply(struct hmr__reloc *r, size_t n, char *why, size_t why_len);

#endif /* HMR_MONITOR_RELOC_H */
