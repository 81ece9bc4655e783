/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* shard.c: a domain's key-space shards: set-up, teardown, lock helpers. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "core/domain.h"
#include "core/shard.h"

size_t hmr__thread_shard(void)
{
	/*
	 * Each call moves the thread to the next shard, from a start given
	 * round-robin at its first call.  So a thread's provider keys walk
	 * every shard in turn and a closed key comes back only after the
	 * whole key space (not 1/16 of it, as when a thread kept to one
	 * shard), while two threads registering at the same pace stay in
	 * different shards.  Initial-exec TLS: no call on the hot path.
	 */
	static atomic_uint next;
	static __thread int mine __attribute__((tls_model("initial-exec"))) =
	        -1;

	if (mine < 0)
		mine = (int)(atomic_fetch_add_explicit(&next, 1,
		                                       memory_order_relaxed) %
		             HMR_SHARDS);
	else
		mine = (mine + 1) % HMR_SHARDS;
	return (size_t)mine;
}

int hmr__shards_init(struct hmr_domain *d, uint64_t seed)
{
	size_t i;

	d->shards = hmr__aligned_calloc(64, HMR_SHARDS * sizeof(*d->shards));
	if (!d->shards)
		return -FI_ENOMEM;
	for (i = 0; i < HMR_SHARDS; i++) {
		struct hmr_shard *s = &d->shards[i];
		/* Shard i's keys are i, i + HMR_SHARDS, ... up to key_max;
		 * provider keys start at a random one of them. */
		uint64_t n = (d->key_max - i) / HMR_SHARDS + 1;

		if (pthread_mutex_init(&s->lock, NULL)) {
			while (i--)
				pthread_mutex_destroy(&d->shards[i].lock);
			free(d->shards);
			d->shards = NULL;
			return -FI_ENOMEM;
		}
		hmr__keymap_init(&s->mrs);
		hmr__keymap_init(&s->mapped);
		s->next_key = i + HMR_SHARDS * ((seed ^ (seed >> 17) * i) % n);
	}
	return 0;
}

void hmr__shards_fini(struct hmr_domain *d)
{
	struct hmr_mr *mr;
	size_t i, j;

	for (i = 0; d->shards && i < HMR_SHARDS; i++) {
		struct hmr_shard *s = &d->shards[i];

		hmr__keymap_fini(&s->mrs);
		hmr__keymap_fini(&s->mapped);
		for (j = 0; j < HMR_MR_SHELLS; j++)
			free(s->shells[j]);
		while ((mr = s->free)) {
			s->free = mr->next_free;
			free(mr);
		}
		free(atomic_load(&s->spare));
		pthread_mutex_destroy(&s->lock);
	}
	free(d->shards);
	d->shards = NULL;
}

void hmr__shards_wrlock_all(struct hmr_domain *d)
{
	size_t i;

	for (i = 0; i < HMR_SHARDS; i++)
		hmr__shard_lock(&d->shards[i]);
}

void hmr__shards_unlock_all(struct hmr_domain *d)
{
	size_t i = HMR_SHARDS;

	while (i--)
		hmr__shard_unlock(&d->shards[i]);
}

void hmr__shards_count(struct hmr_domain *d, size_t *mrs, size_t *mapped)
{
	size_t i;

	*mrs = *mapped = 0;
	for (i = 0; i < HMR_SHARDS; i++) {
		*mrs += d->shards[i].mr_count +
		        atomic_load(&d->shards[i].nic_count);
		*mapped += d->shards[i].mapped_count;
	}
}
