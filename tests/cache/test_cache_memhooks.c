/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cache_memhooks.c: the cache under the default monitor, for real. */
#include <pthread.h>
#include <sys/mman.h>

#include "cache_fake.h"
#include "harness.h"
#include "libc_malloc.h"

/*
 * With memhooks (the default monitor) a real munmap, a free of a large
 * malloc and madvise(DONTNEED) drop the idle registration of that memory
 * before the call returns, and the next get of the address registers
 * anew; hits check the hooks on the way (their per-hit patch check), and
 * a thread's first read lock of liburcu, taken inside a hook, does not
 * deadlock.  Not in the memcheck step: valgrind refuses memhooks.
 */
static struct hmr_cache *hooked(struct fake *f)
{
	struct hmr_cache *c;
	char why[160];

	setenv("FI_MR_CACHE_MONITOR", "memhooks", 1);
	fake_init(f);
	c = fake_cache(f, 100, 0, false, true);
	if (!hmr__cache_active(c, why, sizeof(why)))
		HMR_FAIL("the cache is not active under memhooks: %s", why);
	return c;
}

static struct fake_reg *touch(struct hmr_cache *c, void *p, size_t len)
{
	struct hmr_cache_entry *e;
	struct fake_reg *r;

	ASSERT_OK(hmr__cache_get(c, (uintptr_t)p, len, 1, 1, &e));
	r = rec(e);
	hmr__cache_put(c, e);
	return r;
}

/* fi_mr: F114 */
HMR_TEST(cache_memhooks_munmap_drops_idle_registration_first)
{
	struct fake f;
	struct hmr_cache *c = hooked(&f);
	size_t len = 16384;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fake_reg *r1, *r2;

	ASSERT_TRUE(p != MAP_FAILED);
	r1 = touch(c, p, len);
	ASSERT_TRUE(touch(c, p, len) == r1); /* A hit, hooks checked. */
	ASSERT_EQ(munmap(p, len), 0);
	ASSERT_TRUE(!fake_live(r1)); /* Deregistered inside munmap. */
	ASSERT_TRUE(mmap(p, len, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1,
	                 0) == p);
	r2 = touch(c, p, len);
	ASSERT_TRUE(r2 != r1 && fake_live(r2));
	ASSERT_EQ(munmap(p, len), 0);
	fake_close(&f, c);
}

HMR_TEST(cache_memhooks_free_and_madvise_drop_registrations)
{
	struct fake f;
	struct hmr_cache *c = hooked(&f);
	size_t big = 8 << 20; /* Past malloc's mmap threshold. */
	char *m = big_malloc(big), *p;
	struct fake_reg *r;

	ASSERT_TRUE(m != NULL);
	r = touch(c, m, 4096);
	big_free(m); /* libc unmaps it from inside free. */
	ASSERT_TRUE(!fake_live(r));
	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(p != MAP_FAILED);
	r = touch(c, p, 8192);
	ASSERT_EQ(madvise(p, 4096, MADV_DONTNEED), 0);
	ASSERT_TRUE(!fake_live(r));
	ASSERT_EQ(munmap(p, 8192), 0);
	fake_close(&f, c);
}

/* Threads that registered with liburcu (a get) and stay, filling its
 * registry, until the test lets them go. */
enum { PARKED = 48 };
static pthread_barrier_t park;
static struct hmr_cache *park_cache;
static char park_buf[PARKED][4096] __attribute__((aligned(4096)));

static void *parked(void *arg)
{
	touch(park_cache, park_buf[(uintptr_t)arg], 4096);
	pthread_barrier_wait(&park);
	pthread_barrier_wait(&park);
	return NULL;
}

/* Enough entries that the hash table grows while many threads hold
 * liburcu's registry: its resize helper threads register with liburcu and
 * grow the registry with mremap, inside the hooks (it deadlocked before
 * cache_rcu.c). */
HMR_TEST(cache_memhooks_table_growth_does_not_deadlock)
{
	enum { N = 40000 };
	pthread_t t[PARKED];
	struct fake f;
	struct hmr_cache *c;
	char *arena;
	size_t i;

	fake_init(&f);
	setenv("FI_MR_CACHE_MONITOR", "memhooks", 1);
	c = fake_cache(&f, N + PARKED, 0, false, true);
	park_cache = c;
	ASSERT_EQ(pthread_barrier_init(&park, NULL, PARKED + 1), 0);
	for (i = 0; i < PARKED; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, parked, (void *)i), 0);
	pthread_barrier_wait(&park);
	arena = mmap(NULL, (size_t)N * 4096, PROT_READ | PROT_WRITE,
	             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_TRUE(arena != MAP_FAILED);
	for (i = 0; i < N; i++)
		touch(c, arena + i * 4096, 4096);
	ASSERT_EQ(munmap(arena, (size_t)N * 4096), 0);
	pthread_barrier_wait(&park);
	for (i = 0; i < PARKED; i++)
		ASSERT_EQ(pthread_join(t[i], NULL), 0);
	ASSERT_EQ(stats(c).entries, PARKED);
	fake_close(&f, c);
}

HMR_TEST_MAIN()
