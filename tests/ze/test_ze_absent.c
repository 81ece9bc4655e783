/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_ze_absent.c: Level Zero absent for each reason, cleanly. */
#include <string.h>

#include "ze_util.h"

/*
 * CTest gives these cases HMR_ZE_LIBRARY = the real loader (absolute
 * path) and no ZE_ENABLE_ALT_DRIVERS: the loader looks for the drivers
 * installed on this machine.  Cases that want another setting make it.
 */

HMR_TEST(ze_absent_without_the_loader)
{
	case_env("HMR_ZE_LIBRARY", "/nonexistent/libze_loader.so.1");
	expect_ze_absent("HMR_ZE_LIBRARY=/nonexistent/libze_loader.so.1 does "
	                 "not load");
}

HMR_TEST(ze_absent_with_no_driver_at_all)
{
	/* A driver list of one file that does not exist: the loader has
	 * no driver, whatever is installed. */
	case_env("ZE_ENABLE_ALT_DRIVERS", "/nonexistent/libze_none.so");
	expect_ze_absent("zeInit: ZE_RESULT_ERROR_UNINITIALIZED");
}

HMR_TEST(ze_absent_when_the_driver_has_no_device)
{
	case_env("ZE_ENABLE_ALT_DRIVERS", getenv("HMR_SIM_ZE_DRIVER_A"));
	case_env("HMR_SIM_ZE_DEVICES", "0");
	expect_ze_absent("no Level Zero driver started");
}

HMR_TEST(ze_not_selected_by_hmr_hmem)
{
	case_env("ZE_ENABLE_ALT_DRIVERS", getenv("HMR_SIM_ZE_DRIVER_A"));
	case_env("HMR_HMEM", "^ze");
	expect_ze_absent("not selected");
}

HMR_TEST(ze_absent_domain_refuses_ze_hint)
{
	struct fid_domain *d;
	struct fid_mr *mr;
	char buf[4096];

	case_env("HMR_ZE_LIBRARY", "/nonexistent/libze_loader.so.1");
	d = hmem_domain();
	ASSERT_EQ(reg_ze(d, buf, sizeof(buf), 0, 0, &mr), -FI_ENOSYS);
	ASSERT_OK(fi_close(&d->fid));
}

HMR_TEST_MAIN()
