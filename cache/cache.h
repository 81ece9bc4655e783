/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cache.h: the registration cache: costly registrations shared and kept. */
#ifndef HMR_CACHE_CACHE_H
#define HMR_CACHE_CACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * fi_mr(3) MEMORY REGISTRATION CACHE.  A registrar whose registration is
 * costly (verbs: ibv_reg_mr pins pages and writes the NIC's tables) asks
 * the cache instead of the NIC.  The cache knows nothing of NICs: it
 * calls the owner's ops to register and deregister, so it is tested, and
 * benchmarked against UCX's rcache, with trivial ops.
 *
 * Rules (doc/cache.md says why each exists):
 * - A hit is an entry that covers the WHOLE requested range, with at
 *   least the requested access and the same memory identity (`id`: the
 *   owner's name for what the memory is, e.g. iface, device and buffer
 *   id; two allocations at one address differ).  A miss registers exactly
 *   the requested range and access (merged with overlapping and adjacent
 *   entries of the same id under merge_regions), never more rights.
 * - Hit path: an RCU read-side lookup (liburcu-bp: readers need no
 *   registration and write nothing shared), one atomic on the entry's own
 *   reference count (in its hit record, not in this struct): no global
 *   lock, no shared written cache line.
 * - Entries referenced by nobody stay registered (idle) until evicted:
 *   over max_count entries or max_size bytes, the least recently used
 *   idle ones go (second-chance clock: a hit sets a bit in refs with the
 *   same instruction that counts it, no list move).
 * - Invalidation (a monitor event, hmr__cache_invalidate) removes every
 *   entry overlapping the range from lookup at once; idle ones are
 *   deregistered before the event returns (before the unmap proceeds),
 *   in-use ones at their last put.  A registration racing an invalidation
 *   of its range is handed out uncached, never inserted stale.
 * - ops->reg and ops->dereg are never called with a cache lock held, and
 *   nothing in a monitor callback allocates (monitor/monitor.h).
 * - After fork, the child's cache hands out nothing of the parent's and
 *   deregisters none of it (the parent still uses it): it bypasses.
 *
 * Locks: `lock` (a mutex per cache) serialises writers: insert, remove,
 * eviction, merge.  Readers take none.  Order: a cache's lock, then the
 * monitor's subscriber lock; never the other way.
 */

struct hmr_cache;

/* One cached registration.  The owner reads the public fields; the rest is
 * the cache's. */
struct hmr_cache_entry {
	uintptr_t start; /* [start, end): what was registered. */
	uintptr_t end;   /* Computed with the range helper; never wraps. */
	uint64_t access; /* The owner's access bits registered. */
	uint64_t id;     /* Memory identity (see above). */
	void *handle;    /* The owner's registration (an ibv_mr *). */
	/* The cache's own state: list links, flags, and where the entry's
	 * hit record is (a dense 16-byte record of start, the reference
	 * count and, for host memory, the length and access: with a hint
	 * slot, all a hit reads). */
	void *priv[6];
};

struct hmr_cache_ops {
	/* Register [e->start, e->end) with e->access for e->id; set
	 * e->handle.  0 or a negative -FI_E* code (then nothing is kept). */
	int (*reg)(void *ctx, struct hmr_cache_entry *e);
	/* Undo reg.  May run inside a monitor event (before an unmap
	 * proceeds), on any thread. */
	void (*dereg)(void *ctx, struct hmr_cache_entry *e);
};

struct hmr_cache_attr {
	const struct hmr_cache_ops *ops;
	void *ctx;
	/* FI_MR_CACHE_MAX_SIZE / _MAX_COUNT: idle entries are evicted past
	 * either; max_count 0 means: do not cache (every get registers, every
	 * put deregisters), as fi_mr(3) says. */
	size_t max_size;
	size_t max_count;
	bool merge_regions; /* FI_MR_CACHE_MERGE_REGIONS (1.8 edition). */
	/* false: no monitor (tests and the benchmark drive invalidation by
	 * hand); true: subscribe to the process's monitor and watch ranges. */
	bool monitored;
	const char *name; /* For log lines ("verbs rxe0"). */
};

struct hmr_cache_stats {
	uint64_t hits, misses, evictions, invalidations, merges, uncached;
	size_t entries, idle, bytes;
};

/* 0 or a negative code.  A monitored cache whose monitor cannot start
 * still opens, uncached, and says why in a log line. */
int hmr__cache_open(const struct hmr_cache_attr *attr, struct hmr_cache **out);
/* Deregisters every idle entry; entries still referenced are the
 * caller's bug (-FI_EBUSY, nothing freed). */
int hmr__cache_close(struct hmr_cache *cache);

/* A registration covering [start, start + len) with `access` for `id`:
 * a hit, or a new one from ops->reg.  One reference for the caller. */
int hmr__cache_get(struct hmr_cache *cache, uintptr_t start, size_t len,
                   uint64_t access, uint64_t id, struct hmr_cache_entry **e);
/* Drop the caller's reference. */
void hmr__cache_put(struct hmr_cache *cache, struct hmr_cache_entry *e);

/* [start, start + len) changed: no entry overlapping it is handed out
 * again; idle ones are deregistered now. */
void hmr__cache_invalidate(struct hmr_cache *cache, uintptr_t start,
                           size_t len);
/* Deregister every idle entry (the entries stay valid for their users). */
void hmr__cache_flush(struct hmr_cache *cache);
void hmr__cache_stats(struct hmr_cache *cache, struct hmr_cache_stats *st);
/* Whether gets are cached at all now (max_count > 0, monitor running and
 * intact, not a forked child), and if not, why. */
bool hmr__cache_active(struct hmr_cache *cache, char *why, size_t why_len);

/* Every open cache of the process (hmr_mr_cache_invalidate / _flush with
 * no domain). */
void hmr__cache_invalidate_all(uintptr_t start, size_t len);
void hmr__cache_flush_all(void);

#endif /* HMR_CACHE_CACHE_H */
