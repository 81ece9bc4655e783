/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_neuron_absent.c: Neuron absent for each reason, cleanly. */
#include <string.h>

#include "neuron_util.h"

/* Absent is not an error: the reason is kept, host memory classifies. */
static void expect_absent(const char *reason)
{
	struct hmr_hmem_info info;
	char why[192], buf[64];

	ASSERT_EQ(hmr_hmem_status(FI_HMEM_NEURON, why, sizeof(why)),
	          -FI_ENOSYS);
	printf("neuron absent, because %s\n", why);
	if (!strstr(why, reason))
		HMR_FAIL("why \"%s\" does not say \"%s\"", why, reason);
	ASSERT_OK(hmr_hmem_query(buf, sizeof(buf), &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
}

HMR_TEST(neuron_absent_without_libnrt)
{
	case_env("HMR_NEURON_LIBRARY", "/nonexistent/libnrt.so.1");
	expect_absent("does not load");
}

HMR_TEST(neuron_absent_with_zero_cores)
{
	case_env("HMR_SIM_NEURON_CORES", "0");
	expect_absent("no NeuronCore");
}

HMR_TEST(neuron_absent_when_core_count_fails)
{
	case_env("HMR_SIM_NEURON_FAIL", "nrt_get_total_nc_count=NRT_FAILURE");
	expect_absent("nrt_get_total_nc_count: NRT_FAILURE (1)");
}

HMR_TEST(neuron_not_selected_by_hmr_hmem)
{
	case_env("HMR_HMEM", "cuda");
	expect_absent("not selected");
}

/* hmr starts nothing: the cores stay the application's to claim. */
HMR_TEST(neuron_start_up_counts_cores_and_never_calls_nrt_init)
{
	struct app a;
	void *dl;
	unsigned long (*calls)(const char *);

	ASSERT_OK(hmr_hmem_status(FI_HMEM_NEURON, NULL, 0));
	dl = dlopen(getenv("HMR_NEURON_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
	ASSERT_TRUE(dl != NULL); /* hmr loaded it */
	*(void **)&calls = app_sym(dl, "hmr_sim_neuron_calls");
	ASSERT_EQ(calls("nrt_get_total_nc_count"), 1);
	ASSERT_EQ(calls("nrt_init"), 0);
	a = app_open(); /* The application's nrt_init still works. */
	ASSERT_EQ(a.calls("nrt_init"), 1);
}

HMR_TEST(neuron_absent_domain_refuses_neuron_hint)
{
	struct fid_domain *d;
	struct fid_mr *mr;
	char buf[4096];

	case_env("HMR_NEURON_LIBRARY", "/nonexistent/libnrt.so.1");
	d = hmem_domain();
	ASSERT_EQ(reg_iface(d, buf, sizeof(buf), FI_HMEM_NEURON, 0, 0, &mr),
	          -FI_ENOSYS);
	ASSERT_OK(fi_close(&d->fid));
}

HMR_TEST_MAIN()
