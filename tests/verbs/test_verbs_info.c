/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_verbs_info.c: the NIC queries on a machine without an RDMA device. */
#include <infiniband/verbs.h>
#include <string.h>

#include <hmr/hmr.h>

#include "harness.h"

/* The build machine has no RDMA device and a kernel without RDMA; the VM
 * suite (tests/vm/verbs/verbs_info.c) covers rxe devices. */
static void need_no_device(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (list)
		ibv_free_device_list(list);
	if (list && n > 0)
		HMR_SKIP("this machine has an RDMA device; the VM suite "
		         "covers it");
}

HMR_TEST(verbs_device_count_without_device_says_no_rdma_device)
{
	uint32_t n = 7;
	char why[256];

	need_no_device();
	ASSERT_EQ(hmr_verbs_device_count(&n, why, sizeof(why)), -FI_ENODEV);
	ASSERT_EQ(n, 0);
	ASSERT_TRUE(strncmp(why, "no RDMA device: ", 16) == 0);
}

HMR_TEST(verbs_device_count_takes_no_reason_buffer)
{
	uint32_t n = 7;

	need_no_device();
	ASSERT_EQ(hmr_verbs_device_count(&n, NULL, 0), -FI_ENODEV);
	ASSERT_EQ(n, 0);
	ASSERT_EQ(hmr_verbs_device_count(NULL, NULL, 0), -FI_EINVAL);
}

HMR_TEST(verbs_device_info_without_device_is_enoent)
{
	struct hmr_verbs_device_info info = HMR_VERBS_DEVICE_INFO_INIT;

	need_no_device();
	ASSERT_EQ(hmr_verbs_device_info(0, &info), -FI_ENOENT);
	ASSERT_EQ(hmr_verbs_device_info(0, NULL), -FI_EINVAL);
	info.size = 0;
	ASSERT_EQ(hmr_verbs_device_info(0, &info), -FI_EINVAL);
}

HMR_TEST(verbs_reg_path_without_device_says_no_rdma_device)
{
	enum hmr_verbs_path path = HMR_VERBS_PATH_HOST;
	char why[256];

	need_no_device();
	ASSERT_EQ(hmr_verbs_reg_path(FI_HMEM_SYSTEM, 0, 0, &path, why,
	                             sizeof(why)),
	          -FI_ENODEV);
	ASSERT_EQ(path, HMR_VERBS_PATH_NONE);
	ASSERT_TRUE(strncmp(why, "no RDMA device: ", 16) == 0);
}

HMR_TEST(verbs_reg_path_rejects_bad_arguments)
{
	enum hmr_verbs_path path;
	char why[64];

	ASSERT_EQ(hmr_verbs_reg_path(FI_HMEM_SYSTEM, 0, 0, NULL, why,
	                             sizeof(why)),
	          -FI_EINVAL);
	ASSERT_EQ(hmr_verbs_reg_path((enum fi_hmem_iface)99, 0, 0, &path, why,
	                             sizeof(why)),
	          -FI_EINVAL);
}

HMR_TEST_MAIN()
