/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_ranges.c: ranges as a security boundary: 0, 2^64, off-by-ones. */
#define _GNU_SOURCE
#include <limits.h>
#include <sys/mman.h>

#include "core_util.h"

/*
 * Regression tests for what an outside fuzzer found (a sub-MR escaping its
 * base through an iov whose end wraps to 0, FI_MR_ALLOCATED bypassed the
 * same way, hmr_strerror(INT_MIN)), and the off-by-one probes every range
 * check gets: one byte inside, exactly at the edge, one byte past it.
 */

#define TOP ((uint64_t)UINT64_MAX)

static uint64_t to_top(const void *p)
{
	/* The length whose end is exactly 2^64. */
	return (TOP - (uint64_t)(uintptr_t)p) + 1;
}

static int sub_reg(struct fid_domain *d, struct fid_mr *base, void *addr,
                   size_t len, struct fid_mr **mr)
{
	struct fi_mr_attr attr;
	struct iovec iov;

	attr_init(&attr, &iov, addr, len, REMOTE_RW, 77);
	attr.base_mr = base;
	*mr = (struct fid_mr *)(uintptr_t)1; /* Must come back NULL. */
	return fi_mr_regattr(d, &attr, 0, mr);
}

HMR_TEST(mr_sub_iov_ending_at_2_64_does_not_escape_base)
{
	struct fid_domain *d = open_domain(0, 0);
	char *buf = aligned_alloc(4096, 4096);
	struct fid_mr *base = reg_ok(d, buf, 4096, REMOTE_RW, 1, 0), *sub;
	void *p = NULL;

	ASSERT_EQ(sub_reg(d, base, buf, to_top(buf), &sub), -FI_EINVAL);
	ASSERT_PTR_EQ(sub, NULL);
	/* Nothing beyond the base is reachable through any key. */
	ASSERT_EQ(hmr_mr_access(d, 77, (uintptr_t)buf + (1 << 20), 8,
	                        FI_REMOTE_WRITE, &p),
	          -FI_ENOKEY);
	ASSERT_EQ(hmr_mr_access(d, 1, 4096, 8, FI_REMOTE_WRITE, &p),
	          -FI_EFAULT);
	close_ok(&base->fid);
	close_ok(&d->fid);
	free(buf);
}

/* fi_mr: F98 */
HMR_TEST(mr_sub_off_by_one_at_each_edge_of_base)
{
	struct fid_domain *d = open_domain(0, 0);
	char *buf = aligned_alloc(4096, 3 * 4096);
	char *b = buf + 4096; /* The base: [b, b + 4096). */
	struct fid_mr *base = reg_ok(d, b, 4096, REMOTE_RW, 1, 0), *sub;

	ASSERT_OK(sub_reg(d, base, b, 4096, &sub)); /* Exactly the base. */
	close_ok(&sub->fid);
	ASSERT_OK(sub_reg(d, base, b + 4095, 1, &sub)); /* Last byte. */
	close_ok(&sub->fid);
	ASSERT_EQ(sub_reg(d, base, b, 4097, &sub), -FI_EINVAL);
	ASSERT_EQ(sub_reg(d, base, b + 4096, 1, &sub), -FI_EINVAL);
	ASSERT_EQ(sub_reg(d, base, b - 1, 1, &sub), -FI_EINVAL);
	ASSERT_EQ(sub_reg(d, base, b - 1, 4097, &sub), -FI_EINVAL);
	ASSERT_EQ(sub_reg(d, base, b + 1, 4096, &sub), -FI_EINVAL);
	ASSERT_EQ(sub_reg(d, base, b, 0, &sub), -FI_EINVAL);
	ASSERT_EQ(sub_reg(d, base, (void *)(uintptr_t)TOP, 1, &sub),
	          -FI_EINVAL);
	close_ok(&base->fid);
	close_ok(&d->fid);
	free(buf);
}

HMR_TEST(mr_sub_allocated_refuses_pages_unmapped_since_base)
{
	struct fid_domain *d = open_domain(FI_MR_ALLOCATED, 0);
	size_t pg = page_size();
	char *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fid_mr *base, *sub;

	ASSERT_TRUE(p != MAP_FAILED);
	base = reg_ok(d, p, 2 * pg, REMOTE_RW, 1, 0);
	ASSERT_EQ(munmap(p + pg, pg), 0);
	ASSERT_EQ(sub_reg(d, base, p + pg, pg, &sub), -FI_EFAULT);
	ASSERT_OK(sub_reg(d, base, p, pg, &sub));
	close_ok(&sub->fid);
	close_ok(&base->fid);
	close_ok(&d->fid);
	munmap(p, pg);
}

HMR_TEST(mr_allocated_range_ending_at_2_64_is_einval)
{
	struct fid_domain *d = open_domain(FI_MR_ALLOCATED, 0);
	char *buf = aligned_alloc(4096, 4096);
	struct fid_mr *mr = (struct fid_mr *)(uintptr_t)1;

	ASSERT_EQ(fi_mr_reg(d, buf, to_top(buf), REMOTE_RW, 0, 1, 0, &mr, NULL),
	          -FI_EINVAL);
	ASSERT_PTR_EQ(mr, NULL);
	/* One byte shorter does not wrap: refused because it is unbacked. */
	ASSERT_EQ(fi_mr_reg(d, buf, to_top(buf) - 1, REMOTE_RW, 0, 1, 0, &mr,
	                    NULL),
	          -FI_EFAULT);
	close_ok(&d->fid);
	free(buf);
}

HMR_TEST(mr_reg_iov_ending_at_2_64_is_einval)
{
	struct fid_domain *d = open_domain(0, 0);
	char *buf = aligned_alloc(4096, 4096);
	struct fid_mr *mr;
	struct iovec iov[2] = {{buf, 4096}, {buf, 0}};

	ASSERT_EQ(fi_mr_reg(d, buf, to_top(buf), REMOTE_RW, 0, 1, 0, &mr, NULL),
	          -FI_EINVAL);
	/* The last byte of the address space is a valid range; the byte
	 * after it is not. */
	ASSERT_EQ(fi_mr_reg(d, (void *)(uintptr_t)TOP, 1, REMOTE_RW, 0, 1, 0,
	                    &mr, NULL),
	          -FI_EINVAL);
	ASSERT_EQ(fi_mr_reg(d, (void *)(uintptr_t)TOP, 2, REMOTE_RW, 0, 1, 0,
	                    &mr, NULL),
	          -FI_EINVAL);
	mr = reg_ok(d, (void *)(uintptr_t)(TOP - 1), 1, REMOTE_RW, 1, 0);
	close_ok(&mr->fid);
	/* Address 0 is never a buffer. */
	ASSERT_EQ(fi_mr_reg(d, NULL, 1, REMOTE_RW, 0, 1, 0, &mr, NULL),
	          -FI_EINVAL);
	/* The second iov wraps. */
	iov[1].iov_len = to_top(buf);
	ASSERT_EQ(fi_mr_regv(d, iov, 2, REMOTE_RW, 0, 1, 0, &mr, NULL),
	          -FI_EINVAL);
	close_ok(&d->fid);
	free(buf);
}

HMR_TEST(mr_access_off_by_one_at_each_edge_of_region)
{
	struct fid_domain *d = open_domain(FI_MR_VIRT_ADDR, 0);
	char *buf = aligned_alloc(4096, 4096);
	struct fid_mr *mr = reg_ok(d, buf, 4096, REMOTE_RW, 5, 0);
	uint64_t a = (uintptr_t)buf;
	void *p;

	ASSERT_OK(hmr_mr_access(d, 5, a, 4096, FI_REMOTE_WRITE, &p));
	ASSERT_PTR_EQ(p, buf);
	ASSERT_OK(hmr_mr_access(d, 5, a + 4095, 1, FI_REMOTE_WRITE, &p));
	ASSERT_PTR_EQ(p, buf + 4095);
	ASSERT_EQ(hmr_mr_access(d, 5, a, 4097, FI_REMOTE_WRITE, &p),
	          -FI_EFAULT);
	ASSERT_EQ(hmr_mr_access(d, 5, a + 4096, 1, FI_REMOTE_WRITE, &p),
	          -FI_EFAULT);
	ASSERT_EQ(hmr_mr_access(d, 5, a - 1, 1, FI_REMOTE_WRITE, &p),
	          -FI_EFAULT);
	ASSERT_EQ(hmr_mr_access(d, 5, a + 1, TOP, FI_REMOTE_WRITE, &p),
	          -FI_EFAULT);
	ASSERT_EQ(hmr_mr_access(d, 5, TOP, 1, FI_REMOTE_WRITE, &p), -FI_EFAULT);
	ASSERT_EQ(hmr_mr_access(d, 5, 0, 1, FI_REMOTE_WRITE, &p), -FI_EFAULT);
	close_ok(&mr->fid);
	close_ok(&d->fid);
	free(buf);
}

HMR_TEST(mr_refresh_zero_length_iov_is_einval_at_any_alignment)
{
	struct fid_domain *d = open_domain(FI_MR_MMU_NOTIFY, 0);
	char *buf = aligned_alloc(4096, 8192);
	struct fid_mr *mr = reg_ok(d, buf, 8192, REMOTE_RW, 1, 0);
	struct iovec aligned = {buf + 4096, 0}, odd = {buf + 7, 0};

	ASSERT_EQ(fi_mr_refresh(mr, &aligned, 1, 0), -FI_EINVAL);
	ASSERT_EQ(fi_mr_refresh(mr, &odd, 1, 0), -FI_EINVAL);
	close_ok(&mr->fid);
	close_ok(&d->fid);
	free(buf);
}

/* A refresh's cost does not grow with the length of the range: 1 TiB of
 * reserved (mapped, read-only, never touched) address space answers at
 * once.  (A page
 * walk took seconds per call: the test's timeout would catch it.)  Under
 * valgrind, which refuses so large a mapping, the largest of 256, 64 and
 * 16 GiB it takes (16 GiB is still four million pages). */
HMR_TEST(mr_refresh_of_a_terabyte_is_one_check)
{
	struct fid_domain *d = open_domain(FI_MR_MMU_NOTIFY, 0);
	size_t len = (size_t)1 << 40;
	char *p = MAP_FAILED;
	struct fid_mr *mr;
	int i;

	for (; len >= (size_t)16 << 30 && p == MAP_FAILED; len /= 4)
		p = mmap(NULL, len, PROT_READ,
		         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_TRUE(p != MAP_FAILED);
	len *= 4;
	printf("%zu GiB reserved\n", len >> 30);
	mr = reg_ok(d, p, len, FI_REMOTE_READ, 1, 0);
	for (i = 0; i < 1000; i++)
		ASSERT_OK(fi_mr_refresh(mr, NULL, 0, 0));
	ASSERT_EQ(munmap(p + len / 2, 4096), 0);
	ASSERT_EQ(fi_mr_refresh(mr, NULL, 0, 0), -FI_EFAULT);
	close_ok(&mr->fid);
	close_ok(&d->fid);
	munmap(p, len);
}

/* fi_mr: F73 */
HMR_TEST(mr_regv_dmabuf_flag_clears_mr)
{
	struct fid_domain *d = open_domain(0, FI_HMEM);
	char buf[64];
	struct iovec iov = {buf, sizeof(buf)};
	struct fid_mr *mr = (struct fid_mr *)(uintptr_t)1;

	ASSERT_EQ(fi_mr_regv(d, &iov, 1, REMOTE_RW, 0, 1, FI_MR_DMABUF, &mr,
	                     NULL),
	          -FI_EINVAL);
	ASSERT_PTR_EQ(mr, NULL);
	mr = (struct fid_mr *)(uintptr_t)1;
	ASSERT_EQ(fi_mr_regattr(d, NULL, 0, &mr), -FI_EINVAL);
	ASSERT_PTR_EQ(mr, NULL);
	close_ok(&d->fid);
}

HMR_TEST(strerror_of_int_min_is_unknown_error)
{
	ASSERT_TRUE(strcmp(hmr_strerror(INT_MIN), "Unknown error") == 0);
	ASSERT_TRUE(strcmp(hmr_strerror(INT_MAX), "Unknown error") == 0);
	ASSERT_TRUE(strcmp(hmr_strerror(-FI_EKEYREJECTED), "Unknown error") !=
	            0);
}

HMR_TEST(hmem_selection_list_longer_than_256_chars_is_read_whole)
{
	char list[1024], why[256];
	size_t n = 0;

	/* 300 characters of names that are not backends, then cuda. */
	n += (size_t)snprintf(list, sizeof(list), "^");
	while (n < 300)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "nothing,");
	snprintf(list + n, sizeof(list) - n, "cuda");
	setenv("HMR_HMEM", list, 1);
	ASSERT_EQ(hmr_hmem_status(FI_HMEM_CUDA, why, sizeof(why)), -FI_ENOSYS);
	ASSERT_TRUE(strstr(why, "not selected") != NULL);
}

/* Offsets run over every iov: their lengths must add up to a length. */
HMR_TEST(mr_regv_iovs_totalling_2_64_is_einval)
{
	struct fid_domain *d = open_domain(0, 0);
	static char buf[8192];
	struct iovec iov[2] = {{buf, (size_t)1 << 63},
	                       {buf + 4096, (size_t)1 << 63}};
	struct fid_mr *mr;

	ASSERT_EQ(fi_mr_regv(d, iov, 2, REMOTE_RW, 0, 1, 0, &mr, NULL),
	          -FI_EINVAL);
	iov[1].iov_len = ((size_t)1 << 63) - 1; /* 2^64 - 1 in all: a length */
	ASSERT_OK(fi_mr_regv(d, iov, 2, REMOTE_RW, 0, 1, 0, &mr, NULL));
	close_ok(&mr->fid);
	close_ok(&d->fid);
}

HMR_TEST_MAIN()
