/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rdma_write.c: register memory with hmr, then RDMA-WRITE into it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include <hmr/hmr.h>

/*
 * The path of a GPUDirect RDMA transfer, on one NIC in loopback:
 *
 *   1. open an hmr verbs domain on the NIC (with FI_HMEM for GPU memory);
 *   2. register the target with fi_mr_regattr: hmr finds what memory it
 *      is and picks dma-buf or peer-memory registration for GPU memory;
 *   3. give the peer the address and fi_mr_key() (the rkey);
 *   4. the peer posts an RDMA WRITE with its own buffer's lkey, read from
 *      the hmr_verbs_desc that fi_mr_desc() points at.
 *
 * The target is GPU memory when a CUDA driver (or HMR_CUDA_LIBRARY) is
 * there, host memory otherwise.  Usage: rdma_write [nic]
 */
#define LEN 4096

struct qp_end {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static int die(const char *what, int ret)
{
	fprintf(stderr, "rdma_write: %s: %s\n", what, hmr_strerror(ret));
	return 1;
}

/* GPU memory from the CUDA driver, or NULL (then host memory is used). */
static void *gpu_alloc(size_t len)
{
	int (*init)(unsigned), (*retain)(void **, int), (*set)(void *);
	int (*alloc)(unsigned long long *, size_t);
	const char *lib = getenv("HMR_CUDA_LIBRARY");
	void *h = dlopen(lib ? lib : "libcuda.so.1", RTLD_NOW), *ctx;
	unsigned long long p;

	if (!h || hmr_hmem_status(FI_HMEM_CUDA, NULL, 0))
		return NULL;
	*(void **)&init = dlsym(h, "cuInit");
	*(void **)&retain = dlsym(h, "cuDevicePrimaryCtxRetain");
	*(void **)&set = dlsym(h, "cuCtxSetCurrent");
	*(void **)&alloc = dlsym(h, "cuMemAlloc_v2");
	if (!init || !retain || !set || !alloc || init(0) || retain(&ctx, 0) ||
	    set(ctx) || alloc(&p, len))
		return NULL;
	return (void *)(uintptr_t)p;
}

static int qp_create(struct ibv_pd *pd, struct qp_end *e)
{
	struct ibv_qp_init_attr a = {.qp_type = IBV_QPT_RC,
	                             .cap = {.max_send_wr = 4,
	                                     .max_recv_wr = 4,
	                                     .max_send_sge = 1,
	                                     .max_recv_sge = 1}};

	e->cq = ibv_create_cq(pd->context, 4, NULL, NULL, 0);
	a.send_cq = a.recv_cq = e->cq;
	e->qp = e->cq ? ibv_create_qp(pd, &a) : NULL;
	return e->qp ? 0 : -1;
}

/* INIT -> RTR -> RTS, connected to the QP `dest` at `gid` (RoCE: GID 0). */
static int qp_connect(struct ibv_qp *qp, uint32_t dest,
                      const union ibv_gid *gid)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
	                        .port_num = 1,
	                        .qp_access_flags = IBV_ACCESS_REMOTE_WRITE};
	struct ibv_port_attr port;

	if (ibv_query_port(qp->context, 1, &port) ||
	    ibv_modify_qp(qp, &a,
	                  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	                          IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = port.active_mtu;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.hop_limit = 1;
	if (ibv_modify_qp(qp, &a,
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
	return ibv_modify_qp(qp, &a,
	                     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	                             IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
	                             IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Step 4: the initiator writes `len` bytes of src into the target. */
static int rdma_write(struct qp_end *e, void *src, uint32_t lkey,
                      uint64_t raddr, uint64_t rkey, uint32_t len)
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
	wr.wr.rdma.rkey = (uint32_t)rkey;
	if (ibv_post_send(e->qp, &wr, &bad))
		return -1;
	while ((n = ibv_poll_cq(e->cq, 1, &wc)) == 0)
		;
	return n < 0 ? -1 : (int)wc.status;
}

int main(int argc, char **argv)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain;
	struct fid_mr *src_mr, *dst_mr;
	struct hmr_hmem_info info;
	struct qp_end a, b;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct iovec iov;
	struct fi_mr_attr mattr = {0};
	char *src = malloc(LEN), back[LEN];
	void *dst = gpu_alloc(LEN);
	int gpu = dst != NULL, ret, st;

	if (!dst)
		dst = calloc(1, LEN);
	/* 1. The domain: the NIC (or the first one), GPU memory allowed. */
	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = argc > 1 ? argv[1] : NULL;
	attr.caps = FI_HMEM;
	ret = hmr_domain_open(&attr, &domain);
	if (ret)
		return die("hmr_domain_open", ret);
	pd = hmr_verbs_pd(domain);

	/* 2. Register the target as what it is (hmr_hmem_query tells). */
	ret = hmr_hmem_query(dst, LEN, &info);
	if (ret)
		return die("hmr_hmem_query", ret);
	iov.iov_base = dst;
	iov.iov_len = LEN;
	mattr.mr_iov = &iov;
	mattr.iov_count = 1;
	mattr.access = FI_REMOTE_WRITE;
	mattr.iface = info.iface;
	mattr.device.reserved = info.device;
	ret = fi_mr_regattr(domain, &mattr, 0, &dst_mr);
	if (ret)
		return die("fi_mr_regattr (target)", ret);
	ret = fi_mr_reg(domain, src, LEN, FI_WRITE, 0, 0, 0, &src_mr, NULL);
	if (ret)
		return die("fi_mr_reg (source)", ret);
	printf("target: %s memory at %p, rkey %#llx\n",
	       hmr_hmem_iface_name(info.iface), dst,
	       (unsigned long long)fi_mr_key(dst_mr));

	/* 3-4. A QP pair in loopback; the initiator writes. */
	if (qp_create(pd, &a) || qp_create(pd, &b) ||
	    ibv_query_gid(pd->context, 1, 0, &gid) ||
	    qp_connect(a.qp, b.qp->qp_num, &gid) ||
	    qp_connect(b.qp, a.qp->qp_num, &gid)) {
		fprintf(stderr, "rdma_write: QP set-up failed\n");
		return 1;
	}
	memset(src, 0x5c, LEN);
	st = rdma_write(&a, src,
	                ((struct hmr_verbs_desc *)fi_mr_desc(src_mr))->lkey,
	                (uintptr_t)dst, fi_mr_key(dst_mr), LEN);
	printf("RDMA WRITE: %s\n",
	       st < 0 ? "not posted" : ibv_wc_status_str(st));
	/* The bytes, read back as the memory allows. */
	if (gpu)
		ret = hmr_hmem_copy_from(back, dst, LEN);
	else
		memcpy(back, dst, LEN);
	printf("%s\n", st == IBV_WC_SUCCESS && !ret && !memcmp(back, src, LEN)
	                       ? "bytes arrived"
	                       : "bytes did NOT arrive");
	ibv_destroy_qp(a.qp);
	ibv_destroy_qp(b.qp);
	ibv_destroy_cq(a.cq);
	ibv_destroy_cq(b.cq);
	fi_close(&src_mr->fid);
	fi_close(&dst_mr->fid);
	fi_close(&domain->fid);
	free(src);
	return st == IBV_WC_SUCCESS ? 0 : 1;
}
