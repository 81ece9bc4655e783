/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_keys.c: requested keys, provider keys, key size, stale keys. */
#define _GNU_SOURCE 1
#include <stdint.h>

#include "core_util.h"

#define MANY 1000

static char buf[4096];

static int try_reg(struct fid_domain *domain, uint64_t key, struct fid_mr **mr)
{
	*mr = NULL;
	return fi_mr_reg(domain, buf, 64, REMOTE_RW, 0, key, 0, mr, NULL);
}

static void reg_key_fails(struct fid_domain *domain, uint64_t key, int err)
{
	struct fid_mr *mr;

	ASSERT_EQ(try_reg(domain, key, &mr), err);
	ASSERT_PTR_EQ(mr, NULL);
}

/* Registering `key` works and returns exactly that key. */
static void reg_key_works(struct fid_domain *domain, uint64_t key)
{
	struct fid_mr *mr;

	ASSERT_OK(try_reg(domain, key, &mr));
	ASSERT_U64_EQ(fi_mr_key(mr), key);
	close_ok(&mr->fid);
}

/* fi_mr: F8 F17 F25 */
HMR_TEST(mr_key_is_requested_key)
{
	struct fid_domain *domain = open_domain(0, 0);
	static const uint64_t keys[] = {0,
	                                1,
	                                0x1234,
	                                0xffffffffULL,
	                                0x8000000000000000ULL,
	                                0xfffffffffffffffeULL};
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		reg_key_works(domain, keys[i]);
	close_ok(&domain->fid);
}

/* fi_mr: F27 */
HMR_TEST(mr_key_requested_in_use_is_enokey)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 77, 0);
	struct fid_mr *other = NULL;
	struct iovec iov = {buf + 100, 10};

	reg_key_fails(domain, 77, -FI_ENOKEY);
	ASSERT_EQ(
	        fi_mr_regv(domain, &iov, 1, REMOTE_RW, 0, 77, 0, &other, NULL),
	        -FI_ENOKEY);
	ASSERT_PTR_EQ(other, NULL);
	/* The refused registration left the first MR alone. */
	ASSERT_U64_EQ(fi_mr_key(mr), 77);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_key_free_again_after_close)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 77, 0);

	close_ok(&mr->fid);
	reg_key_works(domain, 77);
	close_ok(&domain->fid);
}

HMR_TEST(mr_key_requested_used_by_other_domain_is_free)
{
	struct fid_domain *a = open_domain(0, 0);
	struct fid_domain *b = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(a, buf, 64, REMOTE_RW, 77, 0);

	reg_key_works(b, 77);
	close_ok(&mr->fid);
	close_ok(&b->fid);
	close_ok(&a->fid);
}

/* fi_mr: F27 */
HMR_TEST(mr_key_requested_in_use_by_mapped_key_is_enokey)
{
	struct fid_domain *peer = open_domain(0, 0);
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *pmr = reg_ok(peer, buf, 64, REMOTE_RW, 555, 0);
	uint8_t raw[256];
	size_t size = sizeof(raw);
	uint64_t base = 0, key = 0;

	ASSERT_OK(fi_mr_raw_attr(pmr, &base, raw, &size, 0));
	ASSERT_OK(fi_mr_map_raw(domain, base, raw, size, &key, 0));
	/* A peer's raw key maps to the key it carries. */
	ASSERT_U64_EQ(key, 555);
	reg_key_fails(domain, 555, -FI_ENOKEY);
	ASSERT_OK(fi_mr_unmap_key(domain, key));
	reg_key_works(domain, 555);
	close_ok(&pmr->fid);
	close_ok(&domain->fid);
	close_ok(&peer->fid);
}

/* fi_mr: F28 */
HMR_TEST(mr_key_not_avail_is_ekeyrejected)
{
	struct fid_domain *domain = open_domain(0, 0);

	reg_key_fails(domain, FI_KEY_NOTAVAIL, -FI_EKEYREJECTED);
	close_ok(&domain->fid);
}

/* fi_mr: F28 */
HMR_TEST(mr_key_over_key_size_1_is_ekeyrejected)
{
	struct fid_domain *domain = open_domain_keysize(0, 0, 1);

	reg_key_fails(domain, 0x100, -FI_EKEYREJECTED);
	reg_key_fails(domain, 0x1ff, -FI_EKEYREJECTED);
	reg_key_fails(domain, 1ULL << 63, -FI_EKEYREJECTED);
	reg_key_fails(domain, FI_KEY_NOTAVAIL, -FI_EKEYREJECTED);
	reg_key_works(domain, 0xff);
	reg_key_works(domain, 0);
	close_ok(&domain->fid);
}

HMR_TEST(mr_key_over_key_size_2_is_ekeyrejected)
{
	struct fid_domain *domain = open_domain_keysize(0, 0, 2);

	reg_key_fails(domain, 0x10000, -FI_EKEYREJECTED);
	reg_key_fails(domain, 0x1ffff, -FI_EKEYREJECTED);
	reg_key_works(domain, 0xffff);
	reg_key_works(domain, 0x100);
	close_ok(&domain->fid);
}

/* fi_mr: F8 */
HMR_TEST(mr_key_over_key_size_4_is_ekeyrejected)
{
	struct fid_domain *domain = open_domain_keysize(0, 0, 4);

	reg_key_fails(domain, 0x100000000ULL, -FI_EKEYREJECTED);
	reg_key_works(domain, 0xffffffffULL);
	close_ok(&domain->fid);
}

/* fi_mr: F28 */
HMR_TEST(mr_key_rejected_leaves_key_space_unchanged)
{
	struct fid_domain *domain = open_domain_keysize(0, 0, 1);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 0x10, 0);

	/* 0x110 does not fit: rejected, not taken for 0x10. */
	reg_key_fails(domain, 0x110, -FI_EKEYREJECTED);
	reg_key_fails(domain, 0x10, -FI_ENOKEY);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F17 F41 */
HMR_TEST(mr_prov_key_ignores_requested_key)
{
	struct fid_domain *domain = open_domain(FI_MR_PROV_KEY, 0);
	struct fid_mr *a = reg_ok(domain, buf, 64, REMOTE_RW, 7, 0);
	struct fid_mr *b = reg_ok(domain, buf, 64, REMOTE_RW, 7, 0);
	struct fid_mr *c =
	        reg_ok(domain, buf, 64, REMOTE_RW, FI_KEY_NOTAVAIL, 0);

	ASSERT_NE(fi_mr_key(a), fi_mr_key(b));
	ASSERT_NE(fi_mr_key(a), fi_mr_key(c));
	ASSERT_NE(fi_mr_key(b), fi_mr_key(c));
	close_ok(&c->fid);
	close_ok(&b->fid);
	close_ok(&a->fid);
	close_ok(&domain->fid);
}

/* Keys of `n` live MRs are distinct, usable and fit in key_size bytes. */
static void check_unique_prov_keys(size_t key_size, int n)
{
	struct fid_domain *domain =
	        open_domain_keysize(FI_MR_PROV_KEY, 0, key_size);
	uint64_t max =
	        key_size == 8 ? UINT64_MAX : (1ULL << (8 * key_size)) - 1;
	struct fid_mr **mr = calloc((size_t)n, sizeof(*mr));
	void *ptr;
	int i, j;

	ASSERT_TRUE(mr != NULL);
	for (i = 0; i < n; i++) {
		mr[i] = reg_ok(domain, buf + i % 4000, 8, REMOTE_RW, 0, 0);
		ASSERT_TRUE(fi_mr_key(mr[i]) <= max);
		ASSERT_TRUE(fi_mr_key(mr[i]) != FI_KEY_NOTAVAIL);
	}
	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++)
			ASSERT_NE(fi_mr_key(mr[i]), fi_mr_key(mr[j]));
		ptr = NULL;
		ASSERT_OK(hmr_mr_access(domain, fi_mr_key(mr[i]), 0, 8,
		                        FI_REMOTE_READ, &ptr));
		ASSERT_PTR_EQ(ptr, buf + i % 4000);
	}
	for (i = 0; i < n; i++)
		close_ok(&mr[i]->fid);
	free(mr);
	close_ok(&domain->fid);
}

/* fi_mr: F41 */
HMR_TEST(mr_prov_key_unique_over_many_mrs)
{
	check_unique_prov_keys(8, MANY);
}

/* fi_mr: F41 */
HMR_TEST(mr_prov_key_fits_key_size_2)
{
	check_unique_prov_keys(2, MANY);
}

HMR_TEST(mr_prov_key_fits_key_size_1)
{
	check_unique_prov_keys(1, 200);
}

/* fi_mr: F22 */
HMR_TEST(mr_prov_key_stale_after_close_finds_nothing)
{
	struct fid_domain *domain = open_domain(FI_MR_PROV_KEY, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 0, 0);
	uint64_t old = fi_mr_key(mr);
	void *ptr = NULL;
	int i;

	close_ok(&mr->fid);
	for (i = 0; i < 50; i++) {
		mr = reg_ok(domain, buf, 64, REMOTE_RW, 0, 0);
		ASSERT_NE(fi_mr_key(mr), old);
		ASSERT_EQ(
		        hmr_mr_access(domain, old, 0, 8, FI_REMOTE_READ, &ptr),
		        -FI_ENOKEY);
		close_ok(&mr->fid);
	}
	close_ok(&domain->fid);
}

/* fi_mr: F22 */
HMR_TEST(mr_requested_key_stale_after_close_finds_nothing)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 99, 0);
	void *ptr = NULL;

	ASSERT_OK(hmr_mr_access(domain, 99, 0, 8, FI_REMOTE_READ, &ptr));
	close_ok(&mr->fid);
	ASSERT_EQ(hmr_mr_access(domain, 99, 0, 8, FI_REMOTE_READ, &ptr),
	          -FI_ENOKEY);
	close_ok(&domain->fid);
}

/* With a 1-byte key space, keys must wrap around and stay usable. */
HMR_TEST(mr_prov_key_wraps_within_key_size)
{
	struct fid_domain *domain = open_domain_keysize(FI_MR_PROV_KEY, 0, 1);
	uint64_t prev = FI_KEY_NOTAVAIL;
	struct fid_mr *keep = reg_ok(domain, buf, 64, REMOTE_RW, 0, 0);
	struct fid_mr *mr;
	int i;

	for (i = 0; i < 700; i++) {
		mr = reg_ok(domain, buf, 64, REMOTE_RW, 0, 0);
		ASSERT_TRUE(fi_mr_key(mr) <= 0xff);
		/* Not handed out again before the space wraps. */
		ASSERT_NE(fi_mr_key(mr), prev);
		/* Never a live MR's key. */
		ASSERT_NE(fi_mr_key(mr), fi_mr_key(keep));
		prev = fi_mr_key(mr);
		close_ok(&mr->fid);
	}
	close_ok(&keep->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F53 */
HMR_TEST(mr_basic_mode_uses_provider_keys)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain = NULL;
	struct fid_mr *a, *b;

	attr.mr_mode = FI_MR_BASIC;
	ASSERT_OK(hmr_domain_open(&attr, &domain));
	a = reg_ok(domain, buf, 64, REMOTE_RW, 7, 0);
	b = reg_ok(domain, buf, 64, REMOTE_RW, 7, 0);
	ASSERT_NE(fi_mr_key(a), fi_mr_key(b));
	close_ok(&b->fid);
	close_ok(&a->fid);
	close_ok(&domain->fid);
}

/* doc/software-domain.md: a closed provider key comes back only when the
 * key space wraps: with 1-byte keys, 256 registrations in a row (of one
 * thread) all get different keys. */
HMR_TEST(mr_prov_key_not_reissued_before_key_space_wraps)
{
	struct fid_domain *d = open_domain_keysize(FI_MR_PROV_KEY, 0, 1);
	static unsigned char seen[256];
	struct fid_mr *mr;
	int i;

	for (i = 0; i < 256; i++) {
		mr = reg_ok(d, buf, sizeof(buf), FI_REMOTE_READ, 0, 0);
		ASSERT_LT(fi_mr_key(mr), 256);
		ASSERT_EQ(seen[fi_mr_key(mr)], 0);
		seen[fi_mr_key(mr)] = 1;
		close_ok(&mr->fid);
	}
	close_ok(&d->fid);
}

/* Every key of a 1-byte key space is handed out, the last free one too
 * however far the allocator must look for it; then -FI_ENOSPC. */
HMR_TEST(mr_prov_key_last_free_key_of_the_space_is_found)
{
	struct fid_domain *domain = open_domain_keysize(FI_MR_PROV_KEY, 0, 1);
	struct fid_mr *mr[256], *more = NULL;
	uint64_t last;
	int i;

	/* Handed out in turn: mr[255] has the key just behind the one the
	 * allocator tries next, so it is the last one it tries. */
	for (i = 0; i < 256; i++)
		mr[i] = reg_ok(domain, buf, 64, REMOTE_RW, 0, 0);
	last = fi_mr_key(mr[255]);
	close_ok(&mr[255]->fid);
	mr[255] = reg_ok(domain, buf, 64, REMOTE_RW, 0, 0);
	ASSERT_U64_EQ(fi_mr_key(mr[255]), last);
	ASSERT_EQ(fi_mr_reg(domain, buf, 64, REMOTE_RW, 0, 0, 0, &more, NULL),
	          -FI_ENOSPC);
	for (i = 0; i < 256; i++)
		close_ok(&mr[i]->fid);
	close_ok(&domain->fid);
}

HMR_TEST_MAIN()
