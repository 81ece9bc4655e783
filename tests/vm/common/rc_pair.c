/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rc_pair.c: a connected pair of RC QPs for verbs tests in the VM. */
#include "rc_pair.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void set_err(struct rc_pair *p, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static void set_err(struct rc_pair *p, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
	errno = saved;
}

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

struct ibv_context *rc_open_device(const char *name)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int n, err = ENODEV;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (int i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name) == 0) {
			ctx = ibv_open_device(list[i]);
			err = errno;
			break;
		}
	}
	ibv_free_device_list(list);
	if (!ctx)
		errno = err;
	return ctx;
}

int rc_wait_gid(struct ibv_context *ctx, int gid_index, int timeout_ms)
{
	static const union ibv_gid zero;
	long long end = now_ms() + timeout_ms;
	union ibv_gid gid;

	for (;;) {
		if (ibv_query_gid(ctx, 1, gid_index, &gid) == 0 &&
		    memcmp(&gid, &zero, sizeof(gid)) != 0)
			return 0;
		if (now_ms() >= end) {
			errno = ETIMEDOUT;
			return -1;
		}
		nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
	}
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr at = {
	        .qp_state = IBV_QPS_INIT,
	        .pkey_index = 0,
	        .port_num = 1,
	        .qp_access_flags =
	                IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};

	return ibv_modify_qp(qp, &at,
	                     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	                             IBV_QP_ACCESS_FLAGS);
}

static int to_rtr_rts(struct ibv_qp *qp, uint32_t dest_qpn,
                      const union ibv_gid *dgid, int gid_index,
                      enum ibv_mtu mtu)
{
	struct ibv_qp_attr at = {
	        .qp_state = IBV_QPS_RTR,
	        .path_mtu = mtu,
	        .dest_qp_num = dest_qpn,
	        .rq_psn = 0,
	        .max_dest_rd_atomic = 4,
	        .min_rnr_timer = 12,
	        .ah_attr = {.is_global = 1,
	                    .port_num = 1,
	                    .grh = {.dgid = *dgid,
	                            .sgid_index = (uint8_t)gid_index,
	                            .hop_limit = 1}},
	};

	if (ibv_modify_qp(qp, &at,
	                  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
	                          IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	                          IBV_QP_MAX_DEST_RD_ATOMIC |
	                          IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.timeout = 14;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.sq_psn = 0;
	at.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &at,
	                     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	                             IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
	                             IBV_QP_MAX_QP_RD_ATOMIC);
}

static void free_qps(struct rc_pair *p)
{
	if (p->qp_a)
		ibv_destroy_qp(p->qp_a);
	if (p->qp_b)
		ibv_destroy_qp(p->qp_b);
	if (p->cq_a)
		ibv_destroy_cq(p->cq_a);
	if (p->cq_b)
		ibv_destroy_cq(p->cq_b);
	p->qp_a = p->qp_b = NULL;
	p->cq_a = p->cq_b = NULL;
}

/* One end: a CQ and an RC QP on pd, left in RESET.  0 or -1 (errno). */
static int make_end(struct ibv_pd *pd, struct ibv_cq **cq, struct ibv_qp **qp)
{
	struct ibv_qp_init_attr ia = {
	        .qp_type = IBV_QPT_RC,
	        .cap = {.max_send_wr = 16,
	                .max_recv_wr = 16,
	                .max_send_sge = 1,
	                .max_recv_sge = 1},
	};

	*cq = ibv_create_cq(pd->context, 32, NULL, NULL, 0);
	ia.send_cq = ia.recv_cq = *cq;
	*qp = *cq ? ibv_create_qp(pd, &ia) : NULL;
	return *qp ? 0 : -1;
}

static int make_qps(struct rc_pair *p)
{
	struct ibv_context *ca = p->pd_a->context, *cb = p->pd_b->context;
	struct ibv_port_attr pa, pb;
	union ibv_gid ga, gb;
	enum ibv_mtu mtu;

	if (ibv_query_port(ca, 1, &pa) || ibv_query_port(cb, 1, &pb)) {
		set_err(p, "ibv_query_port: %s", strerror(errno));
		return -1;
	}
	if (ibv_query_gid(ca, 1, p->gid_index, &ga) ||
	    ibv_query_gid(cb, 1, p->gid_index, &gb)) {
		set_err(p, "ibv_query_gid %d: %s", p->gid_index,
		        strerror(errno));
		return -1;
	}
	mtu = pa.active_mtu < pb.active_mtu ? pa.active_mtu : pb.active_mtu;
	if (make_end(p->pd_a, &p->cq_a, &p->qp_a) ||
	    make_end(p->pd_b, &p->cq_b, &p->qp_b)) {
		set_err(p, "ibv_create_cq/qp: %s", strerror(errno));
		goto fail;
	}
	if (to_init(p->qp_a) || to_init(p->qp_b)) {
		set_err(p, "QP to INIT: %s", strerror(errno));
		goto fail;
	}
	if (to_rtr_rts(p->qp_a, p->qp_b->qp_num, &gb, p->gid_index, mtu) ||
	    to_rtr_rts(p->qp_b, p->qp_a->qp_num, &ga, p->gid_index, mtu)) {
		set_err(p, "QP to RTR/RTS: %s", strerror(errno));
		goto fail;
	}
	p->broken = 0;
	return 0;
fail:
	free_qps(p);
	return -1;
}

int rc_pair_create(struct rc_pair *p, struct ibv_pd *pd_a, struct ibv_pd *pd_b,
                   int gid_index)
{
	memset(p, 0, sizeof(*p));
	p->pd_a = pd_a;
	p->pd_b = pd_b;
	p->gid_index = gid_index;
	p->timeout_ms = 10000;
	return make_qps(p);
}

int rc_half_create(struct rc_pair *p, struct ibv_pd *pd, int gid_index)
{
	memset(p, 0, sizeof(*p));
	p->pd_a = pd;
	p->gid_index = gid_index;
	p->timeout_ms = 10000;
	if (!make_end(pd, &p->cq_a, &p->qp_a))
		return 0;
	set_err(p, "ibv_create_cq/qp: %s", strerror(errno));
	free_qps(p);
	return -1;
}

int rc_pair_reset(struct rc_pair *p)
{
	free_qps(p);
	return make_qps(p);
}

void rc_pair_destroy(struct rc_pair *p)
{
	free_qps(p);
}

int rc_ready(struct rc_pair *p)
{
	if ((p->broken || !p->qp_a) && !p->pd_b) {
		set_err(p, "a half pair cannot be rebuilt");
		return -1;
	}
	return (p->broken || !p->qp_a) && rc_pair_reset(p) ? -1 : 0;
}

static int post(struct rc_pair *p, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int ret;

	if (rc_ready(p))
		return -1;
	ret = ibv_post_send(p->qp_a, wr, &bad);
	if (ret) {
		errno = ret;
		set_err(p, "ibv_post_send: %s", strerror(ret));
		p->broken = 1;
		return -1;
	}
	return rc_wait(p);
}

int rc_rdma(struct rc_pair *p, enum ibv_wr_opcode op, void *laddr, uint32_t len,
            uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
	        .addr = (uintptr_t)laddr,
	        .length = len,
	        .lkey = lkey,
	};
	struct ibv_send_wr wr = {
	        .wr_id = 1,
	        .sg_list = &sge,
	        .num_sge = 1,
	        .opcode = op,
	        .send_flags = IBV_SEND_SIGNALED,
	        .wr.rdma = {.remote_addr = raddr, .rkey = rkey},
	};

	return post(p, &wr);
}

int rc_atomic(struct rc_pair *p, enum ibv_wr_opcode op, uint64_t *result,
              uint32_t lkey, uint64_t raddr, uint32_t rkey,
              uint64_t compare_add, uint64_t swap)
{
	struct ibv_sge sge = {
	        .addr = (uintptr_t)result,
	        .length = sizeof(*result),
	        .lkey = lkey,
	};
	struct ibv_send_wr wr = {
	        .wr_id = 2,
	        .sg_list = &sge,
	        .num_sge = 1,
	        .opcode = op,
	        .send_flags = IBV_SEND_SIGNALED,
	        .wr.atomic = {.remote_addr = raddr,
	                      .compare_add = compare_add,
	                      .swap = swap,
	                      .rkey = rkey},
	};

	return post(p, &wr);
}

int rc_wait(struct rc_pair *p)
{
	struct ibv_wc wc;
	long long end;
	int n;

	end = now_ms() + p->timeout_ms;
	while ((n = ibv_poll_cq(p->cq_a, 1, &wc)) == 0) {
		if (now_ms() >= end)
			break;
	}
	if (n < 0) {
		errno = EIO;
		set_err(p, "ibv_poll_cq failed");
		p->broken = 1;
		return -1;
	}
	if (n == 0) {
		errno = ETIMEDOUT;
		set_err(p, "no completion in %d ms", p->timeout_ms);
		p->broken = 1;
		return -1;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		set_err(p, "completion %s (vendor error %#x)",
		        ibv_wc_status_str(wc.status), wc.vendor_err);
		p->broken = 1;
	}
	return (int)wc.status;
}

const char *rc_status_str(int status)
{
	if (status < 0)
		return "no completion";
	return ibv_wc_status_str((enum ibv_wc_status)status);
}

int rc_qp_connect(struct ibv_qp *qp, uint32_t dest_qpn,
                  const union ibv_gid *dgid, int gid_index)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(qp->context, 1, &pa) || to_init(qp))
		return -1;
	return to_rtr_rts(qp, dest_qpn, dgid, gid_index, pa.active_mtu);
}
