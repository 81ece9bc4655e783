/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cache_slab_pages.c: how the slab asks for its pages: populated
 * SLAB_POPULATE indices at a time, huge pages only where the cache may
 * fill one (cache_slab.c), read back from /proc/self/smaps. */
#include <stdio.h>
#include <string.h>

#define rec cache_rec_of
#include "cache/cache_impl.h"
#undef rec
#include "cache_fake.h"

#define B  ((uintptr_t)0x7f0000000000ULL)
#define KB 1024UL

/* The smaps block of the mapping holding p: its Rss in bytes, and
 * whether its VmFlags carry "hg" (MADV_HUGEPAGE: the advice, whatever
 * the system's transparent huge page setting makes of it). */
static void smaps_of(const void *p, unsigned long *rss, bool *hg)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	unsigned long lo, hi, v;
	bool in = false, found = false;

	ASSERT_TRUE(f != NULL);
	*rss = 0;
	*hg = false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, ' ') > strchr(line, '-')) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			found |= in;
		} else if (in && sscanf(line, "Rss: %lu kB", &v) == 1) {
			*rss = v * KB;
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			*hg = strstr(line, " hg") != NULL;
		}
	}
	fclose(f);
	ASSERT_TRUE(found);
}

/* Misses on n distinct 4 KiB ranges from the k-th on, each put back. */
static void miss(struct hmr_cache *c, unsigned k, unsigned n)
{
	struct hmr_cache_entry *e;

	for (n += k; k < n; k++) {
		ASSERT_OK(hmr__cache_get(c, B + (uintptr_t)k * 8192, 4096, 3, 0,
		                         &e));
		hmr__cache_put(c, e);
	}
}

/* What SLAB_POPULATE indices take in the chunk's three arrays. */
static unsigned long run_bytes(unsigned runs)
{
	return runs * 512UL *
	       (sizeof(struct cache_rec) + sizeof(uint64_t) +
	        sizeof(struct cache_ent));
}

/* The first miss backs the pages of 512 indices in one call, not the
 * three pages its own entry touches; the 513th backs the next 512. */
HMR_TEST(cache_slab_pages_are_populated_ahead_of_misses)
{
	struct fake f;
	struct hmr_cache *c;
	unsigned long rss;
	bool hg;

	fake_init(&f);
	c = fake_cache(&f, 1024, 0, false, false);
	miss(c, 0, 1);
	ASSERT_TRUE(c->chunk[0] != NULL);
	smaps_of(c->chunk[0], &rss, &hg);
	ASSERT_TRUE(rss >= run_bytes(1));
	ASSERT_TRUE(rss < run_bytes(2));
	miss(c, 1, 511);
	smaps_of(c->chunk[0], &rss, &hg);
	ASSERT_TRUE(rss < run_bytes(2));
	miss(c, 512, 1);
	smaps_of(c->chunk[0], &rss, &hg);
	ASSERT_TRUE(rss >= run_bytes(2));
	fake_close(&f, c);
}

/* A chunk's first 2 MiB hold 13,312 entries after their records and ids:
 * a cache allowed fewer asks for no huge page (FI_MR_CACHE_MAX_COUNT's
 * default of 1,024 would leave most of 2 MiB resident and unused); one
 * allowed that many or more asks for them. */
HMR_TEST(cache_slab_asks_for_huge_pages_only_where_it_may_fill_one)
{
	static const struct {
		size_t max_count;
		bool huge;
	} cases[] = {{1, false},      {1024, false}, {13311, false},
	             {13312, true},   {13313, true}, {1 << 20, true},
	             {SIZE_MAX, true}};
	struct fake f;
	struct hmr_cache *c;
	unsigned long rss;
	unsigned i;
	bool hg;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fake_init(&f);
		c = fake_cache(&f, cases[i].max_count, 0, false, false);
		miss(c, 0, 1);
		smaps_of(c->chunk[0], &rss, &hg);
		if (hg != cases[i].huge)
			fprintf(stderr, "max_count %zu: hg %d\n",
			        cases[i].max_count, (int)hg);
		ASSERT_TRUE(hg == cases[i].huge);
		fake_close(&f, c);
	}
}

HMR_TEST_MAIN()
