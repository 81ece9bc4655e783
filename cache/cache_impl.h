/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cache_impl.h: the registration cache's private state, shared by its files. */
#ifndef HMR_CACHE_CACHE_IMPL_H
#define HMR_CACHE_CACHE_IMPL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>

/*
 * The read side inlined (liburcu's _LGPL_SOURCE, which its README allows
 * GPL-compatible code; BSD-2-Clause is): a hit saves two calls and their
 * TLS lookups.  Not under UBSan: liburcu 0.13's header declares its reader
 * struct 128-byte aligned while the library lays readers out 32 bytes
 * apart, which UBSan reports in the inlined code; those builds call the
 * library's functions instead (the same code, compiled there).
 */
#ifndef HMR_CACHE_RCU_CALLS
#define _LGPL_SOURCE
#endif
#include <urcu-bp.h>
#include <urcu/rculfhash.h>

#include "cache/cache.h"
#include "monitor/monitor.h"

/*
 * Files: cache.c (open, close, get, put, flush, stats, the list of open
 * caches, fork), cache_slab.c (entries and their hit records),
 * cache_miss.c (a miss: register, merge, insert, the
 * invalidation race), cache_index.c (the hash index, the clock ring,
 * eviction, range scans), cache_inval.c (invalidation and the monitor's
 * callbacks).  doc/cache.md says why the index and the rules are so.
 */

/* refs: the users in the low 19 bits; HIT, the clock bit (set by the
 * hit's own increment, cleared by the hand: no second write on a hit);
 * DEAD once the entry left the index (invalidated, evicted, merged away,
 * or never indexed): a hit fails on it, and whoever drops the count to 0
 * with DEAD set (or sets DEAD on a count of 0) deregisters.  Between
 * them, what a hit compares besides the record's start: the length less
 * one (at most 1 MiB) and the access (21 bits: every ibv_access_flags
 * bit); an entry whose length or access does not fit is FAR (the hit
 * compares the entry's own fields).  ID: the entry's memory id is not 0
 * (device memory): a hit compares it in the slab's dense array of ids
 * (slab_id), a load that does not wait for the record's.  These never
 * change while the entry is indexed.  A count at its maximum (2^19 - 1
 * users at once) makes hits fail (then misses: a second registration). */
#define REFS_DEAD      (1ULL << 63)
#define REFS_HIT       (1ULL << 62)
#define REFS_FAR       (1ULL << 61)
#define REFS_LEN_SHIFT 41
#define REFS_LEN_BITS  20
#define REFS_LEN_MASK  ((1ULL << REFS_LEN_BITS) - 1)
#define REFS_ACC_SHIFT 20
#define REFS_ACC_BITS  21
#define REFS_ACC_MASK  ((1ULL << REFS_ACC_BITS) - 1)
#define REFS_ID        (1ULL << 19)
#define REFS_COUNT     ((1ULL << 19) - 1)

/*
 * Index orders: an entry of length L is indexed at the smallest granule
 * 2^shift >= L (shift 12, 14, ..., 62, then 64: the whole space), under
 * the granule of its start: it reaches at most into the next granule, so
 * a lookup of address a probes a's granule and the one before.  Steps of
 * 4x keep at most a few non-overlapping entries per granule.
 */
enum {
	ORDER_MIN_SHIFT = 12,
	ORDER_STEP = 2,
	ORDERS = 27, /* Shifts 12..62 and 64. */
	HIT_SLOTS = 64,
	SLAB_SHIFT = 14, /* Entries per slab chunk: 2^14. */
	SLAB_CHUNKS = 1024,
	INVAL_RING = 32, /* Recent invalidations a miss checks against. */
	GRAVE_BATCH = 64 /* Dead entries freed per grace period. */
};

/* Entry flags (est->flags): written only before the entry is published
 * or handed out (a user may read them at any time). */
enum {
	EF_PUBLISHED = 1 << 0, /* Was in the index: freed after a grace. */
	EF_WATCHED = 1 << 1,   /* hmr__monitor_watch holds its range. */
	EF_LONE = 1 << 2,      /* Allocated alone, not in the slab. */
};

/*
 * An entry's hit record: its start and the reference count word (which
 * also holds its length and access, above), 16 bytes, in dense arrays
 * apart from the entries (the slab: chunks of 2^SLAB_SHIFT records, the
 * entry of the same index beside in a chunk of entries).  A hit through
 * the hint table reads one slot and one record, never the entry (unless
 * FAR): 65,536 regions' records take 1 MiB where their entries take 8.
 * start is written before the entry is published and not again until a
 * grace period after it left the index.
 */
struct cache_rec {
	uint64_t start;
	_Atomic uint64_t refs;
};
_Static_assert(sizeof(struct cache_rec) == 16, "four records per line");
#define SLAB_NONE UINT32_MAX /* est->idx of an entry outside the slab. */

/*
 * An entry as the cache keeps it: its lfht node, then the entry, 64
 * bytes aligned, so that an lfht lookup reads one line of it: the node,
 * start, end, access, id and handle (then the record's line for refs).
 */
struct cache_ent {
	alignas(64) struct cds_lfht_node node;
	struct hmr_cache_entry e;
};
_Static_assert(offsetof(struct cache_ent, e.priv) <= 64,
               "an lfht match's fields in the first cache line");

static inline struct cache_ent *ent(struct hmr_cache_entry *e)
{
	return (struct cache_ent *)(void *)((char *)e -
	                                    offsetof(struct cache_ent, e));
}

/* The cache's cold state of an entry, laid over hmr_cache_entry.priv. */
struct __attribute__((may_alias)) cache_est {
	struct hmr_cache_entry *prev, *next; /* Clock ring (cache lock). */
	/* One list at a time: a scan's result, pending (deferred dereg),
	 * the graveyard (awaiting a grace period). */
	struct hmr_cache_entry *link;
	struct cache_rec *rec; /* Its hit record. */
	void *raw;             /* EF_LONE: what hmr__calloc returned. */
	uint32_t idx;          /* In the slab, or SLAB_NONE. */
	uint16_t flags;
	/* In the lfht (else in the hint table only): read and written
	 * under the cache lock only (a table growth may set it on an
	 * entry in use; the flags above are read without the lock). */
	bool in_lfht;
};
_Static_assert(sizeof(struct cache_est) <=
                       sizeof(((struct hmr_cache_entry *)0)->priv),
               "the entry state fits in hmr_cache_entry.priv");

static inline struct cache_est *est(struct hmr_cache_entry *e)
{
	return (struct cache_est *)(void *)e->priv;
}

/*
 * Where an entry's record is, from the entry's address alone: a put then
 * writes the record's line and reads none of the entry's (at 65,536
 * regions the entries' 8 MiB are out of every cache; the load of
 * est->rec cost more than the rest of the put).  A slab chunk starts at
 * a multiple of SLAB_ALIGN, its records first, then its entries' ids,
 * then its entries, each 128 bytes from a 128-byte boundary; an entry
 * allocated alone sits 64 bytes off one (cache_slab.c), and only its own
 * est->rec says where its record is.
 */
#define SLAB_ALIGN ((uintptr_t)1 << 22)
#define SLAB_RECS  ((uintptr_t)sizeof(struct cache_rec) << SLAB_SHIFT)
#define SLAB_IDS   ((uintptr_t)sizeof(uint64_t) << SLAB_SHIFT)
#define SLAB_BYTES                                                             \
	(((uintptr_t)sizeof(struct cache_rec) + sizeof(uint64_t) +             \
	  sizeof(struct cache_ent))                                            \
	 << SLAB_SHIFT)
_Static_assert(sizeof(struct cache_ent) == 128, "entries 128 bytes apart");
_Static_assert(SLAB_BYTES <= SLAB_ALIGN, "a chunk within its alignment");

static inline bool alone(const struct hmr_cache_entry *e)
{
	return (uintptr_t)ent((struct hmr_cache_entry *)e) & 64;
}

static inline struct cache_rec *rec(struct hmr_cache_entry *e)
{
	uintptr_t n = (uintptr_t)ent(e), base = n & ~(SLAB_ALIGN - 1);

	if (alone(e))
		return est(e)->rec;
	return (struct cache_rec *)base +
	       (n - base - SLAB_RECS - SLAB_IDS) / sizeof(struct cache_ent);
}

/*
 * The hint table: for each indexed slab entry one slot, chosen by the
 * page of its start, holds its slab index and an 8-bit tag of that page
 * (hash bits other than the set's), so that a get of a range starting in
 * an entry's first page (the common case: the same buffers again) finds
 * its record with one load instead of an lfht lookup, and seldom reads
 * another entry's record (1 in 256 per other way).  4 bytes a slot, kept
 * at most half full: 65,536 entries' slots take 512 KiB, beside their
 * records' 1 MiB.  Only a hint: a full set's slot holds the last entry
 * inserted there (1% of entries at half load, 8 ways), an entry past
 * index 2^24 - 2 has none, and every other lookup goes to the lfht.
 * Slots are written under the cache lock (set at insert, cleared at
 * removal: a slot never points at an entry out of the index once the
 * removal's grace period begins); the table is replaced when it grows,
 * the old one freed after a grace period.
 *
 * Order-0 entries (at most 4 KiB) are found through this table alone
 * when their set has a free way: they never enter the lfht, so their
 * insert, removal and invalidation cost no lfht add, lookup or delete.
 * One whose set is full (or that cannot be hinted: outside the slab, or
 * past index 2^24 - 2) goes to the lfht instead (EF_LFHT), and its set's
 * `lossy` byte (after the slots) is set: the set's pages may then have
 * order-0 entries in the lfht.  A slot is never overwritten.  Entries of
 * higher orders are always in the lfht, and hinted when a way is free
 * (for the fast hit only).  So a lookup's order-0 candidates for a page
 * are its set's slots, plus the lfht when the set is lossy; when no
 * order-0 entry crosses a page (`spans`), an order-0 entry covering a
 * range starts in the range's first page, and a miss on a set that is
 * not lossy skips the lfht.  A lookup racing an insert may then miss: a
 * miss is never wrong, it registers anew.
 */
enum {
	HINT_WAYS = 8,          /* Slots per set: 32 bytes. */
	HINT_IDX_MAX = 0xfffffe /* The last index hinted. */
};

struct cache_hints {
	unsigned shift;          /* 64 - log2(sets), at least 34. */
	char pad[28];            /* Sets 32-byte aligned (the table 64). */
	_Atomic uint32_t slot[]; /* tag << 24 | (index + 1); 0: empty. */
};

static inline uint64_t hint_hash(uint64_t addr)
{
	return (addr >> 12) * 0x9E3779B97F4A7C15ULL;
}

/* The first slot of the set of `addr`'s page. */
static inline size_t hint_set(const struct cache_hints *h, uint64_t addr)
{
	return HINT_WAYS * (size_t)(hint_hash(addr) >> h->shift);
}

/* The overflow bytes, one per set, after the slots. */
static inline _Atomic uint8_t *hint_lossy(struct cache_hints *h, size_t set)
{
	return (_Atomic uint8_t *)(void *)&h
	               ->slot[HINT_WAYS << (64 - h->shift)] +
	       set / HINT_WAYS;
}

/* What a slot holds for an entry starting at `start`: the 8 hash bits
 * below the set's as tag. */
static inline uint32_t hint_val(const struct cache_hints *h, uint64_t start,
                                uint32_t idx)
{
	return (uint32_t)(hint_hash(start) >> (h->shift - 8)) << 24 | (idx + 1);
}

/* A recent invalidation, for misses that registered across it. */
struct cache_inval {
	uint64_t lo, hi; /* Bytes [lo, hi]. */
	uint64_t seq;
};

/* One thread's counters (a load and a store each: no shared
 * read-modify-write on a hit or a miss), and the slab indices it keeps
 * for its next misses (the rest of a record line it took: threads'
 * records then share no line).  Threads beyond HIT_SLOTS share one. */
struct cache_hit_slot {
	alignas(64) _Atomic uint64_t hits;
	_Atomic uint64_t misses;
	/* Kept: the first index + 1 (0: none), and how many from it. */
	_Atomic uint64_t keep;
};

struct hmr_cache {
	struct hmr_cache_attr attr;
	char name[48];
	struct cds_lfht *ht;
	struct cache_hints *_Atomic hints;
	/* Orders holding entries (bit per order): read by every lookup,
	 * written under `lock` when an order's count goes 0 <-> 1. */
	_Atomic uint32_t orders;
	_Atomic uint32_t spans; /* Orders with entries crossing a granule. */
	bool usable;       /* max_count > 0 and the monitor (if any) started. */
	bool check_intact; /* memhooks: hmr__monitor_intact on each get. */
	char why[128];     /* Why not usable. */

	/* `lock` protects the index's writers: the lfht's adds and dels,
	 * the ring, the counts, the invalidation ring.  Held only for
	 * pointer work: no ops call, no allocation, no free, no unmap. */
	pthread_mutex_t lock;
	size_t order_count[ORDERS];
	size_t span_count[ORDERS];
	struct hmr_cache_entry *hand; /* Clock hand; NULL: ring empty. */
	struct cache_inval inval[INVAL_RING];

	_Atomic size_t entries, bytes; /* Written under lock. */
	_Atomic unsigned long ht_size; /* Buckets asked for. */
	_Atomic uint64_t inval_seq;    /* Written under lock. */
	_Atomic long inflight;         /* Misses registering now. */
	_Atomic long alive;            /* Registered, not yet dereg'd. */
	_Atomic uint64_t evictions, invalidations, merges, uncached;
	/* Lock-free stacks (through est->link): entries to deregister at
	 * the drain, entries deregistered awaiting a grace period. */
	struct hmr_cache_entry *_Atomic pending;
	struct hmr_cache_entry *_Atomic grave;
	_Atomic size_t grave_n;

	/* The slab: chunks of 2^SLAB_SHIFT records then as many entries,
	 * by index (read by hits; a chunk is added, under spare_lock,
	 * before any of its indices is handed out, and freed at close). */
	struct cache_rec *chunk[SLAB_CHUNKS]; /* hmr__map_aligned's. */
	/* spare_lock protects `spare` (free slab entries, a list through
	 * est->link), `fresh` (the first index never handed out) and the
	 * chunks: its own lock, never taken in monitor events nor under
	 * `lock`.  It may allocate a chunk. */
	pthread_mutex_t spare_lock;
	struct hmr_cache_entry *spare;
	uint32_t fresh;

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
/* Set in a fork child (pthread_atfork). */
extern atomic_bool hmr__cache_forked;
static inline bool hmr__cache_child(void)
{
	return atomic_load_explicit(&hmr__cache_forked, memory_order_relaxed);
}
/* cache_slab.c: entries and their records.  A new entry's refs are 0;
 * the caller sets them (hmr__cache_refs). */
struct hmr_cache_entry *hmr__cache_new_entry(struct hmr_cache *c,
                                             uint64_t start, uint64_t end,
                                             uint64_t access, uint64_t id);
/* Back to the slab (never inside a monitor event: after a grace period
 * when it was published). */
void hmr__cache_free_entry(struct hmr_cache *c, struct hmr_cache_entry *e);
/* The slab's chunks freed (close). */
void hmr__cache_slab_free(struct hmr_cache *c);
/* cache.c */
void hmr__cache_bury(struct hmr_cache *c, struct hmr_cache_entry *e);
void hmr__cache_dereg(struct hmr_cache *c, struct hmr_cache_entry *e);
void hmr__cache_dereg_list(struct hmr_cache *c, struct hmr_cache_entry *l);
void hmr__cache_reap(struct hmr_cache *c, size_t at_least);

/* cache_index.c: the index.  Lookups inside an RCU read-side section;
 * the rest with `lock` held, inside one too. */
/* `skip`: orders the hint table's probe already covered. */
struct hmr_cache_entry *hmr__cache_ix_hit(struct hmr_cache *c, uint64_t start,
                                          uint64_t end, uint64_t access,
                                          uint64_t id, uint32_t skip);
void hmr__cache_ix_add(struct hmr_cache *c, struct hmr_cache_entry *e);
void hmr__cache_ix_del(struct hmr_cache *c, struct hmr_cache_entry *e);
/* Under the lock: l leaves the index (DEAD, so no lookup takes it again)
 * and, when no one holds it, goes onto *idle to deregister; false when it
 * was already dead (evicted or invalidated, awaiting its put).  l's link
 * is the index scan's: the caller reads the next entry first. */
bool hmr__cache_ix_retire(struct hmr_cache *c, struct hmr_cache_entry *l,
                          struct hmr_cache_entry **idle);
/* Indexed entries with a byte in [lo, hi] (of `id` when `any_id` is
 * false), as a list through est->link. */
struct hmr_cache_entry *hmr__cache_ix_scan(struct hmr_cache *c, uint64_t lo,
                                           uint64_t hi, bool any_id,
                                           uint64_t id);
/* Idle entries evicted while over the limits: made DEAD, unindexed, and
 * returned as a list (to deregister once the lock is dropped). */
struct hmr_cache_entry *hmr__cache_ix_evict(struct hmr_cache *c,
                                            struct hmr_cache_entry *list);
static inline bool hmr__cache_over(struct hmr_cache *c)
{
	size_t max_size = c->attr.max_size;

	return atomic_load_explicit(&c->entries, memory_order_relaxed) >
	               c->attr.max_count ||
	       (max_size &&
	        atomic_load_explicit(&c->bytes, memory_order_relaxed) >
	                max_size);
}
/* Every indexed entry that is idle, made DEAD and unindexed. */
struct hmr_cache_entry *hmr__cache_ix_flush(struct hmr_cache *c);
size_t hmr__cache_ix_idle(struct hmr_cache *c);
/* Grow the hash and hint tables when they hold too many entries
 * (outside locks and read-side sections). */
void hmr__cache_ix_grow(struct hmr_cache *c);
struct cache_hints *hmr__cache_hints_new(unsigned shift);
static inline struct cache_rec *slab_rec(struct hmr_cache *c, uint32_t idx)
{
	return &c->chunk[idx >> SLAB_SHIFT][idx & ((1U << SLAB_SHIFT) - 1)];
}

static inline struct hmr_cache_entry *slab_ent(struct hmr_cache *c,
                                               uint32_t idx)
{
	struct cache_ent *n =
	        (struct cache_ent
	                 *)(void *)((char *)c->chunk[idx >> SLAB_SHIFT] +
	                            SLAB_RECS + SLAB_IDS);

	return &n[idx & ((1U << SLAB_SHIFT) - 1)].e;
}

/* The slab's dense array of memory ids, beside the records: what a hit
 * compares for an entry with REFS_ID. */
static inline uint64_t *slab_id(struct hmr_cache *c, uint32_t idx)
{
	uint64_t *ids =
	        (uint64_t *)(void *)((char *)c->chunk[idx >> SLAB_SHIFT] +
	                             SLAB_RECS);

	return &ids[idx & ((1U << SLAB_SHIFT) - 1)];
}

/* refs of a new entry: `count` users, ID if it has a memory id, its
 * length and access packed in when they fit. */
static inline uint64_t hmr__cache_refs(const struct hmr_cache_entry *e,
                                       uint64_t count)
{
	uint64_t len = e->end - e->start, id = e->id ? REFS_ID : 0;

	if ((e->access & ~REFS_ACC_MASK) || !len || len - 1 > REFS_LEN_MASK)
		return REFS_FAR | id | count;
	return (len - 1) << REFS_LEN_SHIFT | e->access << REFS_ACC_SHIFT | id |
	       count;
}

/* A reference, if the entry (its record r, its id at eid) covers
 * [start, end) of memory `id` with at least `access` and is not DEAD; the
 * clock bit set by the same instruction.  e is read only when its record
 * is FAR, eid only when it has an id. */
static inline bool hmr__cache_try_ref(struct cache_rec *r,
                                      const struct hmr_cache_entry *e,
                                      const uint64_t *eid, uint64_t start,
                                      uint64_t end, uint64_t id,
                                      uint64_t access)
{
	uint64_t v = atomic_load_explicit(&r->refs, memory_order_relaxed);

	if ((v & REFS_ID) ? *eid != id : id != 0)
		return false;
	if (v & REFS_FAR) {
		if (e->start > start || end > e->end ||
		    (e->access & access) != access)
			return false;
	} else if (r->start > start ||
	           end - r->start - 1 >
	                   ((v >> REFS_LEN_SHIFT) & REFS_LEN_MASK) ||
	           ((v >> REFS_ACC_SHIFT) & REFS_ACC_MASK & access) != access) {
		return false; /* Length and access never change. */
	}
	do {
		if ((v & REFS_DEAD) || (v & REFS_COUNT) == REFS_COUNT)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(
	        &r->refs, &v, (v + 1) | REFS_HIT, memory_order_acquire,
	        memory_order_relaxed));
	return true;
}

/* This thread's counter slot. */
struct cache_hit_slot *hmr__cache_slot(struct hmr_cache *c);
static inline void hmr__cache_count(_Atomic uint64_t *n)
{
	atomic_store_explicit(n,
	                      atomic_load_explicit(n, memory_order_relaxed) + 1,
	                      memory_order_relaxed);
}

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

/* cache_rcu.c: every read lock of the cache (see there why), the flavour
 * its hash table is made with, and whether this thread is inside its
 * first read lock (an event then comes from liburcu's own registry). */
extern __thread bool hmr__cache_rcu_registered;
void hmr__cache_read_lock_first(void);
static inline void hmr__cache_read_lock(void)
{
	if (__builtin_expect(hmr__cache_rcu_registered, 1))
		rcu_read_lock();
	else
		hmr__cache_read_lock_first();
}
const struct rcu_flavor_struct *hmr__cache_rcu_flavor(void);
bool hmr__cache_rcu_registering(void);
/* Whether a miss that read inval_seq `seq0` raced an invalidation of
 * [lo, hi] (cache lock held). */
bool hmr__cache_raced(struct hmr_cache *c, uint64_t seq0, uint64_t lo,
                      uint64_t hi);

#endif /* HMR_CACHE_CACHE_IMPL_H */
