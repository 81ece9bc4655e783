/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* shard.h: a domain's key-space shards (struct hmr_shard, domain.h). */
#ifndef HMR_CORE_SHARD_H
#define HMR_CORE_SHARD_H

#include "core/domain.h"

/* Allocate and set up d->shards (d->key_max set); seed spreads the first
 * provider keys.  0 or -FI_ENOMEM. */
int hmr__shards_init(struct hmr_domain *d, uint64_t seed);
/* Free the shards, their key maps and their closed-MR shells. */
void hmr__shards_fini(struct hmr_domain *d);

/* Every shard, in index order (domain close). */
void hmr__shards_wrlock_all(struct hmr_domain *d);
void hmr__shards_unlock_all(struct hmr_domain *d);
/* Live MRs and mapped keys over all shards (all locked). */
void hmr__shards_count(struct hmr_domain *d, size_t *mrs, size_t *mapped);

/* Take shard s's lock as a writer: the sequence count is odd until
 * hmr__shard_unlock, so lock-free readers (hmr_mr_access) that overlap
 * this section see it and retry under the lock.  The release fence makes
 * the odd count visible before any change it guards. */
static inline void hmr__shard_lock(struct hmr_shard *s)
{
	unsigned long q;

	pthread_mutex_lock(&s->lock);
	q = atomic_load_explicit(&s->seq, memory_order_relaxed);
	atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static inline void hmr__shard_unlock(struct hmr_shard *s)
{
	unsigned long q = atomic_load_explicit(&s->seq, memory_order_relaxed);

	atomic_store_explicit(&s->seq, q + 1, memory_order_release);
	pthread_mutex_unlock(&s->lock);
}

/* Two shards, lower index first (a sub-MR and its base); a == b is one.
 * Inline: every registration and close of a keyed MR takes this path. */
static inline void hmr__shard_wrlock_pair(struct hmr_domain *d, size_t a,
                                          size_t b)
{
	if (a > b) {
		size_t t = a;

		a = b;
		b = t;
	}
	hmr__shard_lock(&d->shards[a]);
	if (b != a)
		hmr__shard_lock(&d->shards[b]);
}

static inline void hmr__shard_unlock_pair(struct hmr_domain *d, size_t a,
                                          size_t b)
{
	hmr__shard_unlock(&d->shards[a]);
	if (b != a)
		hmr__shard_unlock(&d->shards[b]);
}

#endif /* HMR_CORE_SHARD_H */
