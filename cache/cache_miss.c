/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cache_miss.c: a cache miss: register, merge, insert unless raced. */
#include <stdatomic.h>
#include <stdlib.h>

#include <hmr/hmr.h>

#include "base/alloc.h"
#include "cache/cache_impl.h"

static int reg(struct hmr_cache *c, struct hmr_cache_entry *e)
{
	int ret = c->attr.ops->reg(c->attr.ctx, e);

	if (!ret)
		atomic_fetch_add_explicit(&c->alive, 1, memory_order_relaxed);
	return ret;
}

/* Not cached: the caller's alone, deregistered and freed at its put (DEAD
 * from the start, never published). */
int hmr__cache_reg_uncached(struct hmr_cache *c, uint64_t start, uint64_t end,
                            uint64_t access, uint64_t id,
                            struct hmr_cache_entry **out)
{
	struct hmr_cache_entry *e =
	        hmr__cache_new_entry(c, start, end, access, id);
	int ret;

	if (!e)
		return -FI_ENOMEM;
	ret = reg(c, e);
	if (ret) {
		hmr__cache_free_entry(c, e);
		return ret;
	}
	atomic_store_explicit(&rec(e)->refs, REFS_DEAD | hmr__cache_refs(e, 1),
	                      memory_order_relaxed);
	atomic_fetch_add_explicit(&c->uncached, 1, memory_order_relaxed);
	*out = e;
	return 0;
}

/* Bytes [lo, hi] next to or inside [start, end): a merge's neighbours. */
static void neighbours(uint64_t start, uint64_t end, uint64_t *lo, uint64_t *hi)
{
	*lo = start ? start - 1 : 0;
	*hi = end; /* end <= 2^64 - 1: a range never ends at 2^64. */
}

/* merge_regions: grow [e->start, e->end) over the alive entries of the
 * same memory it overlaps or touches, their rights included (each was
 * requested).  Reads only; the insert removes them. */
static void merge_extent(struct hmr_cache *c, struct hmr_cache_entry *e)
{
	struct hmr_cache_entry *l;
	uint64_t lo, hi;

	neighbours(e->start, e->end, &lo, &hi);
	hmr__cache_read_lock();
	pthread_mutex_lock(&c->lock);
	for (l = hmr__cache_ix_scan(c, lo, hi, false, e->id); l;
	     l = est(l)->link) {
		if (atomic_load(&rec(l)->refs) & REFS_DEAD)
			continue;
		if (l->start < e->start)
			e->start = l->start;
		if (l->end > e->end)
			e->end = l->end;
		e->access |= l->access;
	}
	pthread_mutex_unlock(&c->lock);
	tsan_release(&hmr__cache_rcu_sync);
	rcu_read_unlock();
}

/* Under the lock: the old entries of the same memory inside the merged
 * range leave the index; the idle ones are returned to deregister. */
static struct hmr_cache_entry *merge_out(struct hmr_cache *c,
                                         struct hmr_cache_entry *e)
{
	struct hmr_cache_entry *l, *next, *idle = NULL;
	bool merged = false;

	for (l = hmr__cache_ix_scan(c, e->start, e->end - 1, false, e->id); l;
	     l = next) {
		next = est(l)->link;
		if (l->start < e->start || l->end > e->end)
			continue;
		if (hmr__cache_ix_retire(c, l, &idle))
			merged = true;
	}
	if (merged)
		atomic_fetch_add_explicit(&c->merges, 1, memory_order_relaxed);
	return idle;
}

/*
 * Under the lock: indexed entries of another memory identity that overlap
 * [e->start, e->end).  Two allocations never hold one address at once, so
 * the memory those registered is gone (a cuMemFree and a new allocation
 * at the same address; hmr sees no free event from a GPU runtime), and
 * their registrations pin the freed pages: they leave the index now, as
 * an invalidation would take them, and the idle ones are added to `idle`
 * to deregister.  Only device memory carries an identity (id != 0); the
 * end of host memory is the memory monitor's to report.
 */
static struct hmr_cache_entry *stale_out(struct hmr_cache *c,
                                         struct hmr_cache_entry *e,
                                         struct hmr_cache_entry *idle)
{
	struct hmr_cache_entry *l, *next;

	if (!e->id)
		return idle;
	for (l = hmr__cache_ix_scan(c, e->start, e->end - 1, true, 0); l;
	     l = next) {
		next = est(l)->link;
		if (l->id != e->id && hmr__cache_ix_retire(c, l, &idle))
			atomic_fetch_add_explicit(&c->invalidations, 1,
			                          memory_order_relaxed);
	}
	return idle;
}

static int watch(struct hmr_cache *c, struct hmr_cache_entry *e)
{
	if (!c->attr.monitored)
		return 0;
	if (hmr__monitor_watch(e->start, e->end - e->start))
		return -FI_EAGAIN;
	est(e)->flags |= EF_WATCHED;
	return 0;
}

int hmr__cache_miss(struct hmr_cache *c, uint64_t start, uint64_t end,
                    uint64_t access, uint64_t id, struct hmr_cache_entry **out)
{
	struct hmr_cache_entry *e, *idle = NULL;
	uint64_t seq0;
	bool cached;
	int ret;

	hmr__cache_count(&hmr__cache_slot(c)->misses);
	hmr__cache_reap(c, GRAVE_BATCH);
	hmr__cache_ix_grow(c);
	e = hmr__cache_new_entry(c, start, end, access, id);
	if (!e)
		return -FI_ENOMEM;
	/* An invalidation from here on that overlaps what we register
	 * makes it uncached (hmr__cache_raced, under the lock). */
	atomic_fetch_add(&c->inflight, 1);
	seq0 = atomic_load(&c->inval_seq);
	if (c->attr.merge_regions)
		merge_extent(c, e);
	ret = reg(c, e);
	if (ret)
		goto err_free;
	cached = !watch(c, e);
	/* Not HIT: inserted behind the hand, the first to go if never
	 * used again. */
	atomic_store_explicit(&rec(e)->refs, hmr__cache_refs(e, 1),
	                      memory_order_relaxed);
	hmr__cache_read_lock();
	pthread_mutex_lock(&c->lock);
	if (cached && hmr__cache_raced(c, seq0, e->start, e->end - 1))
		cached = false;
	if (cached) {
		if (c->attr.merge_regions)
			idle = merge_out(c, e);
		idle = stale_out(c, e, idle);
		hmr__cache_ix_add(c, e);
		idle = hmr__cache_ix_evict(c, idle);
	}
	atomic_fetch_sub(&c->inflight, 1);
	pthread_mutex_unlock(&c->lock);
	tsan_release(&hmr__cache_rcu_sync);
	rcu_read_unlock();
	if (!cached) {
		/* Handed out alone: deregistered at its last put. */
		atomic_fetch_or_explicit(&rec(e)->refs, REFS_DEAD,
		                         memory_order_relaxed);
		atomic_fetch_add_explicit(&c->uncached, 1,
		                          memory_order_relaxed);
	}
	hmr__cache_dereg_list(c, idle);
	*out = e;
	return 0;
err_free:
	atomic_fetch_sub(&c->inflight, 1);
	hmr__cache_free_entry(c, e);
	return ret;
}
