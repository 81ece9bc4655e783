/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cache_impl.h: the registration cache's private state, shared by its files. */
#ifndef HMR_CACHE_CACHE_IMPL_H
#define HMR_CACHE_CACHE_IMPL_H

#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>

#include <urcu-bp.h>
#include <urcu/rculfhash.h>

#include "cache/cache.h"
#include "monitor/monitor.h"

/*
 * Files: cache.c (open, close, get, put, flush, stats, the list of open
 * caches, fork), cache_miss.c (a miss: register, merge, insert, the
 * invalidation race), cache_index.c (the hash index, the clock ring,
 * eviction, range scans), cache_inval.c (invalidation and the monitor's
 * callbacks).  doc/cache.md says why the index and the rules are so.
 */

/* refs: the users in the low bits; DEAD once the entry left the index
 * (invalidated, evicted, merged away, or never indexed): a hit's CAS
 * fails on it, and whoever drops the count to 0 with DEAD set (or sets
 * DEAD on a count of 0) deregisters. */
#define REFS_DEAD  (1ULL << 63)
#define REFS_COUNT (REFS_DEAD - 1)

/*
 * Index orders: an entry of length L is indexed at the smallest granule
 * 2^shift >= L (shift 12, 14, ..., 62, then 64: the whole space), under
 * the one or two granules it touches.  Steps of 4x keep at most a few
 * non-overlapping entries per granule.
 */
enum {
	ORDER_MIN_SHIFT = 12,
	ORDER_STEP = 2,
	ORDERS = 27, /* Shifts 12..62 and 64. */
	HIT_SLOTS = 64,
	INVAL_RING = 32, /* Recent invalidations a miss checks against. */
	GRAVE_BATCH = 64 /* Dead entries freed per grace period. */
};

/* Entry flags (est->flags): written only before the entry is published
 * or handed out (a user may read them at any time). */
enum {
	EF_PUBLISHED = 1 << 0, /* Was in the index: freed after a grace. */
	EF_WATCHED = 1 << 1,   /* hmr__monitor_watch holds its range. */
};

/* One lfht node of an entry, with the way back to it. */
struct cache_inode {
	struct cds_lfht_node node;
	struct hmr_cache_entry *e;
};

/* The cache's state of an entry, laid over hmr_cache_entry.priv. */
struct __attribute__((may_alias)) cache_est {
	struct cache_inode in[2];            /* in[1] only when nodes == 2. */
	struct hmr_cache_entry *prev, *next; /* Clock ring (cache lock). */
	/* One list at a time: a scan's result, pending (deferred dereg),
	 * the graveyard (awaiting a grace period). */
	struct hmr_cache_entry *link;
	uint32_t flags;
	uint8_t order; /* Index order (0..ORDERS-1). */
	uint8_t nodes; /* 1 or 2 granules. */
};
_Static_assert(sizeof(struct cache_est) <=
                       sizeof(((struct hmr_cache_entry *)0)->priv),
               "the entry state fits in hmr_cache_entry.priv");

static inline struct cache_est *est(struct hmr_cache_entry *e)
{
	return (struct cache_est *)(void *)e->priv;
}

/* A recent invalidation, for misses that registered across it. */
struct cache_inval {
	uint64_t lo, hi; /* Bytes [lo, hi]. */
	uint64_t seq;
};

struct cache_hit_slot {
	alignas(64) _Atomic uint64_t hits;
};

struct hmr_cache {
	struct hmr_cache_attr attr;
	char name[48];
	struct cds_lfht *ht;
	/* Orders holding entries (bit per order): read by every lookup,
	 * written under `lock` when an order's count goes 0 <-> 1. */
	_Atomic uint32_t orders;
	bool usable;   /* max_count > 0 and the monitor (if any) started. */
	char why[128]; /* Why not usable. */

	/* `lock` protects the index's writers: the lfht's adds and dels,
	 * the ring, the counts, the invalidation ring.  Held only for
	 * pointer work: no ops call, no allocation, no free, no unmap. */
	pthread_mutex_t lock;
	size_t order_count[ORDERS];
	struct hmr_cache_entry *hand; /* Clock hand; NULL: ring empty. */
	struct cache_inval inval[INVAL_RING];

	_Atomic size_t entries, bytes, nodes; /* Written under lock. */
	_Atomic unsigned long ht_size;        /* Buckets asked for. */
	_Atomic uint64_t inval_seq;           /* Written under lock. */
	_Atomic long inflight;                /* Misses registering now. */
	_Atomic long alive;                   /* Registered, not yet dereg'd. */
	_Atomic uint64_t misses, evictions, invalidations, merges, uncached;
	/* Lock-free stacks (through est->link): entries to deregister at
	 * the drain, entries deregistered awaiting a grace period. */
	struct hmr_cache_entry *_Atomic pending;
	struct hmr_cache_entry *_Atomic grave;
	_Atomic size_t grave_n;

	struct hmr_monitor_sub sub;
	bool subscribed;
	struct hmr_cache *next_open; /* The open caches (cache.c's lock). */
	struct cache_hit_slot hit[HIT_SLOTS];
};

/*
 * ThreadSanitizer does not see liburcu's synchronisation (it is not
 * instrumented): publishing an entry through the lfht and freeing it after
 * a grace period are told to it here, so it checks hmr's own accesses with
 * the real happens-before edges.  Nothing in other builds.
 */
#if defined(__SANITIZE_THREAD__)
#define HMR_CACHE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HMR_CACHE_TSAN 1
#endif
#endif
#ifdef HMR_CACHE_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define tsan_acquire(a) __tsan_acquire((void *)(a))
#define tsan_release(a) __tsan_release((void *)(a))
#else
#define tsan_acquire(a) ((void)(a))
#define tsan_release(a) ((void)(a))
#endif
/* What every read-side section releases and a reclaimer acquires. */
extern char hmr__cache_rcu_sync;

/* cache.c */
bool hmr__cache_child(void); /* This process is a fork child. */
void hmr__cache_bury(struct hmr_cache *c, struct hmr_cache_entry *e);
void hmr__cache_dereg(struct hmr_cache *c, struct hmr_cache_entry *e);
void hmr__cache_dereg_list(struct hmr_cache *c, struct hmr_cache_entry *l);
void hmr__cache_reap(struct hmr_cache *c, size_t at_least);

/* cache_index.c: the index.  Lookups inside an RCU read-side section;
 * the rest with `lock` held, inside one too. */
struct hmr_cache_entry *hmr__cache_ix_hit(struct hmr_cache *c, uint64_t start,
                                          uint64_t end, uint64_t access,
                                          uint64_t id);
void hmr__cache_ix_add(struct hmr_cache *c, struct hmr_cache_entry *e);
void hmr__cache_ix_del(struct hmr_cache *c, struct hmr_cache_entry *e);
/* Indexed entries with a byte in [lo, hi] (of `id` when `any_id` is
 * false), as a list through est->link. */
struct hmr_cache_entry *hmr__cache_ix_scan(struct hmr_cache *c, uint64_t lo,
                                           uint64_t hi, bool any_id,
                                           uint64_t id);
/* Idle entries evicted while over the limits: made DEAD, unindexed, and
 * returned as a list (to deregister once the lock is dropped). */
struct hmr_cache_entry *hmr__cache_ix_evict(struct hmr_cache *c,
                                            struct hmr_cache_entry *list);
bool hmr__cache_over(struct hmr_cache *c);
/* Every indexed entry that is idle, made DEAD and unindexed. */
struct hmr_cache_entry *hmr__cache_ix_flush(struct hmr_cache *c);
size_t hmr__cache_ix_idle(struct hmr_cache *c);
/* Grow the hash table when it holds too many nodes (outside locks). */
void hmr__cache_ix_grow(struct hmr_cache *c);

/* cache_miss.c */
int hmr__cache_miss(struct hmr_cache *c, uint64_t start, uint64_t end,
                    uint64_t access, uint64_t id, struct hmr_cache_entry **out);
int hmr__cache_reg_uncached(struct hmr_cache *c, uint64_t start, uint64_t end,
                            uint64_t access, uint64_t id,
                            struct hmr_cache_entry **out);

/* cache_inval.c */
void hmr__cache_inval(struct hmr_cache *c, uint64_t lo, uint64_t hi,
                      bool defer);
void hmr__cache_sub_init(struct hmr_cache *c);
/* Whether a miss that read inval_seq `seq0` raced an invalidation of
 * [lo, hi] (cache lock held). */
bool hmr__cache_raced(struct hmr_cache *c, uint64_t seq0, uint64_t lo,
                      uint64_t hi);

#endif /* HMR_CACHE_CACHE_IMPL_H */
