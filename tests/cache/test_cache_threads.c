/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cache_threads.c: the cache under threads that hit, miss, invalidate. */
#include <stdlib.h>

#include "cache_fake.h"

/*
 * Eight threads get random ranges of a 16-page arena (random rights, two
 * identities), hold a few, put them, and now and then invalidate a page or
 * flush.  Each page counts invalidations started and done; the fake
 * registration snapshots the started counts.  A returned entry must cover
 * the request with the rights, be registered, and have been registered no
 * earlier than every invalidation of its pages that completed before the
 * get began: an invalidated registration is never handed out.
 */
#define B  ((uintptr_t)0x7f0000000000ULL)
#define PG 4096
enum { THREADS = 8, HELD = 4 };

static struct fake f;
static struct hmr_cache *cache;
static atomic_uint started[FAKE_PAGES], done[FAKE_PAGES];
static long iterations = 20000;

static void raise_to(atomic_uint *v, unsigned x)
{
	unsigned cur = atomic_load(v);

	while (cur < x && !atomic_compare_exchange_weak(v, &cur, x))
		;
}

static void check(struct hmr_cache_entry *e, uintptr_t s, size_t len,
                  uint64_t access, uint64_t id, const unsigned *before)
{
	struct fake_reg *r = e->handle;
	unsigned p;

	if (!(e->start <= s && s + len <= e->end) ||
	    (e->access & access) != access || e->id != id)
		HMR_FAIL("entry [%#" PRIxPTR ", %#" PRIxPTR ") for [%#" PRIxPTR
		         ", +%zu)",
		         e->start, e->end, s, len);
	if (atomic_load(&r->live) != 1)
		HMR_FAIL("a deregistered entry handed out");
	for (p = (unsigned)((s - B) / PG); p <= (s + len - 1 - B) / PG; p++)
		if (r->epoch[p] < before[p])
			HMR_FAIL("page %u: registered before invalidation %u "
			         "(at %u), handed out after it",
			         p, before[p], r->epoch[p]);
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg, before[FAKE_PAGES], p;
	struct hmr_cache_entry *held[HELD] = {0}, *e;
	uint64_t access, id;
	uintptr_t s;
	size_t len;
	long i;
	int op, h;

	for (i = 0; i < iterations; i++) {
		op = rand_r(&seed) % 100;
		if (op < 6) {
			p = (unsigned)rand_r(&seed) % FAKE_PAGES;
			atomic_fetch_add(&started[p], 1);
			hmr__cache_invalidate(cache, B + p * PG, PG);
			raise_to(&done[p], atomic_load(&started[p]));
			continue;
		}
		if (op < 7) {
			hmr__cache_flush(cache);
			continue;
		}
		s = B + (uintptr_t)(rand_r(&seed) % (FAKE_PAGES - 3)) * PG +
		    (uintptr_t)(rand_r(&seed) % PG);
		len = 1 + (size_t)(rand_r(&seed) % (2 * PG));
		access = 1 + (uint64_t)(rand_r(&seed) % 3);
		id = 1 + (uint64_t)(rand_r(&seed) % 8 == 0);
		for (p = 0; p < FAKE_PAGES; p++)
			before[p] = atomic_load(&done[p]);
		ASSERT_OK(hmr__cache_get(cache, s, len, access, id, &e));
		check(e, s, len, access, id, before);
		h = rand_r(&seed) % HELD;
		if (held[h])
			hmr__cache_put(cache, held[h]);
		held[h] = e;
	}
	for (h = 0; h < HELD; h++)
		if (held[h])
			hmr__cache_put(cache, held[h]);
	return NULL;
}

static void run(size_t max_count, bool merge)
{
	pthread_t t[THREADS];
	struct hmr_cache_stats st;
	const char *n = getenv("HMR_CACHE_TEST_ITERATIONS");
	int i;

	if (n)
		iterations = atol(n);
	fake_init(&f);
	f.epochs = started;
	f.epoch_base = B;
	cache = fake_cache(&f, max_count, 0, merge, false);
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, worker,
		                         (void *)(uintptr_t)(i + 1)),
		          0);
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(pthread_join(t[i], NULL), 0);
	st = stats(cache);
	printf("hits %" PRIu64 " misses %" PRIu64 " evictions %" PRIu64
	       " invalidations %" PRIu64 " merges %" PRIu64 " uncached %" PRIu64
	       "\n",
	       st.hits, st.misses, st.evictions, st.invalidations, st.merges,
	       st.uncached);
	ASSERT_GT(st.hits, 0);
	ASSERT_GT(st.invalidations, 0);
	ASSERT_EQ(st.idle, st.entries); /* Every user put its entries. */
	fake_close(&f, cache);
}

HMR_TEST(cache_threads_hit_miss_invalidate)
{
	run(8, false);
}

/* fi_mr: L1 */
HMR_TEST(cache_threads_merge_invalidate)
{
	run(64, true);
}

HMR_TEST_MAIN()
