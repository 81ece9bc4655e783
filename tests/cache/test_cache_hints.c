/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cache_hints.c: the hint table's full sets: their entries still hit. */
#include "cache_fake.h"

#define B  ((uintptr_t)0x7f0000000000ULL)
#define PG 4096
#define RW 3ULL

/* cache_impl.h's set of a page in a new cache's table (128 sets of 8
 * ways): the golden-ratio hash of the page number, its top 7 bits. */
static unsigned first_set(uintptr_t addr)
{
	return (unsigned)(((uint64_t)(addr >> 12) * 0x9E3779B97F4A7C15ULL) >>
	                  57);
}

/* More entries than ways start in pages of one set: the set overflows
 * (a slot overwritten), and a miss may no longer trust it alone: each
 * entry must still be found, by the lfht, and none registered twice. */
HMR_TEST(cache_full_hint_set_entries_still_hit)
{
	enum { N = 12 };
	struct hmr_cache_entry *e[N], *h;
	uintptr_t a[N], p;
	unsigned want = first_set(B);
	struct fake f;
	struct hmr_cache *c;
	int i, n = 0;

	for (p = B; n < N; p += PG)
		if (first_set(p) == want)
			a[n++] = p;
	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	for (i = 0; i < N; i++) {
		ASSERT_OK(hmr__cache_get(c, a[i], PG, RW, 1, &e[i]));
		hmr__cache_put(c, e[i]);
	}
	ASSERT_EQ(atomic_load(&f.regs), N);
	for (i = 0; i < N; i++) {
		ASSERT_OK(hmr__cache_get(c, a[i] + 8, 8, RW, 1, &h));
		ASSERT_PTR_EQ(h, e[i]);
		hmr__cache_put(c, h);
	}
	ASSERT_EQ(atomic_load(&f.regs), N);
	ASSERT_EQ(stats(c).hits, N);
	fake_close(&f, c);
}

HMR_TEST_MAIN()
