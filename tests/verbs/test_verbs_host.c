/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_verbs_host.c: the verbs kind on a machine without an RDMA device. */
#include <errno.h>
#include <infiniband/verbs.h>

#include <hmr/hmr.h>

#include "harness.h"

/* These run on the build machine: no RDMA device, and a kernel without
 * RDMA (ibv_get_device_list fails with ENOSYS).  The VM suite covers a
 * real device. */
static void need_no_device(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (list && n > 0) {
		ibv_free_device_list(list);
		HMR_SKIP("this machine has an RDMA device; the VM suite "
		         "covers it");
	}
	if (list)
		ibv_free_device_list(list);
}

HMR_TEST(verbs_domain_open_without_device_fails_cleanly)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain = (void *)1;

	need_no_device();
	attr.kind = HMR_DOMAIN_VERBS;
	ASSERT_EQ(hmr_domain_open(&attr, &domain), -FI_ENODEV);
	ASSERT_PTR_EQ(domain, NULL);
}

HMR_TEST(verbs_probe_without_device_says_why)
{
	char why[256];

	need_no_device();
	ASSERT_EQ(hmr_domain_probe(HMR_DOMAIN_VERBS, why, sizeof(why)),
	          -FI_ENODEV);
	ASSERT_TRUE(strstr(why, "no RDMA device") != NULL);
}

HMR_TEST(verbs_absent_software_domain_still_works)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain;
	struct fid_mr *mr;
	char buf[64];

	need_no_device();
	attr.kind = HMR_DOMAIN_VERBS;
	ASSERT_EQ(hmr_domain_open(&attr, &domain), -FI_ENODEV);
	ASSERT_OK(hmr_domain_open(NULL, &domain));
	ASSERT_OK(fi_mr_reg(domain, buf, sizeof(buf), FI_REMOTE_READ, 0, 1, 0,
	                    &mr, NULL));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&domain->fid));
}

HMR_TEST(verbs_named_nic_absent_is_enodev)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain;

	need_no_device();
	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = "mlx5_0";
	ASSERT_EQ(hmr_domain_open(&attr, &domain), -FI_ENODEV);
}

HMR_TEST(verbs_calls_on_software_domain_return_null)
{
	struct fid_domain *domain;
	struct fid_mr *mr;
	char buf[64];

	ASSERT_OK(hmr_domain_open(NULL, &domain));
	ASSERT_OK(fi_mr_reg(domain, buf, sizeof(buf), FI_REMOTE_READ, 0, 1, 0,
	                    &mr, NULL));
	ASSERT_PTR_EQ(hmr_verbs_pd(domain), NULL);
	ASSERT_PTR_EQ(hmr_verbs_mr(mr), NULL);
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&domain->fid));
}

HMR_TEST_MAIN()
