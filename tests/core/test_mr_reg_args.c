/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_reg_args.c: argument errors of fi_mr_reg, fi_mr_regv, regattr. */
#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "core_util.h"

static char buf[4096];

/* Registration that must fail with `err`; nothing is returned in *mr. */
static void reg_fails(struct fid_domain *domain, const void *addr, size_t len,
                      uint64_t access, uint64_t offset, uint64_t flags, int err)
{
	struct fid_mr *mr = NULL;

	ASSERT_EQ(fi_mr_reg(domain, addr, len, access, offset, 1, flags, &mr,
	                    NULL),
	          err);
	ASSERT_PTR_EQ(mr, NULL);
}

static void regv_fails(struct fid_domain *domain, const struct iovec *iov,
                       size_t count, int err)
{
	struct fid_mr *mr = NULL;

	ASSERT_EQ(fi_mr_regv(domain, iov, count, REMOTE_RW, 0, 1, 0, &mr, NULL),
	          err);
	ASSERT_PTR_EQ(mr, NULL);
}

static void regattr_fails(struct fid_domain *domain,
                          const struct fi_mr_attr *attr, uint64_t flags,
                          int err)
{
	struct fid_mr *mr = NULL;

	ASSERT_EQ(fi_mr_regattr(domain, attr, flags, &mr), err);
	ASSERT_PTR_EQ(mr, NULL);
}

static void fill_iov(struct iovec *iov, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		iov[i].iov_base = buf + i * 16;
		iov[i].iov_len = 16;
	}
}

HMR_TEST(mr_reg_rejects_null_mr)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct iovec iov = {buf, sizeof(buf)};
	struct fi_mr_attr attr;

	ASSERT_EQ(fi_mr_reg(domain, buf, sizeof(buf), REMOTE_RW, 0, 1, 0, NULL,
	                    NULL),
	          -FI_EINVAL);
	ASSERT_EQ(fi_mr_regv(domain, &iov, 1, REMOTE_RW, 0, 1, 0, NULL, NULL),
	          -FI_EINVAL);
	attr_init(&attr, &iov, buf, sizeof(buf), REMOTE_RW, 1);
	ASSERT_EQ(fi_mr_regattr(domain, &attr, 0, NULL), -FI_EINVAL);
	close_ok(&domain->fid);
}

/* fi_mr: F18 */
HMR_TEST(mr_reg_rejects_nonzero_offset)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct iovec iov;
	struct fi_mr_attr attr;

	reg_fails(domain, buf, sizeof(buf), REMOTE_RW, 1, 0, -FI_EINVAL);
	reg_fails(domain, buf, sizeof(buf), REMOTE_RW, 4096, 0, -FI_EINVAL);
	attr_init(&attr, &iov, buf, sizeof(buf), REMOTE_RW, 1);
	attr.offset = 8;
	regattr_fails(domain, &attr, 0, -FI_EINVAL);
	close_ok(&domain->fid);
}

/* fi_mr: F26 */
HMR_TEST(mr_reg_rejects_zero_length)
{
	struct fid_domain *domain = open_domain(0, 0);

	reg_fails(domain, buf, 0, REMOTE_RW, 0, 0, -FI_EINVAL);
	close_ok(&domain->fid);
}

HMR_TEST(mr_reg_rejects_null_buf)
{
	struct fid_domain *domain = open_domain(0, 0);

	reg_fails(domain, NULL, 64, REMOTE_RW, 0, 0, -FI_EINVAL);
	close_ok(&domain->fid);
}

HMR_TEST(mr_reg_rejects_address_overflow)
{
	struct fid_domain *domain = open_domain(0, 0);
	const void *top = (const void *)(UINTPTR_MAX - 15);
	struct iovec iov[2];

	reg_fails(domain, top, 64, REMOTE_RW, 0, 0, -FI_EINVAL);
	reg_fails(domain, buf, SIZE_MAX, REMOTE_RW, 0, 0, -FI_EINVAL);
	fill_iov(iov, 2);
	iov[1].iov_base = (void *)top;
	iov[1].iov_len = 64;
	regv_fails(domain, iov, 2, -FI_EINVAL);
	close_ok(&domain->fid);
}

/* fi_mr: F70 */
HMR_TEST(mr_regv_rejects_zero_iov_count)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct iovec iov[1];
	struct fi_mr_attr attr;

	fill_iov(iov, 1);
	regv_fails(domain, iov, 0, -FI_EINVAL);
	attr_init(&attr, iov, buf, 16, REMOTE_RW, 1);
	attr.iov_count = 0;
	regattr_fails(domain, &attr, 0, -FI_EINVAL);
	close_ok(&domain->fid);
}

/* fi_mr: F71 */
HMR_TEST(mr_regv_rejects_count_over_iov_limit)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct iovec iov[HMR_MR_IOV_LIMIT_DEFAULT + 1];
	struct fi_mr_attr attr;

	fill_iov(iov, HMR_MR_IOV_LIMIT_DEFAULT + 1);
	regv_fails(domain, iov, HMR_MR_IOV_LIMIT_DEFAULT + 1, -FI_EINVAL);
	attr_init(&attr, iov, buf, 16, REMOTE_RW, 1);
	attr.iov_count = HMR_MR_IOV_LIMIT_DEFAULT + 1;
	regattr_fails(domain, &attr, 0, -FI_EINVAL);
	close_ok(&domain->fid);
}

/* fi_mr: F71 */
HMR_TEST(mr_regv_rejects_huge_iov_count)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct iovec iov[2];

	fill_iov(iov, 2);
	regv_fails(domain, iov, SIZE_MAX, -FI_EINVAL);
	regv_fails(domain, iov, (size_t)1 << 40, -FI_EINVAL);
	close_ok(&domain->fid);
}

/* fi_mr: F71 */
HMR_TEST(mr_regv_honours_domain_iov_limit)
{
	struct hmr_domain_attr dattr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain = NULL;
	struct fid_mr *mr = NULL;
	struct iovec iov[8];

	dattr.mr_mode = 0;
	dattr.mr_iov_limit = 2;
	ASSERT_OK(hmr_domain_open(&dattr, &domain));
	fill_iov(iov, 8);
	regv_fails(domain, iov, 3, -FI_EINVAL);
	ASSERT_OK(fi_mr_regv(domain, iov, 2, REMOTE_RW, 0, 1, 0, &mr, NULL));
	close_ok(&mr->fid);
	close_ok(&domain->fid);

	dattr.mr_iov_limit = 8;
	ASSERT_OK(hmr_domain_open(&dattr, &domain));
	ASSERT_OK(fi_mr_regv(domain, iov, 8, REMOTE_RW, 0, 1, 0, &mr, NULL));
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F70 */
HMR_TEST(mr_regv_rejects_null_iov)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fi_mr_attr attr;
	struct iovec iov;

	regv_fails(domain, NULL, 1, -FI_EINVAL);
	attr_init(&attr, &iov, buf, 16, REMOTE_RW, 1);
	attr.mr_iov = NULL;
	regattr_fails(domain, &attr, 0, -FI_EINVAL);
	close_ok(&domain->fid);
}

/* fi_mr: F70 */
HMR_TEST(mr_regv_rejects_zero_length_iov)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct iovec iov[3];

	fill_iov(iov, 3);
	iov[1].iov_len = 0;
	regv_fails(domain, iov, 3, -FI_EINVAL);
	fill_iov(iov, 3);
	iov[0].iov_len = 0;
	regv_fails(domain, iov, 1, -FI_EINVAL);
	close_ok(&domain->fid);
}

/* fi_mr: F74 */
HMR_TEST(mr_reg_rejects_unknown_access_bits)
{
	struct fid_domain *domain = open_domain(0, 0);

	reg_fails(domain, buf, 64, FI_REMOTE_READ | (1ULL << 20), 0, 0,
	          -FI_EINVAL);
	reg_fails(domain, buf, 64, 1ULL << 63, 0, 0, -FI_EINVAL);
	close_ok(&domain->fid);
}

/* fi_mr: F74 F78 */
HMR_TEST(mr_reg_accepts_every_access_bit)
{
	struct fid_domain *domain = open_domain(0, FI_COLLECTIVE);
	struct fid_mr *mr;

	mr = reg_ok(domain, buf, 64,
	            FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |
	                    FI_REMOTE_WRITE | FI_COLLECTIVE,
	            1, 0);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F50 F78 */
HMR_TEST(mr_reg_collective_access_needs_cap)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_domain *coll = open_domain(0, FI_COLLECTIVE);
	struct fid_mr *mr;

	reg_fails(domain, buf, 64, FI_SEND | FI_RECV | FI_COLLECTIVE, 0, 0,
	          -FI_EINVAL);
	mr = reg_ok(coll, buf, 64, FI_SEND | FI_RECV | FI_COLLECTIVE, 1, 0);
	close_ok(&mr->fid);
	close_ok(&coll->fid);
	close_ok(&domain->fid);
}

/* fi_mr: V14 */
HMR_TEST(mr_reg_accepts_access_zero_as_local_read_only)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, 0, 5, 0);
	void *ptr = NULL;

	ASSERT_TRUE(fi_mr_desc(mr) != NULL);
	ASSERT_EQ(hmr_mr_access(domain, 5, 0, 8, FI_REMOTE_READ, &ptr),
	          -FI_EACCES);
	ASSERT_EQ(hmr_mr_access(domain, 5, 0, 8, FI_REMOTE_WRITE, &ptr),
	          -FI_EACCES);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F95 */
HMR_TEST(mr_regattr_rejects_hmem_data)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fi_mr_attr attr;
	struct iovec iov;
	int token;

	attr_init(&attr, &iov, buf, 64, REMOTE_RW, 1);
	attr.hmem_data = &token;
	regattr_fails(domain, &attr, 0, -FI_EINVAL);
	close_ok(&domain->fid);
}

/* fi_mr: F96 */
HMR_TEST(mr_regattr_rejects_unsupported_page_size)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fi_mr_attr attr;
	struct iovec iov;
	struct fid_mr *mr;

	attr_init(&attr, &iov, buf, 64, REMOTE_RW, 1);
	attr.page_size = 4097;
	regattr_fails(domain, &attr, 0, -FI_EINVAL);
	attr.page_size = 3 * page_size();
	regattr_fails(domain, &attr, 0, -FI_EINVAL);
	attr.page_size = 1;
	regattr_fails(domain, &attr, 0, -FI_EINVAL);

	attr.page_size = page_size();
	mr = regattr_ok(domain, &attr, 0);
	close_ok(&mr->fid);
	attr.page_size = 0;
	mr = regattr_ok(domain, &attr, 0);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F81 */
HMR_TEST(mr_regattr_rejects_auth_key_over_max)
{
	struct fid_domain *domain = open_domain(0, 0);
	uint8_t key[HMR_AUTH_KEY_MAX + 1] = {1, 2, 3};
	struct fi_mr_attr attr;
	struct iovec iov;
	struct fid_mr *mr;

	attr_init(&attr, &iov, buf, 64, REMOTE_RW, 1);
	attr.auth_key = key;
	attr.auth_key_size = HMR_AUTH_KEY_MAX + 1;
	regattr_fails(domain, &attr, 0, -FI_EINVAL);
	attr.auth_key_size = HMR_AUTH_KEY_MAX;
	mr = regattr_ok(domain, &attr, 0);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F81 */
HMR_TEST(mr_regattr_rejects_auth_key_size_with_null_key)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fi_mr_attr attr;
	struct iovec iov;

	attr_init(&attr, &iov, buf, 64, REMOTE_RW, 1);
	attr.auth_key = NULL;
	attr.auth_key_size = 8;
	regattr_fails(domain, &attr, 0, -FI_EINVAL);
	close_ok(&domain->fid);
}

/* fi_mr: F29 */
HMR_TEST(mr_reg_rejects_unknown_flags)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fi_mr_attr attr;
	struct iovec iov[1];
	struct fid_mr *mr = NULL;

	reg_fails(domain, buf, 64, REMOTE_RW, 0, 1ULL << 30, -FI_EBADFLAGS);
	reg_fails(domain, buf, 64, REMOTE_RW, 0, 1ULL << 63, -FI_EBADFLAGS);
	fill_iov(iov, 1);
	ASSERT_EQ(fi_mr_regv(domain, iov, 1, REMOTE_RW, 0, 1, 1ULL << 30, &mr,
	                     NULL),
	          -FI_EBADFLAGS);
	attr_init(&attr, iov, buf, 64, REMOTE_RW, 1);
	regattr_fails(domain, &attr, 1ULL << 30, -FI_EBADFLAGS);
	close_ok(&domain->fid);
}

HMR_TEST(mr_reg_rejects_auth_key_flag)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_domain *hmem = open_domain(0, FI_HMEM | FI_RMA_EVENT);
	struct fi_mr_auth_key akey = {NULL, 0};
	struct fi_mr_attr attr;
	struct iovec iov;

	reg_fails(domain, buf, 64, REMOTE_RW, 0, FI_AUTH_KEY, -FI_EBADFLAGS);
	attr_init(&attr, &iov, buf, 64, REMOTE_RW, 1);
	attr.auth_key = (uint8_t *)&akey;
	attr.auth_key_size = sizeof(akey);
	regattr_fails(domain, &attr, FI_AUTH_KEY, -FI_EBADFLAGS);
	regattr_fails(hmem, &attr, FI_AUTH_KEY, -FI_EBADFLAGS);
	close_ok(&hmem->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F84 */
HMR_TEST(mr_regattr_ignores_iface_and_device_without_hmem_cap)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fi_mr_attr attr;
	struct iovec iov;
	struct fid_mr *mr;
	void *ptr = NULL;

	attr_init(&attr, &iov, buf, 64, REMOTE_RW, 3);
	attr.iface = FI_HMEM_CUDA;
	attr.device.cuda = 7;
	mr = regattr_ok(domain, &attr, 0);
	ASSERT_OK(hmr_mr_access(domain, 3, 8, 8, FI_REMOTE_WRITE, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 8);
	close_ok(&mr->fid);

	attr.iface = (enum fi_hmem_iface)99;
	attr.device.reserved = ~0ULL;
	mr = regattr_ok(domain, &attr, 0);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F12 F15 F24 */
HMR_TEST(mr_desc_is_non_null_for_every_mr)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct iovec iov[2];
	struct fi_mr_attr attr;
	struct fid_mr *mr[3] = {NULL, NULL, NULL};
	int i;

	fill_iov(iov, 2);
	mr[0] = reg_ok(domain, buf, 64, 0, 1, 0);
	ASSERT_OK(fi_mr_regv(domain, iov, 2, REMOTE_RW, 0, 2, 0, &mr[1], NULL));
	attr_init(&attr, iov, buf + 100, 10, FI_REMOTE_READ, 3);
	mr[2] = regattr_ok(domain, &attr, 0);
	for (i = 0; i < 3; i++) {
		ASSERT_TRUE(fi_mr_desc(mr[i]) != NULL);
		ASSERT_EQ(mr[i]->fid.fclass, FI_CLASS_MR);
	}
	for (i = 0; i < 3; i++)
		close_ok(&mr[i]->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F80 */
HMR_TEST(mr_reg_keeps_context)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = NULL;
	int ctx;

	ASSERT_OK(fi_mr_reg(domain, buf, 64, REMOTE_RW, 0, 1, 0, &mr, &ctx));
	ASSERT_PTR_EQ(mr->fid.context, &ctx);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* struct fi_mr_attr as libfabric headers before 1.20 define it. */
struct old_mr_attr {
	const struct iovec *mr_iov;
	size_t iov_count;
	uint64_t access;
	uint64_t offset;
	uint64_t requested_key;
	void *context;
	size_t auth_key_size;
	uint8_t *auth_key;
	enum fi_hmem_iface iface;
	union {
		uint64_t reserved;
		int cuda;
		int ze;
	} device;
};

/*
 * A caller built against a libfabric header before 1.20 passes a struct
 * that ends at `device`: hmr must not read hmem_data and what follows
 * (the heap block ends there, so ASan sees any over-read).
 */
/* fi_mr: L4 */
HMR_TEST(mr_regattr_old_api_reads_nothing_past_device)
{
	struct hmr_domain_attr dattr = HMR_DOMAIN_ATTR_INIT;
	struct old_mr_attr *old = calloc(1, sizeof(*old));
	struct fid_domain *domain = NULL;
	struct iovec iov = {buf, 64};
	struct fid_mr *mr = NULL;

	_Static_assert(sizeof(struct old_mr_attr) ==
	                       offsetof(struct fi_mr_attr, hmem_data),
	               "old layout");
	ASSERT_TRUE(old != NULL);
	dattr.mr_mode = 0;
	dattr.fi_version = FI_VERSION(1, 17);
	ASSERT_OK(hmr_domain_open(&dattr, &domain));
	old->mr_iov = &iov;
	old->iov_count = 1;
	old->access = REMOTE_RW;
	old->requested_key = 11;
	ASSERT_OK(
	        fi_mr_regattr(domain, (const struct fi_mr_attr *)old, 0, &mr));
	ASSERT_U64_EQ(fi_mr_key(mr), 11);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
	free(old);
}

HMR_TEST_MAIN()
