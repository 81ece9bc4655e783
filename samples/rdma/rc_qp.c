/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rc_qp.c: one RC QP with libibverbs, for the RDMA samples. */
#include <string.h>

#include "rc_qp.h"

int rc_qp_create(struct ibv_pd *pd, struct rc_qp *q)
{
	struct ibv_qp_init_attr a = {.qp_type = IBV_QPT_RC,
	                             .cap = {.max_send_wr = 4,
	                                     .max_recv_wr = 1,
	                                     .max_send_sge = 1,
	                                     .max_recv_sge = 1}};

	memset(q, 0, sizeof(*q));
	q->cq = ibv_create_cq(pd->context, 4, NULL, NULL, 0);
	a.send_cq = a.recv_cq = q->cq;
	q->qp = q->cq ? ibv_create_qp(pd, &a) : NULL;
	if (!q->qp || ibv_query_gid(pd->context, 1, 0, &q->self.gid))
		return -1;
	q->self.qpn = q->qp->qp_num;
	return 0;
}

int rc_qp_connect(struct rc_qp *q, const struct rc_addr *peer)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
	                        .port_num = 1,
	                        .qp_access_flags = IBV_ACCESS_REMOTE_WRITE};
	struct ibv_port_attr port;

	if (ibv_query_port(q->qp->context, 1, &port) ||
	    ibv_modify_qp(q->qp, &a,
	                  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	                          IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = port.active_mtu;
	a.dest_qp_num = peer->qpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1; /* RoCE: addressed by GID. */
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.hop_limit = 1;
	if (ibv_modify_qp(q->qp, &a,
	                  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
	                          IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	                          IBV_QP_MAX_DEST_RD_ATOMIC |
	                          IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(q->qp, &a,
	                     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	                             IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
	                             IBV_QP_MAX_QP_RD_ATOMIC);
}

int rc_qp_write(struct rc_qp *q, const void *src, uint32_t len, uint32_t lkey,
                uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {(uintptr_t)src, len, lkey};
	struct ibv_send_wr wr = {.sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = IBV_WR_RDMA_WRITE,
	                         .send_flags = IBV_SEND_SIGNALED},
	                   *bad;
	struct ibv_wc wc;
	int n;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(q->qp, &wr, &bad))
		return -1;
	while ((n = ibv_poll_cq(q->cq, 1, &wc)) == 0)
		;
	return n < 0 ? -1 : (int)wc.status;
}

void rc_qp_destroy(struct rc_qp *q)
{
	if (q->qp)
		ibv_destroy_qp(q->qp);
	if (q->cq)
		ibv_destroy_cq(q->cq);
}
