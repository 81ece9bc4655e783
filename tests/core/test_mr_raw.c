/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_raw.c: FI_MR_RAW, fi_mr_raw_attr, fi_mr_map_raw, unmap_key. */
#define _GNU_SOURCE 1
#include <stdint.h>

#include "core_util.h"

#define RAW_MAX 256

static char buf[4096];

/* The raw key of `mr` into raw[], its size returned. */
static size_t get_raw(struct fid_mr *mr, uint8_t *raw, uint64_t *base)
{
	size_t size = RAW_MAX;

	ASSERT_OK(fi_mr_raw_attr(mr, base, raw, &size, 0));
	ASSERT_GT(size, 0);
	ASSERT_LE(size, RAW_MAX);
	return size;
}

/* fi_mr: F34 F54 */
HMR_TEST(mr_raw_mode_key_not_available)
{
	struct fid_domain *domain = open_domain(FI_MR_RAW | FI_MR_PROV_KEY, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 0, 0);

	ASSERT_U64_EQ(fi_mr_key(mr), FI_KEY_NOTAVAIL);
	ASSERT_TRUE(fi_mr_desc(mr) != NULL);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F54 */
HMR_TEST(mr_raw_mode_without_prov_key_hides_key_too)
{
	struct fid_domain *domain = open_domain(FI_MR_RAW, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 12, 0);

	ASSERT_U64_EQ(fi_mr_key(mr), FI_KEY_NOTAVAIL);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F34 */
HMR_TEST(mr_raw_mode_mapped_key_accesses_region)
{
	struct fid_domain *domain = open_domain(FI_MR_RAW | FI_MR_PROV_KEY, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 0, 0);
	uint64_t key = map_own_key(domain, mr);
	void *ptr = NULL;

	ASSERT_OK(hmr_mr_access(domain, key, 16, 8, FI_REMOTE_WRITE, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 16);
	ASSERT_OK(fi_mr_unmap_key(domain, key));
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_raw_attr_rejects_flags)
{
	struct fid_domain *domain = open_domain(FI_MR_RAW, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	uint8_t raw[RAW_MAX];
	size_t size = sizeof(raw);
	uint64_t base;

	ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw, &size, 1), -FI_EBADFLAGS);
	ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw, &size, FI_REMOTE_READ),
	          -FI_EBADFLAGS);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_raw_attr_rejects_null_key_size_or_base)
{
	struct fid_domain *domain = open_domain(FI_MR_RAW, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	uint8_t raw[RAW_MAX];
	size_t size = sizeof(raw);
	uint64_t base;

	ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw, NULL, 0), -FI_EINVAL);
	ASSERT_EQ(fi_mr_raw_attr(mr, NULL, raw, &size, 0), -FI_EINVAL);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F56 */
HMR_TEST(mr_raw_attr_too_small_returns_needed_size)
{
	struct fid_domain *domain = open_domain(FI_MR_RAW, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	uint8_t raw[RAW_MAX];
	size_t size = 1, needed;
	uint64_t base = 0;

	ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw, &size, 0), -FI_ETOOSMALL);
	needed = size;
	ASSERT_GT(needed, 1);
	ASSERT_LE(needed, RAW_MAX);

	size = needed - 1;
	ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw, &size, 0), -FI_ETOOSMALL);
	ASSERT_EQ(size, needed);

	size = needed;
	ASSERT_OK(fi_mr_raw_attr(mr, &base, raw, &size, 0));
	ASSERT_EQ(size, needed);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F55 */
HMR_TEST(mr_raw_attr_base_is_virt_addr_or_zero)
{
	struct fid_domain *virt = open_domain(FI_MR_RAW | FI_MR_VIRT_ADDR, 0);
	struct fid_domain *zero = open_domain(FI_MR_RAW, 0);
	struct fid_mr *a = reg_ok(virt, buf + 32, 64, REMOTE_RW, 1, 0);
	struct fid_mr *b = reg_ok(zero, buf + 32, 64, REMOTE_RW, 1, 0);
	uint8_t raw[RAW_MAX];
	uint64_t base = 1;

	get_raw(a, raw, &base);
	ASSERT_U64_EQ(base, (uintptr_t)(buf + 32));
	base = 1;
	get_raw(b, raw, &base);
	ASSERT_U64_EQ(base, 0);
	close_ok(&b->fid);
	close_ok(&a->fid);
	close_ok(&zero->fid);
	close_ok(&virt->fid);
}

/* fi_mr: F55 */
HMR_TEST(mr_raw_attr_works_without_raw_mode)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 31, 0);
	uint64_t key = map_own_key(domain, mr);
	void *ptr = NULL;

	ASSERT_OK(hmr_mr_access(domain, key, 0, 64, FI_REMOTE_READ, &ptr));
	ASSERT_PTR_EQ(ptr, buf);
	ASSERT_OK(fi_mr_unmap_key(domain, key));
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_map_raw_rejects_flags)
{
	struct fid_domain *domain = open_domain(FI_MR_RAW, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	uint8_t raw[RAW_MAX];
	uint64_t base = 0, key = 0;
	size_t size = get_raw(mr, raw, &base);

	ASSERT_EQ(fi_mr_map_raw(domain, base, raw, size, &key, 1),
	          -FI_EBADFLAGS);
	ASSERT_EQ(fi_mr_map_raw(domain, base, raw, size, &key, 1ULL << 40),
	          -FI_EBADFLAGS);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_map_raw_rejects_wrong_size)
{
	struct fid_domain *domain = open_domain(FI_MR_RAW, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	uint8_t raw[RAW_MAX] = {0};
	uint64_t base = 0, key = 0;
	size_t size = get_raw(mr, raw, &base);

	ASSERT_EQ(fi_mr_map_raw(domain, base, raw, size - 1, &key, 0),
	          -FI_EINVAL);
	ASSERT_EQ(fi_mr_map_raw(domain, base, raw, size + 1, &key, 0),
	          -FI_EINVAL);
	ASSERT_EQ(fi_mr_map_raw(domain, base, raw, 0, &key, 0), -FI_EINVAL);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_map_raw_rejects_garbage)
{
	struct fid_domain *domain = open_domain(FI_MR_RAW, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	uint8_t raw[RAW_MAX];
	uint64_t base = 0, key = 0;
	size_t size = get_raw(mr, raw, &base);

	memset(raw, 0, size);
	ASSERT_EQ(fi_mr_map_raw(domain, base, raw, size, &key, 0), -FI_EINVAL);
	memset(raw, 0xa5, size);
	ASSERT_EQ(fi_mr_map_raw(domain, base, raw, size, &key, 0), -FI_EINVAL);
	memset(raw, 0xff, size);
	ASSERT_EQ(fi_mr_map_raw(domain, base, raw, size, &key, 0), -FI_EINVAL);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/*
 * Flip each byte of a genuine raw key.  A change the domain's check
 * catches is -FI_EINVAL.  A flip may also turn it into another domain's
 * (a peer's) raw key, which maps to the key it carries; but no flip may
 * yield a working key other than the genuine one, and at least one flip
 * must be caught.
 */
HMR_TEST(mr_map_raw_rejects_forged_key)
{
	struct fid_domain *domain = open_domain(FI_MR_RAW | FI_MR_PROV_KEY, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 0, 0);
	struct fid_mr *other = reg_ok(domain, buf + 128, 64, REMOTE_RW, 0, 0);
	uint8_t raw[RAW_MAX];
	uint64_t base = 0, genuine, other_key, key;
	size_t size = get_raw(mr, raw, &base), i;
	int caught = 0, ret;

	genuine = map_own_key(domain, mr);
	ASSERT_OK(fi_mr_unmap_key(domain, genuine));
	other_key = map_own_key(domain, other);
	ASSERT_OK(fi_mr_unmap_key(domain, other_key));
	for (i = 0; i < size; i++) {
		raw[i] ^= 0x5a;
		key = 0;
		ret = fi_mr_map_raw(domain, base, raw, size, &key, 0);
		if (ret == -FI_EINVAL) {
			caught++;
		} else {
			ASSERT_OK(ret);
			ASSERT_NE(key, other_key);
			if (key != genuine) {
				void *ptr = NULL;

				ASSERT_NE(hmr_mr_access(domain, key, 0, 8,
				                        FI_REMOTE_READ, &ptr),
				          0);
			}
			ASSERT_OK(fi_mr_unmap_key(domain, key));
		}
		raw[i] ^= 0x5a;
	}
	ASSERT_GT(caught, 0);
	close_ok(&other->fid);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_map_raw_of_closed_mr_is_enokey)
{
	struct fid_domain *domain = open_domain(FI_MR_RAW | FI_MR_PROV_KEY, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 0, 0);
	uint8_t raw[RAW_MAX];
	uint64_t base = 0, key = 0;
	size_t size = get_raw(mr, raw, &base);

	close_ok(&mr->fid);
	ASSERT_EQ(fi_mr_map_raw(domain, base, raw, size, &key, 0), -FI_ENOKEY);
	close_ok(&domain->fid);
}

/* fi_mr: F58 */
HMR_TEST(mr_map_raw_peer_key_maps_to_carried_key)
{
	struct fid_domain *target = open_domain(0, 0);
	struct fid_domain *peer = open_domain(FI_MR_RAW, 0);
	struct fid_mr *mr = reg_ok(target, buf, 64, REMOTE_RW, 1234, 0);
	uint8_t raw[RAW_MAX];
	uint64_t base = 0, key = 0;
	size_t size = get_raw(mr, raw, &base);

	ASSERT_OK(fi_mr_map_raw(peer, base, raw, size, &key, 0));
	ASSERT_U64_EQ(key, 1234);
	ASSERT_OK(fi_mr_unmap_key(peer, key));
	close_ok(&mr->fid);
	close_ok(&peer->fid);
	close_ok(&target->fid);
}

/* The initiator maps the target's raw key; the target checks the access
 * with the mapped key. */
/* fi_mr: F58 */
HMR_TEST(mr_map_raw_peer_key_accesses_target_region)
{
	struct fid_domain *target =
	        open_domain(FI_MR_RAW | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR, 0);
	struct fid_domain *peer = open_domain(FI_MR_RAW, 0);
	struct fid_mr *mr = reg_ok(target, buf, 64, REMOTE_RW, 0, 0);
	uint8_t raw[RAW_MAX];
	uint64_t base = 0, key = 0;
	size_t size = get_raw(mr, raw, &base);
	void *ptr = NULL;

	ASSERT_U64_EQ(base, (uintptr_t)buf);
	ASSERT_OK(fi_mr_map_raw(peer, base, raw, size, &key, 0));
	ASSERT_OK(
	        hmr_mr_access(target, key, base + 8, 8, FI_REMOTE_WRITE, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 8);
	ASSERT_OK(fi_mr_unmap_key(peer, key));
	close_ok(&mr->fid);
	close_ok(&peer->fid);
	close_ok(&target->fid);
}

/* fi_mr: F59 */
HMR_TEST(mr_unmap_key_not_mapped_is_enokey)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 8, 0);

	ASSERT_EQ(fi_mr_unmap_key(domain, 12345), -FI_ENOKEY);
	/* A registered MR's key was never mapped. */
	ASSERT_EQ(fi_mr_unmap_key(domain, 8), -FI_ENOKEY);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F59 */
HMR_TEST(mr_unmap_key_twice_is_enokey)
{
	struct fid_domain *domain = open_domain(FI_MR_RAW | FI_MR_PROV_KEY, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 0, 0);
	uint64_t key = map_own_key(domain, mr);

	ASSERT_OK(fi_mr_unmap_key(domain, key));
	ASSERT_EQ(fi_mr_unmap_key(domain, key), -FI_ENOKEY);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_unmap_key_of_other_domain_is_enokey)
{
	struct fid_domain *a = open_domain(FI_MR_RAW | FI_MR_PROV_KEY, 0);
	struct fid_domain *b = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(a, buf, 64, REMOTE_RW, 0, 0);
	uint64_t key = map_own_key(a, mr);

	ASSERT_EQ(fi_mr_unmap_key(b, key), -FI_ENOKEY);
	ASSERT_OK(fi_mr_unmap_key(a, key));
	close_ok(&mr->fid);
	close_ok(&b->fid);
	close_ok(&a->fid);
}

/* A peer cannot check a raw key's keyed check, but it checks the rest:
 * a key of another domain with a wrong magic or version is -FI_EINVAL. */
HMR_TEST(mr_map_raw_peer_key_with_bad_header_is_einval)
{
	struct fid_domain *target = open_domain(0, 0);
	struct fid_domain *peer = open_domain(FI_MR_RAW, 0);
	struct fid_mr *mr = reg_ok(target, buf, 64, REMOTE_RW, 77, 0);
	uint8_t raw[RAW_MAX];
	uint64_t base = 0, key = 0;
	size_t size = get_raw(mr, raw, &base), i;

	/* The magic (bytes 0-3), then the version (4-7), each byte alone. */
	for (i = 0; i < 8; i++) {
		raw[i] ^= 0x01;
		ASSERT_EQ(fi_mr_map_raw(peer, base, raw, size, &key, 0),
		          -FI_EINVAL);
		raw[i] ^= 0x01;
	}
	ASSERT_OK(fi_mr_map_raw(peer, base, raw, size, &key, 0));
	ASSERT_U64_EQ(key, 77);
	ASSERT_OK(fi_mr_unmap_key(peer, key));
	close_ok(&mr->fid);
	close_ok(&peer->fid);
	close_ok(&target->fid);
}

/* Mapping counts: a key mapped twice needs two unmaps, and the domain is
 * busy until the last. */
HMR_TEST(mr_map_raw_twice_needs_two_unmaps)
{
	struct fid_domain *target = open_domain(0, 0);
	struct fid_domain *peer = open_domain(FI_MR_RAW, 0);
	struct fid_mr *mr = reg_ok(target, buf, 64, REMOTE_RW, 5, 0);
	uint8_t raw[RAW_MAX];
	uint64_t base = 0, key = 0;
	size_t size = get_raw(mr, raw, &base);

	ASSERT_OK(fi_mr_map_raw(peer, base, raw, size, &key, 0));
	ASSERT_OK(fi_mr_map_raw(peer, base, raw, size, &key, 0));
	ASSERT_OK(fi_mr_unmap_key(peer, key));
	ASSERT_EQ(fi_close(&peer->fid), -FI_EBUSY);
	ASSERT_OK(fi_mr_unmap_key(peer, key));
	ASSERT_EQ(fi_mr_unmap_key(peer, key), -FI_ENOKEY);
	close_ok(&mr->fid);
	close_ok(&peer->fid);
	close_ok(&target->fid);
}

HMR_TEST_MAIN()
