/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cache_index.c: the cache's index: hash by granule, clock ring, scans. */
#include <stdatomic.h>

#include "base/hash.h"
#include "cache/cache_impl.h"

/*
 * An entry is found by any address inside it.  It is indexed at the
 * smallest order whose granule (2^shift bytes) is at least its length, so
 * it touches one or two granules, and it has one lfht node per granule,
 * hashed on (granule number, order).  A lookup for [start, end) probes,
 * for each order holding entries (the `orders` mask), the granule of
 * `start`: any entry covering start has a node there.  The memory
 * identity is not hashed: an invalidation finds every identity's entries
 * of a range by the same probes.
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

static unsigned order_of(uint64_t len)
{
	unsigned o;

	for (o = 0; o < ORDERS - 1; o++)
		if (len <= 1ULL << shift_of(o))
			return o;
	return ORDERS - 1;
}

static unsigned long key_hash(uint64_t gran, unsigned order)
{
	return (unsigned long)hmr__hash64(gran << 5 | order);
}

struct ix_key {
	uint64_t gran;
	unsigned order;
};

/* The granule node `in` of `e` stands for. */
static uint64_t node_granule(const struct cache_inode *in)
{
	struct hmr_cache_entry *e = in->e;
	struct cache_est *s = est(e);

	return granule(in == &s->in[0] ? e->start : e->end - 1, s->order);
}

static int match(struct cds_lfht_node *node, const void *key)
{
	const struct cache_inode *in = (const struct cache_inode *)node;
	const struct ix_key *k = key;

	tsan_acquire(in); /* Published by hmr__cache_ix_add. */
	return est(in->e)->order == k->order && node_granule(in) == k->gran;
}

static bool try_ref(struct hmr_cache_entry *e)
{
	uint64_t r = atomic_load_explicit(&e->refs, memory_order_relaxed);

	do {
		if (r & REFS_DEAD)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&e->refs, &r, r + 1,
	                                                memory_order_acquire,
	                                                memory_order_relaxed));
	return true;
}

struct hmr_cache_entry *hmr__cache_ix_hit(struct hmr_cache *c, uint64_t start,
                                          uint64_t end, uint64_t access,
                                          uint64_t id)
{
	uint32_t mask = atomic_load_explicit(&c->orders, memory_order_acquire);
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;
	struct hmr_cache_entry *e;
	struct ix_key k;

	while (mask) {
		k.order = (unsigned)__builtin_ctz(mask);
		mask &= mask - 1;
		k.gran = granule(start, k.order);
		cds_lfht_lookup(c->ht, key_hash(k.gran, k.order), match, &k,
		                &it);
		for (n = cds_lfht_iter_get_node(&it); n;
		     cds_lfht_next_duplicate(c->ht, match, &k, &it),
		    n = cds_lfht_iter_get_node(&it)) {
			e = ((struct cache_inode *)n)->e;
			/* The WHOLE range, at least the access, the same
			 * memory, alive. */
			if (e->start <= start && end <= e->end && e->id == id &&
			    (e->access & access) == access && try_ref(e))
				return e;
		}
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

void hmr__cache_ix_add(struct hmr_cache *c, struct hmr_cache_entry *e)
{
	struct cache_est *s = est(e);
	uint64_t g0, g1;
	unsigned i;

	s->order = (uint8_t)order_of(e->end - e->start);
	g0 = granule(e->start, s->order);
	g1 = granule(e->end - 1, s->order);
	s->nodes = g0 == g1 ? 1 : 2;
	s->flags |= EF_PUBLISHED;
	for (i = 0; i < s->nodes; i++) {
		s->in[i].e = e;
		cds_lfht_node_init(&s->in[i].node);
	}
	ring_insert(c, e);
	if (!c->order_count[s->order]++)
		atomic_fetch_or_explicit(&c->orders, 1U << s->order,
		                         memory_order_release);
	atomic_store_explicit(&c->entries, atomic_load(&c->entries) + 1,
	                      memory_order_relaxed);
	atomic_store_explicit(&c->bytes,
	                      atomic_load(&c->bytes) + (e->end - e->start),
	                      memory_order_relaxed);
	atomic_store_explicit(&c->nodes, atomic_load(&c->nodes) + s->nodes,
	                      memory_order_relaxed);
	/* Readers find it through the lfht, from either node. */
	tsan_release(&s->in[0]);
	tsan_release(&s->in[1]);
	cds_lfht_add(c->ht, key_hash(g0, s->order), &s->in[0].node);
	if (s->nodes == 2)
		cds_lfht_add(c->ht, key_hash(g1, s->order), &s->in[1].node);
}

void hmr__cache_ix_del(struct hmr_cache *c, struct hmr_cache_entry *e)
{
	struct cache_est *s = est(e);
	unsigned i;

	for (i = 0; i < s->nodes; i++)
		cds_lfht_del(c->ht, &s->in[i].node);
	ring_remove(c, e);
	if (!--c->order_count[s->order])
		atomic_fetch_and_explicit(&c->orders, ~(1U << s->order),
		                          memory_order_relaxed);
	atomic_store_explicit(&c->entries, atomic_load(&c->entries) - 1,
	                      memory_order_relaxed);
	atomic_store_explicit(&c->bytes,
	                      atomic_load(&c->bytes) - (e->end - e->start),
	                      memory_order_relaxed);
	atomic_store_explicit(&c->nodes, atomic_load(&c->nodes) - s->nodes,
	                      memory_order_relaxed);
}

static bool wanted(struct hmr_cache_entry *e, uint64_t lo, uint64_t hi,
                   bool any_id, uint64_t id)
{
	return e->start <= hi && e->end - 1 >= lo && (any_id || e->id == id);
}

/* The granules [g0, g1] of one order, probed; false when walking the
 * ring is cheaper. */
static bool probe_order(struct hmr_cache *c, unsigned order, uint64_t lo,
                        uint64_t hi, bool any_id, uint64_t id,
                        struct hmr_cache_entry **list)
{
	uint64_t g, g0 = granule(lo, order), g1 = granule(hi, order);
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;
	struct cache_inode *in;
	struct ix_key k;

	if (g1 - g0 >= 2 * (uint64_t)c->order_count[order] + 2)
		return false;
	k.order = order;
	for (g = g0;; g++) {
		k.gran = g;
		cds_lfht_lookup(c->ht, key_hash(g, order), match, &k, &it);
		for (n = cds_lfht_iter_get_node(&it); n;
		     cds_lfht_next_duplicate(c->ht, match, &k, &it),
		    n = cds_lfht_iter_get_node(&it)) {
			in = (struct cache_inode *)n;
			/* Met twice when both its granules are probed:
			 * taken at the first. */
			if (in == &est(in->e)->in[1] &&
			    granule(in->e->start, order) >= g0)
				continue;
			if (wanted(in->e, lo, hi, any_id, id)) {
				est(in->e)->link = *list;
				*list = in->e;
			}
		}
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

bool hmr__cache_over(struct hmr_cache *c)
{
	size_t max_size = c->attr.max_size;

	return atomic_load_explicit(&c->entries, memory_order_relaxed) >
	               c->attr.max_count ||
	       (max_size &&
	        atomic_load_explicit(&c->bytes, memory_order_relaxed) >
	                max_size);
}

/* An idle entry made DEAD (fails when a hit took it meanwhile). */
static bool kill_idle(struct hmr_cache_entry *e)
{
	uint64_t zero = 0;

	return atomic_compare_exchange_strong(&e->refs, &zero, REFS_DEAD);
}

struct hmr_cache_entry *hmr__cache_ix_evict(struct hmr_cache *c,
                                            struct hmr_cache_entry *list)
{
	size_t budget = 2 * atomic_load(&c->entries) + 1;
	struct hmr_cache_entry *e;

	/* Second-chance clock: a hit set `referenced`; the hand clears it
	 * and passes, and takes the first idle entry not hit since. */
	while (c->hand && budget-- && hmr__cache_over(c)) {
		e = c->hand;
		c->hand = est(e)->next;
		if (atomic_load_explicit(&e->refs, memory_order_relaxed))
			continue;
		if (atomic_load_explicit(&e->referenced,
		                         memory_order_relaxed)) {
			atomic_store_explicit(&e->referenced, false,
			                      memory_order_relaxed);
			continue;
		}
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
		idle += !atomic_load_explicit(&e->refs, memory_order_relaxed);
	return idle;
}

void hmr__cache_ix_grow(struct hmr_cache *c)
{
	unsigned long size =
	        atomic_load_explicit(&c->ht_size, memory_order_relaxed);

	/* No automatic resize: liburcu's allocates from inside adds and
	 * deletes, which run under the cache lock and in monitor events.
	 * Grown here, on a miss, outside every lock. */
	if (atomic_load_explicit(&c->nodes, memory_order_relaxed) <= 2 * size)
		return;
	if (!atomic_compare_exchange_strong(&c->ht_size, &size, size * 4))
		return;
	cds_lfht_resize(c->ht, size * 4);
}
