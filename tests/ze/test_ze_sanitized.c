/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_ze_sanitized.c: an ASan/TSan hmr never lets the loader search. */
#include "ze_util.h"

/*
 * Registered in ASan and TSan builds only.  Intel's compute-runtime
 * dlopens with RTLD_DEEPBIND, at which these runtimes abort the process
 * (google/sanitizers#611), so such an hmr starts Level Zero only with
 * the drivers ZE_ENABLE_ALT_DRIVERS names.  CTest gives the case the real
 * loader and no ZE_ENABLE_ALT_DRIVERS.
 */
HMR_TEST(ze_sanitized_build_never_searches_the_installed_drivers)
{
	expect_ze_absent("built with a sanitizer");
}

HMR_TEST(ze_sanitized_build_loads_the_named_drivers)
{
	struct ze_drv d;
	char *p;
	struct hmr_hmem_info info;

	case_env("ZE_ENABLE_ALT_DRIVERS", getenv("HMR_SIM_ZE_DRIVER_A"));
	d = ze_open('a');
	p = ze_dev_alloc(&d, 0, 4096);
	ASSERT_OK(hmr_hmem_query(p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ZE);
	ze_free(&d, p);
	ze_close(&d);
}

HMR_TEST_MAIN()
