/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_rocr_absent.c: ROCr absent for each reason, cleanly. */
#include <unistd.h>

#include "rocr_util.h"

/* Each case runs with its own HMR_ROCR_LIBRARY (see CMakeLists.txt). */
static void expect_absent(const char *reason)
{
	struct hmr_hmem_info info;
	char why[192], buf[64];

	ASSERT_EQ(hmr_hmem_status(FI_HMEM_ROCR, why, sizeof(why)), -FI_ENOSYS);
	if (!strstr(why, reason))
		HMR_FAIL("why \"%s\" does not say \"%s\"", why, reason);
	/* Absent is not an error: host memory still classifies. */
	ASSERT_OK(hmr_hmem_query(buf, sizeof(buf), &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
}

/* Debian's own libhsa-runtime64 (5.2.3) on a machine without /dev/kfd:
 * hsa_init says HSA_STATUS_ERROR_OUT_OF_RESOURCES. */
HMR_TEST(rocr_absent_with_real_runtime_and_no_gpu)
{
	const char *lib = getenv("HMR_TEST_REAL_ROCR");
	char why[192];

	if (!lib || !*lib || access(lib, R_OK))
		HMR_SKIP("Debian's libhsa-runtime64-1 is not installed");
	if (access("/dev/kfd", F_OK) == 0)
		HMR_SKIP("/dev/kfd exists: this machine may have a GPU");
	case_runtime("HMR_TEST_REAL_ROCR");
	expect_absent("hsa_init: HSA_STATUS_ERROR_OUT_OF_RESOURCES");
	ASSERT_EQ(hmr_hmem_status(FI_HMEM_ROCR, why, sizeof(why)), -FI_ENOSYS);
	if (!strstr(why, "no usable GPU (/dev/kfd is absent)"))
		HMR_FAIL("why \"%s\" does not name /dev/kfd", why);
}

HMR_TEST(rocr_absent_without_library)
{
	case_env("HMR_ROCR_LIBRARY", "/nonexistent/libhsa-runtime64.so.1");
	expect_absent("does not load");
}

/* The simulator's hsa_init fails as ROCr's does without a GPU. */
HMR_TEST(rocr_absent_with_zero_gpus)
{
	case_env("HMR_SIM_ROCR_DEVICES", "0");
	expect_absent("no usable GPU");
}

HMR_TEST(rocr_not_selected_by_hmr_hmem)
{
	case_env("HMR_HMEM", "cuda");
	expect_absent("not selected");
}

/* A library without ROCr's symbols is refused by name, not crashed on. */
HMR_TEST(rocr_absent_with_a_library_that_is_not_rocr)
{
	case_env("HMR_ROCR_LIBRARY", "libz.so.1");
	expect_absent("symbol hsa_status_string missing");
}

HMR_TEST(rocr_absent_domain_refuses_rocr_hint)
{
	struct fid_domain *d;
	struct fid_mr *mr;
	char buf[4096];

	case_env("HMR_ROCR_LIBRARY", "/nonexistent/libhsa-runtime64.so.1");
	d = hmem_domain();
	ASSERT_EQ(reg_iface(d, buf, sizeof(buf), FI_HMEM_ROCR, 0, 0, &mr),
	          -FI_ENOSYS);
	ASSERT_OK(fi_close(&d->fid));
}

HMR_TEST_MAIN()
