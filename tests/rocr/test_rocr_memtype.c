/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_rocr_memtype.c: a freed ROCr address is never remembered as host. */
#include "rocr_util.h"

#define MIB (1 << 20)

/*
 * Allocate, free, classify the freed address (host), allocate again at
 * the same address: the new memory is ROCr's.  The freed address is back
 * in the runtime's PROT_NONE reservation, where it allocates again
 * without an mmap a monitor could report.  Host caching is on (the
 * import monitor) so that only that rule keeps hmr right.
 */
HMR_TEST(rocr_freed_address_reallocated_is_device)
{
	struct hmr_hmem_info info;
	struct app a;
	char *p, *q;

	case_env("FI_MR_CACHE_MONITOR", "import");
	a = app_open();
	p = gpu_alloc(&a, 0, MIB);
	ASSERT_OK(hmr_hmem_query(p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ROCR);
	app_free(&a, p);
	ASSERT_OK(hmr_hmem_query(p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	ASSERT_OK(hmr_hmem_query(p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	q = gpu_alloc(&a, 0, MIB);
	ASSERT_PTR_EQ(q, p); /* The simulator hands the address back. */
	ASSERT_OK(hmr_hmem_query(p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ROCR);
	ASSERT_U64_EQ(info.base, (uintptr_t)q);
	app_free(&a, q);
}

HMR_TEST_MAIN()
