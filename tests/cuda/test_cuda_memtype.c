/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cuda_memtype.c: a freed CUDA address is never remembered as host. */
#include "cuda_util.h"
#include "hmem_reuse.h"

static void *alloc_mib(void *ctx)
{
	return (void *)(uintptr_t)sim_alloc_on(ctx, 0, 1 << 20);
}

static void free_it(void *ctx, void *p)
{
	ASSERT_EQ(((struct sim *)ctx)->free((uintptr_t)p), 0);
}

/*
 * Issue 11: cuMemAlloc, cuMemFree, classify the freed address (host,
 * rightly), cuMemAlloc again at the same address: hmr answered host for
 * the new device memory.  The freed address is back in the driver's
 * PROT_NONE reservation, where the driver allocates again without any
 * mmap a monitor could report, so its host answer must not be kept.  Host
 * caching is on (the import monitor) so that only that rule keeps hmr
 * right.
 */
HMR_TEST(cuda_freed_address_reallocated_is_device)
{
	struct sim s;
	struct reuse_ops o = {alloc_mib, free_it, &s};

	case_env("FI_MR_CACHE_MONITOR", "import");
	s = sim_open();
	expect_reuse_is_device(&o, FI_HMEM_CUDA);
}

HMR_TEST_MAIN()
