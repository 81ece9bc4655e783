/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_rocr_backend.c: the ROCr backend through the simulated runtime. */
#include <sys/mman.h>

#include "rocr_util.h"

#define MIB (1 << 20)

HMR_TEST(rocr_backend_present_with_simulator)
{
	char why[192];

	ASSERT_OK(hmr_hmem_status(FI_HMEM_ROCR, why, sizeof(why)));
}

/* fi_mr: F87 */
HMR_TEST(rocr_query_gpu_memory_is_device_only)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 1, MIB);
	struct hmr_hmem_info info;

	ASSERT_OK(hmr_hmem_query(p + 100, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ROCR);
	ASSERT_EQ(info.device, 1);
	ASSERT_PTR_EQ(info.base, p);
	ASSERT_U64_EQ(info.size, MIB);
	ASSERT_NE(info.buffer_id, 0);
	ASSERT_EQ(info.flags, HMR_HMEM_DEVICE_ONLY);
	app_free(&a, p);
}

/*
 * The simulator lists the CPU agent first: GPU 1 is agent 2.  hmr's
 * device is the index among GPU agents only, on every GPU.
 */
HMR_TEST(rocr_device_is_the_index_among_gpu_agents)
{
	struct app a = app_open();
	struct hmr_hmem_info info;
	char *p[2];
	int i;

	ASSERT_EQ(a.ngpu, 2);
	for (i = 0; i < 2; i++) {
		p[i] = gpu_alloc(&a, i, MIB);
		ASSERT_OK(hmr_hmem_query(p[i], 1, &info));
		ASSERT_EQ(info.device, i);
	}
	for (i = 0; i < 2; i++)
		app_free(&a, p[i]);
}

HMR_TEST(rocr_query_cpu_pool_memory_is_host_alloc)
{
	struct app a = app_open();
	char *h = cpu_alloc(&a, MIB);
	struct hmr_hmem_info info;

	h[0] = 1; /* Host memory the CPU can touch. */
	ASSERT_OK(hmr_hmem_query(h + 8, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ROCR);
	ASSERT_EQ(info.flags, HMR_HMEM_HOST_ALLOC);
	ASSERT_EQ(info.device, 0);
	ASSERT_PTR_EQ(info.base, h);
	ASSERT_NE(info.buffer_id, 0);
	app_free(&a, h);
}

/* Locked by the application itself, not through hmr. */
HMR_TEST(rocr_query_locked_host_memory_is_host_alloc)
{
	struct app a = app_open();
	char *buf = aligned_alloc(4096, 4 * 4096);
	struct hmr_hmem_info info;
	void *agent_ptr;

	ASSERT_EQ(a.lock(buf, 4 * 4096, NULL, 0, &agent_ptr),
	          HSA_STATUS_SUCCESS);
	ASSERT_OK(hmr_hmem_query(buf + 4096, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ROCR);
	ASSERT_EQ(info.flags, HMR_HMEM_HOST_ALLOC);
	ASSERT_PTR_EQ(info.base, buf);
	ASSERT_U64_EQ(info.size, 4 * 4096);
	ASSERT_EQ(info.buffer_id, 0); /* Host memory: no id. */
	ASSERT_EQ(a.unlock(buf), HSA_STATUS_SUCCESS);
	free(buf);
}

HMR_TEST(rocr_query_plain_host_memory_is_system)
{
	struct hmr_hmem_info info;
	char *buf = malloc(4096);

	app_open();
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	free(buf);
}

/* Addresses ROCr does not know: unmapped, and past an allocation's
 * requested size (still inside its pages). */
HMR_TEST(rocr_query_unknown_address_is_system)
{
	struct app a = app_open();
	struct hmr_hmem_info info;
	char *p = gpu_alloc(&a, 0, 1000);
	void *none =
	        mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(none != MAP_FAILED);
	ASSERT_OK(hmr_hmem_query(none, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	ASSERT_OK(hmr_hmem_query(p + 2000, 8, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	ASSERT_OK(hmr_hmem_query(p + 999, 1, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ROCR);
	munmap(none, 4096);
	app_free(&a, p);
}

HMR_TEST(rocr_host_pointer_known_is_classified_without_the_runtime)
{
	struct app a;
	struct hmr_hmem_info info;
	char *buf = malloc(65536);
	unsigned long before;
	int i;

	/* Host answers are remembered only while a monitor reports unmaps
	 * (the default memhooks; import until memhooks land). */
	case_env("FI_MR_CACHE_MONITOR", "import");
	a = app_open();
	ASSERT_OK(hmr_hmem_query(buf, 65536, &info)); /* Learns it. */
	before = a.calls("hsa_amd_pointer_info");
	for (i = 0; i < 1000; i++) {
		ASSERT_OK(hmr_hmem_query(buf + i, 1024, &info));
		ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	}
	ASSERT_EQ(a.calls("hsa_amd_pointer_info"), before);
	free(buf);
}

/* fi_mr: F47 F87 */
HMR_TEST(rocr_regattr_with_hint_on_hmem_software_domain)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 1, MIB);
	struct fid_domain *d = hmem_domain();
	struct fid_mr *mr;

	ASSERT_OK(reg_iface(d, p, MIB, FI_HMEM_ROCR, 1, FI_HMEM_DEVICE_ONLY,
	                    &mr));
	ASSERT_OK(fi_close(&mr->fid));
	/* Without the hint: detected. */
	ASSERT_OK(fi_mr_reg(d, p, MIB, FI_REMOTE_WRITE, 0, 7,
	                    FI_HMEM_DEVICE_ONLY, &mr, NULL));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
	app_free(&a, p);
}

HMR_TEST(rocr_device_hint_mismatch_is_einval)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 1, MIB);
	struct fid_domain *d = hmem_domain();
	struct fid_mr *mr;

	ASSERT_EQ(reg_iface(d, p, MIB, FI_HMEM_ROCR, 0, 0, &mr), -FI_EINVAL);
	ASSERT_OK(fi_close(&d->fid));
	app_free(&a, p);
}

HMR_TEST(rocr_hint_on_plain_host_memory_is_einval)
{
	struct fid_domain *d;
	struct fid_mr *mr;
	char *buf = malloc(4096);

	app_open();
	d = hmem_domain();
	ASSERT_EQ(reg_iface(d, buf, 4096, FI_HMEM_ROCR, 0, 0, &mr), -FI_EINVAL);
	ASSERT_OK(fi_close(&d->fid));
	free(buf);
}

/* CPU pool memory: FI_HMEM_HOST_ALLOC holds, FI_HMEM_DEVICE_ONLY not;
 * the reverse for GPU memory. */
/* fi_mr: F108 F109 */
HMR_TEST(rocr_host_alloc_and_device_only_flags_follow_the_owner)
{
	struct app a = app_open();
	char *h = cpu_alloc(&a, MIB), *p = gpu_alloc(&a, 0, MIB);
	struct fid_domain *d = hmem_domain();
	struct fid_mr *mr;

	ASSERT_EQ(
	        reg_iface(d, h, MIB, FI_HMEM_ROCR, 0, FI_HMEM_DEVICE_ONLY, &mr),
	        -FI_EINVAL);
	ASSERT_OK(
	        reg_iface(d, h, MIB, FI_HMEM_ROCR, 5, FI_HMEM_HOST_ALLOC, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_EQ(
	        reg_iface(d, p, MIB, FI_HMEM_ROCR, 0, FI_HMEM_HOST_ALLOC, &mr),
	        -FI_EINVAL);
	ASSERT_OK(fi_close(&d->fid));
	app_free(&a, h);
	app_free(&a, p);
}

/* Both directions, at an interior address, from plain and from locked
 * host memory. */
HMR_TEST(rocr_copy_to_and_from_device_roundtrip)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 1, MIB), out[300], in[300];
	char *locked = aligned_alloc(4096, 4096);
	void *agent_ptr;

	memset(out, 0x3c, sizeof(out));
	ASSERT_OK(hmr_hmem_copy_to(p + 5, out, sizeof(out)));
	ASSERT_OK(hmr_hmem_copy_from(in, p + 5, sizeof(in)));
	ASSERT_EQ(memcmp(in, out, sizeof(in)), 0);
	ASSERT_EQ(a.lock(locked, 4096, NULL, 0, &agent_ptr),
	          HSA_STATUS_SUCCESS);
	ASSERT_OK(hmr_hmem_copy_from(locked + 10, p + 5, sizeof(in)));
	ASSERT_EQ(memcmp(locked + 10, out, sizeof(out)), 0);
	memset(locked, 0x71, 64);
	ASSERT_OK(hmr_hmem_copy_to(p + MIB - 64, locked, 64));
	ASSERT_EQ(a.memory_copy(in, p + MIB - 64, 64), HSA_STATUS_SUCCESS);
	ASSERT_EQ(memcmp(in, locked, 64), 0);
	ASSERT_EQ(a.unlock(locked), HSA_STATUS_SUCCESS);
	free(locked);
	app_free(&a, p);
}

/* A copy that leaves the allocation is the runtime's refusal, mapped. */
HMR_TEST(rocr_copy_past_the_allocation_is_einval)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 0, 4096), buf[64];

	ASSERT_EQ(hmr_hmem_copy_from(buf, p + 4096 - 32, sizeof(buf)),
	          -FI_EINVAL);
	app_free(&a, p);
}

HMR_TEST(rocr_host_register_then_unregister_reclassifies)
{
	struct app a = app_open();
	struct hmr_hmem_info info;
	char *buf = aligned_alloc(4096, 1 << 16);

	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM); /* Now cached as host. */
	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_ROCR, buf, 1 << 16));
	ASSERT_EQ(a.calls("hsa_amd_memory_lock"), 1);
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ROCR);
	ASSERT_EQ(info.flags, HMR_HMEM_HOST_ALLOC);
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_ROCR, buf, 1 << 16));
	ASSERT_EQ(a.calls("hsa_amd_memory_unlock"), 1);
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	free(buf);
}

/* The KFD cannot lock what is not mapped: the runtime's refusal. */
HMR_TEST(rocr_host_register_of_unmapped_memory_is_enomem)
{
	void *none;

	/* Started first: its own mappings cannot land in the hole. */
	ASSERT_OK(hmr_hmem_status(FI_HMEM_ROCR, NULL, 0));
	none = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(none != MAP_FAILED);
	munmap(none, 8192);
	ASSERT_EQ(hmr_hmem_host_register(FI_HMEM_ROCR, none, 8192), -FI_ENOMEM);
}

HMR_TEST_MAIN()
