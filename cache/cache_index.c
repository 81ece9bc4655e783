/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cache_index.c: the cache's index: hash by granule, clock ring, scans. */
#include <stdatomic.h>

#include <stdlib.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "cache/cache_impl.h"

/*
 * An entry is found by any address inside it.  It is indexed at the
 * smallest order whose granule (2^shift bytes) is at least its length, by
 * one lfht node hashed on (granule of its start, order): it reaches at
 * most into the next granule.  A lookup for [start, end) probes, for each
 * order holding entries (the `orders` mask), the granule of `start` and
 * the one before.  The memory identity is not hashed: an invalidation
 * finds every identity's entries of a range by the same probes.
 */

static unsigned shift_of(unsigned order)
{
	return order == ORDERS - 1 ? 64 : ORDER_MIN_SHIFT + ORDER_STEP * order;
}

static uint64_t granule(uint64_t addr, unsigned order)
{
	unsigned s = shift_of(order);

	return s >= 64 ? 0 : addr >> s;
}

/* The smallest order whose granule holds `len` bytes (len > 0). */
static unsigned order_of(uint64_t len)
{
	unsigned bits = len <= 1 ? 0 : 64 - (unsigned)__builtin_clzll(len - 1);

	if (bits <= ORDER_MIN_SHIFT)
		return 0;
	bits = (bits - ORDER_MIN_SHIFT + ORDER_STEP - 1) / ORDER_STEP;
	return bits < ORDERS - 1 ? bits : ORDERS - 1;
}

static unsigned long key_hash(uint64_t gran, unsigned order)
{
	return (unsigned long)hmr__hash64(gran << 5 | order);
}

struct ix_key {
	uint64_t gran;
	unsigned order;
};

/* Reads the node's cache line only (start, end). */
static int match(struct cds_lfht_node *node, const void *key)
{
	const struct cache_ent *n = (const struct cache_ent *)node;
	const struct ix_key *k = key;

	tsan_acquire(n); /* Published by hmr__cache_ix_add. */
	return order_of(n->e.end - n->e.start) == k->order &&
	       granule(n->e.start, k->order) == k->gran;
}

static struct hmr_cache_entry *probe_hit(struct hmr_cache *c,
                                         const struct ix_key *k, uint64_t start,
                                         uint64_t end, uint64_t access,
                                         uint64_t id)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;
	struct hmr_cache_entry *e;

	cds_lfht_lookup(c->ht, key_hash(k->gran, k->order), match, k, &it);
	for (n = cds_lfht_iter_get_node(&it); n;
	     cds_lfht_next_duplicate(c->ht, match, k, &it),
	    n = cds_lfht_iter_get_node(&it)) {
		e = &((struct cache_ent *)n)->e;
		/* The WHOLE range, at least the access, the same memory,
		 * alive. */
		if (hmr__cache_try_ref(rec(e), e, &e->id, start, end, id,
		                       access))
			return e;
	}
	return NULL;
}

/* Order-0 entries starting in page `pg` that the hint set of the page
 * holds (the start page's set was read by the caller's fast path; this
 * serves the page before, when some order-0 entry crosses a page). */
static struct hmr_cache_entry *hint_hit(struct hmr_cache *c, uint64_t pg,
                                        uint64_t start, uint64_t end,
                                        uint64_t access, uint64_t id)
{
	struct cache_hints *h =
	        atomic_load_explicit(&c->hints, memory_order_acquire);
	_Atomic uint32_t *set = &h->slot[hint_set(h, pg << 12)];
	struct cache_rec *r;
	uint32_t v, idx;
	unsigned w;

	for (w = 0; w < HINT_WAYS; w++) {
		v = atomic_load_explicit(&set[w], memory_order_acquire);
		if (!v)
			continue;
		idx = (v & 0xffffff) - 1;
		r = slab_rec(c, idx);
		if (r->start >> 12 == pg &&
		    hmr__cache_try_ref(r, slab_ent(c, idx), slab_id(c, idx),
		                       start, end, id, access))
			return slab_ent(c, idx);
	}
	return NULL;
}

/* Whether order-0 entries of `pg`'s set may be in the lfht. */
static bool hint_set_lossy(struct hmr_cache *c, uint64_t pg)
{
	struct cache_hints *h =
	        atomic_load_explicit(&c->hints, memory_order_acquire);

	return atomic_load_explicit(hint_lossy(h, hint_set(h, pg << 12)),
	                            memory_order_relaxed);
}

struct hmr_cache_entry *hmr__cache_ix_hit(struct hmr_cache *c, uint64_t start,
                                          uint64_t end, uint64_t access,
                                          uint64_t id, uint32_t skip)
{
	uint32_t mask =
	        atomic_load_explicit(&c->orders, memory_order_acquire) & ~skip;
	uint32_t spans = atomic_load_explicit(&c->spans, memory_order_acquire);
	struct hmr_cache_entry *e;
	struct ix_key k;

	while (mask) {
		k.order = (unsigned)__builtin_ctz(mask);
		mask &= mask - 1;
		k.gran = granule(start, k.order);
		/* Order 0: start's set was read by the fast path; the lfht
		 * holds its order-0 entries only when the set is lossy. */
		if (k.order || hint_set_lossy(c, k.gran)) {
			e = probe_hit(c, &k, start, end, access, id);
			if (e)
				return e;
		}
		/* The granule before only if some entry crosses one. */
		if (!(spans & 1U << k.order) || !k.gran--)
			continue;
		if (!k.order) {
			e = hint_hit(c, k.gran, start, end, access, id);
			if (e)
				return e;
			if (!hint_set_lossy(c, k.gran))
				continue;
		}
		e = probe_hit(c, &k, start, end, access, id);
		if (e)
			return e;
	}
	return NULL;
}

static void ring_insert(struct hmr_cache *c, struct hmr_cache_entry *e)
{
	struct hmr_cache_entry *h = c->hand;

	if (!h) {
		est(e)->next = est(e)->prev = e;
		c->hand = e;
		return;
	}
	/* Just behind the hand: the last the hand reaches. */
	est(e)->next = h;
	est(e)->prev = est(h)->prev;
	est(est(h)->prev)->next = e;
	est(h)->prev = e;
}

static void ring_remove(struct hmr_cache *c, struct hmr_cache_entry *e)
{
	struct cache_est *s = est(e);

	if (s->next == e) {
		c->hand = NULL;
		return;
	}
	est(s->prev)->next = s->next;
	est(s->next)->prev = s->prev;
	if (c->hand == e)
		c->hand = s->next;
}

/* Into a free way of its set (cache lock; published with release:
 * readers then see the record's fields); false when the set is full or
 * the entry cannot be hinted (outside the slab, or past HINT_IDX_MAX).
 * A slot is never overwritten: an order-0 entry without one goes to the
 * lfht and makes its set lossy (hint_or_lfht). */
static bool hint_add(struct cache_hints *h, struct hmr_cache_entry *e)
{
	_Atomic uint32_t *set = &h->slot[hint_set(h, e->start)];
	unsigned w;

	if (est(e)->idx > HINT_IDX_MAX) /* SLAB_NONE too. */
		return false;
	for (w = 0; w < HINT_WAYS; w++)
		if (!atomic_load_explicit(&set[w], memory_order_relaxed))
			break;
	if (w == HINT_WAYS)
		return false;
	atomic_store_explicit(&set[w], hint_val(h, e->start, est(e)->idx),
	                      memory_order_release);
	return true;
}

static void lfht_add(struct hmr_cache *c, struct hmr_cache_entry *e,
                     unsigned order)
{
	est(e)->in_lfht = true;
	tsan_release(ent(e)); /* Readers find it through the lfht. */
	cds_lfht_add(c->ht, key_hash(granule(e->start, order), order),
	             &ent(e)->node);
}

/* An entry into table h: an order-0 entry in a way of its set, else in
 * the lfht with its set made lossy (before: a lookup that finds no slot
 * then probes the lfht); higher orders in the lfht (unless already
 * there), hinted when a way is free. */
static void hint_or_lfht(struct hmr_cache *c, struct cache_hints *h,
                         struct hmr_cache_entry *e, unsigned order)
{
	if (order) {
		if (!est(e)->in_lfht)
			lfht_add(c, e, order);
		hint_add(h, e);
		return;
	}
	if (est(e)->in_lfht) { /* A table growth: it stays in the lfht. */
		atomic_store_explicit(hint_lossy(h, hint_set(h, e->start)), 1,
		                      memory_order_relaxed);
		hint_add(h, e);
		return;
	}
	if (hint_add(h, e))
		return;
	atomic_store_explicit(hint_lossy(h, hint_set(h, e->start)), 1,
	                      memory_order_release);
	lfht_add(c, e, order);
}

/* Entries crossing into the next granule, per order: lookups probe the
 * granule before start's only for orders that have some. */
static void count_span(struct hmr_cache *c, struct hmr_cache_entry *e,
                       unsigned order, int delta)
{
	if (granule(e->start, order) == granule(e->end - 1, order))
		return;
	if (delta > 0 && !c->span_count[order]++)
		atomic_fetch_or_explicit(&c->spans, 1U << order,
		                         memory_order_release);
	if (delta < 0 && !--c->span_count[order])
		atomic_fetch_and_explicit(&c->spans, ~(1U << order),
		                          memory_order_relaxed);
}

void hmr__cache_ix_add(struct hmr_cache *c, struct hmr_cache_entry *e)
{
	unsigned order = order_of(e->end - e->start);

	est(e)->flags |= EF_PUBLISHED;
	rec(e)->start = e->start; /* What hint-table hits compare. */
	if (!alone(e))
		*slab_id(c, est(e)->idx) = e->id;
	cds_lfht_node_init(&ent(e)->node);
	est(e)->in_lfht = false;
	ring_insert(c, e);
	count_span(c, e, order, 1);
	if (!c->order_count[order]++)
		atomic_fetch_or_explicit(&c->orders, 1U << order,
		                         memory_order_release);
	atomic_store_explicit(&c->entries, atomic_load(&c->entries) + 1,
	                      memory_order_relaxed);
	atomic_store_explicit(&c->bytes,
	                      atomic_load(&c->bytes) + (e->end - e->start),
	                      memory_order_relaxed);
	hint_or_lfht(c, atomic_load(&c->hints), e, order);
}

void hmr__cache_ix_del(struct hmr_cache *c, struct hmr_cache_entry *e)
{
	struct cache_hints *h = atomic_load(&c->hints);
	_Atomic uint32_t *set = &h->slot[hint_set(h, e->start)];
	uint32_t v = hint_val(h, e->start, est(e)->idx);
	unsigned order = order_of(e->end - e->start), w;

	for (w = 0; est(e)->idx <= HINT_IDX_MAX && w < HINT_WAYS; w++)
		if (atomic_load_explicit(&set[w], memory_order_relaxed) == v)
			atomic_store_explicit(&set[w], 0, memory_order_relaxed);
	if (est(e)->in_lfht)
		cds_lfht_del(c->ht, &ent(e)->node);
	est(e)->in_lfht = false;
	ring_remove(c, e);
	count_span(c, e, order, -1);
	if (!--c->order_count[order])
		atomic_fetch_and_explicit(&c->orders, ~(1U << order),
		                          memory_order_relaxed);
	atomic_store_explicit(&c->entries, atomic_load(&c->entries) - 1,
	                      memory_order_relaxed);
	atomic_store_explicit(&c->bytes,
	                      atomic_load(&c->bytes) - (e->end - e->start),
	                      memory_order_relaxed);
}

bool hmr__cache_ix_retire(struct hmr_cache *c, struct hmr_cache_entry *l,
                          struct hmr_cache_entry **idle)
{
	uint64_t r = atomic_fetch_or(&rec(l)->refs, REFS_DEAD);

	if (r & REFS_DEAD)
		return false;
	hmr__cache_ix_del(c, l);
	if (!(r & REFS_COUNT)) {
		est(l)->link = *idle;
		*idle = l;
	}
	return true;
}

static bool wanted(struct hmr_cache_entry *e, uint64_t lo, uint64_t hi,
                   bool any_id, uint64_t id)
{
	return e->start <= hi && e->end - 1 >= lo && (any_id || e->id == id);
}

static void collect(struct hmr_cache_entry *e, uint64_t lo, uint64_t hi,
                    bool any_id, uint64_t id, struct hmr_cache_entry **list)
{
	if (wanted(e, lo, hi, any_id, id)) {
		est(e)->link = *list;
		*list = e;
	}
}

/* Granule g of one order through the lfht. */
static void probe_lfht(struct hmr_cache *c, unsigned order, uint64_t g,
                       uint64_t lo, uint64_t hi, bool any_id, uint64_t id,
                       struct hmr_cache_entry **list)
{
	struct ix_key k = {.gran = g, .order = order};
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;

	cds_lfht_lookup(c->ht, key_hash(g, order), match, &k, &it);
	for (n = cds_lfht_iter_get_node(&it); n;
	     cds_lfht_next_duplicate(c->ht, match, &k, &it),
	    n = cds_lfht_iter_get_node(&it))
		collect(&((struct cache_ent *)n)->e, lo, hi, any_id, id, list);
}

/* Page pg's order-0 entries: those of its hint set not in the lfht that
 * start in it (a set holds other pages' entries too, and entries of
 * higher orders, all in the lfht), then the lfht's when the set is
 * lossy.  Each entry once. */
static void probe_page(struct hmr_cache *c, uint64_t pg, uint64_t lo,
                       uint64_t hi, bool any_id, uint64_t id,
                       struct hmr_cache_entry **list)
{
	struct cache_hints *h = atomic_load(&c->hints);
	size_t s = hint_set(h, pg << 12);
	struct hmr_cache_entry *e;
	uint32_t v;
	unsigned w;

	for (w = 0; w < HINT_WAYS; w++) {
		v = atomic_load_explicit(&h->slot[s + w], memory_order_relaxed);
		if (!v)
			continue;
		e = slab_ent(c, (v & 0xffffff) - 1);
		if (!est(e)->in_lfht && e->start >> 12 == pg)
			collect(e, lo, hi, any_id, id, list);
	}
	if (atomic_load_explicit(hint_lossy(h, s), memory_order_relaxed))
		probe_lfht(c, 0, pg, lo, hi, any_id, id, list);
}

/* The granules [g0 - 1, g1] of one order probed (an entry starting in
 * the granule before lo's may reach it); false when walking the ring is
 * cheaper. */
static bool probe_order(struct hmr_cache *c, unsigned order, uint64_t lo,
                        uint64_t hi, bool any_id, uint64_t id,
                        struct hmr_cache_entry **list)
{
	uint64_t g, g0 = granule(lo, order), g1 = granule(hi, order);

	if (g1 - g0 >= 2 * (uint64_t)c->order_count[order] + 2)
		return false;
	if (g0 && c->span_count[order])
		g0--;
	for (g = g0;; g++) {
		if (order)
			probe_lfht(c, order, g, lo, hi, any_id, id, list);
		else
			probe_page(c, g, lo, hi, any_id, id, list);
		if (g == g1)
			break;
	}
	return true;
}

struct hmr_cache_entry *hmr__cache_ix_scan(struct hmr_cache *c, uint64_t lo,
                                           uint64_t hi, bool any_id,
                                           uint64_t id)
{
	struct hmr_cache_entry *list = NULL, *e, *next;
	uint32_t mask = atomic_load_explicit(&c->orders, memory_order_relaxed);
	unsigned o;

	while (mask) {
		o = (unsigned)__builtin_ctz(mask);
		mask &= mask - 1;
		if (!probe_order(c, o, lo, hi, any_id, id, &list))
			goto walk;
	}
	return list;
walk:
	/* A range wider than its entries: one pass over them all. */
	list = NULL;
	e = c->hand;
	do {
		next = est(e)->next;
		if (wanted(e, lo, hi, any_id, id)) {
			est(e)->link = list;
			list = e;
		}
		e = next;
	} while (e != c->hand);
	return list;
}

/* An idle entry made DEAD (fails when a hit took it meanwhile). */
static bool kill_idle(struct hmr_cache_entry *e)
{
	uint64_t r = atomic_load(&rec(e)->refs);

	while (!(r & (REFS_COUNT | REFS_DEAD)))
		if (atomic_compare_exchange_weak(&rec(e)->refs, &r,
		                                 (r & ~REFS_HIT) | REFS_DEAD))
			return true;
	return false;
}

struct hmr_cache_entry *hmr__cache_ix_evict(struct hmr_cache *c,
                                            struct hmr_cache_entry *list)
{
	size_t budget = 2 * atomic_load(&c->entries) + 1;
	struct hmr_cache_entry *e;

	/* Second-chance clock: a hit set REFS_HIT; the hand clears it and
	 * passes, and takes the first idle entry not hit since. */
	while (c->hand && budget-- && hmr__cache_over(c)) {
		e = c->hand;
		c->hand = est(e)->next;
		/* Hit since the hand passed: cleared, passed again. */
		if (atomic_fetch_and(&rec(e)->refs, ~REFS_HIT) &
		    (REFS_HIT | REFS_COUNT | REFS_DEAD))
			continue;
		if (!kill_idle(e))
			continue;
		hmr__cache_ix_del(c, e);
		est(e)->link = list;
		list = e;
		atomic_fetch_add_explicit(&c->evictions, 1,
		                          memory_order_relaxed);
	}
	return list;
}

struct hmr_cache_entry *hmr__cache_ix_flush(struct hmr_cache *c)
{
	struct hmr_cache_entry *list = NULL, *e, *next;
	size_t n = atomic_load(&c->entries);

	for (e = c->hand; n--; e = next) {
		next = est(e)->next;
		if (!kill_idle(e))
			continue;
		hmr__cache_ix_del(c, e);
		est(e)->link = list;
		list = e;
	}
	return list;
}

size_t hmr__cache_ix_idle(struct hmr_cache *c)
{
	size_t n = atomic_load(&c->entries), idle = 0;
	struct hmr_cache_entry *e;

	for (e = c->hand; n--; e = est(e)->next)
		idle += !(atomic_load_explicit(&rec(e)->refs,
		                               memory_order_relaxed) &
		          REFS_COUNT);
	return idle;
}

struct cache_hints *hmr__cache_hints_new(unsigned shift)
{
	/* The slots, then a lossy byte per set. */
	struct cache_hints *h = hmr__aligned_calloc(
	        64, sizeof(*h) + ((HINT_WAYS * sizeof(h->slot[0]) + 1)
	                          << (64 - shift)));

	if (h)
		h->shift = shift;
	return h;
}

/* A hint table 4x as large, filled under the lock, the old one freed
 * after a grace period.  No table (out of memory): the old one stays. */
static void grow_hints(struct hmr_cache *c)
{
	struct cache_hints *h = atomic_load(&c->hints), *nh;
	struct hmr_cache_entry *e;
	size_t n;

	/* Half full at most: a set then rarely overflows. */
	if (atomic_load_explicit(&c->entries, memory_order_relaxed) <=
	            ((size_t)HINT_WAYS << (64 - h->shift)) / 2 ||
	    h->shift <= 34)
		return;
	nh = hmr__cache_hints_new(h->shift - 1);
	if (!nh)
		return;
	hmr__cache_read_lock(); /* An lfht add (a full set) needs it. */
	pthread_mutex_lock(&c->lock);
	if (atomic_load(&c->hints) != h) { /* Another miss grew it. */
		pthread_mutex_unlock(&c->lock);
		rcu_read_unlock();
		free(nh);
		return;
	}
	n = atomic_load(&c->entries);
	for (e = c->hand; n--; e = est(e)->next)
		hint_or_lfht(c, nh, e, order_of(e->end - e->start));
	atomic_store_explicit(&c->hints, nh, memory_order_release);
	pthread_mutex_unlock(&c->lock);
	tsan_release(&hmr__cache_rcu_sync);
	rcu_read_unlock();
	synchronize_rcu();
	tsan_acquire(&hmr__cache_rcu_sync);
	free(h);
}

void hmr__cache_ix_grow(struct hmr_cache *c)
{
	unsigned long size =
	        atomic_load_explicit(&c->ht_size, memory_order_relaxed);

	grow_hints(c);
	/* No automatic resize: liburcu's allocates from inside adds and
	 * deletes, which run under the cache lock and in monitor events.
	 * Grown here, on a miss, outside every lock. */
	if (atomic_load_explicit(&c->entries, memory_order_relaxed) <= size)
		return;
	if (!atomic_compare_exchange_strong(&c->ht_size, &size, size * 4))
		return;
	cds_lfht_resize(c->ht, size * 4);
}
