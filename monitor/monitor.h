/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* monitor.h: memory monitors: who learns that pages leave an address range. */
#ifndef HMR_MONITOR_MONITOR_H
#define HMR_MONITOR_MONITOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A registration (a NIC's pinned pages, a cached memtype answer) describes
 * an address range; when the process unmaps or remaps that range, or gives
 * its pages back (madvise DONTNEED/FREE/REMOVE, brk shrinking, shmdt), the
 * description is stale.  A monitor reports such events to subscribers:
 * the registration caches (cache/) and hmem's memtype cache.  One monitor
 * runs per process (the hooks and the userfaultfd are process-wide); its
 * kind comes from the setting FI_MR_CACHE_MONITOR at the first start.
 *
 * - memhooks: libc's munmap, mremap, madvise, brk, sbrk and shmdt (and
 *   mmap with MAP_FIXED, which replaces pages) are patched so the event is
 *   delivered on the calling thread BEFORE the kernel sees the call:
 *   rdma-core wants a region deregistered before its memory is gone.
 *   A function whose entry cannot be patched safely is hooked through
 *   every object's GOT instead (reloc.h: with free and realloc, since
 *   libc's own calls bypass the GOT); HMR_MEMHOOKS_MODE picks.
 *   Another library's patch found in place (UCX's, libfabric's) is chained
 *   to, not overwritten.  A patch of ours overwritten later (libfabric's
 *   memhooks, a UCX loaded after us) is found by hmr__monitor_intact(),
 *   which every cache lookup calls: it puts our patch back in front,
 *   chaining to the newcomer, and reports the whole address space
 *   unmapped (events may have been lost), so nothing cached before is
 *   handed out again.  Limit: a patch laid over ours and removed again
 *   (restoring our bytes) between two lookups hides the unmaps of that
 *   window; with another memhooks-based cache in the process, prefer
 *   userfaultfd (doc/cache.md).  Not under valgrind (it runs its own
 *   translation of libc): start says so.
 * - userfaultfd: the kernel reports UNMAP, REMOVE and REMAP for watched
 *   ranges only, AFTER the fact, to a thread of ours; a fallback, with that
 *   limit (doc/cache.md).  Refused (EPERM in containers): start fails with
 *   the reason and the caller falls back.  The kernel makes an unmapping
 *   thread WAIT until our reader thread has read the event: so neither
 *   monitor thread may ever wait on anything an unmapping thread may hold
 *   (a lock held around free(), the watch table's lock), and subscribers
 *   called from the deliverer thread follow the rules below like any.
 * - kdreg2: an out-of-tree kernel module; start fails with "not available,
 *   because /dev/kdreg2 is absent" where it is absent.
 * - import: no hooks; the application reports its allocator's frees with
 *   hmr_mr_cache_invalidate() (include/hmr/hmr.h), which lands in
 *   hmr__monitor_notify().
 * - disabled: nothing is reported; the caches do not cache.
 *
 * Rules for subscribers (the reason this header exists):
 * - `unmapped` runs inside the hooked call, on any thread, possibly while
 *   that thread is inside malloc or free: it must not allocate, must not
 *   call anything that may allocate, and must not take a lock that a
 *   thread may hold while it allocates or unmaps.
 * - Events nest: work done for an event (ibv_dereg_mr frees memory) may
 *   unmap.  The monitor delivers nested events with `nested` true; a
 *   subscriber then only marks, and does the rest in `drain`, which the
 *   monitor calls once the outermost event's `unmapped` calls returned
 *   (still before the outermost unmap proceeds), again until no drain
 *   reports more work.
 */
enum hmr_monitor_kind {
	HMR_MONITOR_DISABLED = 0,
	HMR_MONITOR_MEMHOOKS,
	HMR_MONITOR_USERFAULTFD,
	HMR_MONITOR_KDREG2,
	HMR_MONITOR_IMPORT,
};

struct hmr_monitor_sub {
	/* [start, start + len) loses its pages (len > 0; start + len does
	 * not wrap: the monitor clips). */
	void (*unmapped)(struct hmr_monitor_sub *sub, uintptr_t start,
	                 size_t len, bool nested);
	/* Finish what nested events left; true when it did some work (the
	 * monitor calls drains again until all say false).  May be NULL. */
	bool (*drain)(struct hmr_monitor_sub *sub);
	/* Owned by monitor/: the subscriber list (lock-free to walk). */
	struct hmr_monitor_sub *_Atomic next;
};

/* Start the process's monitor if it is not running: the kind from the
 * setting FI_MR_CACHE_MONITOR (memhooks | userfaultfd | kdreg2 | import |
 * disabled; default memhooks, see doc/cache.md for why).  0 when running;
 * otherwise a negative code, and `why` says why ("userfaultfd: EPERM,
 * vm.unprivileged_userfaultfd is 0; memhooks used instead").  A refused
 * kind falls back: userfaultfd and kdreg2 to memhooks, memhooks to
 * userfaultfd, then disabled; the kind in force is what
 * hmr__monitor_kind() answers.  Thread-safe; idempotent. */
int hmr__monitor_start(char *why, size_t why_len);
enum hmr_monitor_kind hmr__monitor_kind(void);
const char *hmr__monitor_kind_name(enum hmr_monitor_kind kind);

/* What the monitor in force does, for hmr_info and hmr_mr_cache_stats:
 * why it is the one (what was refused on the way: the text start gave),
 * and, for memhooks, how each function is reached: "patch" (its entry,
 * how: which jump where) or "relocation" (GOT entries; how: why).
 * Strings live as long as the process. */
struct hmr__monitor_func {
	const char *name, *mechanism, *how;
};
const char *hmr__monitor_why(void);
size_t hmr__monitor_describe(struct hmr__monitor_func *out, size_t max);
/* The kind in force tells of an unmap before the kernel acts (memhooks,
 * import): what the memtype cache needs to remember host answers. */
bool hmr__monitor_reports_before(void);

/* Subscribers are added and removed at cache open/close (not per event);
 * remove waits until no thread is inside the subscriber's callbacks. */
void hmr__monitor_subscribe(struct hmr_monitor_sub *sub);
void hmr__monitor_unsubscribe(struct hmr_monitor_sub *sub);

/* Ranges a subscriber depends on: userfaultfd registers them with the
 * kernel (it reports nothing outside them); the hooks ignore them.  Never
 * widened beyond the pages of [start, start + len).  Counted, so two
 * watchers of one page both stay covered.  0, or a negative code when
 * the kernel refused (-FI_ENOMEM at vm.max_map_count, -FI_EINVAL for
 * memory userfaultfd cannot watch, -FI_EBUSY when another userfaultfd
 * has it): the caller then must not cache the range.  May allocate:
 * never call either from an `unmapped` callback. */
int hmr__monitor_watch(uintptr_t start, size_t len);
void hmr__monitor_unwatch(uintptr_t start, size_t len);

/* Deliver an event as if a hook saw it: the import monitor's entry, and
 * what tests use.  Runs subscribers and drains on this thread. */
void hmr__monitor_notify(uintptr_t start, size_t len);

/* memhooks: false once another library overwrote one of our patches (the
 * caches stop caching and say so).  Cheap: compares a few bytes. */
bool hmr__monitor_intact(void);

/* The cheap form of hmr__monitor_intact for a cache's every lookup: one
 * load of munmap's patch word (libfabric's and UCX's hooks patch munmap
 * with the rest) and the flag a repair raises.  True when memhooks is not
 * the monitor.  When it answers false, call hmr__monitor_intact(), which
 * checks every patch and repairs. */
extern const uint64_t *_Atomic hmr__monitor_quick_word;
extern _Atomic uint64_t hmr__monitor_quick_value;
extern atomic_bool hmr__monitor_damaged;
/* The word is libc's code, where sanitizers keep no shadow: read with a
 * plain aligned (so single-copy atomic) volatile load they do not see. */
__attribute__((no_sanitize("address", "thread"))) static inline bool
hmr__monitor_intact_quick(void)
{
	const uint64_t *w = atomic_load_explicit(&hmr__monitor_quick_word,
	                                         memory_order_acquire);

	return !w || (*(const volatile uint64_t *)w ==
	                      atomic_load_explicit(&hmr__monitor_quick_value,
	                                           memory_order_relaxed) &&
	              !atomic_load_explicit(&hmr__monitor_damaged,
	                                    memory_order_relaxed));
}

/* The process forked since the monitor started: true in the child (its
 * registrations are the parent's; caches must not use them). */
bool hmr__monitor_forked(void);

#endif /* HMR_MONITOR_MONITOR_H */
