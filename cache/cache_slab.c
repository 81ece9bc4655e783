/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cache_slab.c: the cache's entries and their hit records, by index. */
#include <stdatomic.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "cache/cache_impl.h"

/*
 * Entries live in chunks: 2^SLAB_SHIFT hit records (32 bytes each, the
 * dense array hits read), then as many entries (128 bytes, read by lfht
 * lookups and the owner).  A chunk is one calloc: its pages are touched
 * only as its indices are handed out; a chunk that cannot be had makes
 * the miss fail (-FI_ENOMEM).  Freed entries go back on a list
 * (after their grace period) and are reused; chunks are freed at close.
 *
 * A thread takes records two at a time when it can (the two halves of
 * one line, the second kept in its counter slot for its next miss), so
 * that two threads' hits do not write one line.  An entry outside the
 * slab (a fork child, which must not take spare_lock; a full slab, 2^24
 * entries) is allocated alone and never hinted.
 */

/* A chunk more (spare_lock held); false when none can be had. */
static bool grow(struct hmr_cache *c)
{
	unsigned k = c->fresh >> SLAB_SHIFT;
	void *raw;

	/* Aligned by hand: the alignment's slack is address space only
	 * (a fresh calloc of this size is mapped, not written). */
	raw = hmr__calloc(1, SLAB_BYTES + SLAB_ALIGN);
	if (!raw)
		return false;
	c->chunk_raw[k] = raw;
	c->chunk[k] = (struct cache_rec *)(((uintptr_t)raw + SLAB_ALIGN - 1) &
	                                   ~(SLAB_ALIGN - 1));
	return true;
}

/* Index `idx`'s entry, cleared, tied to its record (spare_lock held). */
static struct hmr_cache_entry *init(struct hmr_cache *c, uint32_t idx)
{
	struct hmr_cache_entry *e = slab_ent(c, idx);

	est(e)->rec = slab_rec(c, idx);
	est(e)->idx = idx;
	return e;
}

/* A fresh index's entry (spare_lock held), or NULL: out of memory, or
 * the slab is full (`full` set). */
static struct hmr_cache_entry *take_fresh(struct hmr_cache *c, bool *full)
{
	if (!(c->fresh & ((1U << SLAB_SHIFT) - 1))) {
		*full = c->fresh >> SLAB_SHIFT >= SLAB_CHUNKS;
		if (*full || !grow(c))
			return NULL;
	}
	return init(c, c->fresh++);
}

/* A free slab entry and, when its line's other record is free too, that
 * one for the thread's next miss. */
static struct hmr_cache_entry *take(struct hmr_cache *c,
                                    struct hmr_cache_entry **mate, bool *full)
{
	struct hmr_cache_entry *e;

	*mate = NULL;
	pthread_mutex_lock(&c->spare_lock);
	e = c->spare;
	if (e) {
		c->spare = est(e)->link;
		if (c->spare && est(c->spare)->idx == (est(e)->idx ^ 1)) {
			*mate = c->spare;
			c->spare = est(*mate)->link;
		}
	} else {
		e = take_fresh(c, full);
		if (e && (c->fresh & 1))
			*mate = take_fresh(c, full);
	}
	pthread_mutex_unlock(&c->spare_lock);
	return e;
}

/* A slab entry for this thread: the one it kept, or taken. */
static struct hmr_cache_entry *slab_new(struct hmr_cache *c, bool *full)
{
	struct cache_hit_slot *s = hmr__cache_slot(c);
	uint32_t k =
	        atomic_exchange_explicit(&s->keep, 0, memory_order_relaxed);
	struct hmr_cache_entry *e, *mate;

	if (k) {
		e = slab_ent(c, k - 1);
	} else {
		e = take(c, &mate, full);
		if (!e)
			return NULL;
		if (mate)
			k = atomic_exchange_explicit(&s->keep,
			                             est(mate)->idx + 1,
			                             memory_order_relaxed);
		if (k) /* Another thread of a shared slot kept one meanwhile. */
			hmr__cache_free_entry(c, slab_ent(c, k - 1));
	}
	return e;
}

/* An entry and its record in one allocation, outside the slab: 64 bytes
 * off a 128-byte boundary, which is how rec() tells it from a slab
 * entry. */
static struct hmr_cache_entry *lone_new(void)
{
	size_t size = sizeof(struct cache_ent) + sizeof(struct cache_rec);
	void *raw = hmr__calloc(1, size + 191);
	struct cache_ent *n;

	if (!raw)
		return NULL;
	n = (struct cache_ent *)((((uintptr_t)raw + 127) & ~(uintptr_t)127) +
	                         64);
	est(&n->e)->raw = raw;
	est(&n->e)->rec = (struct cache_rec *)(void *)(n + 1);
	est(&n->e)->idx = SLAB_NONE;
	est(&n->e)->flags = EF_LONE;
	return &n->e;
}

struct hmr_cache_entry *hmr__cache_new_entry(struct hmr_cache *c,
                                             uint64_t start, uint64_t end,
                                             uint64_t access, uint64_t id)
{
	struct hmr_cache_entry *e = NULL;
	struct cache_est *s;
	bool full = false;

	/* A fork child leaves spare_lock alone: a parent thread may have
	 * held it at fork. */
	if (!hmr__cache_child())
		e = slab_new(c, &full);
	if (!e && (full || hmr__cache_child()))
		e = lone_new();
	if (!e)
		return NULL;
	/* Field by field, not a memset of the whole: the slab's or the
	 * allocation's ties (rec, idx, raw, EF_LONE) kept. */
	ent(e)->node = (struct cds_lfht_node){0};
	e->start = start;
	e->end = end;
	e->access = access;
	e->id = id;
	e->handle = NULL;
	s = est(e);
	s->prev = s->next = s->link = NULL;
	s->flags &= EF_LONE;
	s->in_lfht = false;
	return e;
}

void hmr__cache_free_entry(struct hmr_cache *c, struct hmr_cache_entry *e)
{
	if (est(e)->flags & EF_LONE) {
		free(est(e)->raw);
		return;
	}
	if (hmr__cache_child())
		return; /* The parent's slab, or its lock: left as they are. */
	pthread_mutex_lock(&c->spare_lock);
	est(e)->link = c->spare;
	c->spare = e;
	pthread_mutex_unlock(&c->spare_lock);
}

void hmr__cache_slab_free(struct hmr_cache *c)
{
	unsigned k;

	for (k = 0; k < SLAB_CHUNKS && c->chunk_raw[k]; k++)
		free(c->chunk_raw[k]);
}
