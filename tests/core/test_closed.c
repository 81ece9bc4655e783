/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_closed.c: closed domains, MRs, counters, endpoints stay closed. */
#define _GNU_SOURCE
#include <stdio.h>

#include "core_util.h"

/* Every slot of a closed object's tables answers -FI_EBADF, and memory
 * stays bounded however many objects are opened and closed. */

HMR_TEST(closed_domain_every_call_is_ebadf)
{
	struct fid_domain *d = open_domain(0, 0);
	char buf[64];
	struct iovec iov = {buf, sizeof(buf)};
	struct fi_mr_attr attr;
	struct fid_mr *mr = (struct fid_mr *)(uintptr_t)1;
	struct fid_cntr *cntr;
	struct fid *ep;
	uint64_t key = 0, v;
	void *p, *o;

	close_ok(&d->fid);
	ASSERT_EQ(fi_close(&d->fid), -FI_EBADF);
	ASSERT_EQ(fi_mr_reg(d, buf, 64, REMOTE_RW, 0, 1, 0, &mr, NULL),
	          -FI_EBADF);
	ASSERT_PTR_EQ(mr, NULL);
	ASSERT_EQ(fi_mr_regv(d, &iov, 1, REMOTE_RW, 0, 1, 0, &mr, NULL),
	          -FI_EBADF);
	attr_init(&attr, &iov, buf, 64, REMOTE_RW, 1);
	ASSERT_EQ(fi_mr_regattr(d, &attr, 0, &mr), -FI_EBADF);
	ASSERT_EQ(fi_domain_bind(d, &d->fid, 0), -FI_EBADF);
	ASSERT_EQ(fi_mr_map_raw(d, 0, (uint8_t *)buf, 32, &key, 0), -FI_EBADF);
	ASSERT_EQ(fi_mr_unmap_key(d, 1), -FI_EBADF);
	ASSERT_EQ(fi_control(&d->fid, FI_MAP_RAW_MR, buf), -FI_EBADF);
	ASSERT_EQ(d->fid.ops->ops_open(&d->fid, "x", 0, &o, NULL), -FI_EBADF);
	ASSERT_EQ(d->fid.ops->tostr(&d->fid, buf, sizeof(buf)), -FI_EBADF);
	ASSERT_EQ(d->fid.ops->ops_set(&d->fid, "x", 0, NULL, NULL), -FI_EBADF);
	ASSERT_EQ(d->ops->av_open(d, NULL, &o, NULL), -FI_EBADF);
	ASSERT_EQ(d->ops->cq_open(d, NULL, &o, NULL), -FI_EBADF);
	ASSERT_EQ(d->ops->endpoint(d, NULL, &o, NULL), -FI_EBADF);
	ASSERT_EQ(d->ops->scalable_ep(d, NULL, &o, NULL), -FI_EBADF);
	ASSERT_EQ(d->ops->cntr_open(d, NULL, &o, NULL), -FI_EBADF);
	ASSERT_EQ(d->ops->poll_open(d, NULL, &o), -FI_EBADF);
	ASSERT_EQ(d->ops->stx_ctx(d, NULL, &o, NULL), -FI_EBADF);
	ASSERT_EQ(d->ops->srx_ctx(d, NULL, &o, NULL), -FI_EBADF);
	ASSERT_EQ(d->ops->query_atomic(d, 0, 0, NULL, 0), -FI_EBADF);
	ASSERT_EQ(d->ops->query_collective(d, 0, NULL, 0), -FI_EBADF);
	ASSERT_EQ(d->ops->endpoint2(d, NULL, &o, 0, NULL), -FI_EBADF);
	ASSERT_EQ(hmr_cntr_open(d, &cntr), -FI_EBADF);
	ASSERT_EQ(hmr_ep_open(d, &ep), -FI_EBADF);
	ASSERT_EQ(hmr_mr_access(d, 1, 0, 1, FI_REMOTE_READ, &p), -FI_EBADF);
	ASSERT_EQ(hmr_mr_access_auth(d, NULL, 0, 1, 0, 1, FI_REMOTE_READ, &p),
	          -FI_EBADF);
	ASSERT_EQ(hmr_domain_mr_mode(d, &v), -FI_EBADF);
	ASSERT_EQ(hmr_domain_caps(d, &v), -FI_EBADF);
}

HMR_TEST(closed_mr_every_call_is_ebadf)
{
	struct fid_domain *d = open_domain(FI_MR_ENDPOINT, FI_RMA_EVENT);
	char buf[64];
	struct fid_mr *mr = reg_ok(d, buf, sizeof(buf), REMOTE_RW, 1, 0);
	struct fid_cntr *cntr;
	uint8_t raw[64];
	size_t size = sizeof(raw);
	uint64_t base;
	void *o;

	ASSERT_OK(hmr_cntr_open(d, &cntr));
	close_ok(&mr->fid);
	ASSERT_EQ(fi_close(&mr->fid), -FI_EBADF);
	ASSERT_EQ(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE), -FI_EBADF);
	ASSERT_EQ(fi_mr_enable(mr), -FI_EBADF);
	ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw, &size, 0), -FI_EBADF);
	ASSERT_EQ(fi_mr_refresh(mr, NULL, 0, 0), -FI_EBADF);
	ASSERT_EQ(fi_control(&mr->fid, FI_ENABLE, NULL), -FI_EBADF);
	ASSERT_EQ(mr->fid.ops->ops_open(&mr->fid, "x", 0, &o, NULL), -FI_EBADF);
	ASSERT_U64_EQ(fi_mr_key(mr), FI_KEY_NOTAVAIL);
	ASSERT_PTR_EQ(fi_mr_desc(mr), NULL);
	close_ok(&cntr->fid);
	close_ok(&d->fid);
}

HMR_TEST(closed_counter_every_call_is_ebadf)
{
	struct fid_domain *d = open_domain(0, 0);
	struct fid_cntr *cntr;

	ASSERT_OK(hmr_cntr_open(d, &cntr));
	ASSERT_OK(cntr->ops->add(cntr, 5));
	close_ok(&cntr->fid);
	ASSERT_EQ(fi_close(&cntr->fid), -FI_EBADF);
	ASSERT_EQ(cntr->ops->add(cntr, 1), -FI_EBADF);
	ASSERT_EQ(cntr->ops->set(cntr, 1), -FI_EBADF);
	ASSERT_EQ(cntr->ops->adderr(cntr, 1), -FI_EBADF);
	ASSERT_EQ(cntr->ops->seterr(cntr, 1), -FI_EBADF);
	ASSERT_EQ(cntr->ops->wait(cntr, 1, 0), -FI_EBADF);
	ASSERT_U64_EQ(cntr->ops->read(cntr), 0);
	ASSERT_U64_EQ(hmr_cntr_read(cntr), 0);
	ASSERT_EQ(fi_control(&cntr->fid, 0, NULL), -FI_EBADF);
	close_ok(&d->fid);
}

HMR_TEST(closed_endpoint_every_call_is_ebadf)
{
	struct fid_domain *d = open_domain(0, 0);
	struct fid *ep;

	ASSERT_OK(hmr_ep_open(d, &ep));
	close_ok(ep);
	ASSERT_EQ(fi_close(ep), -FI_EBADF);
	ASSERT_EQ(fi_control(ep, 0, NULL), -FI_EBADF);
	ASSERT_EQ(ep->ops->bind(ep, ep, 0), -FI_EBADF);
	close_ok(&d->fid);
}

/* The window doc/software-domain.md states: 256 MR closes of the MR's
 * shard (keys 1 and 17 share shard 1), whatever happens in other shards. */
HMR_TEST(closed_mr_second_close_within_window_is_ebadf)
{
	struct fid_domain *d = open_domain(0, 0);
	char buf[64];
	struct fid_mr *mr = reg_ok(d, buf, sizeof(buf), REMOTE_RW, 1, 0), *o;
	int i;

	close_ok(&mr->fid);
	for (i = 0; i < 255; i++) {
		o = reg_ok(d, buf, sizeof(buf), REMOTE_RW, 17, 0);
		close_ok(&o->fid);
		o = reg_ok(d, buf, sizeof(buf), REMOTE_RW, 2, 0);
		close_ok(&o->fid);
	}
	ASSERT_EQ(fi_close(&mr->fid), -FI_EBADF);
	ASSERT_U64_EQ(fi_mr_key(mr), FI_KEY_NOTAVAIL);
	close_ok(&d->fid);
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	ASSERT_TRUE(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

HMR_TEST(closed_domains_100000_cycles_leave_memory_flat)
{
	struct fid_domain *d;
	long before = 0, after;
	int i;

	for (i = 0; i < 100000; i++) {
		if (i == 1000)
			before = rss_kib(); /* After the shell ring filled. */
		d = open_domain(0, 0);
		if (i % 2) {
			struct fid_mr *mr =
			        reg_ok(d, &i, sizeof(i), REMOTE_RW, 1, 0);
			close_ok(&mr->fid);
		}
		close_ok(&d->fid);
		ASSERT_EQ(fi_close(&d->fid), -FI_EBADF);
	}
	after = rss_kib();
	printf("VmRSS after 1,000 cycles %ld KiB, after 100,000 %ld KiB\n",
	       before, after);
	/* One domain shell is a few KiB: 99,000 kept would be >200 MiB. */
	ASSERT_LT(after - before, 2048);
}

/* A closed MR (within the window its shell is kept) is no base for a
 * sub-MR: its iovs are gone. */
HMR_TEST(closed_mr_as_base_of_sub_mr_is_einval)
{
	struct fid_domain *d = open_domain(0, 0);
	static char buf[4096];
	struct fid_mr *base = reg_ok(d, buf, 1024, REMOTE_RW, 1, 0);
	struct fid_mr *sub = NULL;
	struct fi_mr_attr attr;
	struct iovec iov;

	close_ok(&base->fid);
	attr_init(&attr, &iov, buf, 64, REMOTE_RW, 2);
	attr.base_mr = base;
	ASSERT_EQ(fi_mr_regattr(d, &attr, 0, &sub), -FI_EINVAL);
	ASSERT_PTR_EQ(sub, NULL);
	close_ok(&d->fid);
}

HMR_TEST_MAIN()
