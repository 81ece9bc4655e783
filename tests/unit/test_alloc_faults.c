/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_alloc_faults.c: every allocation of a registration path, failed. */
#include <hmr/hmr.h>

#include "base/alloc.h"
#include "harness.h"

/*
 * Each scenario runs with its Nth allocation failing, N = 0, 1, ..., until
 * a run makes no failing allocation: every failed run must answer
 * -FI_ENOMEM, undo what it did (the sanitizer builds' leak checker sees
 * the rest) and leave the domain usable and closable.
 */
struct walk {
	struct fid_domain *d;
	struct fid_mr *mr[128];
	struct fid_cntr *cntr;
	struct fid *ep;
	char buf[128][64];
};

typedef int (*op_fn)(struct walk *w);
typedef void (*undo_fn)(struct walk *w);

static struct fid_domain *domain(void)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *d;

	attr.caps = FI_RMA_EVENT;
	ASSERT_OK(hmr_domain_open(&attr, &d));
	return d;
}

static int walk(op_fn op, undo_fn undo, struct walk *w)
{
	long n;
	int ret;

	for (n = 0; n < 1000; n++) {
		hmr__alloc_fail_after(n);
		ret = op(w);
		if (hmr__alloc_armed()) { /* No allocation failed. */
			hmr__alloc_fail_after(-1);
			ASSERT_OK(ret);
			undo(w);
			printf("%ld failure points, each -FI_ENOMEM\n", n);
			fflush(stdout);
			return (int)n;
		}
		if (ret != -FI_ENOMEM)
			HMR_FAIL("allocation %ld failed: got %d (%s), want "
			         "-FI_ENOMEM",
			         n, ret, hmr_strerror(ret));
	}
	HMR_FAIL("more than 1000 allocations");
	return -1;
}

static int op_domain_open(struct walk *w)
{
	return hmr_domain_open(NULL, &w->d);
}

static void undo_domain(struct walk *w)
{
	ASSERT_OK(fi_close(&w->d->fid));
}

HMR_TEST(alloc_faults_domain_open)
{
	struct walk w;

	ASSERT_GT(walk(op_domain_open, undo_domain, &w), 0);
}

static int op_reg_regv(struct walk *w)
{
	struct iovec iov[3] = {
	        {w->buf[0], 64}, {w->buf[1], 64}, {w->buf[2], 64}};
	int ret = fi_mr_regv(w->d, iov, 3, FI_REMOTE_READ, 0, 1, 0, &w->mr[0],
	                     NULL);

	if (ret)
		return ret;
	ret = fi_mr_reg(w->d, w->buf[3], 64, FI_REMOTE_WRITE, 0, 2, 0,
	                &w->mr[1], NULL);
	if (ret)
		ASSERT_OK(fi_close(&w->mr[0]->fid));
	return ret;
}

static void undo_reg_regv(struct walk *w)
{
	ASSERT_OK(fi_close(&w->mr[1]->fid));
	ASSERT_OK(fi_close(&w->mr[0]->fid));
}

HMR_TEST(alloc_faults_reg_and_regv)
{
	struct walk w;
	void *p;

	w.d = domain();
	ASSERT_GT(walk(op_reg_regv, undo_reg_regv, &w), 0);
	/* Usable after every failure: nothing half-registered answers. */
	ASSERT_EQ(hmr_mr_access(w.d, 1, 0, 8, FI_REMOTE_READ, &p), -FI_ENOKEY);
	ASSERT_OK(fi_close(&w.d->fid));
}

/* 128 live MRs: the key map grows several times on the way. */
static int op_many(struct walk *w)
{
	int i, ret = 0;

	for (i = 0; i < 128 && !ret; i++)
		ret = fi_mr_reg(w->d, w->buf[i], 64, FI_REMOTE_READ, 0,
		                (uint64_t)i, 0, &w->mr[i], NULL);
	if (ret)
		for (i -= 2; i >= 0; i--)
			ASSERT_OK(fi_close(&w->mr[i]->fid));
	return ret;
}

static void undo_many(struct walk *w)
{
	int i;

	for (i = 0; i < 128; i++)
		ASSERT_OK(fi_close(&w->mr[i]->fid));
}

HMR_TEST(alloc_faults_key_map_growth)
{
	struct walk w;

	w.d = domain();
	ASSERT_GT(walk(op_many, undo_many, &w), 1);
	ASSERT_OK(fi_close(&w.d->fid));
}

static int op_bind(struct walk *w)
{
	int ret = hmr_cntr_open(w->d, &w->cntr);

	if (ret)
		return ret;
	ret = hmr_ep_open(w->d, &w->ep);
	if (ret)
		goto err_cntr;
	ret = fi_mr_reg(w->d, w->buf[0], 64, FI_REMOTE_WRITE, 0, 1,
	                FI_RMA_EVENT, &w->mr[0], NULL);
	if (ret)
		goto err_ep;
	ret = fi_mr_bind(w->mr[0], &w->cntr->fid, FI_REMOTE_WRITE);
	if (ret)
		goto err_mr;
	return 0;

err_mr:
	ASSERT_OK(fi_close(&w->mr[0]->fid));
err_ep:
	ASSERT_OK(fi_close(w->ep));
err_cntr:
	ASSERT_OK(fi_close(&w->cntr->fid));
	return ret;
}

/* A bound MR is busy while its counter is open: the counter goes first. */
static void undo_bind(struct walk *w)
{
	ASSERT_OK(fi_close(&w->cntr->fid));
	ASSERT_OK(fi_close(w->ep));
	ASSERT_OK(fi_close(&w->mr[0]->fid));
}

HMR_TEST(alloc_faults_counter_endpoint_and_bind)
{
	struct walk w;

	w.d = domain();
	ASSERT_GT(walk(op_bind, undo_bind, &w), 2);
	ASSERT_OK(fi_close(&w.d->fid));
}

HMR_TEST_MAIN()
