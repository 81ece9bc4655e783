/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_attr_version.c: fi_mr_attr fields read by the caller's version. */
#define _GNU_SOURCE
#include <stddef.h>
#include <sys/mman.h>

#include "core_util.h"

/* Each field of struct fi_mr_attr is read only from the API version that
 * added it (include/hmr/fi_mr.h lists them): a caller's struct of an older
 * version ends earlier, here right before an inaccessible page. */

static struct fi_mr_attr *attr_ending_at(size_t size)
{
	size_t pg = page_size();
	char *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(p != MAP_FAILED);
	ASSERT_EQ(mprotect(p + pg, pg, PROT_NONE), 0);
	return (struct fi_mr_attr *)(p + pg - size);
}

static struct fid_domain *domain_of_version(uint32_t v, uint64_t caps)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *d;

	attr.fi_version = v;
	attr.caps = caps;
	ASSERT_OK(hmr_domain_open(&attr, &d));
	return d;
}

static void fill(struct fi_mr_attr *a, size_t size, struct iovec *iov)
{
	memset(a, 0, size);
	a->mr_iov = iov;
	a->iov_count = 1;
	a->access = FI_REMOTE_READ;
	a->requested_key = 3;
}

HMR_TEST(mr_attr_init_macro_records_this_header_version)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	ASSERT_EQ(attr.fi_version, FI_VERSION(2, 1));
}

/* (version, where its struct ends) for every release that grew it. */
static const struct {
	uint32_t version;
	size_t end;
} layouts[] = {
        {FI_VERSION(1, 5), offsetof(struct fi_mr_attr, iface)},
        {FI_VERSION(1, 8), offsetof(struct fi_mr_attr, iface)},
        {FI_VERSION(1, 9), offsetof(struct fi_mr_attr, hmem_data)},
        {FI_VERSION(1, 17), offsetof(struct fi_mr_attr, hmem_data)},
        {FI_VERSION(1, 18), offsetof(struct fi_mr_attr, hmem_data)},
        {FI_VERSION(1, 19), offsetof(struct fi_mr_attr, page_size)},
        {FI_VERSION(1, 20), offsetof(struct fi_mr_attr, page_size)},
        {FI_VERSION(1, 21), offsetof(struct fi_mr_attr, page_size)},
        {FI_VERSION(1, 22), offsetof(struct fi_mr_attr, base_mr)},
        {FI_VERSION(1, 23), offsetof(struct fi_mr_attr, base_mr)},
        {FI_VERSION(2, 0), sizeof(struct fi_mr_attr)},
};

/* fi_mr: F21 L4 */
HMR_TEST(mr_attr_of_each_version_is_read_no_further_than_its_end)
{
	char buf[4096];
	struct iovec iov = {buf, sizeof(buf)};
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		struct fid_domain *d = domain_of_version(layouts[i].version, 0);
		struct fi_mr_attr *a = attr_ending_at(layouts[i].end);
		struct fid_mr *mr;

		fill(a, layouts[i].end, &iov);
		ASSERT_OK(fi_mr_regattr(d, a, 0, &mr));
		ASSERT_U64_EQ(fi_mr_key(mr), 3);
		close_ok(&mr->fid);
		close_ok(&d->fid);
	}
}

/* Fields a version does not have are not read even when the memory
 * after the caller's struct holds something: a 1.22 caller's garbage
 * where 2.0 has base_mr does not make a sub-MR. */
/* fi_mr: F21 */
HMR_TEST(mr_attr_fields_after_callers_version_are_ignored)
{
	struct fid_domain *d = domain_of_version(FI_VERSION(1, 22), 0);
	char buf[4096];
	struct iovec iov = {buf, sizeof(buf)};
	struct fi_mr_attr a;
	struct fid_mr *mr;

	fill(&a, sizeof(a), &iov);
	a.base_mr = (struct fid_mr *)(uintptr_t)0x1; /* Garbage to 1.22. */
	a.sub_mr_cnt = 99;
	ASSERT_OK(fi_mr_regattr(d, &a, 0, &mr));
	close_ok(&mr->fid);
	close_ok(&d->fid);
	/* 1.17: hmem_data would be refused if it were read. */
	d = domain_of_version(FI_VERSION(1, 17), 0);
	a.base_mr = NULL;
	a.hmem_data = (void *)(uintptr_t)0x1;
	ASSERT_OK(fi_mr_regattr(d, &a, 0, &mr));
	close_ok(&mr->fid);
	close_ok(&d->fid);
	/* 2.1 reads hmem_data, and refuses it. */
	d = domain_of_version(FI_VERSION(2, 1), 0);
	ASSERT_EQ(fi_mr_regattr(d, &a, 0, &mr), -FI_EINVAL);
	close_ok(&d->fid);
}

/* fi_mr: F73 */
HMR_TEST(mr_attr_dmabuf_flag_before_1_20_is_ebadflags)
{
	struct fid_domain *d = domain_of_version(FI_VERSION(1, 19), FI_HMEM);
	struct fi_mr_dmabuf dmabuf = {.fd = 0, .len = 4096};
	struct fi_mr_attr a;
	struct fid_mr *mr;

	memset(&a, 0, sizeof(a));
	a.dmabuf = &dmabuf;
	a.iov_count = 1;
	ASSERT_EQ(fi_mr_regattr(d, &a, FI_MR_DMABUF, &mr), -FI_EBADFLAGS);
	ASSERT_PTR_EQ(mr, NULL);
	close_ok(&d->fid);
}

HMR_TEST_MAIN()
