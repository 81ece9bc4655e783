/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_rocr_memtype.c: a freed ROCr address is never remembered as host. */
#include "hmem_reuse.h"
#include "rocr_util.h"

static void *alloc_mib(void *ctx)
{
	return gpu_alloc(ctx, 0, 1 << 20);
}

static void free_it(void *ctx, void *p)
{
	app_free(ctx, p);
}

/*
 * The freed address is back in the runtime's PROT_NONE reservation,
 * where it allocates again without an mmap a monitor could report.  Host
 * caching is on (the import monitor) so that only that rule keeps hmr
 * right.
 */
HMR_TEST(rocr_freed_address_reallocated_is_device)
{
	struct app a;
	struct reuse_ops o = {alloc_mib, free_it, &a};

	case_env("FI_MR_CACHE_MONITOR", "import");
	a = app_open();
	expect_reuse_is_device(&o, FI_HMEM_ROCR);
}

HMR_TEST_MAIN()
