/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_libfabric_compat.c: libfabric's own header drives an hmr domain. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* libfabric's header first: hmr.h then uses it instead of hmr's own. */
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <hmr/hmr.h>

#include "harness.h"
#include "hmr_constants_check.h" /* Compile-time value and layout checks. */

/* Debian's libfabric 1.17 header: its struct fi_mr_attr ends at device. */
static struct fid_domain *open_domain(uint64_t mr_mode)
{
	struct hmr_domain_attr attr = {
	        .size = sizeof(attr),
	        .fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
	        .mr_mode = mr_mode,
	        .flags = HMR_DOMAIN_EMULATE_MR_MODE,
	};
	struct fid_domain *domain;

	ASSERT_OK(hmr_domain_open(&attr, &domain));
	return domain;
}

/* fi_mr: F1 */
HMR_TEST(libfabric_header_mr_reg_key_desc_close)
{
	struct fid_domain *domain = open_domain(FI_MR_VIRT_ADDR);
	char buf[4096];
	struct fid_mr *mr;
	void *p;

	ASSERT_OK(fi_mr_reg(domain, buf, sizeof(buf), FI_REMOTE_WRITE, 0, 42, 0,
	                    &mr, NULL));
	ASSERT_U64_EQ(fi_mr_key(mr), 42);
	ASSERT_TRUE(fi_mr_desc(mr) != NULL);
	ASSERT_OK(hmr_mr_access(domain, 42, (uint64_t)(uintptr_t)buf + 8, 8,
	                        FI_REMOTE_WRITE, &p));
	ASSERT_PTR_EQ(p, buf + 8);
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&domain->fid));
}

/* fi_mr: F21 */
HMR_TEST(libfabric_header_regattr_old_layout_reads_no_further)
{
	struct fid_domain *domain = open_domain(FI_MR_PROV_KEY);
	struct {
		struct fi_mr_attr attr;
		unsigned char poison[64];
	} a;
	char buf[4096];
	struct iovec iov = {buf, sizeof(buf)};
	struct fid_mr *mr;

	/* Garbage right after the 1.17 struct: hmr must not read it as
	 * hmem_data/page_size/base_mr (it would then fail or crash). */
	memset(&a, 0xa5, sizeof(a));
	memset(&a.attr, 0, sizeof(a.attr));
	a.attr.mr_iov = &iov;
	a.attr.iov_count = 1;
	a.attr.access = FI_REMOTE_READ;
	ASSERT_OK(fi_mr_regattr(domain, &a.attr, 0, &mr));
	ASSERT_TRUE(fi_mr_key(mr) != FI_KEY_NOTAVAIL);
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&domain->fid));
}

/* fi_mr: F1 F55 */
HMR_TEST(libfabric_header_raw_attr_map_raw_roundtrip)
{
	struct fid_domain *domain =
	        open_domain(FI_MR_RAW | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
	uint8_t raw[256];
	size_t size = 1;
	uint64_t base, key;
	char buf[4096];
	struct fid_mr *mr;
	void *p;

	ASSERT_OK(fi_mr_reg(domain, buf, sizeof(buf), FI_REMOTE_READ, 0, 0, 0,
	                    &mr, NULL));
	ASSERT_U64_EQ(fi_mr_key(mr), FI_KEY_NOTAVAIL);
	ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw, &size, 0), -FI_ETOOSMALL);
	ASSERT_GT(size, 1);
	ASSERT_OK(fi_mr_raw_attr(mr, &base, raw, &size, 0));
	ASSERT_U64_EQ(base, (uintptr_t)buf);
	ASSERT_OK(fi_mr_map_raw(domain, base, raw, size, &key, 0));
	ASSERT_OK(hmr_mr_access(domain, key, base, 16, FI_REMOTE_READ, &p));
	ASSERT_PTR_EQ(p, buf);
	ASSERT_OK(fi_mr_unmap_key(domain, key));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&domain->fid));
}

/* fi_mr: F1 */
HMR_TEST(libfabric_header_cntr_read_counts_remote_writes)
{
	struct hmr_domain_attr attr = {
	        .size = sizeof(attr),
	        .fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
	        .caps = FI_RMA_EVENT,
	};
	struct fid_domain *domain;
	struct fid_cntr *cntr;
	struct fid_mr *mr;
	char buf[64];
	void *p;

	ASSERT_OK(hmr_domain_open(&attr, &domain));
	ASSERT_OK(hmr_cntr_open(domain, &cntr));
	ASSERT_OK(fi_mr_reg(domain, buf, sizeof(buf), FI_REMOTE_WRITE, 0, 7, 0,
	                    &mr, NULL));
	ASSERT_OK(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE));
	ASSERT_OK(hmr_mr_access(domain, 7, 0, 8, FI_REMOTE_WRITE, &p));
	ASSERT_U64_EQ(fi_cntr_read(cntr), 1);
	ASSERT_OK(fi_close(&cntr->fid));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&domain->fid));
}

/* The caller's struct fi_mr_attr, placed so that it ends where an
 * inaccessible page begins: one byte read past it faults. */
static struct fi_mr_attr *attr_at_page_end(size_t size)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(p != MAP_FAILED);
	ASSERT_EQ(mprotect(p + pg, (size_t)pg, PROT_NONE), 0);
	return (struct fi_mr_attr *)(p + pg - size);
}

/* A program built on libfabric 1.17's header that uses the init macro is
 * safe without knowing fi_version exists. */
/* fi_mr: F1 */
HMR_TEST(libfabric_header_attr_init_records_its_api_version)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fi_mr_attr *a = attr_at_page_end(sizeof(struct fi_mr_attr));
	struct fid_domain *domain;
	char buf[4096];
	struct iovec iov = {buf, sizeof(buf)};
	struct fid_mr *mr;

	ASSERT_EQ(attr.fi_version,
	          FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION));
	ASSERT_EQ(attr.fi_version, FI_VERSION(1, 17)); /* Debian 12's. */
	ASSERT_OK(hmr_domain_open(&attr, &domain));
	memset(a, 0, sizeof(*a));
	a->mr_iov = &iov;
	a->iov_count = 1;
	a->access = FI_REMOTE_READ;
	a->requested_key = 5;
	ASSERT_OK(fi_mr_regattr(domain, a, 0, &mr));
	ASSERT_U64_EQ(fi_mr_key(mr), 5);
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&domain->fid));
}

HMR_TEST_MAIN()
