/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cache_records.c: what a hit compares in the 16-byte hit record
 * (start, length less one up to 1 MiB, 21 access bits), in the slab's
 * array of ids (a memory id other than 0) and in the entry instead
 * (anything larger: FAR), at each bound and one past; the reference
 * count's limit; the record a put finds from an entry's address in every
 * slab chunk; records a line per thread. */
#include <pthread.h>

/* The cache's own view of an entry's record, under a name of its own
 * (cache_fake.h's rec() is the fake registration). */
#define rec cache_rec_of
#include "cache/cache_impl.h"
#undef rec
#include "cache_fake.h"

#define B   ((uintptr_t)0x7f0000000000ULL)
#define PG  4096
#define MIB ((size_t)1 << 20)
#define RW  3ULL

/* Whether a get of [s, s + len) is a hit on `want` (else a miss, whose
 * new registration is put back). */
static bool hits(struct hmr_cache *c, uintptr_t s, size_t len, uint64_t access,
                 uint64_t id, struct hmr_cache_entry *want)
{
	struct hmr_cache_entry *e;

	ASSERT_OK(hmr__cache_get(c, s, len, access, id, &e));
	hmr__cache_put(c, e);
	return e == want;
}

static struct hmr_cache_entry *held(struct hmr_cache *c, uintptr_t s,
                                    size_t len, uint64_t access, uint64_t id)
{
	struct hmr_cache_entry *e;

	ASSERT_OK(hmr__cache_get(c, s, len, access, id, &e));
	return e;
}

/* An entry of `len` at s: covered requests hit, one byte past either end
 * misses. */
static void check_bounds(struct hmr_cache *c, uintptr_t s, size_t len,
                         uint64_t id)
{
	struct hmr_cache_entry *e = held(c, s, len, RW, id);

	ASSERT_TRUE(hits(c, s, len, RW, id, e));
	ASSERT_TRUE(hits(c, s, 1, RW, id, e));
	ASSERT_TRUE(hits(c, s + len - 1, 1, RW, id, e));
	if (len > 8)
		ASSERT_TRUE(hits(c, s + 8, len - 8, RW, id, e));
	ASSERT_TRUE(!hits(c, s, len + 1, RW, id, e));
	ASSERT_TRUE(!hits(c, s + len - 1, 2, RW, id, e));
	ASSERT_TRUE(!hits(c, s - 1, 2, RW, id, e));
	ASSERT_TRUE(!hits(c, s + 8, len, RW, id, e));
	hmr__cache_put(c, e);
}

/* Lengths around the record's limit (1 MiB: packed; 1 MiB + 1: FAR),
 * and the smallest, for host memory and for a device id. */
HMR_TEST(cache_hit_covers_whole_range_at_record_length_limits)
{
	static const size_t lens[] = {1,       2,   PG - 1,  PG,     PG + 1,
	                              MIB - 1, MIB, MIB + 1, 2 * MIB};
	struct fake f;
	struct hmr_cache *c;
	unsigned i;

	fake_init(&f);
	c = fake_cache(&f, 1000, 0, false, false);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		check_bounds(c, B + i * 4 * MIB + 64, lens[i], 0);
		check_bounds(c, B + (64 + i * 4) * MIB + 64, lens[i], 7);
	}
	fake_close(&f, c);
}

/* The memory identity decides on every hit: packed (id 0) or not. */
/* fi_mr: F115 */
HMR_TEST(cache_hit_needs_the_same_memory_id)
{
	struct hmr_cache_entry *host, *dev;
	struct fake f;
	struct hmr_cache *c;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	host = held(c, B, PG, RW, 0);
	dev = held(c, B + 4 * PG, PG, RW, 7);
	ASSERT_TRUE(hits(c, B, PG, RW, 0, host));
	ASSERT_TRUE(!hits(c, B, PG, RW, 7, host));
	ASSERT_TRUE(hits(c, B + 4 * PG, PG, RW, 7, dev));
	ASSERT_TRUE(!hits(c, B + 4 * PG, PG, RW, 0, dev));
	ASSERT_TRUE(!hits(c, B + 4 * PG, PG, RW, 8, dev));
	hmr__cache_put(c, host);
	hmr__cache_put(c, dev);
	fake_close(&f, c);
}

/* Access bits: 21 packed (bit 20 the last), a higher one makes the entry
 * FAR; either way a hit needs every requested bit. */
HMR_TEST(cache_hit_needs_every_access_bit_packed_or_not)
{
	const uint64_t last = 1ULL << 20, far = 1ULL << 21;
	struct hmr_cache_entry *p, *q;
	struct fake f;
	struct hmr_cache *c;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	p = held(c, B, PG, 1 | last, 0);
	q = held(c, B + 4 * PG, PG, 1 | far, 0);
	ASSERT_TRUE(hits(c, B, PG, last, 0, p));
	ASSERT_TRUE(hits(c, B, PG, 1 | last, 0, p));
	ASSERT_TRUE(!hits(c, B, PG, 2, 0, p));
	ASSERT_TRUE(!hits(c, B, PG, far, 0, p));
	ASSERT_TRUE(hits(c, B + 4 * PG, PG, far, 0, q));
	ASSERT_TRUE(hits(c, B + 4 * PG, PG, 1 | far, 0, q));
	ASSERT_TRUE(!hits(c, B + 4 * PG, PG, last, 0, q));
	ASSERT_TRUE(!hits(c, B + 4 * PG, PG, far << 1, 0, q));
	hmr__cache_put(c, p);
	hmr__cache_put(c, q);
	fake_close(&f, c);
}

/* 2^19 - 1 users of one entry at once is the count's limit: the next get
 * registers again (a valid registration of its own), and the entry is
 * deregistered only after its last user. */
HMR_TEST(cache_count_at_its_limit_registers_again)
{
	const long limit = (1L << 19) - 1;
	struct hmr_cache_entry *e, *more;
	struct fake f;
	struct hmr_cache *c;
	long i;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	e = held(c, B, PG, RW, 0);
	for (i = 1; i < limit; i++)
		ASSERT_PTR_EQ(held(c, B, PG, RW, 0), e);
	more = held(c, B, PG, RW, 0);
	ASSERT_TRUE(more != e);
	ASSERT_EQ(atomic_load(&f.regs), 2);
	ASSERT_TRUE(fake_live(rec(more)));
	hmr__cache_put(c, more);
	hmr__cache_invalidate(c, B, PG);
	for (i = 0; i < limit; i++) {
		ASSERT_TRUE(fake_live(rec(e)));
		hmr__cache_put(c, e);
	}
	ASSERT_TRUE(!fake_live(rec(e)));
	ASSERT_EQ(atomic_load(&f.deregs), 2);
	fake_close(&f, c);
}

/* Entries in the first slab chunk and past it (16,384 a chunk): each
 * put drops its own entry's count, so an invalidation deregisters none
 * while held and each at its own last put. */
HMR_TEST(cache_put_counts_down_its_own_entry_in_every_chunk)
{
	enum { N = (1 << 14) + 100 };
	struct hmr_cache_entry **e = calloc(N, sizeof(*e));
	struct fake f;
	struct hmr_cache *c;
	long i;

	ASSERT_TRUE(e != NULL);
	fake_init(&f);
	c = fake_cache(&f, 2 * N, 0, false, false);
	for (i = 0; i < N; i++) {
		e[i] = held(c, B + (uintptr_t)i * 2 * PG, PG, RW, 0);
		ASSERT_PTR_EQ(held(c, B + (uintptr_t)i * 2 * PG, PG, RW, 0),
		              e[i]);
		hmr__cache_put(c, e[i]);
	}
	hmr__cache_invalidate(c, B, (size_t)N * 2 * PG);
	ASSERT_EQ(atomic_load(&f.deregs), 0);
	for (i = N - 1; i >= 0; i -= 2) {
		hmr__cache_put(c, e[i]);
		ASSERT_TRUE(!fake_live(rec(e[i])));
		ASSERT_TRUE(fake_live(rec(e[i - 1])));
	}
	for (i = 0; i < N; i += 2)
		hmr__cache_put(c, e[i]);
	ASSERT_EQ(atomic_load(&f.deregs), N);
	fake_close(&f, c);
	free(e);
}

struct taker {
	struct hmr_cache *c;
	uintptr_t at;
	struct hmr_cache_entry *e[3];
};

static void *take_three(void *arg)
{
	struct taker *t = arg;
	int i;

	for (i = 0; i < 3; i++)
		t->e[i] = held(t->c, t->at + (uintptr_t)i * 2 * PG, PG, RW, 0);
	return NULL;
}

static uintptr_t line_of(struct hmr_cache_entry *e)
{
	return (uintptr_t)cache_rec_of(e) / 64;
}

/* Two threads' misses take records of different lines (a thread takes a
 * line's records together, four), so their hits write no common line;
 * one thread's next misses take the next records of its line. */
HMR_TEST(cache_threads_records_share_no_line)
{
	struct taker t[2];
	pthread_t th;
	struct fake f;
	struct hmr_cache *c;
	int k;

	fake_init(&f);
	c = fake_cache(&f, 100, 0, false, false);
	for (k = 0; k < 2; k++) {
		t[k] = (struct taker){.c = c, .at = B + (uintptr_t)k * MIB};
		ASSERT_EQ(pthread_create(&th, NULL, take_three, &t[k]), 0);
		ASSERT_EQ(pthread_join(th, NULL), 0);
	}
	for (k = 0; k < 2; k++) {
		ASSERT_TRUE(line_of(t[k].e[0]) == line_of(t[k].e[1]));
		ASSERT_TRUE(line_of(t[k].e[0]) == line_of(t[k].e[2]));
	}
	ASSERT_TRUE(line_of(t[0].e[0]) != line_of(t[1].e[0]));
	for (k = 0; k < 6; k++)
		hmr__cache_put(c, t[k / 3].e[k % 3]);
	fake_close(&f, c);
}

HMR_TEST_MAIN()
