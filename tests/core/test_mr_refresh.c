/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_refresh.c: fi_mr_refresh under MMU_NOTIFY and ALLOCATED modes. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>

#include "pages_util.h"

#define PAGES 4

static void unmap_pages(char *p, size_t n)
{
	ASSERT_OK(munmap(p, n * page_size()));
}

static int refresh1(struct fid_mr *mr, void *base, size_t len)
{
	struct iovec iov = {base, len};

	return fi_mr_refresh(mr, &iov, 1, 0);
}

HMR_TEST(mr_refresh_rejects_flags)
{
	struct fid_domain *domain = open_domain(FI_MR_MMU_NOTIFY, 0);
	char *mem = map_pages_filled(PAGES, 0);
	struct fid_mr *mr =
	        reg_ok(domain, mem, PAGES * page_size(), REMOTE_RW, 1, 0);

	ASSERT_EQ(fi_mr_refresh(mr, NULL, 0, 1), -FI_EBADFLAGS);
	ASSERT_EQ(fi_mr_refresh(mr, NULL, 0, FI_REMOTE_WRITE), -FI_EBADFLAGS);
	close_ok(&mr->fid);
	unmap_pages(mem, PAGES);
	close_ok(&domain->fid);
}

/* fi_mr: F42 F65 F67 L5 */
HMR_TEST(mr_refresh_mmu_notify_whole_region)
{
	struct fid_domain *domain = open_domain(FI_MR_MMU_NOTIFY, 0);
	char *mem = map_pages_filled(PAGES, 0);
	struct fid_mr *mr =
	        reg_ok(domain, mem, PAGES * page_size(), REMOTE_RW, 1, 0);
	struct iovec iov = {mem, page_size()};
	void *ptr = NULL;

	ASSERT_OK(fi_mr_refresh(mr, NULL, 0, 0));
	/* A count of 0 means the whole region, whatever iov says. */
	ASSERT_OK(fi_mr_refresh(mr, &iov, 0, 0));
	/* Enabled again once the refresh returned. */
	ASSERT_OK(hmr_mr_access(domain, 1, 0, 8, FI_REMOTE_WRITE, &ptr));
	ASSERT_PTR_EQ(ptr, mem);
	close_ok(&mr->fid);
	unmap_pages(mem, PAGES);
	close_ok(&domain->fid);
}

/* fi_mr: F66 */
HMR_TEST(mr_refresh_mmu_notify_ranges_inside_region)
{
	struct fid_domain *domain = open_domain(FI_MR_MMU_NOTIFY, 0);
	char *mem = map_pages_filled(PAGES, 0);
	size_t ps = page_size();
	struct fid_mr *mr = reg_ok(domain, mem + ps, 2 * ps, REMOTE_RW, 1, 0);
	struct iovec iov[2] = {{mem + ps, 16}, {mem + 2 * ps + 8, ps - 8}};

	ASSERT_OK(fi_mr_refresh(mr, iov, 2, 0));
	ASSERT_OK(refresh1(mr, mem + ps, 2 * ps));
	close_ok(&mr->fid);
	unmap_pages(mem, PAGES);
	close_ok(&domain->fid);
}

/* fi_mr: F66 */
HMR_TEST(mr_refresh_range_outside_region_is_einval)
{
	struct fid_domain *domain = open_domain(FI_MR_MMU_NOTIFY, 0);
	char *mem = map_pages_filled(PAGES, 0);
	size_t ps = page_size();
	struct fid_mr *mr = reg_ok(domain, mem + ps, 2 * ps, REMOTE_RW, 1, 0);
	struct iovec iov[2] = {{mem + ps, 16}, {mem, 16}};

	ASSERT_EQ(refresh1(mr, mem, 16), -FI_EINVAL);
	ASSERT_EQ(refresh1(mr, mem + 3 * ps, 16), -FI_EINVAL);
	ASSERT_EQ(refresh1(mr, mem + ps, 2 * ps + 1), -FI_EINVAL);
	ASSERT_EQ(refresh1(mr, mem + ps - 1, 2), -FI_EINVAL);
	ASSERT_EQ(fi_mr_refresh(mr, iov, 2, 0), -FI_EINVAL);
	close_ok(&mr->fid);
	unmap_pages(mem, PAGES);
	close_ok(&domain->fid);
}

/* fi_mr: F66 */
HMR_TEST(mr_refresh_unmapped_range_is_efault)
{
	struct fid_domain *domain = open_domain(FI_MR_MMU_NOTIFY, 0);
	char *mem = map_pages_filled(PAGES, 0);
	size_t ps = page_size();
	struct fid_mr *mr = reg_ok(domain, mem, PAGES * ps, REMOTE_RW, 1, 0);

	ASSERT_OK(munmap(mem + 2 * ps, ps));
	ASSERT_EQ(fi_mr_refresh(mr, NULL, 0, 0), -FI_EFAULT);
	ASSERT_EQ(refresh1(mr, mem + 2 * ps, 8), -FI_EFAULT);
	ASSERT_EQ(refresh1(mr, mem + ps, 2 * ps), -FI_EFAULT);
	/* The pages that are still mapped refresh fine. */
	ASSERT_OK(refresh1(mr, mem, 2 * ps));
	ASSERT_OK(refresh1(mr, mem + 3 * ps, ps));
	close_ok(&mr->fid);
	ASSERT_OK(munmap(mem, 2 * ps));
	ASSERT_OK(munmap(mem + 3 * ps, ps));
	close_ok(&domain->fid);
}

/* The application replaces the pages under the region, refreshes, and the
 * peer's writes reach the new pages. */
/* fi_mr: F42 */
HMR_TEST(mr_refresh_after_remap_reaches_new_pages)
{
	struct fid_domain *domain = open_domain(FI_MR_MMU_NOTIFY, 0);
	char *mem = map_pages_filled(PAGES, 0);
	size_t ps = page_size();
	struct fid_mr *mr = reg_ok(domain, mem, PAGES * ps, REMOTE_RW, 1, 0);
	void *p, *ptr = NULL;

	mem[ps] = 'o';
	p = mmap(mem + ps, ps, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_PTR_EQ(p, mem + ps);
	ASSERT_OK(refresh1(mr, mem + ps, ps));
	ASSERT_OK(hmr_mr_access(domain, 1, ps, 4, FI_REMOTE_WRITE, &ptr));
	memcpy(ptr, "new", 4);
	ASSERT_EQ(strcmp(mem + ps, "new"), 0);
	close_ok(&mr->fid);
	unmap_pages(mem, PAGES);
	close_ok(&domain->fid);
}

/* fi_mr: F65 F68 L5 */
HMR_TEST(mr_refresh_allocated_unset_supported_and_stays_enabled)
{
	struct fid_domain *domain = open_domain(0, 0);
	char *mem = map_pages_filled(PAGES, 0);
	size_t ps = page_size();
	struct fid_mr *mr = reg_ok(domain, mem, PAGES * ps, REMOTE_RW, 1, 0);
	void *ptr = NULL;

	ASSERT_OK(fi_mr_refresh(mr, NULL, 0, 0));
	ASSERT_OK(refresh1(mr, mem + ps, ps));
	ASSERT_OK(hmr_mr_access(domain, 1, 0, 8, FI_REMOTE_READ, &ptr));
	ASSERT_EQ(fi_mr_refresh(mr, NULL, 0, 2), -FI_EBADFLAGS);
	close_ok(&mr->fid);
	unmap_pages(mem, PAGES);
	close_ok(&domain->fid);
}

/* fi_mr: F68 */
HMR_TEST(mr_refresh_allocated_unset_same_checks)
{
	struct fid_domain *domain = open_domain(0, 0);
	char *mem = map_pages_filled(PAGES, 0);
	size_t ps = page_size();
	struct fid_mr *mr = reg_ok(domain, mem, 2 * ps, REMOTE_RW, 1, 0);

	ASSERT_EQ(refresh1(mr, mem + 2 * ps, 8), -FI_EINVAL);
	ASSERT_OK(munmap(mem + ps, ps));
	ASSERT_EQ(refresh1(mr, mem + ps, 8), -FI_EFAULT);
	ASSERT_EQ(fi_mr_refresh(mr, NULL, 0, 0), -FI_EFAULT);
	close_ok(&mr->fid);
	ASSERT_OK(munmap(mem, ps));
	ASSERT_OK(munmap(mem + 2 * ps, (PAGES - 2) * ps));
	close_ok(&domain->fid);
}

/* fi_mr: F65 */
HMR_TEST(mr_refresh_allocated_without_mmu_notify_is_enosys)
{
	struct fid_domain *domain = open_domain(FI_MR_ALLOCATED, 0);
	char *mem = map_pages_filled(PAGES, 0);
	struct fid_mr *mr =
	        reg_ok(domain, mem, PAGES * page_size(), REMOTE_RW, 1, 0);

	ASSERT_EQ(fi_mr_refresh(mr, NULL, 0, 0), -FI_ENOSYS);
	ASSERT_EQ(refresh1(mr, mem, 8), -FI_ENOSYS);
	close_ok(&mr->fid);
	unmap_pages(mem, PAGES);
	close_ok(&domain->fid);
}

/* fi_mr: F53 */
HMR_TEST(mr_refresh_basic_mode_is_enosys)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain = NULL;
	char *mem = map_pages_filled(1, 0);
	struct fid_mr *mr;

	attr.mr_mode = FI_MR_BASIC;
	ASSERT_OK(hmr_domain_open(&attr, &domain));
	mr = reg_ok(domain, mem, page_size(), REMOTE_RW, 0, 0);
	ASSERT_EQ(fi_mr_refresh(mr, NULL, 0, 0), -FI_ENOSYS);
	close_ok(&mr->fid);
	unmap_pages(mem, 1);
	close_ok(&domain->fid);
}

/* fi_mr: F67 */
HMR_TEST(mr_refresh_mmu_notify_wins_over_allocated)
{
	struct fid_domain *domain =
	        open_domain(FI_MR_ALLOCATED | FI_MR_MMU_NOTIFY, 0);
	char *mem = map_pages_filled(PAGES, 0);
	struct fid_mr *mr =
	        reg_ok(domain, mem, PAGES * page_size(), REMOTE_RW, 1, 0);
	void *ptr = NULL;

	ASSERT_OK(fi_mr_refresh(mr, NULL, 0, 0));
	ASSERT_OK(hmr_mr_access(domain, 1, 0, 8, FI_REMOTE_READ, &ptr));
	close_ok(&mr->fid);
	unmap_pages(mem, PAGES);
	close_ok(&domain->fid);
}

/* fi_mr: F66 */
HMR_TEST(mr_refresh_regv_region_covers_every_iov)
{
	struct fid_domain *domain = open_domain(FI_MR_MMU_NOTIFY, 0);
	char *a = map_pages_filled(1, 0), *b = map_pages_filled(1, 0);
	struct iovec iov[2] = {{a, page_size()}, {b, page_size()}};
	struct fid_mr *mr = NULL;

	ASSERT_OK(fi_mr_regv(domain, iov, 2, REMOTE_RW, 0, 1, 0, &mr, NULL));
	ASSERT_OK(refresh1(mr, b + 8, 8));
	ASSERT_OK(fi_mr_refresh(mr, iov, 2, 0));
	ASSERT_OK(fi_mr_refresh(mr, NULL, 0, 0));
	close_ok(&mr->fid);
	unmap_pages(b, 1);
	unmap_pages(a, 1);
	close_ok(&domain->fid);
}

/*
 * A peer's access racing a refresh.  The refresh proves the backing of
 * each iov with one msync, so one refresh of RACE_IOVS iovs keeps the MR
 * refreshing for tens of milliseconds; refreshes run back to back while
 * another thread accesses the MR, for at most RACE_SECONDS.
 */
#define RACE_IOVS    32768
#define RACE_SECONDS 10

struct racer {
	struct fid_domain *domain;
	atomic_bool stop;
	atomic_long refused; /* -FI_EOPBADSTATE seen */
	atomic_long granted; /* 0 seen */
	atomic_int other;    /* The first other answer, or 0. */
};

static void *access_loop(void *arg)
{
	struct racer *r = arg;
	void *ptr;
	int ret;

	while (!atomic_load(&r->stop)) {
		ret = hmr_mr_access(r->domain, 1, 0, 8, FI_REMOTE_WRITE, &ptr);
		if (ret == -FI_EOPBADSTATE)
			atomic_fetch_add(&r->refused, 1);
		else if (ret == 0)
			atomic_fetch_add(&r->granted, 1);
		else if (!atomic_load(&r->other))
			atomic_store(&r->other, ret);
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Refresh `mr` with RACE_IOVS iovs while another thread accesses it, until
 * the accessor was refused once (when until_refused) or for `rounds`
 * refreshes (at most RACE_SECONDS).  The racer's counts say what it saw. */
static void race_refresh(struct fid_domain *domain, struct fid_mr *mr,
                         char *mem, int until_refused, int rounds,
                         struct racer *r)
{
	struct iovec *iov = calloc(RACE_IOVS, sizeof(*iov));
	double end = now() + RACE_SECONDS;
	pthread_t tid;
	int i;

	ASSERT_TRUE(iov != NULL);
	for (i = 0; i < RACE_IOVS; i++) {
		iov[i].iov_base = mem + (size_t)(i % PAGES) * page_size();
		iov[i].iov_len = 8;
	}
	memset(r, 0, sizeof(*r));
	r->domain = domain;
	ASSERT_EQ(pthread_create(&tid, NULL, access_loop, r), 0);
	/* Let the accessor start: the refreshes race it, not its creation. */
	while (!atomic_load(&r->granted) && now() < end)
		sched_yield();
	for (i = 0; now() < end; i++) {
		if (until_refused ? atomic_load(&r->refused) > 0 : i >= rounds)
			break;
		ASSERT_OK(fi_mr_refresh(mr, iov, RACE_IOVS, 0));
	}
	atomic_store(&r->stop, true);
	ASSERT_EQ(pthread_join(tid, NULL), 0);
	free(iov);
}

HMR_TEST(mr_access_during_mmu_notify_refresh_is_eopbadstate)
{
	struct fid_domain *domain = open_domain(FI_MR_MMU_NOTIFY, 0);
	char *mem = map_pages_filled(PAGES, 0);
	struct fid_mr *mr =
	        reg_ok(domain, mem, PAGES * page_size(), REMOTE_RW, 1, 0);
	struct racer r;
	void *ptr = NULL;

	race_refresh(domain, mr, mem, 1, 0, &r);
	ASSERT_EQ(atomic_load(&r.other), 0);
	ASSERT_GT(atomic_load(&r.refused), 0);
	ASSERT_GT(atomic_load(&r.granted), 0);
	/* Enabled again once the refresh returned. */
	ASSERT_OK(hmr_mr_access(domain, 1, 0, 8, FI_REMOTE_WRITE, &ptr));
	close_ok(&mr->fid);
	unmap_pages(mem, PAGES);
	close_ok(&domain->fid);
}

HMR_TEST(mr_access_during_refresh_without_mmu_notify_is_granted)
{
	struct fid_domain *domain = open_domain(0, 0);
	char *mem = map_pages_filled(PAGES, 0);
	struct fid_mr *mr =
	        reg_ok(domain, mem, PAGES * page_size(), REMOTE_RW, 1, 0);
	struct racer r;

	/* FI_MR_ALLOCATED unset: the MR stays enabled through a refresh. */
	race_refresh(domain, mr, mem, 0, 5, &r);
	ASSERT_EQ(atomic_load(&r.other), 0);
	ASSERT_EQ(atomic_load(&r.refused), 0);
	ASSERT_GT(atomic_load(&r.granted), 0);
	close_ok(&mr->fid);
	unmap_pages(mem, PAGES);
	close_ok(&domain->fid);
}

HMR_TEST_MAIN()
