/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_allocated.c: FI_MR_ALLOCATED: unmapped ranges and -FI_EFAULT. */
#define _GNU_SOURCE 1
#include <stdint.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "pages_util.h"

/* n pages of address space that were mapped and are no longer. */
static char *unmapped_range(size_t n)
{
	void *p = mmap(NULL, n * page_size(), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(p != MAP_FAILED);
	ASSERT_OK(munmap(p, n * page_size()));
	return p;
}

static int try_reg(struct fid_domain *domain, void *addr, size_t len)
{
	struct fid_mr *mr = NULL;
	int ret = fi_mr_reg(domain, addr, len, REMOTE_RW, 0, 1, 0, &mr, NULL);

	if (ret == 0)
		close_ok(&mr->fid);
	else
		ASSERT_PTR_EQ(mr, NULL);
	return ret;
}

static struct fid_domain *open_basic(void)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain = NULL;

	attr.mr_mode = FI_MR_BASIC;
	ASSERT_OK(hmr_domain_open(&attr, &domain));
	return domain;
}

/* fi_mr: F37 */
HMR_TEST(mr_allocated_unmapped_range_is_efault)
{
	struct fid_domain *domain = open_domain(FI_MR_ALLOCATED, 0);
	char *p = unmapped_range(2);

	ASSERT_EQ(try_reg(domain, p, 2 * page_size()), -FI_EFAULT);
	ASSERT_EQ(try_reg(domain, p + 8, 8), -FI_EFAULT);
	close_ok(&domain->fid);
}

/* fi_mr: F37 */
HMR_TEST(mr_allocated_one_unmapped_page_is_efault)
{
	struct fid_domain *domain = open_domain(FI_MR_ALLOCATED, 0);
	char *p = map_pages_filled(3, -1);
	size_t ps = page_size();

	ASSERT_OK(munmap(p + ps, ps));
	ASSERT_EQ(try_reg(domain, p, 3 * ps), -FI_EFAULT);
	/* Ending one byte into the hole is enough. */
	ASSERT_EQ(try_reg(domain, p, ps + 1), -FI_EFAULT);
	ASSERT_EQ(try_reg(domain, p + 2 * ps - 1, 2), -FI_EFAULT);
	/* The mapped pages on either side register fine. */
	ASSERT_OK(try_reg(domain, p, ps));
	ASSERT_OK(try_reg(domain, p + 2 * ps, ps));
	ASSERT_OK(munmap(p, ps));
	ASSERT_OK(munmap(p + 2 * ps, ps));
	close_ok(&domain->fid);
}

/* fi_mr: F37 */
HMR_TEST(mr_allocated_regv_with_unmapped_iov_is_efault)
{
	struct fid_domain *domain = open_domain(FI_MR_ALLOCATED, 0);
	char *good = map_pages_filled(1, -1), *bad = unmapped_range(1);
	struct iovec iov[2] = {{good, 64}, {bad, 64}};
	struct fid_mr *mr = NULL;

	ASSERT_EQ(fi_mr_regv(domain, iov, 2, REMOTE_RW, 0, 1, 0, &mr, NULL),
	          -FI_EFAULT);
	ASSERT_PTR_EQ(mr, NULL);
	ASSERT_OK(munmap(good, page_size()));
	close_ok(&domain->fid);
}

HMR_TEST(mr_allocated_regattr_unmapped_is_efault)
{
	struct fid_domain *domain = open_domain(FI_MR_ALLOCATED, 0);
	char *bad = unmapped_range(1);
	struct fi_mr_attr attr;
	struct iovec iov;
	struct fid_mr *mr = NULL;

	attr_init(&attr, &iov, bad, 64, REMOTE_RW, 1);
	ASSERT_EQ(fi_mr_regattr(domain, &attr, 0, &mr), -FI_EFAULT);
	ASSERT_PTR_EQ(mr, NULL);
	close_ok(&domain->fid);
}

HMR_TEST(mr_allocated_mapped_range_registers)
{
	struct fid_domain *domain = open_domain(FI_MR_ALLOCATED, 0);
	char *p = map_pages_filled(2, -1);
	static char data[100];
	char *heap = malloc(1000);

	ASSERT_TRUE(heap != NULL);
	ASSERT_OK(try_reg(domain, p, 2 * page_size()));
	ASSERT_OK(try_reg(domain, data, sizeof(data)));
	ASSERT_OK(try_reg(domain, heap, 1000));
	free(heap);
	ASSERT_OK(munmap(p, 2 * page_size()));
	close_ok(&domain->fid);
}

/*
 * Pages in use (touched) are proven mapped without a system call where
 * the CPU allows (base/host.c); nothing of that proof is remembered: the
 * same range unmapped afterwards is refused, whichever way it is asked.
 */
HMR_TEST(mr_allocated_touched_range_unmapped_later_is_efault)
{
	struct fid_domain *domain = open_domain(FI_MR_ALLOCATED, 0);
	/* One page, a few (the last one goes), more than one proof reads. */
	static const size_t pages[] = {1, 3, 100};
	size_t ps = page_size(), k;

	for (k = 0; k < sizeof(pages) / sizeof(pages[0]); k++) {
		size_t n = pages[k];
		char *p = map_pages_filled(n, -1);
		int i;

		memset(p, 1, n * ps);
		for (i = 0; i < 3; i++)
			ASSERT_OK(try_reg(domain, p, n * ps));
		ASSERT_OK(munmap(p + (n - 1) * ps, ps));
		ASSERT_EQ(try_reg(domain, p, n * ps), -FI_EFAULT);
		ASSERT_EQ(try_reg(domain, p + n * ps - 8, 8), -FI_EFAULT);
		if (n > 1)
			ASSERT_OK(munmap(p, (n - 1) * ps));
	}
	close_ok(&domain->fid);
}

/* Mapped but unreadable, or never touched: still mapped (msync decides
 * what a read cannot prove). */
HMR_TEST(mr_allocated_untouched_or_protected_pages_register)
{
	struct fid_domain *domain = open_domain(FI_MR_ALLOCATED, 0);
	size_t ps = page_size();
	char *p = map_pages_filled(2, -1);

	ASSERT_OK(try_reg(domain, p, 2 * ps));
	p[0] = 1;
	ASSERT_OK(mprotect(p + ps, ps, PROT_NONE));
	ASSERT_OK(try_reg(domain, p, 2 * ps));
	ASSERT_OK(try_reg(domain, p + ps, 8));
	ASSERT_OK(munmap(p, 2 * ps));
	close_ok(&domain->fid);
}

/* fi_mr: F5 */
HMR_TEST(mr_allocated_unset_accepts_unmapped_range)
{
	struct fid_domain *domain = open_domain(0, 0);
	char *p = unmapped_range(2);

	ASSERT_OK(try_reg(domain, p, 2 * page_size()));
	close_ok(&domain->fid);
}

/* fi_mr: F5 */
HMR_TEST(mr_allocated_unset_by_default_domain)
{
	struct fid_domain *domain = NULL;
	char *p = unmapped_range(1);

	/* NULL attr: the default mode asks ALLOCATED; software clears it. */
	ASSERT_OK(hmr_domain_open(NULL, &domain));
	ASSERT_OK(try_reg(domain, p, page_size()));
	close_ok(&domain->fid);
}

/* fi_mr: F6 F39 */
HMR_TEST(mr_allocated_unset_mapped_later_is_accessible)
{
	struct fid_domain *domain = open_domain(0, 0);
	char *p = unmapped_range(1);
	struct fid_mr *mr = NULL;
	void *q, *ptr = NULL;

	ASSERT_OK(fi_mr_reg(domain, p, 64, REMOTE_RW, 0, 1, 0, &mr, NULL));
	/* NOREPLACE: never clobber whatever else took the hole meanwhile. */
	q = mmap(p, page_size(), PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (q != p) {
		if (q != MAP_FAILED)
			ASSERT_OK(munmap(q, page_size()));
		close_ok(&mr->fid);
		close_ok(&domain->fid);
		HMR_SKIP("the unmapped page was taken before it was remapped");
	}
	ASSERT_OK(hmr_mr_access(domain, 1, 0, 8, FI_REMOTE_WRITE, &ptr));
	ASSERT_PTR_EQ(ptr, p);
	memcpy(ptr, "late", 5);
	ASSERT_EQ(strcmp(p, "late"), 0);
	close_ok(&mr->fid);
	ASSERT_OK(munmap(p, page_size()));
	close_ok(&domain->fid);
}

/* fi_mr: F37 F53 */
HMR_TEST(mr_basic_mode_unmapped_range_is_efault)
{
	struct fid_domain *domain = open_basic();
	char *p = unmapped_range(1);

	ASSERT_EQ(try_reg(domain, p, 64), -FI_EFAULT);
	close_ok(&domain->fid);
}

HMR_TEST_MAIN()
