/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_synapseai_absent.c: SynapseAI absent for each reason, cleanly. */
#include <time.h>

#include "synapseai_util.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Absent with `reason`; host memory still classifies, without a vendor
 * call. */
static void expect_absent(const char *reason)
{
	struct hmr_hmem_info info;
	char why[192], buf[64];

	ASSERT_EQ(hmr_hmem_status(FI_HMEM_SYNAPSEAI, why, sizeof(why)),
	          -FI_ENOSYS);
	if (!strstr(why, reason))
		HMR_FAIL("why \"%s\" does not say \"%s\"", why, reason);
	ASSERT_OK(hmr_hmem_query(buf, sizeof(buf), &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
}

HMR_TEST(synapseai_absent_without_libsynapse)
{
	case_env("HMR_SYNAPSEAI_LIBRARY", "/nonexistent/libSynapse.so");
	expect_absent("does not load");
}

HMR_TEST(synapseai_absent_when_library_lacks_synapse_calls)
{
	/* libhl-thunk.so loads, but it is not the runtime. */
	case_env("HMR_SYNAPSEAI_LIBRARY", getenv("HMR_HLTHUNK_LIBRARY"));
	expect_absent("synInitialize missing");
}

/*
 * A host without a Gaudi: absent with the reason, at once, without
 * acquiring anything and without synDestroy (which can hang there).
 */
HMR_TEST(synapseai_absent_with_zero_devices_promptly)
{
	double t0;

	case_env("HMR_SIM_SYNAPSEAI_DEVICES", "0");
	app_load();
	t0 = now();
	expect_absent("no Gaudi device (synDeviceGetCount says 0)");
	if (now() - t0 > 5.0)
		HMR_FAIL("start-up took %.1f s with no device", now() - t0);
	ASSERT_EQ(app.calls("synInitialize"), 1);
	ASSERT_EQ(app.calls("synDeviceGetCount"), 1);
	ASSERT_EQ(app.calls("synDeviceAcquire"), 0);
	ASSERT_EQ(app.calls("synDestroy"), 0);
}

/* Every Gaudi held by another process: the backend is there (hmr never
 * acquires to find out), and only an allocation, which must acquire, says
 * that none is free. */
HMR_TEST(synapseai_alloc_says_when_no_device_is_free)
{
	struct hmr_hmem_info info;
	char buf[64];
	void *p = NULL;

	case_env("HMR_SIM_SYNAPSEAI_FAIL", "synDeviceAcquire=synNoDeviceFound");
	app_load();
	ASSERT_OK(hmr_hmem_status(FI_HMEM_SYNAPSEAI, NULL, 0));
	ASSERT_OK(hmr_hmem_query(buf, sizeof(buf), &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	ASSERT_EQ(app.calls("synDeviceAcquire"), 0);
	ASSERT_EQ(hmr_hmem_alloc(FI_HMEM_SYNAPSEAI, 0, 4096, &p), -FI_ENODEV);
	ASSERT_PTR_EQ(p, NULL);
	ASSERT_EQ(app.calls("synDeviceAcquire"), 1);
}

HMR_TEST(synapseai_not_selected_by_hmr_hmem)
{
	case_env("HMR_HMEM", "cuda");
	expect_absent("not selected");
}

/* An allocation that acquired the device and then cannot use it gives
 * the device back: the application can have it. */
HMR_TEST(synapseai_failed_alloc_start_releases_the_device)
{
	synDeviceId id = 99;
	void *p = NULL;

	case_env("HMR_SIM_SYNAPSEAI_FAIL", "synDeviceGetInfoV2");
	app_load();
	ASSERT_OK(hmr_hmem_status(FI_HMEM_SYNAPSEAI, NULL, 0));
	ASSERT_EQ(hmr_hmem_alloc(FI_HMEM_SYNAPSEAI, 0, 4096, &p), -FI_EIO);
	ASSERT_EQ(app.calls("synDeviceAcquire"), 1);
	ASSERT_EQ(app.calls("synDeviceRelease"), 1);
	ASSERT_EQ(app.synDeviceAcquireByModuleId(&id, 0), synSuccess);
	ASSERT_EQ(app.calls("synDestroy"), 0);
}

HMR_TEST(synapseai_absent_domain_refuses_synapseai_iface)
{
	char buf[4096];
	struct fid_domain *d;
	struct fid_mr *mr;

	case_env("HMR_SYNAPSEAI_LIBRARY", "/nonexistent/libSynapse.so");
	d = hmem_domain();
	ASSERT_EQ(reg_iface(d, (uintptr_t)buf, sizeof(buf), FI_HMEM_SYNAPSEAI,
	                    0, &mr),
	          -FI_ENOSYS);
	ASSERT_OK(fi_close(&d->fid));
}

HMR_TEST_MAIN()
