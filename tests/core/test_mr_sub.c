/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_sub.c: sub-MRs: fi_mr_regattr with base_mr. */
#define _GNU_SOURCE 1
#include <stdint.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core_util.h"

static char buf[4096];

/* A sub-MR attr of one iov [buf + off, + len) on `base`. */
static void sub_attr(struct fi_mr_attr *attr, struct iovec *iov,
                     const struct fid_mr *base, size_t off, size_t len,
                     uint64_t access, uint64_t key)
{
	attr_init(attr, iov, buf + off, len, access, key);
	attr->base_mr = base;
}

static int sub_reg(struct fid_domain *domain, const struct fid_mr *base,
                   size_t off, size_t len, uint64_t access, uint64_t key,
                   struct fid_mr **mr)
{
	struct fi_mr_attr attr;
	struct iovec iov;

	sub_attr(&attr, &iov, base, off, len, access, key);
	*mr = NULL;
	return fi_mr_regattr(domain, &attr, 0, mr);
}

static struct fid_mr *sub_ok(struct fid_domain *domain,
                             const struct fid_mr *base, size_t off, size_t len,
                             uint64_t access, uint64_t key)
{
	struct fid_mr *mr;

	ASSERT_OK(sub_reg(domain, base, off, len, access, key, &mr));
	ASSERT_TRUE(mr != NULL);
	return mr;
}

static void sub_fails(struct fid_domain *domain, const struct fid_mr *base,
                      size_t off, size_t len, uint64_t access, uint64_t key,
                      int err)
{
	struct fid_mr *mr;

	ASSERT_EQ(sub_reg(domain, base, off, len, access, key, &mr), err);
	ASSERT_PTR_EQ(mr, NULL);
}

/* fi_mr: F3 F97 */
HMR_TEST(mr_sub_inside_base_has_own_key)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *base = reg_ok(domain, buf, 1024, REMOTE_RW, 1, 0);
	struct fid_mr *sub = sub_ok(domain, base, 256, 128, REMOTE_RW, 2);
	void *ptr = NULL;

	ASSERT_U64_EQ(fi_mr_key(sub), 2);
	ASSERT_TRUE(fi_mr_desc(sub) != NULL);
	/* The sub-MR's offset 0 is its own first byte. */
	ASSERT_OK(hmr_mr_access(domain, 2, 0, 8, FI_REMOTE_WRITE, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 256);
	ASSERT_EQ(hmr_mr_access(domain, 2, 128, 1, FI_REMOTE_READ, &ptr),
	          -FI_EFAULT);
	ASSERT_OK(hmr_mr_access(domain, 1, 512, 8, FI_REMOTE_READ, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 512);
	close_ok(&sub->fid);
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_sub_requested_key_in_use_is_enokey)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *base = reg_ok(domain, buf, 1024, REMOTE_RW, 1, 0);

	sub_fails(domain, base, 0, 16, REMOTE_RW, 1, -FI_ENOKEY);
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F98 */
HMR_TEST(mr_sub_prov_key_differs_from_base)
{
	struct fid_domain *domain = open_domain(FI_MR_PROV_KEY, 0);
	struct fid_mr *base = reg_ok(domain, buf, 1024, REMOTE_RW, 0, 0);
	struct fid_mr *a = sub_ok(domain, base, 0, 16, REMOTE_RW, 0);
	struct fid_mr *b = sub_ok(domain, base, 0, 16, REMOTE_RW, 0);

	ASSERT_NE(fi_mr_key(a), fi_mr_key(base));
	ASSERT_NE(fi_mr_key(b), fi_mr_key(base));
	ASSERT_NE(fi_mr_key(a), fi_mr_key(b));
	close_ok(&b->fid);
	close_ok(&a->fid);
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F97 */
HMR_TEST(mr_sub_virt_addr_names_virtual_address)
{
	struct fid_domain *domain = open_domain(FI_MR_VIRT_ADDR, 0);
	struct fid_mr *base = reg_ok(domain, buf, 1024, REMOTE_RW, 1, 0);
	struct fid_mr *sub = sub_ok(domain, base, 256, 128, REMOTE_RW, 2);
	void *ptr = NULL;

	ASSERT_OK(hmr_mr_access(domain, 2, (uintptr_t)(buf + 300), 8,
	                        FI_REMOTE_WRITE, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 300);
	ASSERT_EQ(hmr_mr_access(domain, 2, (uintptr_t)(buf + 200), 8,
	                        FI_REMOTE_WRITE, &ptr),
	          -FI_EFAULT);
	close_ok(&sub->fid);
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F98 */
HMR_TEST(mr_sub_outside_base_is_einval)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *base = reg_ok(domain, buf + 512, 1024, REMOTE_RW, 1, 0);

	sub_fails(domain, base, 0, 16, REMOTE_RW, 2, -FI_EINVAL);
	sub_fails(domain, base, 500, 16, REMOTE_RW, 2, -FI_EINVAL);
	sub_fails(domain, base, 1500, 100, REMOTE_RW, 2, -FI_EINVAL);
	sub_fails(domain, base, 2048, 16, REMOTE_RW, 2, -FI_EINVAL);
	sub_fails(domain, base, 512, 1025, REMOTE_RW, 2, -FI_EINVAL);
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F98 */
HMR_TEST(mr_sub_every_iov_must_lie_inside_base)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct iovec biov[2] = {{buf, 256}, {buf + 1024, 256}};
	struct iovec siov[2] = {{buf + 16, 16}, {buf + 1024 + 16, 16}};
	struct fid_mr *base = NULL, *sub = NULL;
	struct fi_mr_attr attr;
	struct iovec dummy;

	ASSERT_OK(fi_mr_regv(domain, biov, 2, REMOTE_RW, 0, 1, 0, &base, NULL));
	attr_init(&attr, &dummy, buf, 1, REMOTE_RW, 2);
	attr.mr_iov = siov;
	attr.iov_count = 2;
	attr.base_mr = base;
	sub = regattr_ok(domain, &attr, 0);
	close_ok(&sub->fid);

	/* The gap between the base's iovs is not inside the base. */
	siov[1].iov_base = buf + 512;
	sub = NULL;
	ASSERT_EQ(fi_mr_regattr(domain, &attr, 0, &sub), -FI_EINVAL);
	ASSERT_PTR_EQ(sub, NULL);
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F98 */
HMR_TEST(mr_sub_access_must_be_subset_of_base)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *base = reg_ok(domain, buf, 1024, FI_REMOTE_READ, 1, 0);
	struct fid_mr *sub;
	void *ptr = NULL;

	sub_fails(domain, base, 0, 16, REMOTE_RW, 2, -FI_EINVAL);
	sub_fails(domain, base, 0, 16, FI_REMOTE_WRITE, 2, -FI_EINVAL);
	sub_fails(domain, base, 0, 16, FI_REMOTE_READ | FI_SEND, 2, -FI_EINVAL);
	sub = sub_ok(domain, base, 0, 16, FI_REMOTE_READ, 2);
	ASSERT_OK(hmr_mr_access(domain, 2, 0, 8, FI_REMOTE_READ, &ptr));
	close_ok(&sub->fid);
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F98 */
HMR_TEST(mr_sub_narrower_rights_are_enforced)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *base = reg_ok(domain, buf, 1024, REMOTE_RW, 1, 0);
	struct fid_mr *sub = sub_ok(domain, base, 0, 64, FI_REMOTE_READ, 2);
	struct fid_mr *none = sub_ok(domain, base, 0, 64, 0, 3);
	void *ptr = NULL;

	ASSERT_EQ(hmr_mr_access(domain, 2, 0, 8, FI_REMOTE_WRITE, &ptr),
	          -FI_EACCES);
	ASSERT_OK(hmr_mr_access(domain, 2, 0, 8, FI_REMOTE_READ, &ptr));
	ASSERT_EQ(hmr_mr_access(domain, 3, 0, 8, FI_REMOTE_READ, &ptr),
	          -FI_EACCES);
	ASSERT_OK(hmr_mr_access(domain, 1, 0, 8, FI_REMOTE_WRITE, &ptr));
	close_ok(&none->fid);
	close_ok(&sub->fid);
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_sub_base_of_other_domain_is_einval)
{
	struct fid_domain *a = open_domain(0, 0);
	struct fid_domain *b = open_domain(0, 0);
	struct fid_mr *base = reg_ok(a, buf, 1024, REMOTE_RW, 1, 0);

	sub_fails(b, base, 0, 16, REMOTE_RW, 2, -FI_EINVAL);
	close_ok(&base->fid);
	close_ok(&b->fid);
	close_ok(&a->fid);
}

/* fi_mr: F101 */
HMR_TEST(mr_sub_with_dmabuf_flag_is_einval)
{
	struct fid_domain *domain = open_domain(0, FI_HMEM);
	struct fid_mr *base = reg_ok(domain, buf, 1024, REMOTE_RW, 1, 0);
	struct fi_mr_dmabuf dmabuf;
	struct fi_mr_attr attr;
	struct fid_mr *sub = NULL;
	int fd = memfd_create("hmr-sub", MFD_CLOEXEC);

	ASSERT_GE(fd, 0);
	ASSERT_OK(ftruncate(fd, 4096));
	memset(&attr, 0, sizeof(attr));
	dmabuf.fd = fd;
	dmabuf.offset = 0;
	dmabuf.len = 64;
	dmabuf.base_addr = NULL;
	attr.dmabuf = &dmabuf;
	attr.iov_count = 1;
	attr.access = REMOTE_RW;
	attr.requested_key = 2;
	attr.base_mr = base;
	ASSERT_EQ(fi_mr_regattr(domain, &attr, FI_MR_DMABUF, &sub), -FI_EINVAL);
	ASSERT_PTR_EQ(sub, NULL);
	ASSERT_OK(close(fd));
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F99 */
HMR_TEST(mr_sub_ignores_inherited_fields)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *base = reg_ok(domain, buf, 1024, REMOTE_RW, 1, 0);
	struct fi_mr_attr attr;
	struct iovec iov;
	struct fid_mr *sub;
	int token;

	sub_attr(&attr, &iov, base, 0, 64, REMOTE_RW, 2);
	attr.iface = FI_HMEM_ZE;
	attr.device.ze = 5;
	attr.hmem_data = &token;
	attr.page_size = 12345;
	/* Takes its base's iface and device instead: tests/cuda,
	 * cuda_sub_mr_takes_base_iface_and_device. */
	sub = regattr_ok(domain, &attr, 0);
	close_ok(&sub->fid);
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F102 */
HMR_TEST(mr_sub_count_is_only_a_hint)
{
	struct fid_domain *domain = open_domain(0, 0);
	static const size_t counts[] = {0, 1, SIZE_MAX};
	struct fid_mr *base, *sub[3];
	struct fi_mr_attr attr;
	struct iovec iov;
	size_t i;
	int j;

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		attr_init(&attr, &iov, buf, 1024, REMOTE_RW, 1);
		attr.sub_mr_cnt = counts[i];
		base = regattr_ok(domain, &attr, 0);
		/* More sub-MRs than announced are fine. */
		for (j = 0; j < 3; j++)
			sub[j] = sub_ok(domain, base, (size_t)j * 64, 64,
			                REMOTE_RW, 10 + (uint64_t)j);
		for (j = 0; j < 3; j++)
			close_ok(&sub[j]->fid);
		close_ok(&base->fid);
	}
	/* On a sub-MR too. */
	base = reg_ok(domain, buf, 1024, REMOTE_RW, 1, 0);
	sub_attr(&attr, &iov, base, 0, 64, REMOTE_RW, 2);
	attr.sub_mr_cnt = 99;
	sub[0] = regattr_ok(domain, &attr, 0);
	close_ok(&sub[0]->fid);
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F3 */
HMR_TEST(mr_sub_of_sub_must_lie_inside_its_base)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *base = reg_ok(domain, buf, 1024, REMOTE_RW, 1, 0);
	struct fid_mr *mid = sub_ok(domain, base, 256, 256, FI_REMOTE_READ, 2);
	struct fid_mr *leaf = sub_ok(domain, mid, 300, 16, FI_REMOTE_READ, 3);
	void *ptr = NULL;

	ASSERT_OK(hmr_mr_access(domain, 3, 0, 16, FI_REMOTE_READ, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 300);
	/* Inside the top base, outside the middle one. */
	sub_fails(domain, mid, 0, 16, FI_REMOTE_READ, 4, -FI_EINVAL);
	/* The middle one grants no write. */
	sub_fails(domain, mid, 300, 16, FI_REMOTE_WRITE, 4, -FI_EINVAL);
	close_ok(&leaf->fid);
	close_ok(&mid->fid);
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F100 */
HMR_TEST(mr_close_base_busy_while_sub_exists)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *base = reg_ok(domain, buf, 1024, REMOTE_RW, 1, 0);
	struct fid_mr *a = sub_ok(domain, base, 0, 64, REMOTE_RW, 2);
	struct fid_mr *b = sub_ok(domain, base, 64, 64, REMOTE_RW, 3);
	void *ptr = NULL;

	ASSERT_EQ(fi_close(&base->fid), -FI_EBUSY);
	close_ok(&a->fid);
	ASSERT_EQ(fi_close(&base->fid), -FI_EBUSY);
	/* Refused closes left the base working. */
	ASSERT_OK(hmr_mr_access(domain, 1, 0, 8, FI_REMOTE_WRITE, &ptr));
	close_ok(&b->fid);
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F100 */
HMR_TEST(mr_close_middle_busy_while_leaf_exists)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *base = reg_ok(domain, buf, 1024, REMOTE_RW, 1, 0);
	struct fid_mr *mid = sub_ok(domain, base, 0, 512, REMOTE_RW, 2);
	struct fid_mr *leaf = sub_ok(domain, mid, 0, 64, REMOTE_RW, 3);

	ASSERT_EQ(fi_close(&mid->fid), -FI_EBUSY);
	ASSERT_EQ(fi_close(&base->fid), -FI_EBUSY);
	close_ok(&leaf->fid);
	ASSERT_EQ(fi_close(&base->fid), -FI_EBUSY);
	close_ok(&mid->fid);
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F100 */
HMR_TEST(mr_sub_close_leaves_base_working)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *base = reg_ok(domain, buf, 1024, REMOTE_RW, 1, 0);
	struct fid_mr *sub = sub_ok(domain, base, 0, 64, REMOTE_RW, 2);
	void *ptr = NULL;

	close_ok(&sub->fid);
	ASSERT_EQ(hmr_mr_access(domain, 2, 0, 8, FI_REMOTE_READ, &ptr),
	          -FI_ENOKEY);
	ASSERT_OK(hmr_mr_access(domain, 1, 0, 8, FI_REMOTE_READ, &ptr));
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

/* FI_MR_DMABUF with base_mr is refused as such, even when the dmabuf,
 * read as the iovec it shares a union with, lies inside the base. */
HMR_TEST(mr_sub_with_dmabuf_flag_is_einval_whatever_the_dmabuf_holds)
{
	struct fid_domain *domain = open_domain(0, FI_HMEM);
	struct fid_mr *base = reg_ok(domain, buf, 1024, REMOTE_RW, 1, 0);
	struct fi_mr_dmabuf dmabuf;
	struct iovec as_iov = {buf, 64};
	struct fi_mr_attr attr;
	struct fid_mr *sub = NULL;

	_Static_assert(sizeof(dmabuf) >= sizeof(as_iov), "dmabuf holds iov");
	memset(&dmabuf, 0, sizeof(dmabuf));
	memcpy(&dmabuf, &as_iov, sizeof(as_iov));
	dmabuf.len = 64; /* A range of its own that is valid too. */
	memset(&attr, 0, sizeof(attr));
	attr.dmabuf = &dmabuf;
	attr.iov_count = 1;
	attr.access = REMOTE_RW;
	attr.requested_key = 2;
	attr.base_mr = base;
	ASSERT_EQ(fi_mr_regattr(domain, &attr, FI_MR_DMABUF, &sub), -FI_EINVAL);
	ASSERT_PTR_EQ(sub, NULL);
	close_ok(&base->fid);
	close_ok(&domain->fid);
}

HMR_TEST_MAIN()
