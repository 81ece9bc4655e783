/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_ze_memtype.c: a freed Level Zero address is never remembered as
 * host. */
#include "ze_util.h"

#define MIB (1 << 20)

/*
 * Allocate, free, classify the freed address (host), allocate again at
 * the same address: the new memory is Level Zero's.  The freed address is
 * back in the driver's PROT_NONE heap, where it allocates again without
 * an mmap a monitor could report.  Host caching is on (the import
 * monitor) so that only that rule keeps hmr right.
 */
HMR_TEST(ze_freed_address_reallocated_is_device)
{
	struct hmr_hmem_info info;
	struct ze_drv d;
	char *p, *q;

	case_env("FI_MR_CACHE_MONITOR", "import");
	d = ze_open('a');
	p = ze_dev_alloc(&d, 0, MIB);
	ASSERT_OK(hmr_hmem_query(p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ZE);
	ze_free(&d, p);
	ASSERT_OK(hmr_hmem_query(p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	ASSERT_OK(hmr_hmem_query(p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	q = ze_dev_alloc(&d, 0, MIB);
	ASSERT_PTR_EQ(q, p); /* The simulator hands the address back. */
	ASSERT_OK(hmr_hmem_query(p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ZE);
	ASSERT_U64_EQ(info.base, (uintptr_t)q);
	ze_free(&d, q);
	ze_close(&d);
}

HMR_TEST_MAIN()
