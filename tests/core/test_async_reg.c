/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_async_reg.c: deprecated asynchronous registration, domain binds. */
#define _GNU_SOURCE 1
#include <stdint.h>

#include "core_util.h"

static char buf[256];

/* Stands in for an event queue: hmr has none and must not touch it. */
static struct fid fake_eq = {FI_CLASS_EQ, NULL, NULL};

HMR_TEST(domain_bind_reg_mr_is_enosys)
{
	struct fid_domain *domain = open_domain(0, 0);

	ASSERT_EQ(fi_domain_bind(domain, &fake_eq, FI_REG_MR), -FI_ENOSYS);
	close_ok(&domain->fid);
}

HMR_TEST(domain_bind_anything_else_is_enosys)
{
	struct fid_domain *domain = open_domain(0, FI_RMA_EVENT);
	struct fid_cntr *cntr = NULL;

	ASSERT_OK(hmr_cntr_open(domain, &cntr));
	ASSERT_EQ(fi_domain_bind(domain, &fake_eq, 0), -FI_ENOSYS);
	ASSERT_EQ(fi_domain_bind(domain, &cntr->fid, 0), -FI_ENOSYS);
	ASSERT_EQ(fi_domain_bind(domain, &cntr->fid, FI_REMOTE_WRITE),
	          -FI_ENOSYS);
	close_ok(&cntr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F13 */
HMR_TEST(mr_reg_completes_synchronously_after_failed_async_bind)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = NULL;
	void *ptr = NULL;
	int ctx;

	ASSERT_EQ(fi_domain_bind(domain, &fake_eq, FI_REG_MR), -FI_ENOSYS);
	ASSERT_OK(fi_mr_reg(domain, buf, sizeof(buf), REMOTE_RW, 0, 3, 0, &mr,
	                    &ctx));
	/* The MR is usable on return: no event to wait for. */
	ASSERT_TRUE(mr != NULL);
	ASSERT_U64_EQ(fi_mr_key(mr), 3);
	ASSERT_OK(hmr_mr_access(domain, 3, 0, 8, FI_REMOTE_WRITE, &ptr));
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(domain_ops_outside_fi_mr_are_enosys)
{
	struct fid_domain *domain = open_domain(0, 0);
	void *obj = NULL;

	ASSERT_TRUE(domain->ops != NULL);
	ASSERT_EQ(domain->ops->av_open(domain, NULL, &obj, NULL), -FI_ENOSYS);
	ASSERT_EQ(domain->ops->cq_open(domain, NULL, &obj, NULL), -FI_ENOSYS);
	ASSERT_EQ(domain->ops->endpoint(domain, NULL, &obj, NULL), -FI_ENOSYS);
	ASSERT_EQ(domain->ops->cntr_open(domain, NULL, &obj, NULL), -FI_ENOSYS);
	ASSERT_EQ(domain->ops->poll_open(domain, NULL, &obj), -FI_ENOSYS);
	ASSERT_EQ(domain->ops->query_atomic(domain, 0, 0, NULL, 0), -FI_ENOSYS);
	ASSERT_PTR_EQ(obj, NULL);
	close_ok(&domain->fid);
}

HMR_TEST_MAIN()
