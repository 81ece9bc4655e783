/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_domain_open.c: hmr_domain_open attrs, effective mr_mode, closing. */
#define _GNU_SOURCE 1
#include <stddef.h>
#include <sys/uio.h>

#include "core_util.h"

#define EMULABLE                                                               \
	(FI_MR_LOCAL | FI_MR_RAW | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |         \
	 FI_MR_PROV_KEY | FI_MR_MMU_NOTIFY | FI_MR_ENDPOINT)

static int open_attr(struct hmr_domain_attr *attr)
{
	struct fid_domain *domain = NULL;
	int ret = hmr_domain_open(attr, &domain);

	if (ret == 0)
		close_ok(&domain->fid);
	return ret;
}

static uint64_t effective_mode(struct fid_domain *domain)
{
	uint64_t mode = 0xdeadbeef;

	ASSERT_OK(hmr_domain_mr_mode(domain, &mode));
	return mode;
}

static uint64_t effective_mode_of(uint64_t mr_mode, uint64_t caps,
                                  uint64_t flags)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain = NULL;
	uint64_t mode;

	attr.mr_mode = mr_mode;
	attr.caps = caps;
	attr.flags = flags;
	ASSERT_OK(hmr_domain_open(&attr, &domain));
	mode = effective_mode(domain);
	close_ok(&domain->fid);
	return mode;
}

HMR_TEST(domain_open_null_attr_is_software_default)
{
	struct fid_domain *domain = NULL;
	uint64_t caps = 1;

	ASSERT_OK(hmr_domain_open(NULL, &domain));
	ASSERT_TRUE(domain != NULL);
	ASSERT_EQ(domain->fid.fclass, FI_CLASS_DOMAIN);
	/* HMR_MR_MODE_DEFAULT asked, and the software domain needs none. */
	ASSERT_U64_EQ(effective_mode(domain), 0);
	ASSERT_OK(hmr_domain_caps(domain, &caps));
	ASSERT_U64_EQ(caps, 0);
	close_ok(&domain->fid);
}

HMR_TEST(domain_open_null_attr_has_8_byte_keys)
{
	struct fid_domain *domain = NULL;
	struct fid_mr *mr;
	char buf[64];

	ASSERT_OK(hmr_domain_open(NULL, &domain));
	mr = reg_ok(domain, buf, sizeof(buf), REMOTE_RW, 0xfffffffffffffffeULL,
	            0);
	ASSERT_U64_EQ(fi_mr_key(mr), 0xfffffffffffffffeULL);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(domain_open_null_attr_has_iov_limit_4)
{
	struct fid_domain *domain = NULL;
	struct fid_mr *mr = NULL;
	struct iovec iov[5];
	char buf[5][32];
	int i;

	for (i = 0; i < 5; i++) {
		iov[i].iov_base = buf[i];
		iov[i].iov_len = sizeof(buf[i]);
	}
	ASSERT_OK(hmr_domain_open(NULL, &domain));
	ASSERT_EQ(fi_mr_regv(domain, iov, 5, REMOTE_RW, 0, 1, 0, &mr, NULL),
	          -FI_EINVAL);
	ASSERT_OK(fi_mr_regv(domain, iov, 4, REMOTE_RW, 0, 1, 0, &mr, NULL));
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(domain_open_rejects_null_out_pointer)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	ASSERT_EQ(hmr_domain_open(&attr, NULL), -FI_EINVAL);
	ASSERT_EQ(hmr_domain_open(NULL, NULL), -FI_EINVAL);
}

HMR_TEST(domain_open_rejects_size_short_of_mr_mode)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.size = offsetof(struct hmr_domain_attr, mr_mode) +
	            sizeof(attr.mr_mode) - 1;
	ASSERT_EQ(open_attr(&attr), -FI_EINVAL);
	attr.size = 0;
	ASSERT_EQ(open_attr(&attr), -FI_EINVAL);
}

/*
 * A size that ends inside a field reads none of that field: here half of
 * auth_key_size (0x11 in its first byte) with a 1-byte auth key, which a
 * torn read would take for a 17-byte key and read past (found by
 * fuzz_domain_attr; ASan watches the read).  The domain opens with no
 * auth key, as if the struct ended before the field.
 */
HMR_TEST(domain_open_size_ending_inside_a_field_reads_none_of_it)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	unsigned char *key = malloc(1);
	struct fid_domain *d;

	ASSERT_TRUE(key != NULL);
	key[0] = 7;
	attr.auth_key = key;
	attr.auth_key_size = 0x1100000011ULL;
	attr.size = offsetof(struct hmr_domain_attr, auth_key_size) + 1;
	ASSERT_OK(hmr_domain_open(&attr, &d));
	ASSERT_OK(fi_close(&d->fid));
	/* The whole field, too big: refused. */
	attr.size = offsetof(struct hmr_domain_attr, auth_key_size) +
	            sizeof(attr.auth_key_size);
	ASSERT_EQ(open_attr(&attr), -FI_EINVAL);
	free(key);
}

/* The first fields of struct hmr_domain_attr: an older caller's struct. */
struct old_domain_attr {
	size_t size;
	enum hmr_domain_kind kind;
	uint32_t fi_version;
	uint64_t mr_mode;
};

/* An old caller's struct ends at mr_mode: the library must read nothing
 * past it (ASan sees an over-read of this heap block). */
HMR_TEST(domain_open_size_up_to_mr_mode_reads_no_further)
{
	struct old_domain_attr *old = calloc(1, sizeof(*old));
	struct fid_domain *domain = NULL;
	uint64_t caps = 1;

	_Static_assert(sizeof(struct old_domain_attr) ==
	                       offsetof(struct hmr_domain_attr, caps),
	               "old layout");
	ASSERT_TRUE(old != NULL);
	old->size = sizeof(*old);
	old->kind = HMR_DOMAIN_SOFTWARE;
	old->mr_mode = FI_MR_PROV_KEY;
	ASSERT_OK(
	        hmr_domain_open((const struct hmr_domain_attr *)old, &domain));
	/* flags (EMULATE) lies past size: the bit is cleared as usual. */
	ASSERT_U64_EQ(effective_mode(domain), 0);
	ASSERT_OK(hmr_domain_caps(domain, &caps));
	ASSERT_U64_EQ(caps, 0);
	close_ok(&domain->fid);
	free(old);
}

HMR_TEST(domain_open_ignores_fields_past_size)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	/* Invalid values past `size` are never read. */
	attr.size = offsetof(struct hmr_domain_attr, caps);
	attr.caps = 1ULL << 63;
	attr.mr_key_size = 100;
	ASSERT_OK(open_attr(&attr));
}

HMR_TEST(domain_open_rejects_unknown_kind)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.kind = (enum hmr_domain_kind)7;
	ASSERT_EQ(open_attr(&attr), -FI_EINVAL);
}

HMR_TEST(domain_open_rejects_unknown_caps)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.caps = FI_RMA | (1ULL << 5); /* FI_MULTICAST */
	ASSERT_EQ(open_attr(&attr), -FI_EINVAL);
	attr.caps = 1ULL << 63;
	ASSERT_EQ(open_attr(&attr), -FI_EINVAL);
}

HMR_TEST(domain_open_accepts_every_listed_cap)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain = NULL;
	uint64_t caps = 0;

	attr.caps = FI_HMEM | FI_RMA_EVENT | FI_RMA_PMEM | FI_COLLECTIVE |
	            FI_RMA | FI_ATOMIC | FI_MSG | FI_TAGGED | FI_READ |
	            FI_WRITE | FI_SEND | FI_RECV | FI_REMOTE_READ |
	            FI_REMOTE_WRITE;
	ASSERT_OK(hmr_domain_open(&attr, &domain));
	ASSERT_OK(hmr_domain_caps(domain, &caps));
	ASSERT_U64_EQ(caps, attr.caps);
	close_ok(&domain->fid);
}

/* fi_mr: F8 */
HMR_TEST(domain_open_rejects_key_size_over_8)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.mr_key_size = 9;
	ASSERT_EQ(open_attr(&attr), -FI_EINVAL);
	attr.mr_key_size = 8;
	ASSERT_OK(open_attr(&attr));
	attr.mr_key_size = 1;
	ASSERT_OK(open_attr(&attr));
}

HMR_TEST(domain_open_rejects_iov_limit_over_max)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.mr_iov_limit = HMR_MR_IOV_LIMIT_MAX + 1;
	ASSERT_EQ(open_attr(&attr), -FI_EINVAL);
	attr.mr_iov_limit = HMR_MR_IOV_LIMIT_MAX;
	ASSERT_OK(open_attr(&attr));
}

HMR_TEST(domain_open_rejects_auth_key_over_max)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	static const char key[HMR_AUTH_KEY_MAX + 1];

	attr.auth_key = key;
	attr.auth_key_size = HMR_AUTH_KEY_MAX + 1;
	ASSERT_EQ(open_attr(&attr), -FI_EINVAL);
	attr.auth_key_size = HMR_AUTH_KEY_MAX;
	ASSERT_OK(open_attr(&attr));
}

HMR_TEST(domain_open_rejects_auth_key_size_with_null_key)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.auth_key = NULL;
	attr.auth_key_size = 4;
	ASSERT_EQ(open_attr(&attr), -FI_EINVAL);
}

/* fi_mr: F51 */
HMR_TEST(domain_open_rejects_basic_with_other_bits)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.mr_mode = FI_MR_BASIC | FI_MR_LOCAL;
	ASSERT_EQ(open_attr(&attr), -FI_EINVAL);
	attr.mr_mode = FI_MR_BASIC | FI_MR_VIRT_ADDR;
	attr.flags = HMR_DOMAIN_EMULATE_MR_MODE;
	ASSERT_EQ(open_attr(&attr), -FI_EINVAL);
}

/* fi_mr: F10 */
HMR_TEST(domain_mr_mode_software_clears_every_bit)
{
	ASSERT_U64_EQ(effective_mode_of(HMR_MR_MODE_DEFAULT, 0, 0), 0);
	ASSERT_U64_EQ(
	        effective_mode_of(EMULABLE | FI_MR_HMEM | FI_MR_COLLECTIVE |
	                                  FI_MR_RMA_EVENT,
	                          FI_HMEM | FI_COLLECTIVE | FI_RMA_EVENT, 0),
	        0);
}

/* fi_mr: F52 */
HMR_TEST(domain_mr_mode_basic_stays_basic)
{
	ASSERT_U64_EQ(effective_mode_of(FI_MR_BASIC, 0, 0), FI_MR_BASIC);
	ASSERT_U64_EQ(
	        effective_mode_of(FI_MR_BASIC, 0, HMR_DOMAIN_EMULATE_MR_MODE),
	        FI_MR_BASIC);
}

/* fi_mr: F4 */
HMR_TEST(domain_mr_mode_scalable_means_zero)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain = NULL;
	struct fid_mr *mr;
	char buf[64];

	ASSERT_U64_EQ(effective_mode_of(FI_MR_SCALABLE, 0, 0), 0);
	attr.mr_mode = FI_MR_SCALABLE;
	attr.flags = HMR_DOMAIN_EMULATE_MR_MODE;
	ASSERT_OK(hmr_domain_open(&attr, &domain));
	ASSERT_U64_EQ(effective_mode(domain), 0);
	/* Scalable registration: the application picks the key. */
	mr = reg_ok(domain, buf, sizeof(buf), REMOTE_RW, 4242, 0);
	ASSERT_U64_EQ(fi_mr_key(mr), 4242);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F10 */
HMR_TEST(domain_mr_mode_clears_unknown_bits)
{
	uint64_t unknown = (1ULL << 12) | (1ULL << 20) | (1ULL << 40);

	ASSERT_U64_EQ(effective_mode_of(FI_MR_PROV_KEY | unknown, 0,
	                                HMR_DOMAIN_EMULATE_MR_MODE),
	              FI_MR_PROV_KEY);
	ASSERT_U64_EQ(effective_mode_of(unknown, 0, HMR_DOMAIN_EMULATE_MR_MODE),
	              0);
}

HMR_TEST(domain_mr_mode_emulate_keeps_requested_bits)
{
	ASSERT_U64_EQ(
	        effective_mode_of(EMULABLE, 0, HMR_DOMAIN_EMULATE_MR_MODE),
	        EMULABLE);
	ASSERT_U64_EQ(effective_mode_of(FI_MR_RAW | FI_MR_ENDPOINT, 0,
	                                HMR_DOMAIN_EMULATE_MR_MODE),
	              FI_MR_RAW | FI_MR_ENDPOINT);
	ASSERT_U64_EQ(effective_mode_of(0, 0, HMR_DOMAIN_EMULATE_MR_MODE), 0);
}

/* fi_mr: F46 F50 */
HMR_TEST(domain_mr_mode_emulate_needs_caps_for_hmem_coll_rma_event)
{
	uint64_t capped = FI_MR_HMEM | FI_MR_COLLECTIVE | FI_MR_RMA_EVENT;

	ASSERT_U64_EQ(effective_mode_of(EMULABLE | capped, 0,
	                                HMR_DOMAIN_EMULATE_MR_MODE),
	              EMULABLE);
	ASSERT_U64_EQ(effective_mode_of(EMULABLE | capped,
	                                FI_HMEM | FI_COLLECTIVE | FI_RMA_EVENT,
	                                HMR_DOMAIN_EMULATE_MR_MODE),
	              EMULABLE | capped);
	ASSERT_U64_EQ(
	        effective_mode_of(capped, FI_HMEM, HMR_DOMAIN_EMULATE_MR_MODE),
	        FI_MR_HMEM);
	ASSERT_U64_EQ(effective_mode_of(capped, FI_COLLECTIVE,
	                                HMR_DOMAIN_EMULATE_MR_MODE),
	              FI_MR_COLLECTIVE);
	ASSERT_U64_EQ(effective_mode_of(capped, FI_RMA_EVENT,
	                                HMR_DOMAIN_EMULATE_MR_MODE),
	              FI_MR_RMA_EVENT);
}

HMR_TEST(domain_probe_software_is_usable)
{
	char why[128] = "untouched";
	const char *name = hmr_domain_kind_name(HMR_DOMAIN_SOFTWARE);

	ASSERT_EQ(hmr_domain_probe(HMR_DOMAIN_SOFTWARE, why, sizeof(why)), 0);
	ASSERT_TRUE(name != NULL);
	ASSERT_TRUE(name[0] != '\0');
}

HMR_TEST(version_matches_header)
{
	char want[32];
	const char *s = hmr_version_string();

	ASSERT_EQ(hmr_version(), HMR_VERSION);
	ASSERT_TRUE(s != NULL);
	snprintf(want, sizeof(want), "%d.%d.%d", HMR_VERSION_MAJOR,
	         HMR_VERSION_MINOR, HMR_VERSION_PATCH);
	ASSERT_TRUE(strstr(s, want) != NULL);
}

/* fi_mr: F26 */
HMR_TEST(strerror_ignores_sign_and_never_returns_null)
{
	static const int codes[] = {0,
	                            FI_EINVAL,
	                            FI_ENOKEY,
	                            FI_EKEYREJECTED,
	                            FI_EBADFLAGS,
	                            FI_ETOOSMALL,
	                            FI_EOPBADSTATE,
	                            FI_ENOSYS,
	                            FI_EBUSY};
	size_t i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *pos = hmr_strerror(codes[i]);
		const char *neg = hmr_strerror(-codes[i]);

		ASSERT_TRUE(pos != NULL);
		ASSERT_TRUE(neg != NULL);
		ASSERT_EQ(strcmp(pos, neg), 0);
	}
	ASSERT_TRUE(strcmp(hmr_strerror(-FI_ENOKEY),
	                   hmr_strerror(-FI_EINVAL)) != 0);
	ASSERT_TRUE(strcmp(hmr_strerror(-FI_EBADFLAGS),
	                   hmr_strerror(-FI_ETOOSMALL)) != 0);
}

/* An unknown code still gets a message, and it stays valid across later
 * calls (printf("%s %s", hmr_strerror(a), hmr_strerror(b)) is common). */
HMR_TEST(strerror_unknown_code_message_outlives_next_call)
{
	const char *first = hmr_strerror(-12345);
	const char *second;

	ASSERT_TRUE(first != NULL);
	second = hmr_strerror(-23456);
	ASSERT_TRUE(second != NULL);
	ASSERT_TRUE(first[0] != '\0');
	ASSERT_TRUE(strlen(first) < 1000);
	ASSERT_TRUE(hmr_strerror(FI_ERRNO_MAX + 5) != NULL);
}

HMR_TEST(domain_close_busy_while_mr_open)
{
	struct fid_domain *domain = open_domain(0, 0);
	char buf[64];
	struct fid_mr *mr = reg_ok(domain, buf, sizeof(buf), REMOTE_RW, 1, 0);

	ASSERT_EQ(fi_close(&domain->fid), -FI_EBUSY);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(domain_close_busy_while_counter_open)
{
	struct fid_domain *domain = open_domain(0, FI_RMA_EVENT);
	struct fid_cntr *cntr = NULL;

	ASSERT_OK(hmr_cntr_open(domain, &cntr));
	ASSERT_EQ(fi_close(&domain->fid), -FI_EBUSY);
	close_ok(&cntr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(domain_close_busy_while_endpoint_open)
{
	struct fid_domain *domain = open_domain(FI_MR_ENDPOINT, 0);
	struct fid *ep = NULL;

	ASSERT_OK(hmr_ep_open(domain, &ep));
	ASSERT_EQ(fi_close(&domain->fid), -FI_EBUSY);
	close_ok(ep);
	close_ok(&domain->fid);
}

/* fi_mr: F59 */
HMR_TEST(domain_close_busy_while_key_mapped)
{
	struct fid_domain *peer = open_domain(0, 0);
	struct fid_domain *domain = open_domain(0, 0);
	char buf[64];
	struct fid_mr *mr = reg_ok(peer, buf, sizeof(buf), REMOTE_RW, 9, 0);
	uint8_t raw[256];
	size_t size = sizeof(raw);
	uint64_t base = 0, key = 0;

	/* A peer's raw key mapped here stays mapped until unmapped. */
	ASSERT_OK(fi_mr_raw_attr(mr, &base, raw, &size, 0));
	ASSERT_OK(fi_mr_map_raw(domain, base, raw, size, &key, 0));
	close_ok(&mr->fid);
	close_ok(&peer->fid);
	ASSERT_EQ(fi_close(&domain->fid), -FI_EBUSY);
	ASSERT_OK(fi_mr_unmap_key(domain, key));
	close_ok(&domain->fid);
}

HMR_TEST(domain_second_close_is_ebadf)
{
	struct fid_domain *domain = NULL;

	ASSERT_OK(hmr_domain_open(NULL, &domain));
	close_ok(&domain->fid);
	ASSERT_EQ(fi_close(&domain->fid), -FI_EBADF);
}

HMR_TEST_MAIN()
