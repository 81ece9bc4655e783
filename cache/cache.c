/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cache.c: the registration cache's life, its gets and puts, fork. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <hmr/hmr.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/range.h"
#include "cache/cache_impl.h"

char hmr__cache_rcu_sync;

/* The open caches, for hmr__cache_invalidate_all and _flush_all.  A
 * rwlock: the walkers read-lock it and may nest (a dereg that frees may
 * reach hmr_mr_cache_invalidate); open and close write-lock it. */
static pthread_rwlock_t open_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct hmr_cache *open_caches; /* (open_lock) */

/* Set in a fork child: every cache bypasses (the parent's registrations
 * are the parent's; its locks may be held by threads that do not exist
 * here).  Ours rather than hmr__monitor_forked(): unmonitored caches too,
 * and one load on the hit path. */
atomic_bool hmr__cache_forked;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* Which thread's hit counter (0: not chosen yet). */
static __thread unsigned hit_slot __attribute__((tls_model("initial-exec")));
static atomic_uint next_slot;

static void child_after_fork(void)
{
	atomic_store(&hmr__cache_forked, true);
}

static void install_atfork(void)
{
	pthread_atfork(NULL, NULL, child_after_fork);
}

int hmr__cache_open(const struct hmr_cache_attr *attr, struct hmr_cache **out)
{
	struct hmr_cache *c;

	if (!attr || !attr->ops || !attr->ops->reg || !attr->ops->dereg)
		return -FI_EINVAL;
	pthread_once(&atfork_once, install_atfork);
	c = hmr__aligned_calloc(alignof(struct hmr_cache), sizeof(*c));
	if (!c)
		return -FI_ENOMEM;
	c->attr = *attr;
	snprintf(c->name, sizeof(c->name), "%s", attr->name ? attr->name : "");
	c->attr.name = c->name;
	c->ht_size = 1024;
	c->hints = hmr__cache_hints_new(64 - 7); /* 1,024 slots. */
	if (!c->hints)
		goto err_free;
	/* No CDS_LFHT_AUTO_RESIZE: see hmr__cache_ix_grow. */
	c->ht = cds_lfht_new_flavor(c->ht_size, c->ht_size, 0, 0,
	                            hmr__cache_rcu_flavor(), NULL);
	if (!c->ht)
		goto err_free_hints;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->spare_lock, NULL);
	hmr__cache_sub_init(c);
	c->usable = attr->max_count > 0;
	if (!c->usable)
		snprintf(c->why, sizeof(c->why), "max_count is 0");
	if (c->usable && attr->monitored) {
		if (hmr__monitor_start(c->why, sizeof(c->why))) {
			c->usable = false;
			hmr_warn(
			        "cache %s: not caching: no memory monitor (%s)",
			        c->name, c->why);
		} else {
			hmr__monitor_subscribe(&c->sub);
			c->subscribed = true;
			c->check_intact =
			        hmr__monitor_kind() == HMR_MONITOR_MEMHOOKS;
		}
	}
	pthread_rwlock_wrlock(&open_lock);
	c->next_open = open_caches;
	open_caches = c;
	pthread_rwlock_unlock(&open_lock);
	*out = c;
	return 0;
err_free_hints:
	free(c->hints);
err_free:
	free(c);
	return -FI_ENOMEM;
}

bool hmr__cache_active(struct hmr_cache *c, char *why, size_t why_len)
{
	const char *r = NULL;

	if (!c->usable)
		r = c->why;
	else if (hmr__cache_child() || hmr__monitor_forked())
		r = "a fork child: the parent's registrations are not used";
	else if (c->attr.monitored && !hmr__monitor_intact())
		r = "the memory monitor's hooks were overwritten by another "
		    "library";
	if (why && why_len)
		snprintf(why, why_len, "%s", r ? r : "");
	return !r;
}

static bool caching(struct hmr_cache *c)
{
	return c->usable && !hmr__cache_child() &&
	       (!c->check_intact || hmr__monitor_intact_quick() ||
	        hmr__monitor_intact());
}

struct cache_hit_slot *hmr__cache_slot(struct hmr_cache *c)
{
	unsigned slot = hit_slot;

	if (!slot)
		hit_slot = slot = atomic_fetch_add(&next_slot, 1) + 1;
	/* Threads beyond HIT_SLOTS share one, counting approximately. */
	return &c->hit[(slot - 1) % HIT_SLOTS];
}

/*
 * The ways of a hint set whose tag matches, as a bit mask, without a
 * branch per way (with random buffers, which way holds the hit is random:
 * a branch on each would be mispredicted).  SSE2: the set's 32 bytes in
 * two loads; aligned 16-byte loads read each 4-byte slot whole, and the
 * records' loads depend on the slot read (x86 keeps loads in order).
 * ThreadSanitizer checks the portable loop, whose loads it sees.
 */
#if defined(__SSE2__) && !defined(HMR_CACHE_TSAN)
static inline unsigned hint_ways(_Atomic uint32_t *set, uint32_t tag)
{
	const __m128i *p = (const __m128i *)(const void *)set;
	__m128i t = _mm_set1_epi32((int)tag), z = _mm_setzero_si128();
	__m128i a = _mm_load_si128(p), b = _mm_load_si128(p + 1);

	a = _mm_andnot_si128(_mm_cmpeq_epi32(a, z),
	                     _mm_cmpeq_epi32(_mm_srli_epi32(a, 24), t));
	b = _mm_andnot_si128(_mm_cmpeq_epi32(b, z),
	                     _mm_cmpeq_epi32(_mm_srli_epi32(b, 24), t));
	return (unsigned)_mm_movemask_ps(_mm_castsi128_ps(a)) |
	       (unsigned)_mm_movemask_ps(_mm_castsi128_ps(b)) << 4;
}
#else
static inline unsigned hint_ways(_Atomic uint32_t *set, uint32_t tag)
{
	unsigned w, m = 0;
	uint32_t v;

	for (w = 0; w < HINT_WAYS; w++) {
		v = atomic_load_explicit(&set[w], memory_order_relaxed);
		m |= (unsigned)(v >> 24 == tag && v) << w;
	}
	return m;
}
#endif

/* An entry of the hint set of start's page, if one is the hit: the
 * set's line and the record's, never the entry's.  Else *skip says
 * whether the set held every order-0 entry the lfht could find (see
 * struct cache_hints). */
static inline struct hmr_cache_entry *hint(struct hmr_cache *c, uint64_t start,
                                           uint64_t end, uint64_t access,
                                           uint64_t id, uint32_t *skip)
{
	struct cache_hints *h =
	        atomic_load_explicit(&c->hints, memory_order_acquire);
	_Atomic uint32_t *set = &h->slot[hint_set(h, start)];
	uint32_t tag = hint_val(h, start, 0) >> 24, v, idx;
	struct cache_rec *r;
	unsigned m;

	for (m = hint_ways(set, tag); m; m &= m - 1) {
		/* Again, with acquire (the inserter's release, then the
		 * record's fields); it may have changed meanwhile. */
		v = atomic_load_explicit(&set[__builtin_ctz(m)],
		                         memory_order_acquire);
		if (v >> 24 != tag || !v)
			continue;
		idx = (v & 0xffffff) - 1;
		r = slab_rec(c, idx);
		if (hmr__cache_try_ref(r, slab_ent(c, idx), slab_id(c, idx),
		                       start, end, id, access))
			return slab_ent(c, idx);
	}
	*skip = !atomic_load_explicit(hint_lossy(h, hint_set(h, start)),
	                              memory_order_relaxed) &&
	        !(atomic_load_explicit(&c->spans, memory_order_relaxed) & 1);
	return NULL;
}

int hmr__cache_get(struct hmr_cache *c, uintptr_t start, size_t len,
                   uint64_t access, uint64_t id, struct hmr_cache_entry **out)
{
	struct hmr_cache_entry *e;
	uint32_t skip = 0;
	uint64_t end;

	if (!hmr__range_valid(start, len))
		return -FI_EINVAL;
	hmr__range_end(start, len, &end);
	if (!caching(c))
		return hmr__cache_reg_uncached(c, start, end, access, id, out);
	hmr__cache_read_lock();
	e = hint(c, start, end, access, id, &skip);
	if (!e)
		e = hmr__cache_ix_hit(c, start, end, access, id, skip);
	tsan_release(&hmr__cache_rcu_sync);
	rcu_read_unlock();
	/* A miss checks every patch (a hit checked munmap's only). */
	if (!e && c->check_intact && !hmr__monitor_intact())
		return hmr__cache_reg_uncached(c, start, end, access, id, out);
	if (!e)
		return hmr__cache_miss(c, start, end, access, id, out);
	hmr__cache_count(&hmr__cache_slot(c)->hits);
	*out = e;
	return 0;
}

void hmr__cache_put(struct hmr_cache *c, struct hmr_cache_entry *e)
{
	uint64_t r = atomic_fetch_sub_explicit(&rec(e)->refs, 1,
	                                       memory_order_acq_rel) -
	             1;
	struct hmr_cache_entry *idle;

	if (r & REFS_COUNT)
		return;
	if (!(r & REFS_DEAD)) { /* Idle now, still indexed. */
		if (!hmr__cache_over(c) || hmr__cache_child())
			return;
		hmr__cache_read_lock();
		pthread_mutex_lock(&c->lock);
		idle = hmr__cache_ix_evict(c, NULL);
		pthread_mutex_unlock(&c->lock);
		tsan_release(&hmr__cache_rcu_sync);
		rcu_read_unlock();
		hmr__cache_dereg_list(c, idle);
		return;
	}
	/* The last user of an entry out of the index.  A fork child leaves
	 * the parent's alone. */
	if (hmr__cache_child() && (est(e)->flags & EF_PUBLISHED))
		return;
	hmr__cache_dereg(c, e);
	hmr__cache_bury(c, e);
}

void hmr__cache_dereg(struct hmr_cache *c, struct hmr_cache_entry *e)
{
	if (est(e)->flags & EF_WATCHED)
		hmr__monitor_unwatch(e->start, e->end - e->start);
	c->attr.ops->dereg(c->attr.ctx, e);
	atomic_fetch_sub_explicit(&c->alive, 1, memory_order_relaxed);
}

/* A deregistered entry: freed now if no reader could have seen it, else
 * after a grace period (the graveyard; never freed inside an event). */
void hmr__cache_bury(struct hmr_cache *c, struct hmr_cache_entry *e)
{
	struct hmr_cache_entry *head;

	if (!(est(e)->flags & EF_PUBLISHED)) {
		hmr__cache_free_entry(c, e);
		return;
	}
	head = atomic_load(&c->grave);
	do
		est(e)->link = head;
	while (!atomic_compare_exchange_weak(&c->grave, &head, e));
	atomic_fetch_add(&c->grave_n, 1);
}

void hmr__cache_dereg_list(struct hmr_cache *c, struct hmr_cache_entry *l)
{
	struct hmr_cache_entry *next;

	for (; l; l = next) {
		next = est(l)->link;
		hmr__cache_dereg(c, l);
		hmr__cache_bury(c, l);
	}
}

/* Free the graveyard when it holds at least `at_least` entries: one grace
 * period for all.  Never inside a monitor event or a read-side section. */
void hmr__cache_reap(struct hmr_cache *c, size_t at_least)
{
	struct hmr_cache_entry *l, *next;
	size_t n = 0;

	if (!atomic_load_explicit(&c->grave, memory_order_relaxed) ||
	    atomic_load_explicit(&c->grave_n, memory_order_relaxed) < at_least)
		return;
	l = atomic_exchange(&c->grave, NULL);
	synchronize_rcu();
	tsan_acquire(&hmr__cache_rcu_sync);
	for (; l; l = next, n++) {
		next = est(l)->link;
		hmr__cache_free_entry(c, l);
	}
	atomic_fetch_sub(&c->grave_n, n);
}

void hmr__cache_flush(struct hmr_cache *c)
{
	struct hmr_cache_entry *idle;

	if (hmr__cache_child())
		return;
	hmr__cache_read_lock();
	pthread_mutex_lock(&c->lock);
	idle = hmr__cache_ix_flush(c);
	pthread_mutex_unlock(&c->lock);
	tsan_release(&hmr__cache_rcu_sync);
	rcu_read_unlock();
	hmr__cache_dereg_list(c, idle);
	hmr__cache_reap(c, 1);
}

int hmr__cache_close(struct hmr_cache *c)
{
	struct hmr_cache **p;

	if (!c)
		return 0;
	/* A fork child touches nothing of the parent's (its locks may be
	 * held by threads that are not here): the cache stays as it was. */
	if (hmr__cache_child())
		return 0;
	hmr__cache_flush(c);
	/* Nested events' leftovers, then what users still hold. */
	hmr__cache_dereg_list(c, atomic_exchange(&c->pending, NULL));
	if (atomic_load(&c->alive) > 0) {
		hmr_warn("cache %s: closed with %ld registrations in use",
		         c->name, (long)atomic_load(&c->alive));
		return -FI_EBUSY;
	}
	if (c->subscribed)
		hmr__monitor_unsubscribe(&c->sub);
	/* An event delivered before the unsubscribe may have left some. */
	hmr__cache_dereg_list(c, atomic_exchange(&c->pending, NULL));
	pthread_rwlock_wrlock(&open_lock);
	for (p = &open_caches; *p; p = &(*p)->next_open) {
		if (*p == c) {
			*p = c->next_open;
			break;
		}
	}
	pthread_rwlock_unlock(&open_lock);
	hmr__cache_reap(c, 1);
	cds_lfht_destroy(c->ht, NULL);
	hmr__cache_slab_free(c);
	pthread_mutex_destroy(&c->spare_lock);
	pthread_mutex_destroy(&c->lock);
	free(c->hints);
	free(c);
	return 0;
}

void hmr__cache_stats(struct hmr_cache *c, struct hmr_cache_stats *st)
{
	unsigned i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < HIT_SLOTS; i++) {
		st->hits += atomic_load_explicit(&c->hit[i].hits,
		                                 memory_order_relaxed);
		st->misses += atomic_load_explicit(&c->hit[i].misses,
		                                   memory_order_relaxed);
	}
	st->evictions = atomic_load(&c->evictions);
	st->invalidations = atomic_load(&c->invalidations);
	st->merges = atomic_load(&c->merges);
	st->uncached = atomic_load(&c->uncached);
	st->entries = atomic_load(&c->entries);
	st->bytes = atomic_load(&c->bytes);
	if (hmr__cache_child())
		return; /* The lock may be a parent thread's. */
	pthread_mutex_lock(&c->lock);
	st->idle = hmr__cache_ix_idle(c);
	pthread_mutex_unlock(&c->lock);
}

void hmr__cache_invalidate_all(uintptr_t start, size_t len)
{
	struct hmr_cache *c;

	if (hmr__cache_child())
		return; /* open_lock may be a parent thread's. */
	pthread_rwlock_rdlock(&open_lock);
	for (c = open_caches; c; c = c->next_open)
		hmr__cache_invalidate(c, start, len);
	pthread_rwlock_unlock(&open_lock);
}

void hmr__cache_flush_all(void)
{
	struct hmr_cache *c;

	if (hmr__cache_child())
		return;
	pthread_rwlock_rdlock(&open_lock);
	for (c = open_caches; c; c = c->next_open)
		hmr__cache_flush(c);
	pthread_rwlock_unlock(&open_lock);
}
