/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_ze_memtype.c: a freed Level Zero address is never remembered as
 * host. */
#include "hmem_reuse.h"
#include "ze_util.h"

static void *alloc_mib(void *ctx)
{
	return ze_dev_alloc(ctx, 0, 1 << 20);
}

static void free_it(void *ctx, void *p)
{
	ze_free(ctx, p);
}

/*
 * The freed address is back in the driver's PROT_NONE heap, where it
 * allocates again without an mmap a monitor could report.  Host caching
 * is on (the import monitor) so that only that rule keeps hmr right.
 */
HMR_TEST(ze_freed_address_reallocated_is_device)
{
	struct ze_drv d;
	struct reuse_ops o = {alloc_mib, free_it, &d};

	case_env("FI_MR_CACHE_MONITOR", "import");
	d = ze_open('a');
	expect_reuse_is_device(&o, FI_HMEM_ZE);
	ze_close(&d);
}

HMR_TEST_MAIN()
