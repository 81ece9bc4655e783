/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rc_pair.h: a connected pair of RC QPs for verbs tests in the VM. */
#ifndef HMR_VM_RC_PAIR_H
#define HMR_VM_RC_PAIR_H

/*
 * QP A (on pd_a's device) is connected to QP B (on pd_b's device); with
 * pd_a == pd_b both sit on one device and talk in loopback.  The tests
 * post RDMA WRITEs and READs from A against memory registered on B's side
 * (an MR of pd_b) and look at the completion status.
 *
 *	struct rc_pair p;
 *	if (rc_pair_create(&p, pd, pd, 0))
 *		fail(p.err);
 *	st = rc_rdma(&p, IBV_WR_RDMA_WRITE, src, len, src_mr->lkey,
 *		     (uintptr_t)dst, dst_mr->rkey);
 *	... st == IBV_WC_SUCCESS, or IBV_WC_REM_ACCESS_ERR, ...
 *	rc_pair_destroy(&p);
 *
 * An error completion moves the QPs to the error state; the next rc_rdma
 * call then replaces them with a fresh connected pair first, so cases can
 * follow one another on one rc_pair.  On failure the functions leave a
 * message in p->err and errno set.
 */

#include <stdint.h>
#include <infiniband/verbs.h>

struct rc_pair {
	struct ibv_pd *pd_a, *pd_b; /* given to rc_pair_create */
	int gid_index;              /* GID used on both ports */
	int timeout_ms;             /* rc_rdma's wait (default 10 s) */
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *qp_a, *qp_b;
	int broken; /* an error completion: reconnect before the next op */
	char err[160];
};

/* Open the RDMA device called name (e.g. "rxe0"); NULL and errno if none. */
struct ibv_context *rc_open_device(const char *name);

/* Wait up to timeout_ms for port 1's GID gid_index to be non-zero. */
int rc_wait_gid(struct ibv_context *ctx, int gid_index, int timeout_ms);

/* Create and connect A (on pd_a) and B (on pd_b), port 1.  0 or -1. */
int rc_pair_create(struct rc_pair *p, struct ibv_pd *pd_a, struct ibv_pd *pd_b,
                   int gid_index);

/* Replace the QPs with a fresh connected pair.  0 or -1. */
int rc_pair_reset(struct rc_pair *p);

void rc_pair_destroy(struct rc_pair *p);

/*
 * Post one signaled RDMA op (IBV_WR_RDMA_WRITE or IBV_WR_RDMA_READ) on QP A:
 * local buffer [laddr, laddr + len) under lkey, remote address raddr under
 * rkey.  Wait for its completion and return its status (enum
 * ibv_wc_status, >= 0), or -1 if it could not be posted or did not
 * complete within p->timeout_ms (errno ETIMEDOUT).
 */
int rc_rdma(struct rc_pair *p, enum ibv_wr_opcode op, void *laddr, uint32_t len,
            uint32_t lkey, uint64_t raddr, uint32_t rkey);

/*
 * An atomic (IBV_WR_ATOMIC_FETCH_AND_ADD or _CMP_AND_SWP) from QP A on the
 * 8 bytes at raddr; the old value lands in *result (registered under
 * lkey, with local write).  Returns as rc_rdma.
 */
int rc_atomic(struct rc_pair *p, enum ibv_wr_opcode op, uint64_t *result,
              uint32_t lkey, uint64_t raddr, uint32_t rkey,
              uint64_t compare_add, uint64_t swap);

/*
 * For work posted on QP A by other means (ibv_bind_mw): rc_ready first
 * (0, or -1 if a broken pair could not be replaced), then post, then
 * rc_wait for its completion, which returns as rc_rdma.
 */
int rc_ready(struct rc_pair *p);
int rc_wait(struct rc_pair *p);

/*
 * Bring an RC QP of another process's pair to RTS against the peer QP
 * dest_qpn at dgid (port 1, GID gid_index): for tests whose two ends live
 * in two processes and exchange QP numbers themselves.  0 or -1.
 */
int rc_qp_connect(struct ibv_qp *qp, uint32_t dest_qpn,
                  const union ibv_gid *dgid, int gid_index);

/* What a process tells its peer about its end of a two-process test: its
 * QP number and GID, and a registered buffer's base and raw key
 * (fi_mr_raw_attr) for the peer's fi_mr_map_raw. */
struct rc_hello {
	uint32_t qpn;
	union ibv_gid gid;
	uint64_t base;
	uint64_t raw_size;
	uint8_t raw[128];
};

/*
 * A's half alone, for tests whose two ends live in two processes: a CQ and
 * an RC QP on pd, not connected.  Connect qp_a with rc_qp_connect to the
 * peer's QP, then use rc_rdma as usual; an error completion is final
 * (there is no B to rebuild the pair with).  rc_pair_destroy frees it.
 * 0 or -1.
 */
int rc_half_create(struct rc_pair *p, struct ibv_pd *pd, int gid_index);
/* A status from rc_rdma as text: ibv_wc_status_str, or "no completion". */
const char *rc_status_str(int status);

#endif
