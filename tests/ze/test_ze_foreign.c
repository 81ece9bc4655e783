/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_ze_foreign.c: a device handle that names no device is refused. */
#include "ze_util.h"

/* CTest loads the real loader through tests/ze/ze_shim.c (HMR_ZE_LIBRARY),
 * which hands out a device handle of no device for every allocation. */

HMR_TEST(ze_device_handle_of_no_device_is_enodev)
{
	struct ze_drv d = ze_open('a');
	struct fid_domain *dom = hmem_domain();
	char *dev = ze_dev_alloc(&d, 1, 4096), *host = ze_host_alloc(&d, 4096);
	struct hmr_hmem_info info;
	struct fid_mr *mr;

	/* libfabric would call it device 0; hmr does not guess. */
	ASSERT_EQ(hmr_hmem_query(dev, 4096, &info), -FI_ENODEV);
	ASSERT_EQ(reg_ze(dom, dev, 4096, fi_hmem_ze_device(0, 1), 0, &mr),
	          -FI_ENODEV);
	/* Host allocations name no device: unaffected. */
	ASSERT_OK(hmr_hmem_query(host, 4096, &info));
	ASSERT_EQ(info.flags, HMR_HMEM_HOST_ALLOC);
	ASSERT_OK(fi_close(&dom->fid));
	ze_free(&d, dev);
	ze_free(&d, host);
	ze_close(&d);
}

HMR_TEST_MAIN()
