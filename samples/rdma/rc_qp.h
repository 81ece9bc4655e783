/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rc_qp.h: the plain-verbs part the RDMA samples share: one RC QP. */
#ifndef HMR_SAMPLE_RC_QP_H
#define HMR_SAMPLE_RC_QP_H

#include <stdint.h>

#include <infiniband/verbs.h>

/* What a peer needs to connect to this QP over RoCE (port 1, GID 0). */
struct rc_addr {
	uint32_t qpn;
	union ibv_gid gid;
};

struct rc_qp {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct rc_addr self;
};

/* A QP (and its CQ) on the protection domain hmr_verbs_pd() returns. */
int rc_qp_create(struct ibv_pd *pd, struct rc_qp *q);
/* INIT -> RTR -> RTS towards the peer; accepts its RDMA WRITEs. */
int rc_qp_connect(struct rc_qp *q, const struct rc_addr *peer);
/* One signalled RDMA WRITE of [src, src + len) to the peer's raddr, rkey;
 * the completion status (IBV_WC_SUCCESS), or -1 if it was not posted. */
int rc_qp_write(struct rc_qp *q, const void *src, uint32_t len, uint32_t lkey,
                uint64_t raddr, uint32_t rkey);
void rc_qp_destroy(struct rc_qp *q);

#endif
