/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cache_slab.c: the cache's entries and their hit records, by index. */
#include <stdatomic.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "cache/cache_impl.h"

/*
 * Entries live in chunks: 2^SLAB_SHIFT hit records (16 bytes each, the
 * dense array hits read), their memory ids (8 bytes), then as many
 * entries (128 bytes, read by lfht lookups and the owner), at a multiple
 * of SLAB_ALIGN (so a put finds the record from the entry's address).  A
 * chunk is mapped pages (hmr__map_aligned: a heap block would need 4 MiB
 * of slack, cleared by calloc once the heap reuses it), touched only as
 * its indices are handed out, SLAB_POPULATE indices' pages at a time (one
 * system call, not a fault a page: base/alloc.h says why); a chunk that
 * cannot be had makes the miss fail (-FI_ENOMEM).  A cache that may hold
 * more entries than a chunk's first huge page has room for asks for huge
 * pages (the bench's caches, FI_MR_CACHE_MAX_COUNT raised); the default
 * of 1,024 entries would leave most of 2 MiB unused, so it does not.  Freed
 * entries go back on a list (after their grace period) and are reused; chunks
 * are freed at close.
 *
 * A thread takes the records of a line together when it can (four, the
 * rest kept in its counter slot for its next misses), so that two
 * threads' hits do not write one line.  An entry outside the
 * slab (a fork child, which must not take spare_lock; a full slab, 2^24
 * entries) is allocated alone and never hinted.
 */

/* Indices whose pages are populated together: 64 KiB of entries. */
#define SLAB_POPULATE 512U
/* Entries in a chunk's first 2 MiB, after its records and ids. */
#define SLAB_HUGE_ENTRIES                                                      \
	((((uintptr_t)2 << 20) - SLAB_RECS - SLAB_IDS) /                       \
	 sizeof(struct cache_ent))

_Static_assert(((1U << SLAB_SHIFT) % SLAB_POPULATE) == 0,
               "populated runs never cross a chunk");

/* A chunk more (spare_lock held); false when none can be had. */
static bool grow(struct hmr_cache *c)
{
	unsigned k = c->fresh >> SLAB_SHIFT;

	c->chunk[k] = hmr__map_aligned(SLAB_BYTES, SLAB_ALIGN);
	if (c->chunk[k] && (k || c->attr.max_count >= SLAB_HUGE_ENTRIES))
		hmr__map_huge(c->chunk[k], SLAB_BYTES);
	return c->chunk[k] != NULL;
}

/* The pages of the next SLAB_POPULATE indices from idx, in each of the
 * chunk's three arrays (spare_lock held; idx a multiple of it). */
static void populate(struct hmr_cache *c, uint32_t idx)
{
	hmr__map_populate(slab_rec(c, idx),
	                  SLAB_POPULATE * sizeof(struct cache_rec));
	hmr__map_populate(slab_id(c, idx), SLAB_POPULATE * sizeof(uint64_t));
	hmr__map_populate(ent(slab_ent(c, idx)),
	                  SLAB_POPULATE * sizeof(struct cache_ent));
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
	if (!(c->fresh % SLAB_POPULATE))
		populate(c, c->fresh);
	return init(c, c->fresh++);
}

/* Whether index i is the first of its record line. */
static bool line_start(uint32_t i)
{
	return !(i % (64 / sizeof(struct cache_rec)));
}

/* A free slab entry, and in *more how many of the indices after it, in
 * its record line, were taken with it for the thread's next misses. */
static struct hmr_cache_entry *take(struct hmr_cache *c, uint32_t *more,
                                    bool *full)
{
	struct hmr_cache_entry *e;
	uint32_t i;

	*more = 0;
	pthread_mutex_lock(&c->spare_lock);
	e = c->spare;
	if (e) {
		c->spare = est(e)->link;
		i = est(e)->idx + 1;
		while (c->spare && !line_start(i) && est(c->spare)->idx == i) {
			c->spare = est(c->spare)->link;
			i++, (*more)++;
		}
	} else {
		e = take_fresh(c, full);
		/* The rest of a fresh line: never a new chunk (a chunk
		 * begins a line). */
		while (e && !line_start(c->fresh) && take_fresh(c, full))
			(*more)++;
	}
	pthread_mutex_unlock(&c->spare_lock);
	return e;
}

static uint64_t kept(uint32_t first, uint32_t n)
{
	return n ? (uint64_t)n << 32 | (first + 1) : 0;
}

/* Keep [first, first + n) for this thread's next misses; what the slot
 * held (another thread of a shared slot kept some meanwhile) goes back
 * to the slab. */
static void keep(struct hmr_cache *c, struct cache_hit_slot *s, uint32_t first,
                 uint32_t n)
{
	uint64_t k = atomic_exchange_explicit(&s->keep, kept(first, n),
	                                      memory_order_relaxed);
	uint32_t i;

	for (i = 0; k && i < k >> 32; i++)
		hmr__cache_free_entry(c, slab_ent(c, (uint32_t)k - 1 + i));
}

/* A slab entry for this thread: one it kept, or taken. */
static struct hmr_cache_entry *slab_new(struct hmr_cache *c, bool *full)
{
	struct cache_hit_slot *s = hmr__cache_slot(c);
	uint64_t k =
	        atomic_exchange_explicit(&s->keep, 0, memory_order_relaxed);
	struct hmr_cache_entry *e;
	uint32_t more, first = (uint32_t)k - 1;

	if (k) {
		e = slab_ent(c, first);
		if (k >> 32 > 1)
			keep(c, s, first + 1, (uint32_t)(k >> 32) - 1);
		return e;
	}
	e = take(c, &more, full);
	if (e && more)
		keep(c, s, est(e)->idx + 1, more);
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

	for (k = 0; k < SLAB_CHUNKS && c->chunk[k]; k++)
		hmr__unmap_pages(c->chunk[k], SLAB_BYTES);
}
