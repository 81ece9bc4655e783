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
	pthread_rwlock_wrlock(&d->shards[a].lock);
	if (b != a)
		pthread_rwlock_wrlock(&d->shards[b].lock);
}

static inline void hmr__shard_unlock_pair(struct hmr_domain *d, size_t a,
                                          size_t b)
{
	pthread_rwlock_unlock(&d->shards[a].lock);
	if (b != a)
		pthread_rwlock_unlock(&d->shards[b].lock);
}

#endif /* HMR_CORE_SHARD_H */
