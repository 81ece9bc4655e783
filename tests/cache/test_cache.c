/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cache.c: the registration cache's rules, one behaviour per case. */
#include "cache_fake.h"

/* The fake ops touch no memory: any address will do. */
#define B   ((uintptr_t)0x7f0000000000ULL)
#define PG  4096
#define RW  3ULL
#define RD  1ULL
#define WR  2ULL
#define ID1 0ULL /* Host memory: the hit record alone answers. */
#define ID2 22ULL

static struct hmr_cache_entry *get(struct hmr_cache *c, uintptr_t s, size_t len,
                                   uint64_t access)
{
	struct hmr_cache_entry *e = NULL;

	ASSERT_OK(hmr__cache_get(c, s, len, access, ID1, &e));
	ASSERT_TRUE(e->start <= s && s + len <= e->end);
	ASSERT_EQ(e->access & access, access);
	ASSERT_TRUE(fake_live(rec(e)));
	return e;
}

/* aws-ofi-nccl PR 685: two 64-byte buffers in one page. */
/* fi_mr: F114 */
HMR_TEST(cache_hit_covers_whole_range_only)
{
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	a = get(c, B, 64, RW);
	hmr__cache_put(c, a);
	b = get(c, B + 64, 64, RW);
	ASSERT_TRUE(a != b);
	ASSERT_EQ(atomic_load(&f.regs), 2);
	ASSERT_U64_EQ(b->start, B + 64);
	hmr__cache_put(c, b);
	/* And each is found again by its own range. */
	ASSERT_PTR_EQ(get(c, B, 64, RW), a);
	ASSERT_PTR_EQ(get(c, B + 64, 64, RW), b);
	hmr__cache_put(c, a);
	hmr__cache_put(c, b);
	ASSERT_EQ(stats(c).hits, 2);
	fake_close(&f, c);
}

HMR_TEST(cache_hit_needs_access_superset)
{
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	a = get(c, B, PG, RD);
	hmr__cache_put(c, a);
	b = get(c, B, PG, RW);
	ASSERT_TRUE(a != b);
	ASSERT_U64_EQ(b->access, RW);
	hmr__cache_put(c, b);
	ASSERT_EQ(atomic_load(&f.regs), 2);
	a = get(c, B, PG, WR); /* Only the RW one has it. */
	ASSERT_PTR_EQ(a, b);
	hmr__cache_put(c, a);
	ASSERT_EQ(atomic_load(&f.regs), 2);
	fake_close(&f, c);
}

/* Access bits past the 29 a hit compares without reading the entry. */
HMR_TEST(cache_hit_needs_access_superset_of_high_bits)
{
	const uint64_t h1 = 1ULL << 40, h2 = 1ULL << 62;
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b, *d;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	a = get(c, B, PG, RD | h1);
	hmr__cache_put(c, a);
	b = get(c, B, PG, RD | h2);
	ASSERT_TRUE(a != b);
	hmr__cache_put(c, b);
	d = get(c, B + PG, PG, RD);
	hmr__cache_put(c, d);
	ASSERT_PTR_EQ(get(c, B, PG, h1), a);
	hmr__cache_put(c, a);
	ASSERT_PTR_EQ(get(c, B, PG, RD | h2), b);
	hmr__cache_put(c, b);
	a = get(c, B + PG, PG, RD | h1); /* d has RD alone. */
	ASSERT_TRUE(a != d);
	hmr__cache_put(c, a);
	ASSERT_PTR_EQ(get(c, B + PG, PG, RD), d);
	hmr__cache_put(c, d);
	ASSERT_EQ(atomic_load(&f.regs), 4);
	ASSERT_EQ(stats(c).hits, 3);
	fake_close(&f, c);
}

/* fi_mr: F114 */
HMR_TEST(cache_miss_registers_exact_rights)
{
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	a = get(c, B + 100, 200, 5);
	/* Not rounded to pages, no rights added. */
	ASSERT_U64_EQ(f.last->start, B + 100);
	ASSERT_U64_EQ(f.last->end, B + 300);
	ASSERT_U64_EQ(f.last->access, 5);
	ASSERT_U64_EQ(f.last->id, ID1);
	hmr__cache_put(c, a);
	fake_close(&f, c);
}

/* fi_mr: F114 */
HMR_TEST(cache_put_keeps_idle_entry)
{
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a;
	struct hmr_cache_stats st;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	a = get(c, B, PG, RW);
	hmr__cache_put(c, a);
	st = stats(c);
	ASSERT_EQ(st.entries, 1);
	ASSERT_EQ(st.idle, 1);
	ASSERT_EQ(st.bytes, PG);
	ASSERT_EQ(atomic_load(&f.deregs), 0);
	ASSERT_PTR_EQ(get(c, B + 8, 8, RD), a);
	hmr__cache_put(c, a);
	st = stats(c);
	ASSERT_EQ(st.hits, 1);
	ASSERT_EQ(st.misses, 1);
	fake_close(&f, c);
}

/* fi_mr: F117 */
HMR_TEST(cache_evicts_lru_past_max_count)
{
	struct fake_reg *r_a, *r_b;
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b, *d;

	fake_init(&f);
	c = fake_cache(&f, 2, 0, false, false);
	a = get(c, B, PG, RW);
	r_a = rec(a);
	hmr__cache_put(c, a);
	b = get(c, B + PG, PG, RW);
	r_b = rec(b);
	hmr__cache_put(c, b);
	hmr__cache_put(c, get(c, B, PG, RW)); /* a used after b. */
	d = get(c, B + 2 * PG, PG, RW);
	ASSERT_TRUE(!fake_live(r_b)); /* The least recently used. */
	ASSERT_TRUE(fake_live(r_a));
	ASSERT_EQ(stats(c).evictions, 1);
	ASSERT_EQ(stats(c).entries, 2);
	hmr__cache_put(c, d);
	ASSERT_PTR_EQ(get(c, B, PG, RW), a);
	hmr__cache_put(c, a);
	fake_close(&f, c);
}

/* fi_mr: F116 */
HMR_TEST(cache_evicts_past_max_size)
{
	struct fake f;
	struct hmr_cache *c;
	int i;

	fake_init(&f);
	c = fake_cache(&f, 100, 3 * PG, false, false);
	for (i = 0; i < 5; i++)
		hmr__cache_put(c, get(c, B + (uintptr_t)i * PG, PG, RW));
	ASSERT_EQ(stats(c).bytes, 3 * PG);
	ASSERT_EQ(stats(c).evictions, 2);
	ASSERT_EQ(atomic_load(&f.deregs), 2);
	fake_close(&f, c);
}

/* fi_mr: F117 */
HMR_TEST(cache_max_count_zero_disables)
{
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b;
	char why[64];

	fake_init(&f);
	c = fake_cache(&f, 0, 0, false, false);
	ASSERT_TRUE(!hmr__cache_active(c, why, sizeof(why)));
	ASSERT_TRUE(strstr(why, "max_count") != NULL);
	a = get(c, B, PG, RW);
	b = get(c, B, PG, RW);
	ASSERT_TRUE(a != b);
	hmr__cache_put(c, a);
	ASSERT_EQ(atomic_load(&f.deregs), 1);
	hmr__cache_put(c, b);
	ASSERT_EQ(atomic_load(&f.deregs), 2);
	ASSERT_EQ(stats(c).entries, 0);
	ASSERT_EQ(stats(c).uncached, 2);
	fake_close(&f, c);
}

/* fi_mr: L1 */
HMR_TEST(cache_merge_regions_overlapping)
{
	struct fake_reg *r_a;
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, true, false);
	a = get(c, B, 2 * PG, RD);
	r_a = rec(a);
	hmr__cache_put(c, a);
	b = get(c, B + PG, 2 * PG, WR);
	ASSERT_U64_EQ(f.last->start, B);
	ASSERT_U64_EQ(f.last->end, B + 3 * PG);
	ASSERT_U64_EQ(f.last->access, RW); /* Both were requested. */
	ASSERT_TRUE(!fake_live(r_a));      /* Idle: gone at once. */
	ASSERT_EQ(stats(c).entries, 1);
	ASSERT_EQ(stats(c).merges, 1);
	hmr__cache_put(c, b);
	ASSERT_PTR_EQ(get(c, B, PG, RD), b);
	hmr__cache_put(c, b);
	fake_close(&f, c);
}

/* fi_mr: L1 */
HMR_TEST(cache_merge_regions_adjacent)
{
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, true, false);
	a = get(c, B + PG, PG, RW);
	hmr__cache_put(c, a);
	b = get(c, B, PG, RW); /* Ends where a starts. */
	ASSERT_U64_EQ(b->start, B);
	ASSERT_U64_EQ(b->end, B + 2 * PG);
	hmr__cache_put(c, b);
	/* Another identity is not merged. */
	ASSERT_OK(hmr__cache_get(c, B + 2 * PG, PG, RW, ID2, &a));
	ASSERT_U64_EQ(a->start, B + 2 * PG);
	hmr__cache_put(c, a);
	ASSERT_EQ(stats(c).entries, 2);
	fake_close(&f, c);
}

/* fi_mr: L1 */
HMR_TEST(cache_merge_keeps_old_users_valid)
{
	struct fake_reg *r_a;
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, true, false);
	a = get(c, B, PG, RW);
	r_a = rec(a);
	b = get(c, B + PG, PG, RW);
	ASSERT_TRUE(fake_live(r_a));         /* Its user still holds it. */
	ASSERT_PTR_EQ(get(c, B, PG, RW), b); /* Not handed out again. */
	hmr__cache_put(c, b);
	hmr__cache_put(c, a);
	ASSERT_TRUE(!fake_live(r_a));
	ASSERT_EQ(atomic_load(&f.deregs), 1);
	hmr__cache_put(c, b);
	fake_close(&f, c);
}

HMR_TEST(cache_invalidate_deregisters_idle_now)
{
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	a = get(c, B, PG, RW);
	hmr__cache_put(c, a);
	hmr__cache_invalidate(c, B + PG - 1, 1);
	ASSERT_EQ(atomic_load(&f.deregs), 1);
	ASSERT_EQ(stats(c).entries, 0);
	ASSERT_EQ(stats(c).invalidations, 1);
	fake_close(&f, c);
}

HMR_TEST(cache_invalidate_in_use_at_last_put)
{
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	a = get(c, B, PG, RW);
	ASSERT_PTR_EQ(get(c, B, PG, RW), a);
	hmr__cache_invalidate(c, B, PG);
	ASSERT_EQ(atomic_load(&f.deregs), 0);
	hmr__cache_put(c, a);
	ASSERT_EQ(atomic_load(&f.deregs), 0);
	hmr__cache_put(c, a);
	ASSERT_EQ(atomic_load(&f.deregs), 1);
	fake_close(&f, c);
}

HMR_TEST(cache_invalidated_entry_never_handed_out)
{
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	a = get(c, B, PG, RW);
	hmr__cache_invalidate(c, B, 1);
	b = get(c, B, PG, RW);
	ASSERT_TRUE(a != b);
	ASSERT_EQ(atomic_load(&f.regs), 2);
	hmr__cache_put(c, a);
	hmr__cache_put(c, b);
	fake_close(&f, c);
}

static struct hmr_cache *race_cache;
static void invalidate_during_reg(struct fake *f, struct hmr_cache_entry *e)
{
	uintptr_t *at = f->arg;

	if (at)
		hmr__cache_invalidate(race_cache, *at, 1);
	(void)e;
}

HMR_TEST(cache_reg_racing_invalidate_is_uncached)
{
	struct fake_reg *r_a;
	struct fake f;
	struct hmr_cache_entry *a, *b;
	uintptr_t at = B + PG - 1, away = B + 10 * PG;

	fake_init(&f);
	race_cache = fake_cache(&f, 100, 0, false, false);
	f.on_reg = invalidate_during_reg;
	f.arg = &at;
	a = get(race_cache, B, PG, RW);
	r_a = rec(a);
	ASSERT_EQ(stats(race_cache).uncached, 1);
	ASSERT_EQ(stats(race_cache).entries, 0);
	f.arg = NULL;
	b = get(race_cache, B, PG, RW); /* Not a: it was never inserted. */
	ASSERT_TRUE(a != b);
	hmr__cache_put(race_cache, a);
	ASSERT_TRUE(!fake_live(r_a)); /* Deregistered at its last put. */
	hmr__cache_put(race_cache, b);
	/* An invalidation elsewhere does not make a miss uncached. */
	f.arg = &away;
	hmr__cache_put(race_cache, get(race_cache, B + PG, PG, RW));
	ASSERT_EQ(stats(race_cache).uncached, 1);
	ASSERT_EQ(stats(race_cache).entries, 2);
	fake_close(&f, race_cache);
}

/* fi_mr: F115 */
HMR_TEST(cache_different_id_misses)
{
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	ASSERT_OK(hmr__cache_get(c, B, PG, RW, ID1, &a));
	hmr__cache_put(c, a);
	ASSERT_OK(hmr__cache_get(c, B, PG, RW, ID2, &b));
	ASSERT_TRUE(a != b);
	ASSERT_U64_EQ(b->id, ID2);
	hmr__cache_put(c, b);
	ASSERT_EQ(atomic_load(&f.regs), 2);
	/* An invalidation drops both identities' entries. */
	hmr__cache_invalidate(c, B, PG);
	ASSERT_EQ(atomic_load(&f.deregs), 2);
	fake_close(&f, c);
}

/*
 * Device memory freed and another allocation at its address (a new buffer
 * id): the miss of the new identity drops the old entry, which pinned the
 * freed memory, at once: deregistered when idle, at its last put when in
 * use, never handed out again.  Host memory (id 0) leaves it alone.
 */
HMR_TEST(cache_miss_of_another_identity_drops_the_stale_entry)
{
	const uint64_t id3 = 33; /* ID2 and id3: two device buffers. */
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b, *h;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	ASSERT_OK(hmr__cache_get(c, B, 2 * PG, RW, ID2, &a));
	hmr__cache_put(c, a);
	/* Overlapping, not equal: still the same address, another buffer. */
	ASSERT_OK(hmr__cache_get(c, B + PG, PG, RW, id3, &b));
	ASSERT_EQ(atomic_load(&f.deregs), 1);
	ASSERT_EQ(stats(c).entries, 1);
	ASSERT_EQ(stats(c).invalidations, 1);
	/* In use when the other identity misses: dropped at its last put. */
	ASSERT_OK(hmr__cache_get(c, B + PG, PG, RW, id3, &h));
	ASSERT_PTR_EQ(h, b);
	hmr__cache_put(c, h);
	ASSERT_OK(hmr__cache_get(c, B + PG, PG, RW, ID2, &a));
	ASSERT_EQ(atomic_load(&f.deregs), 1);
	ASSERT_EQ(stats(c).invalidations, 2);
	hmr__cache_put(c, b);
	ASSERT_EQ(atomic_load(&f.deregs), 2);
	ASSERT_OK(hmr__cache_get(c, B + PG, PG, RW, ID2, &h));
	ASSERT_PTR_EQ(h, a);
	hmr__cache_put(c, h);
	/* Host memory there (id 0) drops nothing: the monitor reports its
	 * end. */
	ASSERT_OK(hmr__cache_get(c, B + PG, PG, RW, ID1, &h));
	hmr__cache_put(c, h);
	ASSERT_EQ(stats(c).entries, 2);
	hmr__cache_put(c, a);
	ASSERT_EQ(atomic_load(&f.deregs), 2);
	fake_close(&f, c);
}

HMR_TEST(cache_flush_keeps_users_valid)
{
	struct fake_reg *r_a, *r_b;
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	a = get(c, B, PG, RW);
	r_a = rec(a);
	b = get(c, B + PG, PG, RW);
	r_b = rec(b);
	hmr__cache_put(c, b);
	hmr__cache_flush(c);
	ASSERT_TRUE(fake_live(r_a));
	ASSERT_TRUE(!fake_live(r_b));
	ASSERT_PTR_EQ(get(c, B, PG, RW), a); /* Still cached. */
	hmr__cache_put(c, a);
	hmr__cache_put(c, a);
	fake_close(&f, c);
}

HMR_TEST(cache_close_busy_with_users)
{
	struct fake_reg *r_a, *r_b;
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	a = get(c, B, PG, RW);
	r_a = rec(a);
	b = get(c, B + PG, PG, RW);
	r_b = rec(b);
	hmr__cache_put(c, b);
	ASSERT_EQ(hmr__cache_close(c), -FI_EBUSY);
	ASSERT_TRUE(!fake_live(r_b)); /* The idle one went. */
	ASSERT_TRUE(fake_live(r_a));
	hmr__cache_put(c, a);
	fake_close(&f, c);
}

HMR_TEST(cache_reg_failure_leaves_nothing)
{
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a = NULL;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	atomic_store(&f.fail, -FI_EIO);
	ASSERT_EQ(hmr__cache_get(c, B, PG, RW, ID1, &a), -FI_EIO);
	ASSERT_TRUE(a == NULL);
	ASSERT_EQ(stats(c).entries, 0);
	a = get(c, B, PG, RW); /* And the next one works. */
	hmr__cache_put(c, a);
	fake_close(&f, c);
}

HMR_TEST(cache_ranges_at_zero_and_top)
{
	struct fake_reg *r_a, *r_z;
	const uintptr_t top = UINTPTR_MAX; /* The last byte. */
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *z, *e;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	ASSERT_EQ(hmr__cache_get(c, B, 0, RW, ID1, &e), -FI_EINVAL);
	/* Ending at 2^64 overflows; ending at 2^64 - 1 does not. */
	ASSERT_EQ(hmr__cache_get(c, top - PG + 1, PG, RW, ID1, &e), -FI_EINVAL);
	ASSERT_EQ(hmr__cache_get(c, top, 1, RW, ID1, &e), -FI_EINVAL);
	a = get(c, top - PG, PG, RW);
	r_a = rec(a);
	z = get(c, 0, PG, RW);
	r_z = rec(z);
	/* Each end of an entry, and one past. */
	ASSERT_PTR_EQ(get(c, top - 1, 1, RW), a);
	ASSERT_PTR_EQ(get(c, top - PG, 1, RW), a);
	ASSERT_PTR_EQ(get(c, 0, 1, RW), z);
	ASSERT_PTR_EQ(get(c, PG - 1, 1, RW), z);
	e = get(c, PG - 1, 2, RW);
	ASSERT_TRUE(e != z);
	hmr__cache_put(c, e);
	e = get(c, top - PG - 1, 2, RW);
	ASSERT_TRUE(e != a);
	hmr__cache_put(c, e);
	hmr__cache_put(c, a);
	hmr__cache_put(c, a);
	hmr__cache_put(c, a);
	hmr__cache_put(c, z);
	hmr__cache_put(c, z);
	hmr__cache_put(c, z);
	/* Invalidations one byte off each end miss; at the end they hit. */
	hmr__cache_invalidate(c, PG, 1);
	hmr__cache_invalidate(c, top, 1); /* Clipped: the last byte. */
	hmr__cache_invalidate(c, top - PG - 1, 1);
	ASSERT_TRUE(fake_live(r_a) && fake_live(r_z));
	hmr__cache_invalidate(c, top - 1, 1);
	ASSERT_TRUE(!fake_live(r_a));
	hmr__cache_invalidate(c, 0, 1);
	ASSERT_TRUE(!fake_live(r_z));
	fake_close(&f, c);
}

/* Entries of every size are found from every byte they cover. */
HMR_TEST(cache_hit_finds_entries_of_every_order)
{
	static const size_t lens[] = {
	        1, 64, PG, PG + 1, 1 << 20, (1 << 20) + 7, 1ULL << 40};
	struct hmr_cache_entry *e[7];
	struct fake f;
	struct hmr_cache *c;
	uintptr_t s;
	unsigned i;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	for (i = 0, s = B; i < 7; s += lens[i] + 3 * PG, i++) {
		e[i] = get(c, s + 100, lens[i], RW);
		hmr__cache_put(c, e[i]);
		ASSERT_PTR_EQ(get(c, s + 100, 1, RW), e[i]);
		ASSERT_PTR_EQ(get(c, s + 100 + lens[i] - 1, 1, RW), e[i]);
		ASSERT_PTR_EQ(get(c, s + 100, lens[i], RW), e[i]);
		hmr__cache_put(c, e[i]);
		hmr__cache_put(c, e[i]);
		hmr__cache_put(c, e[i]);
	}
	ASSERT_EQ(atomic_load(&f.regs), 7);
	/* One wide invalidation finds them all (the walk, not probes). */
	hmr__cache_invalidate(c, B, 1ULL << 44);
	ASSERT_EQ(atomic_load(&f.deregs), 7);
	fake_close(&f, c);
}

/* A second miss of the same range while the first registers (here: from
 * inside the first's reg): both inserted, both valid, none leaked. */
static struct hmr_cache *twice_cache;
static void get_during_reg(struct fake *f, struct hmr_cache_entry *e)
{
	struct hmr_cache_entry *inner;

	f->on_reg = NULL;
	ASSERT_OK(hmr__cache_get(twice_cache, e->start, e->end - e->start, RW,
	                         ID1, &inner));
	f->arg = inner;
}

HMR_TEST(cache_concurrent_misses_of_one_range_both_valid)
{
	struct fake_reg *r_a, *r_b;
	struct fake f;
	struct hmr_cache_entry *a, *b;

	fake_init(&f);
	twice_cache = fake_cache(&f, 100, 0, false, false);
	f.on_reg = get_during_reg;
	a = get(twice_cache, B, PG, RW);
	r_a = rec(a);
	b = f.arg;
	r_b = rec(b);
	ASSERT_TRUE(a != b && fake_live(r_a) && fake_live(r_b));
	hmr__cache_put(twice_cache, a);
	hmr__cache_put(twice_cache, b);
	ASSERT_EQ(atomic_load(&f.regs), 2);
	fake_close(&f, twice_cache);
}

HMR_TEST(cache_invalidate_all_reaches_every_cache)
{
	struct fake f, g;
	struct hmr_cache *c, *d;

	fake_init(&f);
	fake_init(&g);
	c = fake_cache(&f, 100, 0, false, false);
	d = fake_cache(&g, 100, 0, false, false);
	hmr__cache_put(c, get(c, B, PG, RW));
	hmr__cache_put(d, get(d, B, PG, RW));
	hmr__cache_put(d, get(d, B + PG, PG, RW));
	hmr__cache_invalidate_all(B, 1);
	ASSERT_EQ(atomic_load(&f.deregs), 1);
	ASSERT_EQ(atomic_load(&g.deregs), 1);
	hmr__cache_flush_all();
	ASSERT_EQ(atomic_load(&g.deregs), 2);
	fake_close(&f, c);
	fake_close(&g, d);
}

/* Thousands of entries: the hint and hash tables grow on misses; every
 * entry is still found, and an invalidation of half drops exactly half. */
HMR_TEST(cache_many_entries_grow_the_index)
{
	enum { N = 5000 };
	static struct hmr_cache_entry *e[N];
	struct fake f;
	struct hmr_cache *c;
	int i;

	fake_init(&f);
	c = fake_cache(&f, 2 * N, 0, false, false);
	for (i = 0; i < N; i++) {
		e[i] = get(c, B + (uintptr_t)i * 2 * PG, PG, RW);
		hmr__cache_put(c, e[i]);
	}
	for (i = 0; i < N; i++) {
		ASSERT_PTR_EQ(get(c, B + (uintptr_t)i * 2 * PG + 8, 8, RD),
		              e[i]);
		hmr__cache_put(c, e[i]);
	}
	ASSERT_EQ(stats(c).hits, N);
	hmr__cache_invalidate(c, B, (size_t)N * PG);
	ASSERT_EQ(atomic_load(&f.deregs), N / 2);
	ASSERT_EQ(stats(c).entries, N - N / 2);
	fake_close(&f, c);
}

HMR_TEST_MAIN()
