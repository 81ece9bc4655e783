/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cuda_memtype.c: a freed CUDA address is never remembered as host. */
#include "cuda_util.h"

#define MIB (1 << 20)

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
	struct hmr_hmem_info info;
	unsigned long long p, q;
	struct sim s;

	case_env("FI_MR_CACHE_MONITOR", "import");
	s = sim_open();
	p = sim_alloc_on(&s, 0, MIB);
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_CUDA);
	ASSERT_EQ(s.free(p), 0);
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	q = sim_alloc_on(&s, 0, MIB);
	ASSERT_U64_EQ(q, p); /* The simulator hands the address back. */
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_CUDA);
	ASSERT_EQ(info.device, 0);
	ASSERT_U64_EQ(info.base, q);
	ASSERT_EQ(s.free(q), 0);
}

HMR_TEST_MAIN()
