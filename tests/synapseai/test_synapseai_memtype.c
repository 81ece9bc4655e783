/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_synapseai_memtype.c: a freed Gaudi address is never answered as
 * host. */
#include "synapseai_util.h"

#define MIB (1u << 20)

/*
 * Allocate, free, classify the freed address, allocate again at the same
 * address: the new memory is SynapseAI's.  The freed address stays in the
 * HBM range the runtime mapped whole at acquire (doc/hmem-synapseai.md),
 * so even freed it is answered SynapseAI, never host: there is no host
 * answer to go stale.  Host caching is on (the import monitor).
 */
HMR_TEST(synapseai_freed_address_reallocated_is_device)
{
	struct hmr_hmem_info info;
	uint64_t p, q;

	case_env("FI_MR_CACHE_MONITOR", "import");
	app_start();
	p = app_malloc(MIB);
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
	ASSERT_EQ(app.synDeviceFree(0, p, 0), synSuccess);
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
	q = app_malloc(MIB);
	ASSERT_U64_EQ(q, p); /* The simulator hands the address back. */
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
	ASSERT_EQ(app.synDeviceFree(0, q, 0), synSuccess);
}

HMR_TEST_MAIN()
