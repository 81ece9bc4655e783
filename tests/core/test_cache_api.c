/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cache_api.c: the public cache calls' arguments, on any machine. */
#include <stdint.h>

#include "core_util.h"

/* A software domain registers cheaply and keeps no cache. */
HMR_TEST(mr_cache_stats_and_flush_of_a_software_domain_are_enosys)
{
	struct fid_domain *d = open_domain(FI_MR_VIRT_ADDR, 0);
	struct hmr_mr_cache_stats st = HMR_MR_CACHE_STATS_INIT;

	ASSERT_EQ(hmr_mr_cache_stats(d, &st), -FI_ENOSYS);
	ASSERT_EQ(hmr_mr_cache_flush(d), -FI_ENOSYS);
	ASSERT_EQ(hmr_mr_cache_stats(d, NULL), -FI_EINVAL);
	st.size = 8; /* Too small for any field after size. */
	ASSERT_EQ(hmr_mr_cache_stats(d, &st), -FI_EINVAL);
	close_ok(&d->fid);
	st.size = sizeof(st);
	ASSERT_EQ(hmr_mr_cache_stats(d, &st), -FI_EBADF);
	ASSERT_EQ(hmr_mr_cache_flush(d), -FI_EBADF);
	ASSERT_EQ(hmr_mr_cache_stats(NULL, &st), -FI_EINVAL);
}

/* NULL flushes every domain's cache: none here, and that is no error. */
HMR_TEST(mr_cache_flush_of_every_domain)
{
	ASSERT_OK(hmr_mr_cache_flush(NULL));
}

/* The range is a boundary like any other: empty, or ending at 2^64 or
 * past it, is -FI_EINVAL; ending one byte before 2^64, and at 0, is fine. */
HMR_TEST(mr_cache_invalidate_ranges)
{
	static char buf[64];

	ASSERT_OK(hmr_mr_cache_invalidate(buf, sizeof(buf)));
	ASSERT_EQ(hmr_mr_cache_invalidate(buf, 0), -FI_EINVAL);
	ASSERT_OK(hmr_mr_cache_invalidate(NULL, 1));
	ASSERT_EQ(hmr_mr_cache_invalidate((void *)(uintptr_t)(UINT64_MAX - 9),
	                                  10),
	          -FI_EINVAL);
	ASSERT_OK(hmr_mr_cache_invalidate((void *)(uintptr_t)(UINT64_MAX - 9),
	                                  9));
	ASSERT_EQ(hmr_mr_cache_invalidate((void *)(uintptr_t)1, SIZE_MAX),
	          -FI_EINVAL);
}

HMR_TEST_MAIN()
