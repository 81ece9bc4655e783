/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cache_hints.c: the hint table: order-0 entries found through it
 * alone, full sets' entries through the lfht, by hits and invalidations. */
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

/* `n` pages of `want`'s set from `from` on. */
static void pages_of_set(uintptr_t from, unsigned want, uintptr_t *a, int n)
{
	uintptr_t p;
	int k = 0;

	for (p = from; k < n; p += PG)
		if (first_set(p) == want)
			a[k++] = p;
}

/* A full set's entries are in the lfht, the others in the set alone: an
 * invalidation of one page finds exactly its entry either way, and the
 * rest still hit. */
HMR_TEST(cache_full_hint_set_entries_invalidated_one_by_one)
{
	enum { N = 12 };
	static const int order[N] = {11, 0, 7, 8, 3, 10, 1, 9, 4, 6, 2, 5};
	struct hmr_cache_entry *e[N], *h;
	struct fake_reg *r[N];
	uintptr_t a[N];
	struct fake f;
	struct hmr_cache *c;
	int i, k;

	pages_of_set(B, first_set(B), a, N);
	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	for (i = 0; i < N; i++) {
		ASSERT_OK(hmr__cache_get(c, a[i], PG, RW, 1, &e[i]));
		r[i] = rec(e[i]);
		hmr__cache_put(c, e[i]);
	}
	for (k = 0; k < N; k++) {
		hmr__cache_invalidate(c, a[order[k]] + PG - 1, 1);
		ASSERT_EQ(atomic_load(&f.deregs), k + 1);
		ASSERT_TRUE(!fake_live(r[order[k]]));
		for (i = k + 1; i < N; i++) {
			ASSERT_OK(
			        hmr__cache_get(c, a[order[i]], 16, RW, 1, &h));
			ASSERT_PTR_EQ(h, e[order[i]]);
			hmr__cache_put(c, h);
		}
	}
	ASSERT_EQ(atomic_load(&f.regs), N);
	ASSERT_EQ(stats(c).entries, 0);
	fake_close(&f, c);
}

/* An order-0 entry that crosses into the next page is found from there,
 * by a hit and by an invalidation of that page alone. */
HMR_TEST(cache_page_crossing_entry_found_from_next_page)
{
	struct hmr_cache_entry *e, *h;
	struct fake_reg *r;
	struct fake f;
	struct hmr_cache *c;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	ASSERT_OK(hmr__cache_get(c, B + PG - 1024, 2048, RW, 1, &e));
	r = rec(e);
	hmr__cache_put(c, e);
	ASSERT_OK(hmr__cache_get(c, B + PG, 1024, RW, 1, &h));
	ASSERT_PTR_EQ(h, e);
	hmr__cache_put(c, h);
	ASSERT_OK(hmr__cache_get(c, B + PG - 1, 2, RW, 1, &h));
	ASSERT_PTR_EQ(h, e);
	hmr__cache_put(c, h);
	ASSERT_EQ(atomic_load(&f.regs), 1);
	hmr__cache_invalidate(c, B + PG + 1023, 1);
	ASSERT_TRUE(!fake_live(r));
	hmr__cache_invalidate(c, B + PG + 1024, 1); /* Just past it: nothing. */
	ASSERT_EQ(atomic_load(&f.deregs), 1);
	fake_close(&f, c);
}

/* Entries of a higher order take a set's ways too: an order-0 entry of
 * that set then lives in the lfht, and is hit and invalidated there. */
HMR_TEST(cache_set_full_of_larger_entries_order0_in_lfht)
{
	enum { N = 8 };
	struct hmr_cache_entry *big[N], *e, *h;
	struct fake_reg *r;
	uintptr_t a[N + 1];
	struct fake f;
	struct hmr_cache *c;
	int i;

	/* Pages of one set at least 3 pages apart: 8 KiB entries on them
	 * do not overlap the 4 KiB one. */
	pages_of_set(B, first_set(B), a, N + 1);
	for (i = 1; i <= N; i++)
		ASSERT_TRUE(a[i] - a[i - 1] >= 3 * PG);
	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	for (i = 0; i < N; i++) {
		ASSERT_OK(hmr__cache_get(c, a[i], 2 * PG, RW, 1, &big[i]));
		hmr__cache_put(c, big[i]);
	}
	ASSERT_OK(hmr__cache_get(c, a[N], PG, RW, 1, &e));
	r = rec(e);
	hmr__cache_put(c, e);
	ASSERT_OK(hmr__cache_get(c, a[N] + 8, 8, RW, 1, &h));
	ASSERT_PTR_EQ(h, e);
	hmr__cache_put(c, h);
	ASSERT_EQ(atomic_load(&f.regs), N + 1);
	hmr__cache_invalidate(c, a[N], 1);
	ASSERT_TRUE(!fake_live(r));
	ASSERT_EQ(atomic_load(&f.deregs), 1);
	for (i = 0; i < N; i++) {
		ASSERT_OK(hmr__cache_get(c, a[i] + PG, PG, RW, 1, &h));
		ASSERT_PTR_EQ(h, big[i]);
		hmr__cache_put(c, h);
	}
	fake_close(&f, c);
}

/* A full set's entries (in the lfht) and the others (in the table only)
 * survive the table's growth: each still hits, and one invalidation of
 * the whole range finds every one once. */
HMR_TEST(cache_hint_table_growth_keeps_every_entry)
{
	enum { N = 12, MORE = 3000 };
	static struct hmr_cache_entry *m[MORE];
	struct hmr_cache_entry *e[N], *h;
	uintptr_t a[N], hi = 0;
	struct fake f;
	struct hmr_cache *c;
	int i;

	pages_of_set(B, first_set(B), a, N);
	fake_init(&f);
	c = fake_cache(&f, 10 * MORE, 0, false, false);
	for (i = 0; i < N; i++) {
		ASSERT_OK(hmr__cache_get(c, a[i], PG, RW, 1, &e[i]));
		hmr__cache_put(c, e[i]);
	}
	/* Other pages, between and after them, grow the table. */
	for (i = 0; i < MORE; i++) {
		uintptr_t p = B + (uintptr_t)(2 * i + 1) * PG;
		int k;

		for (k = 0; k < N && a[k] != p; k++)
			;
		if (k < N)
			p += 1024 * 1024 * 1024; /* Not one of a[]. */
		ASSERT_OK(hmr__cache_get(c, p, PG, RW, 1, &m[i]));
		hmr__cache_put(c, m[i]);
		if (p + PG > hi)
			hi = p + PG;
	}
	for (i = 0; i < N; i++) {
		ASSERT_OK(hmr__cache_get(c, a[i] + 64, 64, RW, 1, &h));
		ASSERT_PTR_EQ(h, e[i]);
		hmr__cache_put(c, h);
	}
	ASSERT_EQ(atomic_load(&f.regs), N + MORE);
	hmr__cache_invalidate(c, B, hi - B);
	ASSERT_EQ(atomic_load(&f.deregs), N + MORE);
	ASSERT_EQ(stats(c).entries, 0);
	fake_close(&f, c);
}

HMR_TEST_MAIN()
