/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rxe_smoke.c: plain libibverbs on soft-RoCE: the VM harness's own proof. */

/*
 * Runs in the test VM (tests/vm), no hmr: opens rxe0, registers host
 * buffers, connects two RC QPs on rxe0 in loopback, RDMA WRITEs and READs
 * and checks the bytes, checks that a WRITE to an MR without
 * IBV_ACCESS_REMOTE_WRITE completes with IBV_WC_REM_ACCESS_ERR, probes
 * ibv_reg_dmabuf_mr, and does a WRITE and READ between rxe1 and rxe2 (two
 * devices on a veth pair).  One CASE line per check.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "rc_pair.h"
#include "vm_case.h"

#define LEN (64 * 1024)
#define ACC_ALL                                                                \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                    \
	 IBV_ACCESS_REMOTE_READ)

struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
};

static int open_dev(const char *name, struct dev *d)
{
	char cname[64];

	snprintf(cname, sizeof(cname), "open_%s", name);
	d->ctx = rc_open_device(name);
	if (!d->ctx) {
		vm_case_fail(cname, "rc_open_device: %s", strerror(errno));
		return -1;
	}
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd) {
		vm_case_fail(cname, "ibv_alloc_pd: %s", strerror(errno));
		return -1;
	}
	if (rc_wait_gid(d->ctx, 0, 10000)) {
		vm_case_fail(cname, "no GID 0: %s", strerror(errno));
		return -1;
	}
	vm_case_pass(cname);
	return 0;
}

static void close_dev(struct dev *d)
{
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
}

static unsigned char *page_buf(int fill)
{
	unsigned char *b = aligned_alloc(4096, LEN);

	if (!b) {
		perror("aligned_alloc");
		exit(2);
	}
	memset(b, fill, LEN);
	return b;
}

static void pattern(unsigned char *b, unsigned seed)
{
	for (size_t i = 0; i < LEN; i++)
		b[i] = (unsigned char)(i * 7 + seed);
}

static struct ibv_mr *reg(const char *name, struct ibv_pd *pd, void *buf,
                          int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, LEN, access);

	if (!mr)
		vm_case_fail(name, "ibv_reg_mr: %s", strerror(errno));
	else
		vm_case(name, mr->addr == buf && mr->length == LEN,
		        "MR addr %p length %zu, wanted %p %d", mr->addr,
		        mr->length, buf, LEN);
	return mr;
}

/* One RDMA op expected to give want; a byte check when it succeeds. */
static void rdma_case(const char *name, struct rc_pair *p,
                      enum ibv_wr_opcode op, void *l, struct ibv_mr *lmr,
                      void *r, struct ibv_mr *rmr, int want)
{
	int st = rc_rdma(p, op, l, LEN, lmr->lkey, (uintptr_t)r, rmr->rkey);

	if (st != want)
		vm_case_fail(name, "completion %s, wanted %s (%s)",
		             rc_status_str(st), rc_status_str(want), p->err);
	else if (want == IBV_WC_SUCCESS && memcmp(l, r, LEN) != 0)
		vm_case_fail(name, "%s completed but the bytes differ",
		             rc_status_str(st));
	else
		vm_case_pass(name);
}

static void loopback_cases(struct dev *d)
{
	unsigned char *src = page_buf(0), *dst = page_buf(0);
	unsigned char *ro = page_buf(0x5a), *back = page_buf(0);
	struct ibv_mr *msrc, *mdst, *mro, *mback;
	struct rc_pair p;

	pattern(src, 3);
	msrc = reg("reg_mr_host", d->pd, src, IBV_ACCESS_LOCAL_WRITE);
	mdst = reg("reg_mr_host_remote_rw", d->pd, dst, ACC_ALL);
	/* REMOTE_READ but no REMOTE_WRITE */
	mro = reg("reg_mr_host_remote_read_only", d->pd, ro,
	          IBV_ACCESS_REMOTE_READ);
	mback = reg("reg_mr_host_read_target", d->pd, back,
	            IBV_ACCESS_LOCAL_WRITE);
	if (!msrc || !mdst || !mro || !mback)
		return;

	if (rc_pair_create(&p, d->pd, d->pd, 0)) {
		vm_case_fail("rc_pair_loopback", "%s", p.err);
		return;
	}
	vm_case_pass("rc_pair_loopback");

	rdma_case("rdma_write_loopback", &p, IBV_WR_RDMA_WRITE, src, msrc, dst,
	          mdst, IBV_WC_SUCCESS);
	rdma_case("rdma_read_loopback", &p, IBV_WR_RDMA_READ, back, mback, dst,
	          mdst, IBV_WC_SUCCESS);

	int st = rc_rdma(&p, IBV_WR_RDMA_WRITE, src, 4096, msrc->lkey,
	                 (uintptr_t)ro, mro->rkey);
	vm_case("rdma_write_no_remote_write_rem_access_err",
	        st == IBV_WC_REM_ACCESS_ERR, "completion %s, wanted %s",
	        rc_status_str(st), rc_status_str(IBV_WC_REM_ACCESS_ERR));
	vm_case("rdma_write_no_remote_write_untouched",
	        ro[0] == 0x5a && ro[4095] == 0x5a,
	        "target bytes changed to %#x %#x", ro[0], ro[4095]);

	/* the pair reconnects after the error completion */
	pattern(src, 11);
	rdma_case("rdma_write_after_error", &p, IBV_WR_RDMA_WRITE, src, msrc,
	          dst, mdst, IBV_WC_SUCCESS);
	rc_pair_destroy(&p);

	ibv_dereg_mr(msrc);
	ibv_dereg_mr(mdst);
	ibv_dereg_mr(mro);
	ibv_dereg_mr(mback);
	free(src);
	free(dst);
	free(ro);
	free(back);
}

/*
 * rxe has no dma-buf MRs: ibv_reg_dmabuf_mr fails with EOPNOTSUPP (95)
 * before it looks at the fd (here -1).  Measured on bookworm: kernel 6.1,
 * rdma-core 44.
 */
static void dmabuf_probe(struct dev *d)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_dmabuf_mr(d->pd, 0, 4096, 0, -1, ACC_ALL);
	if (mr) {
		vm_case_fail("reg_dmabuf_mr_eopnotsupp", "it succeeded");
		ibv_dereg_mr(mr);
		return;
	}
	vm_case("reg_dmabuf_mr_eopnotsupp", errno == EOPNOTSUPP,
	        "errno %d (%s), wanted EOPNOTSUPP (%d)", errno, strerror(errno),
	        EOPNOTSUPP);
}

static void two_device_cases(struct dev *a, struct dev *b)
{
	unsigned char *src = page_buf(0), *dst = page_buf(0);
	unsigned char *back = page_buf(0);
	struct ibv_mr *msrc, *mdst, *mback;
	struct rc_pair p;

	pattern(src, 5);
	msrc = reg("reg_mr_host_rxe1", a->pd, src, IBV_ACCESS_LOCAL_WRITE);
	mback = reg("reg_mr_host_rxe1_back", a->pd, back,
	            IBV_ACCESS_LOCAL_WRITE);
	mdst = reg("reg_mr_host_rxe2", b->pd, dst, ACC_ALL);
	if (!msrc || !mdst || !mback)
		return;
	if (rc_pair_create(&p, a->pd, b->pd, 0)) {
		vm_case_fail("rc_pair_veth", "%s", p.err);
		return;
	}
	vm_case_pass("rc_pair_veth");
	rdma_case("rdma_write_veth", &p, IBV_WR_RDMA_WRITE, src, msrc, dst,
	          mdst, IBV_WC_SUCCESS);
	rdma_case("rdma_read_veth", &p, IBV_WR_RDMA_READ, back, mback, dst,
	          mdst, IBV_WC_SUCCESS);
	rc_pair_destroy(&p);
	ibv_dereg_mr(msrc);
	ibv_dereg_mr(mdst);
	ibv_dereg_mr(mback);
	free(src);
	free(dst);
	free(back);
}

int main(void)
{
	struct dev d0 = {0}, d1 = {0}, d2 = {0};

	if (open_dev("rxe0", &d0) == 0) {
		loopback_cases(&d0);
		dmabuf_probe(&d0);
	}
	if (open_dev("rxe1", &d1) == 0 && open_dev("rxe2", &d2) == 0)
		two_device_cases(&d1, &d2);
	close_dev(&d0);
	close_dev(&d1);
	close_dev(&d2);
	return vm_case_exit();
}
