/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_events.c: RMA_EVENT/ENDPOINT modes, bind, enable, close rules. */
#define _GNU_SOURCE 1
#include <stdint.h>

#include "core_util.h"

static char buf[4096];

/* fi_mr: F44 F69 */
HMR_TEST(mr_rma_event_flag_starts_disabled_until_enable)
{
	struct fixture f =
	        FIXTURE(.mr_mode = FI_MR_RMA_EVENT, .caps = FI_RMA_EVENT,
	                .buf = buf, .access = REMOTE_RW, .flags = FI_RMA_EVENT);

	ASSERT_EQ(fixture_poke(&f, FI_REMOTE_WRITE), -FI_EOPBADSTATE);
	ASSERT_OK(fi_mr_enable(f.mr));
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_WRITE));
	fixture_close(&f);
}

/* fi_mr: F43 */
HMR_TEST(mr_rma_event_mode_without_flag_starts_enabled)
{
	struct fixture f =
	        FIXTURE(.mr_mode = FI_MR_RMA_EVENT, .caps = FI_RMA_EVENT,
	                .buf = buf, .access = REMOTE_RW);

	ASSERT_OK(fixture_poke(&f, FI_REMOTE_READ));
	ASSERT_OK(fi_mr_enable(f.mr));
	fixture_close(&f);
}

/* fi_mr: F106 */
HMR_TEST(mr_rma_event_flag_needs_cap)
{
	struct fixture f = FIXTURE(.caps = 0);
	struct fid_mr *mr = NULL;

	ASSERT_EQ(fi_mr_reg(f.domain, buf, 64, REMOTE_RW, 0, 1, FI_RMA_EVENT,
	                    &mr, NULL),
	          -FI_EBADFLAGS);
	fixture_close(&f);
}

/* fi_mr: F106 */
HMR_TEST(mr_rma_event_flag_without_mode_starts_enabled)
{
	struct fixture f = FIXTURE(.caps = FI_RMA_EVENT, .buf = buf,
	                           .access = REMOTE_RW, .flags = FI_RMA_EVENT);

	ASSERT_OK(fixture_poke(&f, FI_REMOTE_READ));
	fixture_close(&f);
}

/* fi_mr: F43 */
HMR_TEST(mr_bind_counter_without_rma_event_flag_in_mode_is_einval)
{
	struct fixture f =
	        FIXTURE(.mr_mode = FI_MR_RMA_EVENT, .caps = FI_RMA_EVENT,
	                .buf = buf, .access = REMOTE_RW, .cntrs = 1);

	ASSERT_EQ(fi_mr_bind(f.mr, &f.cntr[0]->fid, FI_REMOTE_WRITE),
	          -FI_EINVAL);
	fixture_close(&f);
}

/* fi_mr: F60 F61 */
HMR_TEST(mr_counter_counts_matching_accesses)
{
	struct fixture f =
	        FIXTURE(.mr_mode = FI_MR_RMA_EVENT, .caps = FI_RMA_EVENT,
	                .buf = buf, .access = REMOTE_RW, .flags = FI_RMA_EVENT,
	                .cntrs = 2);
	struct fid_cntr *wr = f.cntr[0], *rd = f.cntr[1];
	int i;

	ASSERT_OK(fi_mr_bind(f.mr, &wr->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fi_mr_bind(f.mr, &rd->fid, FI_REMOTE_READ));
	ASSERT_OK(fi_mr_enable(f.mr));
	for (i = 0; i < 5; i++)
		ASSERT_OK(fixture_poke(&f, FI_REMOTE_WRITE));
	for (i = 0; i < 3; i++)
		ASSERT_OK(fixture_poke(&f, FI_REMOTE_READ));
	ASSERT_U64_EQ(hmr_cntr_read(wr), 5);
	ASSERT_U64_EQ(hmr_cntr_read(rd), 3);
	/* libfabric's fi_cntr_read() goes through the ops table. */
	ASSERT_U64_EQ(wr->ops->read(wr), 5);
	ASSERT_U64_EQ(rd->ops->read(rd), 3);
	fixture_close(&f);
}

/* fi_mr: F61 */
HMR_TEST(mr_counter_ignores_refused_accesses)
{
	struct fixture f = FIXTURE(.caps = FI_RMA_EVENT, .buf = buf,
	                           .access = FI_REMOTE_READ, .cntrs = 1);
	void *ptr = NULL;

	ASSERT_OK(fi_mr_bind(f.mr, &f.cntr[0]->fid, REMOTE_RW));
	ASSERT_EQ(fixture_poke(&f, FI_REMOTE_WRITE), -FI_EACCES);
	ASSERT_EQ(hmr_mr_access(f.domain, FIXTURE_KEY, 60, 8, FI_REMOTE_READ,
	                        &ptr),
	          -FI_EFAULT);
	ASSERT_U64_EQ(hmr_cntr_read(f.cntr[0]), 0);
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_READ));
	ASSERT_U64_EQ(hmr_cntr_read(f.cntr[0]), 1);
	fixture_close(&f);
}

HMR_TEST(mr_counter_set_through_ops)
{
	struct fixture f = FIXTURE(.caps = FI_RMA_EVENT, .buf = buf,
	                           .access = REMOTE_RW, .cntrs = 1);
	struct fid_cntr *cntr = f.cntr[0];

	ASSERT_OK(fi_mr_bind(f.mr, &cntr->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_WRITE));
	ASSERT_OK(cntr->ops->set(cntr, 100));
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_WRITE));
	ASSERT_U64_EQ(hmr_cntr_read(cntr), 101);
	fixture_close(&f);
}

HMR_TEST(mr_bind_same_counter_twice_ors_flags)
{
	struct fixture f = FIXTURE(.caps = FI_RMA_EVENT, .buf = buf,
	                           .access = REMOTE_RW, .cntrs = 1);
	struct fid_cntr *cntr = f.cntr[0];

	ASSERT_OK(fi_mr_bind(f.mr, &cntr->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fi_mr_bind(f.mr, &cntr->fid, FI_REMOTE_READ));
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_WRITE));
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_READ));
	ASSERT_U64_EQ(hmr_cntr_read(cntr), 2);
	/* Binding again with a bit already set does not count twice. */
	ASSERT_OK(fi_mr_bind(f.mr, &cntr->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_WRITE));
	ASSERT_U64_EQ(hmr_cntr_read(cntr), 3);
	fixture_close(&f);
}

/* fi_mr: F44 */
HMR_TEST(mr_bind_after_enable_is_eopbadstate)
{
	struct fixture f =
	        FIXTURE(.mr_mode = FI_MR_RMA_EVENT, .caps = FI_RMA_EVENT,
	                .buf = buf, .access = REMOTE_RW, .flags = FI_RMA_EVENT,
	                .cntrs = 2);
	struct fid_cntr *a = f.cntr[0], *b = f.cntr[1];

	ASSERT_OK(fi_mr_bind(f.mr, &a->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fi_mr_enable(f.mr));
	ASSERT_EQ(fi_mr_bind(f.mr, &b->fid, FI_REMOTE_WRITE), -FI_EOPBADSTATE);
	ASSERT_EQ(fi_mr_bind(f.mr, &a->fid, FI_REMOTE_READ), -FI_EOPBADSTATE);
	fixture_close(&f);
}

/* fi_mr: F69 */
HMR_TEST(mr_created_enabled_accepts_bind_any_time)
{
	struct fixture f = FIXTURE(.caps = FI_RMA_EVENT, .buf = buf,
	                           .access = REMOTE_RW, .cntrs = 2);
	struct fid_cntr *a = f.cntr[0], *b = f.cntr[1];

	ASSERT_OK(fixture_poke(&f, FI_REMOTE_WRITE));
	ASSERT_OK(fi_mr_bind(f.mr, &a->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fi_mr_enable(f.mr));
	ASSERT_OK(fi_mr_bind(f.mr, &b->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_WRITE));
	ASSERT_U64_EQ(hmr_cntr_read(a), 1);
	ASSERT_U64_EQ(hmr_cntr_read(b), 1);
	fixture_close(&f);
}

/* fi_mr: F44 */
HMR_TEST(mr_enable_enabled_mr_returns_zero)
{
	struct fixture f =
	        FIXTURE(.mr_mode = FI_MR_RMA_EVENT, .caps = FI_RMA_EVENT,
	                .buf = buf, .access = REMOTE_RW, .flags = FI_RMA_EVENT);

	ASSERT_OK(fi_mr_enable(f.mr));
	ASSERT_OK(fi_mr_enable(f.mr));
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_READ));
	fixture_close(&f);
}

/* fi_mr: F62 F64 */
HMR_TEST(mr_bind_counter_without_cap_is_enosys)
{
	struct fixture f = FIXTURE(.buf = buf, .access = REMOTE_RW, .cntrs = 1);

	ASSERT_EQ(fi_mr_bind(f.mr, &f.cntr[0]->fid, FI_REMOTE_WRITE),
	          -FI_ENOSYS);
	fixture_close(&f);
}

HMR_TEST(mr_bind_counter_flags_checked)
{
	struct fixture f = FIXTURE(.caps = FI_RMA_EVENT, .buf = buf,
	                           .access = REMOTE_RW, .cntrs = 1);
	struct fid *cntr = &f.cntr[0]->fid;

	ASSERT_EQ(fi_mr_bind(f.mr, cntr, 0), -FI_EINVAL);
	ASSERT_EQ(fi_mr_bind(f.mr, cntr, FI_READ), -FI_EBADFLAGS);
	ASSERT_EQ(fi_mr_bind(f.mr, cntr, FI_WRITE), -FI_EBADFLAGS);
	ASSERT_EQ(fi_mr_bind(f.mr, cntr, FI_REMOTE_WRITE | (1ULL << 30)),
	          -FI_EBADFLAGS);
	ASSERT_OK(fi_mr_bind(f.mr, cntr, REMOTE_RW));
	fixture_close(&f);
}

/* fi_mr: F63 */
HMR_TEST(mr_bind_endpoint_flags_must_be_zero)
{
	struct fixture f = FIXTURE(.mr_mode = FI_MR_ENDPOINT, .buf = buf,
	                           .access = REMOTE_RW, .eps = 1);

	ASSERT_EQ(fi_mr_bind(f.mr, f.ep[0], FI_REMOTE_WRITE), -FI_EBADFLAGS);
	ASSERT_EQ(fi_mr_bind(f.mr, f.ep[0], 1ULL << 30), -FI_EBADFLAGS);
	ASSERT_OK(fi_mr_bind(f.mr, f.ep[0], 0));
	fixture_close(&f);
}

HMR_TEST(mr_bind_object_of_other_domain_is_einval)
{
	struct fixture f =
	        FIXTURE(.mr_mode = FI_MR_ENDPOINT, .caps = FI_RMA_EVENT,
	                .buf = buf, .access = REMOTE_RW);
	struct fixture other =
	        FIXTURE(.mr_mode = FI_MR_ENDPOINT, .caps = FI_RMA_EVENT,
	                .cntrs = 1, .eps = 1);

	ASSERT_EQ(fi_mr_bind(f.mr, &other.cntr[0]->fid, FI_REMOTE_WRITE),
	          -FI_EINVAL);
	ASSERT_EQ(fi_mr_bind(f.mr, other.ep[0], 0), -FI_EINVAL);
	fixture_close(&other);
	fixture_close(&f);
}

HMR_TEST(mr_bind_other_object_is_einval)
{
	struct fixture f =
	        FIXTURE(.caps = FI_RMA_EVENT, .buf = buf, .access = REMOTE_RW);
	struct fid_mr *mr2;

	mr2 = f.extra[0] = reg_ok(f.domain, buf, 64, REMOTE_RW, 2, 0);
	ASSERT_EQ(fi_mr_bind(f.mr, &f.domain->fid, 0), -FI_EINVAL);
	ASSERT_EQ(fi_mr_bind(f.mr, &f.domain->fid, FI_REMOTE_WRITE),
	          -FI_EINVAL);
	ASSERT_EQ(fi_mr_bind(f.mr, &mr2->fid, 0), -FI_EINVAL);
	ASSERT_EQ(fi_mr_bind(f.mr, &f.mr->fid, FI_REMOTE_WRITE), -FI_EINVAL);
	fixture_close(&f);
}

/* fi_mr: F45 */
HMR_TEST(mr_endpoint_mode_starts_disabled)
{
	struct fixture f = FIXTURE(.mr_mode = FI_MR_ENDPOINT, .buf = buf,
	                           .access = REMOTE_RW, .eps = 1);

	ASSERT_EQ(fixture_poke(&f, FI_REMOTE_READ), -FI_EOPBADSTATE);
	ASSERT_OK(fi_mr_bind(f.mr, f.ep[0], 0));
	ASSERT_EQ(fixture_poke(&f, FI_REMOTE_READ), -FI_EOPBADSTATE);
	ASSERT_OK(fi_mr_enable(f.mr));
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_READ));
	fixture_close(&f);
}

/* fi_mr: F45 */
HMR_TEST(mr_endpoint_mode_enable_before_bind_is_eopbadstate)
{
	struct fixture f = FIXTURE(.mr_mode = FI_MR_ENDPOINT, .buf = buf,
	                           .access = REMOTE_RW, .eps = 1);

	ASSERT_EQ(fi_mr_enable(f.mr), -FI_EOPBADSTATE);
	ASSERT_EQ(fixture_poke(&f, FI_REMOTE_READ), -FI_EOPBADSTATE);
	/* The failed enable did not lock the MR: binding still works. */
	ASSERT_OK(fi_mr_bind(f.mr, f.ep[0], 0));
	ASSERT_OK(fi_mr_enable(f.mr));
	fixture_close(&f);
}

/* fi_mr: F45 F69 */
HMR_TEST(mr_endpoint_mode_bind_after_enable_is_eopbadstate)
{
	struct fixture f =
	        FIXTURE(.mr_mode = FI_MR_ENDPOINT, .caps = FI_RMA_EVENT,
	                .buf = buf, .access = REMOTE_RW, .cntrs = 1, .eps = 2);

	ASSERT_OK(fi_mr_bind(f.mr, f.ep[0], 0));
	ASSERT_OK(fi_mr_enable(f.mr));
	ASSERT_EQ(fi_mr_bind(f.mr, f.ep[1], 0), -FI_EOPBADSTATE);
	ASSERT_EQ(fi_mr_bind(f.mr, &f.cntr[0]->fid, FI_REMOTE_WRITE),
	          -FI_EOPBADSTATE);
	fixture_close(&f);
}

/* fi_mr: F60 */
HMR_TEST(mr_endpoint_mode_counter_bound_before_enable_counts)
{
	struct fixture f =
	        FIXTURE(.mr_mode = FI_MR_ENDPOINT, .caps = FI_RMA_EVENT,
	                .buf = buf, .access = REMOTE_RW, .cntrs = 1, .eps = 1);

	ASSERT_OK(fi_mr_bind(f.mr, &f.cntr[0]->fid, FI_REMOTE_READ));
	ASSERT_OK(fi_mr_bind(f.mr, f.ep[0], 0));
	ASSERT_OK(fi_mr_enable(f.mr));
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_READ));
	ASSERT_U64_EQ(hmr_cntr_read(f.cntr[0]), 1);
	fixture_close(&f);
}

/* fi_mr: F23 */
HMR_TEST(mr_close_busy_while_counter_bound)
{
	struct fixture f = FIXTURE(.caps = FI_RMA_EVENT, .buf = buf,
	                           .access = REMOTE_RW, .cntrs = 1);

	ASSERT_OK(fi_mr_bind(f.mr, &f.cntr[0]->fid, FI_REMOTE_WRITE));
	ASSERT_EQ(fi_close(&f.mr->fid), -FI_EBUSY);
	/* The refused close left the MR working. */
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_WRITE));
	ASSERT_U64_EQ(hmr_cntr_read(f.cntr[0]), 1);
	fixture_close(&f);
}

/* fi_mr: F23 */
HMR_TEST(mr_close_busy_while_endpoint_bound)
{
	struct fixture f = FIXTURE(.mr_mode = FI_MR_ENDPOINT, .buf = buf,
	                           .access = REMOTE_RW, .eps = 1);

	ASSERT_OK(fi_mr_bind(f.mr, f.ep[0], 0));
	ASSERT_OK(fi_mr_enable(f.mr));
	ASSERT_EQ(fi_close(&f.mr->fid), -FI_EBUSY);
	fixture_close(&f);
}

/* fi_mr: F23 */
HMR_TEST(mr_close_counter_first_always_allowed)
{
	struct fixture f =
	        FIXTURE(.mr_mode = FI_MR_RMA_EVENT, .caps = FI_RMA_EVENT,
	                .buf = buf, .access = REMOTE_RW, .flags = FI_RMA_EVENT,
	                .cntrs = 2);
	struct fid_cntr *a = f.cntr[0], *b = f.cntr[1];

	ASSERT_OK(fi_mr_bind(f.mr, &a->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fi_mr_bind(f.mr, &b->fid, FI_REMOTE_READ));
	ASSERT_OK(fi_mr_enable(f.mr));
	fixture_close_one(&f, &a->fid);
	/* Still busy: b remains bound. */
	ASSERT_EQ(fi_close(&f.mr->fid), -FI_EBUSY);
	/* Accesses still work (mr_closed_counter_is_not_counted_into shows
	 * that a is no longer counted into). */
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_WRITE));
	fixture_close(&f);
}

HMR_TEST(mr_closed_counter_is_not_counted_into)
{
	struct fixture f = FIXTURE(.caps = FI_RMA_EVENT, .buf = buf,
	                           .access = REMOTE_RW, .cntrs = 2);
	struct fid_cntr *a = f.cntr[0], *b = f.cntr[1];
	/* The closed counter's own read answers 0 whatever its value, but
	 * its object lives until the domain closes: the ops it had before
	 * fi_close still read the value an access would change. */
	struct fi_ops_cntr *live_ops = a->ops;
	uint64_t before;

	ASSERT_OK(fi_mr_bind(f.mr, &a->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fi_mr_bind(f.mr, &b->fid, FI_REMOTE_WRITE));
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_WRITE));
	before = hmr_cntr_read(a);
	ASSERT_U64_EQ(before, 1);
	ASSERT_U64_EQ(hmr_cntr_read(b), 1);
	fixture_close_one(&f, &a->fid);
	ASSERT_U64_EQ(hmr_cntr_read(a), 0);
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_WRITE));
	ASSERT_OK(fixture_poke(&f, FI_REMOTE_WRITE));
	ASSERT_U64_EQ(live_ops->read(a), before);
	/* The other counter bound for the same event still counts. */
	ASSERT_U64_EQ(hmr_cntr_read(b), 3);
	fixture_close(&f);
}

HMR_TEST(mr_close_after_counter_unused_is_ok)
{
	struct fixture f = FIXTURE(.caps = FI_RMA_EVENT, .buf = buf,
	                           .access = REMOTE_RW, .cntrs = 1);

	/* An open counter that is not bound does not pin the MR. */
	fixture_close_one(&f, &f.mr->fid);
	fixture_close(&f);
}

HMR_TEST(mr_second_close_is_ebadf)
{
	struct fixture f = FIXTURE(.buf = buf, .access = REMOTE_RW);
	struct fid_mr *mr = f.mr;

	fixture_close_one(&f, &mr->fid);
	ASSERT_EQ(fi_close(&mr->fid), -FI_EBADF);
	fixture_close(&f);
}

/* FI_MR_ENDPOINT wants an endpoint bound: a counter is not one. */
HMR_TEST(mr_endpoint_mode_enable_with_only_counter_bound_is_eopbadstate)
{
	struct fixture f =
	        FIXTURE(.mr_mode = FI_MR_ENDPOINT, .caps = FI_RMA_EVENT,
	                .buf = buf, .access = REMOTE_RW, .cntrs = 1, .eps = 1);

	ASSERT_OK(fi_mr_bind(f.mr, &f.cntr[0]->fid, FI_REMOTE_READ));
	ASSERT_EQ(fi_mr_enable(f.mr), -FI_EOPBADSTATE);
	ASSERT_EQ(fixture_poke(&f, FI_REMOTE_READ), -FI_EOPBADSTATE);
	ASSERT_OK(fi_mr_bind(f.mr, f.ep[0], 0));
	ASSERT_OK(fi_mr_enable(f.mr));
	fixture_close(&f);
}

HMR_TEST_MAIN()
