/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cache_fake.h: fake registration ops that count and record, for tests. */
#ifndef HMR_TESTS_CACHE_FAKE_H
#define HMR_TESTS_CACHE_FAKE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include <hmr/hmr.h>

#include "cache/cache.h"
#include "harness.h"

enum { FAKE_PAGES = 16 };

/* One registration the fake made; kept until the test ends, so a stale
 * handle is seen dead rather than freed. */
struct fake_reg {
	uint64_t start, end, access, id;
	atomic_int live;
	unsigned epoch[FAKE_PAGES]; /* The threads test's page epochs. */
	struct fake_reg *next;
};

struct fake {
	atomic_long regs, deregs;
	atomic_int fail; /* Next reg fails with it (then 0). */
	struct fake_reg *last;
	pthread_mutex_t lock; /* all */
	struct fake_reg *all;
	/* Runs inside reg / dereg (a racing invalidation, a nested event). */
	void (*on_reg)(struct fake *f, struct hmr_cache_entry *e);
	void (*on_dereg)(struct fake *f, struct hmr_cache_entry *e);
	void *arg;
	/* The threads test: FAKE_PAGES pages from epoch_base, each with the
	 * number of invalidations started on it, snapshotted at each reg. */
	atomic_uint *epochs;
	uintptr_t epoch_base;
};

static int fake_reg(void *ctx, struct hmr_cache_entry *e)
{
	struct fake *f = ctx;
	struct fake_reg *r;
	int fail = atomic_exchange(&f->fail, 0);
	unsigned i;

	if (fail)
		return fail;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -FI_ENOMEM;
	r->start = e->start;
	r->end = e->end;
	r->access = e->access;
	r->id = e->id;
	atomic_store(&r->live, 1);
	for (i = 0; f->epochs && i < FAKE_PAGES; i++)
		r->epoch[i] = atomic_load(&f->epochs[i]);
	if (f->on_reg)
		f->on_reg(f, e);
	pthread_mutex_lock(&f->lock);
	r->next = f->all;
	f->all = r;
	f->last = r;
	pthread_mutex_unlock(&f->lock);
	e->handle = r;
	atomic_fetch_add(&f->regs, 1);
	return 0;
}

static void fake_dereg(void *ctx, struct hmr_cache_entry *e)
{
	struct fake *f = ctx;
	struct fake_reg *r = e->handle;

	if (atomic_exchange(&r->live, 0) != 1)
		HMR_FAIL("registration [%#" PRIx64 ", %#" PRIx64
		         ") deregistered twice",
		         r->start, r->end);
	if (r->start != e->start || r->end != e->end)
		HMR_FAIL("deregistered with another range");
	atomic_fetch_add(&f->deregs, 1);
	if (f->on_dereg)
		f->on_dereg(f, e);
}

static const struct hmr_cache_ops fake_ops = {
        .reg = fake_reg,
        .dereg = fake_dereg,
};

static inline void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
}

static inline void fake_fini(struct fake *f)
{
	struct fake_reg *r, *n;

	for (r = f->all; r; r = n) {
		n = r->next;
		free(r);
	}
	f->all = NULL;
}

/* Records outlive entries: a test keeps an entry's record to ask after
 * the cache freed the entry. */
static inline struct fake_reg *rec(struct hmr_cache_entry *e)
{
	return e->handle;
}

static inline bool fake_live(struct fake_reg *r)
{
	return atomic_load(&r->live) == 1;
}

/* A cache over `f`: max_count, max_size, merge, monitored. */
static inline struct hmr_cache *fake_cache(struct fake *f, size_t max_count,
                                           size_t max_size, bool merge,
                                           bool monitored)
{
	struct hmr_cache_attr attr = {
	        .ops = &fake_ops,
	        .ctx = f,
	        .max_count = max_count,
	        .max_size = max_size,
	        .merge_regions = merge,
	        .monitored = monitored,
	        .name = "test",
	};
	struct hmr_cache *c;

	ASSERT_OK(hmr__cache_open(&attr, &c));
	return c;
}

/* Close, and every registration made was deregistered once. */
static inline void fake_close(struct fake *f, struct hmr_cache *c)
{
	ASSERT_OK(hmr__cache_close(c));
	ASSERT_EQ(atomic_load(&f->regs), atomic_load(&f->deregs));
	fake_fini(f);
}

static inline struct hmr_cache_stats stats(struct hmr_cache *c)
{
	struct hmr_cache_stats st;

	hmr__cache_stats(c, &st);
	return st;
}

#endif /* HMR_TESTS_CACHE_FAKE_H */
