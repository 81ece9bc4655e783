/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rdma_write.c: one process RDMA-WRITEs into memory another registered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "rc_qp.h"

/*
 * The path of a GPUDirect RDMA transfer between two processes:
 *
 *   target:    opens an hmr verbs domain with FI_HMEM and registers its
 *              buffer (GPU memory when a CUDA driver is there: hmr picks
 *              the dma-buf or the peer-memory path), then sends its QP's
 *              address, the buffer's address and fi_mr_key() (the rkey);
 *   initiator: registers its source with FI_WRITE, connects its QP and
 *              posts one RDMA WRITE with the lkey that fi_mr_desc()'s
 *              struct hmr_verbs_desc holds;
 *   target:    reads the bytes back (hmr_hmem_copy_from for GPU memory).
 *
 * The processes are a fork()ed pair on one NIC; the socketpair stands in
 * for the TCP connection two hosts would use.  Fork before any verbs or
 * GPU call: each process opens its own.  Usage: rdma_write [nic]
 */
#define LEN 4096

struct hello {
	struct rc_addr qp;
	uint64_t addr, rkey;
};

static int fail(const char *who, const char *what, int ret)
{
	fprintf(stderr, "%s: %s: %s\n", who, what, hmr_strerror(ret));
	return 1;
}

static int domain_on(const char *nic, struct fid_domain **domain,
                     struct rc_qp *q)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	int ret;

	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = nic; /* NULL: the first NIC. */
	attr.caps = FI_HMEM;
	ret = hmr_domain_open(&attr, domain);
	if (!ret && rc_qp_create(hmr_verbs_pd(*domain), q))
		ret = -FI_EIO;
	return ret;
}

static int target(int sock, const char *nic)
{
	struct fi_mr_attr attr = {.iov_count = 1, .access = FI_REMOTE_WRITE};
	struct hmr_hmem_info info;
	struct fid_domain *domain;
	struct hello me, peer;
	struct fid_mr *mr;
	struct iovec iov;
	struct rc_qp q;
	char back[LEN], want[LEN], done = 0;
	void *dst;
	int ret, gpu = !hmr_hmem_alloc(FI_HMEM_CUDA, 0, LEN, &dst);

	if (!gpu)
		dst = calloc(1, LEN);
	ret = domain_on(nic, &domain, &q);
	if (ret)
		return fail("target", "domain", ret);
	/* Register the buffer as what it is: hmr_hmem_query tells. */
	hmr_hmem_query(dst, LEN, &info);
	iov = (struct iovec){dst, LEN};
	attr.mr_iov = &iov;
	attr.iface = info.iface;
	attr.device.reserved = info.device;
	ret = fi_mr_regattr(domain, &attr, 0, &mr);
	if (ret)
		return fail("target", "fi_mr_regattr", ret);
	me = (struct hello){q.self, (uintptr_t)dst, fi_mr_key(mr)};
	printf("target: registered %s memory at %p, rkey %#llx\n",
	       hmr_hmem_iface_name(info.iface), dst,
	       (unsigned long long)me.rkey);
	fflush(stdout);
	if (write(sock, &me, sizeof(me)) != sizeof(me) ||
	    read(sock, &peer, sizeof(peer)) != sizeof(peer) ||
	    rc_qp_connect(&q, &peer.qp) || write(sock, "r", 1) != 1 ||
	    read(sock, &done, 1) != 1)
		return fail("target", "exchange", -FI_EIO);
	ret = gpu ? hmr_hmem_copy_from(back, dst, LEN)
	          : (memcpy(back, dst, LEN), 0);
	memset(want, 0x5c, LEN);
	ret = !ret && done == 'd' && !memcmp(back, want, LEN);
	printf("target: the %d bytes %s\n", LEN,
	       ret ? "arrived" : "did NOT arrive");
	rc_qp_destroy(&q);
	fi_close(&mr->fid);
	fi_close(&domain->fid);
	if (gpu)
		hmr_hmem_free(FI_HMEM_CUDA, dst);
	else
		free(dst);
	return !ret;
}

static int initiator(int sock, const char *nic)
{
	struct fid_domain *domain;
	struct hello me = {0}, peer;
	struct fid_mr *mr;
	struct rc_qp q;
	char *src = malloc(LEN), ready = 0;
	int ret, st;

	memset(src, 0x5c, LEN);
	ret = domain_on(nic, &domain, &q);
	if (!ret)
		ret = fi_mr_reg(domain, src, LEN, FI_WRITE, 0, 0, 0, &mr, NULL);
	if (ret)
		return fail("initiator", "domain or fi_mr_reg", ret);
	me.qp = q.self;
	if (read(sock, &peer, sizeof(peer)) != sizeof(peer) ||
	    write(sock, &me, sizeof(me)) != sizeof(me) ||
	    rc_qp_connect(&q, &peer.qp) || read(sock, &ready, 1) != 1)
		return fail("initiator", "exchange", -FI_EIO);
	st = rc_qp_write(&q, src, LEN,
	                 ((struct hmr_verbs_desc *)fi_mr_desc(mr))->lkey,
	                 peer.addr, (uint32_t)peer.rkey);
	printf("initiator: RDMA WRITE of %d bytes to %#llx, rkey %#llx: %s\n",
	       LEN, (unsigned long long)peer.addr,
	       (unsigned long long)peer.rkey,
	       st < 0 ? "not posted" : ibv_wc_status_str(st));
	fflush(stdout);
	ret = write(sock, "d", 1) != 1 || st != IBV_WC_SUCCESS;
	rc_qp_destroy(&q);
	fi_close(&mr->fid);
	fi_close(&domain->fid);
	free(src);
	return ret;
}

int main(int argc, char **argv)
{
	const char *nic = argc > 1 ? argv[1] : NULL;
	int sv[2], st = 1, ret;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || (pid = fork()) < 0)
		return 1;
	if (pid == 0) {
		close(sv[0]);
		ret = target(sv[1], nic);
		fflush(stdout); /* _exit flushes nothing. */
		_exit(ret);
	}
	close(sv[1]);
	ret = initiator(sv[0], nic);
	close(sv[0]); /* A target still waiting reads end-of-file. */
	waitpid(pid, &st, 0);
	return ret || !WIFEXITED(st) || WEXITSTATUS(st);
}
