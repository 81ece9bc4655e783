/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* two_hosts.c: two processes, two NICs, raw keys over TCP, RDMA both ways. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "rc_pair.h"
#include "vm_case.h"

/*
 * What a collective library does between two hosts: each side registers
 * a buffer with hmr on its own NIC (rxe1 and rxe2, the two ends of a veth
 * pair in one namespace), sends its QP number, GID, base address and raw
 * key over TCP, maps the peer's raw key with fi_mr_map_raw, and writes
 * into the peer's buffer at base + 64.  Each side then checks what arrived.
 * Twice: with FI_MR_VIRT_ADDR (base is the peer's virtual address) and
 * without (offset addressing: base is 0, and the NIC resolves offsets).
 */
#define LEN  4096
#define PORT 18515

struct side {
	const char *nic;
	char pattern;
	uint64_t mr_mode;
	int port;
	struct fid_domain *domain;
	struct fid_mr *buf_mr, *src_mr;
	char *buf, *src;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct rc_hello me, peer;
	uint64_t peer_key;
};

static int xfer(int fd, void *p, size_t n, int out)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = out ? write(fd, (char *)p + done, n - done)
		                : read(fd, (char *)p + done, n - done);

		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

static int tcp_pair(int server, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
	                        .sin_port = htons(port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, c, tries;

	if (server) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (void *)&a, sizeof(a)) || listen(fd, 1))
			return -1;
		c = accept(fd, NULL, NULL);
		close(fd);
		return c;
	}
	for (tries = 0; tries < 100; tries++) {
		if (connect(fd, (void *)&a, sizeof(a)) == 0)
			return fd;
		usleep(50000);
	}
	return -1;
}

static int setup(struct side *s)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct ibv_qp_init_attr qa = {.qp_type = IBV_QPT_RC,
	                              .cap = {.max_send_wr = 4,
	                                      .max_recv_wr = 4,
	                                      .max_send_sge = 1,
	                                      .max_recv_sge = 1}};
	struct ibv_pd *pd;
	size_t size = sizeof(s->me.raw);

	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = s->nic;
	attr.mr_mode = s->mr_mode;
	s->buf = aligned_alloc(4096, LEN);
	s->src = aligned_alloc(4096, LEN);
	memset(s->buf, 0, LEN);
	memset(s->src, s->pattern, LEN);
	if (hmr_domain_open(&attr, &s->domain))
		return -1;
	pd = hmr_verbs_pd(s->domain);
	if (rc_wait_gid(pd->context, 0, 10000) ||
	    ibv_query_gid(pd->context, 1, 0, &s->me.gid))
		return -2;
	if (fi_mr_reg(s->domain, s->buf, LEN, FI_REMOTE_WRITE, 0, 0, 0,
	              &s->buf_mr, NULL) ||
	    fi_mr_reg(s->domain, s->src, LEN, FI_WRITE, 0, 0, 0, &s->src_mr,
	              NULL))
		return -3;
	if (fi_mr_raw_attr(s->buf_mr, &s->me.base, s->me.raw, &size, 0))
		return -4;
	s->me.raw_size = size;
	s->cq = ibv_create_cq(pd->context, 8, NULL, NULL, 0);
	qa.send_cq = qa.recv_cq = s->cq;
	s->qp = s->cq ? ibv_create_qp(pd, &qa) : NULL;
	if (!s->qp)
		return -5;
	s->me.qpn = s->qp->qp_num;
	return 0;
}

static int write_peer(struct side *s)
{
	const struct hmr_verbs_desc *desc = fi_mr_desc(s->src_mr);
	struct ibv_sge sge = {.addr = hmr_verbs_sge_addr(desc, s->src),
	                      .length = 64,
	                      .lkey = desc->lkey};
	struct ibv_send_wr wr = {.sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = IBV_WR_RDMA_WRITE,
	                         .send_flags = IBV_SEND_SIGNALED},
	                   *bad;
	struct ibv_wc wc;
	int n, spins;

	wr.wr.rdma.remote_addr = s->peer.base + 64;
	wr.wr.rdma.rkey = (uint32_t)s->peer_key;
	if (ibv_post_send(s->qp, &wr, &bad))
		return -1;
	for (spins = 0; spins < 1000000; spins++) {
		n = ibv_poll_cq(s->cq, 1, &wc);
		if (n > 0)
			return wc.status;
		if (n < 0)
			return -1;
		usleep(10);
	}
	return -1;
}

/* One host; returns 0 when its write completed and the peer's arrived. */
static int run_side(struct side *s, int server)
{
	int fd, ret, st;
	char done = 1;

	ret = setup(s);
	if (ret)
		return fprintf(stderr, "%s: setup step %d\n", s->nic, -ret), 10;
	fd = tcp_pair(server, s->port);
	if (fd < 0 || xfer(fd, &s->me, sizeof(s->me), 1) ||
	    xfer(fd, &s->peer, sizeof(s->peer), 0))
		return fprintf(stderr, "%s: TCP exchange\n", s->nic), 11;
	/* The raw attr's base names offset 0 for the NIC: 0 under offsets. */
	if ((s->peer.base == 0) != !(s->mr_mode & FI_MR_VIRT_ADDR))
		return fprintf(stderr, "%s: peer base %#llx\n", s->nic,
		               (unsigned long long)s->peer.base),
		       17;
	if (fi_mr_map_raw(s->domain, s->peer.base, s->peer.raw,
	                  s->peer.raw_size, &s->peer_key, 0))
		return fprintf(stderr, "%s: fi_mr_map_raw\n", s->nic), 12;
	if (rc_qp_connect(s->qp, s->peer.qpn, &s->peer.gid, 0))
		return fprintf(stderr, "%s: QP connect\n", s->nic), 13;
	st = write_peer(s);
	/* Both writes are done before either side looks. */
	if (xfer(fd, &done, 1, 1) || xfer(fd, &done, 1, 0))
		return 14;
	ret = st == IBV_WC_SUCCESS && s->buf[64] == (s->pattern ^ 1) &&
	                      s->buf[127] == (s->pattern ^ 1) && s->buf[0] == 0
	              ? 0
	              : 15;
	if (ret)
		fprintf(stderr, "%s: write %s, byte %#x\n", s->nic,
		        rc_status_str(st), s->buf[64] & 0xff);
	fi_mr_unmap_key(s->domain, s->peer_key);
	ibv_destroy_qp(s->qp);
	ibv_destroy_cq(s->cq);
	fi_close(&s->buf_mr->fid);
	fi_close(&s->src_mr->fid);
	if (fi_close(&s->domain->fid))
		ret = 16;
	close(fd);
	return ret;
}

static void two_hosts(const char *name, uint64_t mr_mode, int port)
{
	struct side a = {.nic = "rxe1", .pattern = 0x42};
	struct side b = {.nic = "rxe2", .pattern = 0x43};
	int status, ret;
	pid_t pid;

	a.mr_mode = b.mr_mode = mr_mode;
	a.port = b.port = port;
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(run_side(&b, 1));
	ret = run_side(&a, 0);
	waitpid(pid, &status, 0);
	vm_case(name, ret == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	        "rxe1 side %d, rxe2 side %d", ret,
	        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int main(void)
{
	/* fi_mr: F58 */
	two_hosts("verbs_two_hosts_raw_keys_over_tcp_write_both_ways",
	          HMR_MR_MODE_DEFAULT, PORT);
	/* fi_mr: V8 V15 */
	two_hosts("verbs_two_hosts_offset_raw_keys_write_both_ways",
	          HMR_MR_MODE_DEFAULT & ~(uint64_t)FI_MR_VIRT_ADDR, PORT + 1);
	return vm_case_exit();
}
