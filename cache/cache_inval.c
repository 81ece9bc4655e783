/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cache_inval.c: invalidation, from hmr__cache_invalidate and monitors. */
#include <stdatomic.h>

#include "base/range.h"
#include "cache/cache_impl.h"

/*
 * Invalidation runs inside monitor events: on any thread, maybe inside
 * malloc or free, before the unmap proceeds.  So it allocates nothing and
 * frees nothing: it takes the cache lock (whose holders never allocate or
 * unmap), unindexes what overlaps, and deregisters the idle entries after
 * dropping the lock (or, in a nested event, leaves them to the drain).
 * Their memory goes to the graveyard, freed after a grace period outside
 * any event (hmr__cache_reap).  A thread's first read-side section
 * registers it with urcu-bp (an mmap of urcu's registry, no malloc).
 */

/* Recorded under the lock for misses registering meanwhile. */
static void record(struct hmr_cache *c, uint64_t lo, uint64_t hi)
{
	uint64_t seq =
	        atomic_load_explicit(&c->inval_seq, memory_order_relaxed) + 1;
	struct cache_inval *r = &c->inval[seq % INVAL_RING];

	r->lo = lo;
	r->hi = hi;
	r->seq = seq;
	atomic_store(&c->inval_seq, seq);
}

bool hmr__cache_raced(struct hmr_cache *c, uint64_t seq0, uint64_t lo,
                      uint64_t hi)
{
	uint64_t seq = atomic_load_explicit(&c->inval_seq,
	                                    memory_order_relaxed),
	         s;
	const struct cache_inval *r;

	if (seq == seq0)
		return false;
	if (seq - seq0 > INVAL_RING)
		return true; /* Too many to tell: assume the worst. */
	for (s = seq0 + 1; s <= seq; s++) {
		r = &c->inval[s % INVAL_RING];
		if (r->lo <= hi && lo <= r->hi)
			return true;
	}
	return false;
}

static void push(struct hmr_cache_entry *_Atomic *stack,
                 struct hmr_cache_entry *list)
{
	struct hmr_cache_entry *last = list, *head;

	if (!list)
		return;
	while (est(last)->link)
		last = est(last)->link;
	head = atomic_load(stack);
	do
		est(last)->link = head;
	while (!atomic_compare_exchange_weak(stack, &head, list));
}

void hmr__cache_inval(struct hmr_cache *c, uint64_t lo, uint64_t hi, bool defer)
{
	struct hmr_cache_entry *l, *next, *idle = NULL;
	uint64_t n = 0;

	/* Nothing indexed and nothing registering: nothing can be stale
	 * (a miss counts itself in `inflight` before reading inval_seq). */
	if (!atomic_load(&c->entries) && !atomic_load(&c->inflight))
		return;
	hmr__cache_read_lock();
	pthread_mutex_lock(&c->lock);
	record(c, lo, hi);
	if (c->hand) {
		for (l = hmr__cache_ix_scan(c, lo, hi, true, 0); l; l = next) {
			next = est(l)->link;
			n += hmr__cache_ix_retire(c, l, &idle);
		}
	}
	if (n) /* Written under the lock only: no read-modify-write. */
		atomic_store_explicit(
		        &c->invalidations,
		        atomic_load_explicit(&c->invalidations,
		                             memory_order_relaxed) +
		                n,
		        memory_order_relaxed);
	pthread_mutex_unlock(&c->lock);
	tsan_release(&hmr__cache_rcu_sync);
	rcu_read_unlock();
	if (defer)
		push(&c->pending, idle);
	else
		hmr__cache_dereg_list(c, idle);
}

static void on_unmapped(struct hmr_monitor_sub *sub, uintptr_t start,
                        size_t len, bool nested)
{
	struct hmr_cache *c =
	        (struct hmr_cache *)((char *)sub -
	                             offsetof(struct hmr_cache, sub));
	uint64_t end;

	if (hmr__cache_child() || !hmr__range_end(start, len, &end) || !len)
		return;
	/* liburcu registering this thread: its own registry's memory. */
	if (hmr__cache_rcu_registering())
		return;
	hmr__cache_inval(c, start, end - 1, nested);
}

/* Deregister what nested events left; true when there was some. */
static bool on_drain(struct hmr_monitor_sub *sub)
{
	struct hmr_cache *c =
	        (struct hmr_cache *)((char *)sub -
	                             offsetof(struct hmr_cache, sub));
	struct hmr_cache_entry *l;

	/* A load first: most events leave nothing pending. */
	if (!atomic_load_explicit(&c->pending, memory_order_relaxed))
		return false;
	l = atomic_exchange(&c->pending, NULL);
	if (!l)
		return false;
	hmr__cache_dereg_list(c, l);
	return true;
}

void hmr__cache_sub_init(struct hmr_cache *c)
{
	c->sub.unmapped = on_unmapped;
	c->sub.drain = on_drain;
}

void hmr__cache_invalidate(struct hmr_cache *c, uintptr_t start, size_t len)
{
	uint64_t end;

	if (!len || hmr__cache_child())
		return;
	if (!hmr__range_end(start, len, &end))
		end = 0; /* Clipped at the top of the address space. */
	hmr__cache_inval(c, start, end - 1, false);
}
