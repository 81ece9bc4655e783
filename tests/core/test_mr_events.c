/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_events.c: RMA_EVENT/ENDPOINT modes, bind, enable, close rules. */
#define _GNU_SOURCE 1
#include <stdint.h>

#include "core_util.h"

static char buf[4096];

static struct fid_cntr *cntr_open_ok(struct fid_domain *domain)
{
	struct fid_cntr *cntr = NULL;

	ASSERT_OK(hmr_cntr_open(domain, &cntr));
	ASSERT_TRUE(cntr != NULL);
	ASSERT_EQ(cntr->fid.fclass, FI_CLASS_CNTR);
	return cntr;
}

static struct fid *ep_open_ok(struct fid_domain *domain)
{
	struct fid *ep = NULL;

	ASSERT_OK(hmr_ep_open(domain, &ep));
	ASSERT_TRUE(ep != NULL);
	return ep;
}

static int poke(struct fid_domain *domain, uint64_t key, uint64_t access)
{
	void *ptr = NULL;

	return hmr_mr_access(domain, key, 0, 8, access, &ptr);
}

HMR_TEST(mr_rma_event_flag_starts_disabled_until_enable)
{
	struct fid_domain *domain = open_domain(FI_MR_RMA_EVENT, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, FI_RMA_EVENT);

	ASSERT_EQ(poke(domain, 1, FI_REMOTE_WRITE), -FI_EOPBADSTATE);
	ASSERT_OK(fi_mr_enable(mr));
	ASSERT_OK(poke(domain, 1, FI_REMOTE_WRITE));
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_rma_event_mode_without_flag_starts_enabled)
{
	struct fid_domain *domain = open_domain(FI_MR_RMA_EVENT, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);

	ASSERT_OK(poke(domain, 1, FI_REMOTE_READ));
	ASSERT_OK(fi_mr_enable(mr));
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_rma_event_flag_needs_cap)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = NULL;

	ASSERT_EQ(fi_mr_reg(domain, buf, 64, REMOTE_RW, 0, 1, FI_RMA_EVENT, &mr,
	                    NULL),
	          -FI_EBADFLAGS);
	close_ok(&domain->fid);
}

HMR_TEST(mr_rma_event_flag_without_mode_starts_enabled)
{
	struct fid_domain *domain = open_domain(0, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, FI_RMA_EVENT);

	ASSERT_OK(poke(domain, 1, FI_REMOTE_READ));
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_bind_counter_without_rma_event_flag_in_mode_is_einval)
{
	struct fid_domain *domain = open_domain(FI_MR_RMA_EVENT, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid_cntr *cntr = cntr_open_ok(domain);

	ASSERT_EQ(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE), -FI_EINVAL);
	close_ok(&mr->fid);
	close_ok(&cntr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_counter_counts_matching_accesses)
{
	struct fid_domain *domain = open_domain(FI_MR_RMA_EVENT, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, FI_RMA_EVENT);
	struct fid_cntr *wr = cntr_open_ok(domain);
	struct fid_cntr *rd = cntr_open_ok(domain);
	int i;

	ASSERT_OK(fi_mr_bind(mr, &wr->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fi_mr_bind(mr, &rd->fid, FI_REMOTE_READ));
	ASSERT_OK(fi_mr_enable(mr));
	for (i = 0; i < 5; i++)
		ASSERT_OK(poke(domain, 1, FI_REMOTE_WRITE));
	for (i = 0; i < 3; i++)
		ASSERT_OK(poke(domain, 1, FI_REMOTE_READ));
	ASSERT_U64_EQ(hmr_cntr_read(wr), 5);
	ASSERT_U64_EQ(hmr_cntr_read(rd), 3);
	/* libfabric's fi_cntr_read() goes through the ops table. */
	ASSERT_U64_EQ(wr->ops->read(wr), 5);
	ASSERT_U64_EQ(rd->ops->read(rd), 3);
	close_ok(&wr->fid);
	close_ok(&rd->fid);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_counter_ignores_refused_accesses)
{
	struct fid_domain *domain = open_domain(0, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, FI_REMOTE_READ, 1, 0);
	struct fid_cntr *cntr = cntr_open_ok(domain);
	void *ptr = NULL;

	ASSERT_OK(fi_mr_bind(mr, &cntr->fid, REMOTE_RW));
	ASSERT_EQ(poke(domain, 1, FI_REMOTE_WRITE), -FI_EACCES);
	ASSERT_EQ(hmr_mr_access(domain, 1, 60, 8, FI_REMOTE_READ, &ptr),
	          -FI_EFAULT);
	ASSERT_U64_EQ(hmr_cntr_read(cntr), 0);
	ASSERT_OK(poke(domain, 1, FI_REMOTE_READ));
	ASSERT_U64_EQ(hmr_cntr_read(cntr), 1);
	close_ok(&cntr->fid);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_counter_set_through_ops)
{
	struct fid_domain *domain = open_domain(0, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid_cntr *cntr = cntr_open_ok(domain);

	ASSERT_OK(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE));
	ASSERT_OK(poke(domain, 1, FI_REMOTE_WRITE));
	ASSERT_OK(cntr->ops->set(cntr, 100));
	ASSERT_OK(poke(domain, 1, FI_REMOTE_WRITE));
	ASSERT_U64_EQ(hmr_cntr_read(cntr), 101);
	close_ok(&cntr->fid);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_bind_same_counter_twice_ors_flags)
{
	struct fid_domain *domain = open_domain(0, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid_cntr *cntr = cntr_open_ok(domain);

	ASSERT_OK(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_READ));
	ASSERT_OK(poke(domain, 1, FI_REMOTE_WRITE));
	ASSERT_OK(poke(domain, 1, FI_REMOTE_READ));
	ASSERT_U64_EQ(hmr_cntr_read(cntr), 2);
	/* Binding again with a bit already set does not count twice. */
	ASSERT_OK(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE));
	ASSERT_OK(poke(domain, 1, FI_REMOTE_WRITE));
	ASSERT_U64_EQ(hmr_cntr_read(cntr), 3);
	close_ok(&cntr->fid);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_bind_after_enable_is_eopbadstate)
{
	struct fid_domain *domain = open_domain(FI_MR_RMA_EVENT, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, FI_RMA_EVENT);
	struct fid_cntr *a = cntr_open_ok(domain);
	struct fid_cntr *b = cntr_open_ok(domain);

	ASSERT_OK(fi_mr_bind(mr, &a->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fi_mr_enable(mr));
	ASSERT_EQ(fi_mr_bind(mr, &b->fid, FI_REMOTE_WRITE), -FI_EOPBADSTATE);
	ASSERT_EQ(fi_mr_bind(mr, &a->fid, FI_REMOTE_READ), -FI_EOPBADSTATE);
	close_ok(&a->fid);
	close_ok(&b->fid);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_created_enabled_accepts_bind_any_time)
{
	struct fid_domain *domain = open_domain(0, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid_cntr *a = cntr_open_ok(domain);
	struct fid_cntr *b = cntr_open_ok(domain);

	ASSERT_OK(poke(domain, 1, FI_REMOTE_WRITE));
	ASSERT_OK(fi_mr_bind(mr, &a->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fi_mr_enable(mr));
	ASSERT_OK(fi_mr_bind(mr, &b->fid, FI_REMOTE_WRITE));
	ASSERT_OK(poke(domain, 1, FI_REMOTE_WRITE));
	ASSERT_U64_EQ(hmr_cntr_read(a), 1);
	ASSERT_U64_EQ(hmr_cntr_read(b), 1);
	close_ok(&a->fid);
	close_ok(&b->fid);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_enable_enabled_mr_returns_zero)
{
	struct fid_domain *domain = open_domain(FI_MR_RMA_EVENT, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, FI_RMA_EVENT);

	ASSERT_OK(fi_mr_enable(mr));
	ASSERT_OK(fi_mr_enable(mr));
	ASSERT_OK(poke(domain, 1, FI_REMOTE_READ));
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_bind_counter_without_cap_is_enosys)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid_cntr *cntr = cntr_open_ok(domain);

	ASSERT_EQ(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE), -FI_ENOSYS);
	close_ok(&cntr->fid);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_bind_counter_flags_checked)
{
	struct fid_domain *domain = open_domain(0, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid_cntr *cntr = cntr_open_ok(domain);

	ASSERT_EQ(fi_mr_bind(mr, &cntr->fid, 0), -FI_EINVAL);
	ASSERT_EQ(fi_mr_bind(mr, &cntr->fid, FI_READ), -FI_EBADFLAGS);
	ASSERT_EQ(fi_mr_bind(mr, &cntr->fid, FI_WRITE), -FI_EBADFLAGS);
	ASSERT_EQ(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE | (1ULL << 30)),
	          -FI_EBADFLAGS);
	ASSERT_OK(fi_mr_bind(mr, &cntr->fid, REMOTE_RW));
	close_ok(&cntr->fid);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_bind_endpoint_flags_must_be_zero)
{
	struct fid_domain *domain = open_domain(FI_MR_ENDPOINT, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid *ep = ep_open_ok(domain);

	ASSERT_EQ(fi_mr_bind(mr, ep, FI_REMOTE_WRITE), -FI_EBADFLAGS);
	ASSERT_EQ(fi_mr_bind(mr, ep, 1ULL << 30), -FI_EBADFLAGS);
	ASSERT_OK(fi_mr_bind(mr, ep, 0));
	close_ok(ep);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_bind_object_of_other_domain_is_einval)
{
	struct fid_domain *domain = open_domain(FI_MR_ENDPOINT, FI_RMA_EVENT);
	struct fid_domain *other = open_domain(FI_MR_ENDPOINT, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid_cntr *cntr = cntr_open_ok(other);
	struct fid *ep = ep_open_ok(other);

	ASSERT_EQ(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE), -FI_EINVAL);
	ASSERT_EQ(fi_mr_bind(mr, ep, 0), -FI_EINVAL);
	close_ok(ep);
	close_ok(&cntr->fid);
	close_ok(&mr->fid);
	close_ok(&other->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_bind_other_object_is_einval)
{
	struct fid_domain *domain = open_domain(0, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid_mr *mr2 = reg_ok(domain, buf, 64, REMOTE_RW, 2, 0);

	ASSERT_EQ(fi_mr_bind(mr, &domain->fid, 0), -FI_EINVAL);
	ASSERT_EQ(fi_mr_bind(mr, &domain->fid, FI_REMOTE_WRITE), -FI_EINVAL);
	ASSERT_EQ(fi_mr_bind(mr, &mr2->fid, 0), -FI_EINVAL);
	ASSERT_EQ(fi_mr_bind(mr, &mr->fid, FI_REMOTE_WRITE), -FI_EINVAL);
	close_ok(&mr2->fid);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_endpoint_mode_starts_disabled)
{
	struct fid_domain *domain = open_domain(FI_MR_ENDPOINT, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid *ep = ep_open_ok(domain);

	ASSERT_EQ(poke(domain, 1, FI_REMOTE_READ), -FI_EOPBADSTATE);
	ASSERT_OK(fi_mr_bind(mr, ep, 0));
	ASSERT_EQ(poke(domain, 1, FI_REMOTE_READ), -FI_EOPBADSTATE);
	ASSERT_OK(fi_mr_enable(mr));
	ASSERT_OK(poke(domain, 1, FI_REMOTE_READ));
	close_ok(ep);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_endpoint_mode_enable_before_bind_is_eopbadstate)
{
	struct fid_domain *domain = open_domain(FI_MR_ENDPOINT, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid *ep = ep_open_ok(domain);

	ASSERT_EQ(fi_mr_enable(mr), -FI_EOPBADSTATE);
	ASSERT_EQ(poke(domain, 1, FI_REMOTE_READ), -FI_EOPBADSTATE);
	/* The failed enable did not lock the MR: binding still works. */
	ASSERT_OK(fi_mr_bind(mr, ep, 0));
	ASSERT_OK(fi_mr_enable(mr));
	close_ok(ep);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_endpoint_mode_bind_after_enable_is_eopbadstate)
{
	struct fid_domain *domain = open_domain(FI_MR_ENDPOINT, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid *ep = ep_open_ok(domain);
	struct fid *ep2 = ep_open_ok(domain);
	struct fid_cntr *cntr = cntr_open_ok(domain);

	ASSERT_OK(fi_mr_bind(mr, ep, 0));
	ASSERT_OK(fi_mr_enable(mr));
	ASSERT_EQ(fi_mr_bind(mr, ep2, 0), -FI_EOPBADSTATE);
	ASSERT_EQ(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE), -FI_EOPBADSTATE);
	close_ok(&cntr->fid);
	close_ok(ep2);
	close_ok(ep);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_endpoint_mode_counter_bound_before_enable_counts)
{
	struct fid_domain *domain = open_domain(FI_MR_ENDPOINT, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid *ep = ep_open_ok(domain);
	struct fid_cntr *cntr = cntr_open_ok(domain);

	ASSERT_OK(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_READ));
	ASSERT_OK(fi_mr_bind(mr, ep, 0));
	ASSERT_OK(fi_mr_enable(mr));
	ASSERT_OK(poke(domain, 1, FI_REMOTE_READ));
	ASSERT_U64_EQ(hmr_cntr_read(cntr), 1);
	close_ok(&cntr->fid);
	close_ok(ep);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_close_busy_while_counter_bound)
{
	struct fid_domain *domain = open_domain(0, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid_cntr *cntr = cntr_open_ok(domain);

	ASSERT_OK(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE));
	ASSERT_EQ(fi_close(&mr->fid), -FI_EBUSY);
	/* The refused close left the MR working. */
	ASSERT_OK(poke(domain, 1, FI_REMOTE_WRITE));
	ASSERT_U64_EQ(hmr_cntr_read(cntr), 1);
	close_ok(&cntr->fid);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_close_busy_while_endpoint_bound)
{
	struct fid_domain *domain = open_domain(FI_MR_ENDPOINT, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid *ep = ep_open_ok(domain);

	ASSERT_OK(fi_mr_bind(mr, ep, 0));
	ASSERT_OK(fi_mr_enable(mr));
	ASSERT_EQ(fi_close(&mr->fid), -FI_EBUSY);
	close_ok(ep);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_close_counter_first_always_allowed)
{
	struct fid_domain *domain = open_domain(FI_MR_RMA_EVENT, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, FI_RMA_EVENT);
	struct fid_cntr *a = cntr_open_ok(domain);
	struct fid_cntr *b = cntr_open_ok(domain);

	ASSERT_OK(fi_mr_bind(mr, &a->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fi_mr_bind(mr, &b->fid, FI_REMOTE_READ));
	ASSERT_OK(fi_mr_enable(mr));
	close_ok(&a->fid);
	/* Still busy: b remains bound. */
	ASSERT_EQ(fi_close(&mr->fid), -FI_EBUSY);
	/* A closed counter is no longer counted into. */
	ASSERT_OK(poke(domain, 1, FI_REMOTE_WRITE));
	close_ok(&b->fid);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_close_after_counter_unused_is_ok)
{
	struct fid_domain *domain = open_domain(0, FI_RMA_EVENT);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	struct fid_cntr *cntr = cntr_open_ok(domain);

	/* An open counter that is not bound does not pin the MR. */
	close_ok(&mr->fid);
	close_ok(&cntr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_second_close_is_ebadf)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);

	close_ok(&mr->fid);
	ASSERT_EQ(fi_close(&mr->fid), -FI_EBADF);
	close_ok(&domain->fid);
}

HMR_TEST_MAIN()
