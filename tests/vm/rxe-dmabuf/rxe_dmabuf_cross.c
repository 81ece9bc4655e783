/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rxe_dmabuf_cross.c: CUDA memory to Level Zero memory, two processes, raw
 * keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "rc_pair.h"
#include "reg_dmabuf.h"
#include "vm_case.h"

/*
 * What a job moving a tensor between two kinds of accelerator does: the
 * target process registers Level Zero device memory on rxe2, the
 * initiator CUDA device memory on rxe1 (both with hmr_hmem_alloc, both
 * through the dma-buf path of rdma_rxe_dmabuf: udmabufs of the
 * simulators' memory).  The target sends its QP number, GID and raw key
 * (fi_mr_raw_attr) over a socket; the initiator maps it (fi_mr_map_raw),
 * RDMA WRITEs 4 KiB of CUDA memory across a page boundary of the Level
 * Zero memory, and RDMA READs 256 bytes the target wrote back into CUDA
 * memory.  Each side checks the bytes through its runtime's copy.
 */
#define CUDA "/payload/libcuda.so.1"
#define LEN  (1 << 16)
#define WOFF (4096 - 512) /* the WRITE's place in the target's memory */
#define WLEN 4096
#define ROFF 12288 /* what the READ fetches */
#define RLEN 256
#define RDST 8192 /* where it lands in the initiator's memory */

/* One process's end: its NIC, its memory and what it registered. */
struct side {
	const char *nic;
	enum fi_hmem_iface iface;
	uint64_t access;
	struct fid_domain *domain;
	struct fid_mr *mr;
	struct rc_pair qp;
	void *mem;
	struct rc_hello me, peer;
};

static int xfer(int fd, void *p, size_t n, int out)
{
	ssize_t r = out ? write(fd, p, n) : read(fd, p, n);

	return r == (ssize_t)n ? 0 : -1;
}

static void fill(unsigned char *b, size_t n, int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 13 + (size_t)seed);
}

/* Domain, memory, its registration and raw key, a QP; then the hello
 * exchange (send first unless `answer`) and the connection. */
static int side_up(struct side *s, int sock, int answer)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct iovec iov;
	struct fi_mr_attr ma = {.mr_iov = &iov, .iov_count = 1};
	size_t size = sizeof(s->me.raw);
	struct ibv_pd *pd;

	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = s->nic;
	attr.caps = FI_HMEM;
	if (hmr_domain_open(&attr, &s->domain) ||
	    hmr_hmem_alloc(s->iface, 0, LEN, &s->mem))
		return 1;
	pd = hmr_verbs_pd(s->domain);
	iov.iov_base = s->mem;
	iov.iov_len = LEN;
	ma.access = s->access;
	ma.iface = s->iface;
	if (rc_wait_gid(pd->context, 0, 10000) ||
	    ibv_query_gid(pd->context, 1, 0, &s->me.gid) ||
	    fi_mr_regattr(s->domain, &ma, 0, &s->mr))
		return 2;
	if ((s->access & FI_REMOTE_WRITE) &&
	    fi_mr_raw_attr(s->mr, &s->me.base, s->me.raw, &size, 0))
		return 3;
	s->me.raw_size = size;
	if (rc_half_create(&s->qp, pd, 0))
		return 4;
	s->me.qpn = s->qp.qp_a->qp_num;
	if (answer ? xfer(sock, &s->peer, sizeof(s->peer), 0) ||
	                     xfer(sock, &s->me, sizeof(s->me), 1)
	           : xfer(sock, &s->me, sizeof(s->me), 1) ||
	                     xfer(sock, &s->peer, sizeof(s->peer), 0))
		return 5;
	return rc_qp_connect(s->qp.qp_a, s->peer.qpn, &s->peer.gid, 0) ? 6 : 0;
}

static void side_down(struct side *s)
{
	rc_pair_destroy(&s->qp);
	if (s->mr)
		fi_close(&s->mr->fid);
	if (s->mem)
		hmr_hmem_free(s->iface, s->mem);
	if (s->domain)
		fi_close(&s->domain->fid);
}

/* The target: Level Zero memory, filled, then checked after the WRITE.
 * Its exit status: 0, a setup step, or 20 + what was wrong. */
static int target(int sock)
{
	static unsigned char want[LEN], back[LEN];
	struct side s = {.nic = "rxe2",
	                 .iface = FI_HMEM_ZE,
	                 .access = FI_REMOTE_WRITE | FI_REMOTE_READ};
	int ret;
	char done;

	memset(want, 0x11, LEN);
	fill(want + ROFF, RLEN, 7);
	ret = side_up(&s, sock, 1);
	if (!ret && hmr_hmem_copy_to(s.mem, want, LEN))
		ret = 7;
	done = (char)ret;
	if (xfer(sock, &done, 1, 1) || xfer(sock, &done, 1, 0))
		ret = ret ? ret : 8;
	fill(want + WOFF, WLEN, 3);
	if (!ret && hmr_hmem_copy_from(back, s.mem, LEN))
		ret = 9;
	if (!ret && memcmp(back, want, LEN))
		ret = 20;
	if (!ret && vm_kernel_imports != 1)
		ret = 21;
	side_down(&s);
	return ret;
}

/* The initiator: CUDA memory, a WRITE from it and a READ into it. */
static void initiator(int sock, pid_t child)
{
	static unsigned char src[WLEN], want[RLEN], back[RLEN];
	struct side s = {.nic = "rxe1",
	                 .iface = FI_HMEM_CUDA,
	                 .access = FI_WRITE | FI_READ};
	const struct hmr_verbs_desc *desc;
	int ret, w = -1, r = -1, status = -1;
	uint64_t key = 0;
	char ready = 1;

	fill(src, WLEN, 3);
	fill(want, RLEN, 7);
	ret = side_up(&s, sock, 0);
	if (!ret && hmr_hmem_copy_to(s.mem, src, WLEN))
		ret = 7;
	if (!ret && fi_mr_map_raw(s.domain, s.peer.base, s.peer.raw,
	                          s.peer.raw_size, &key, 0))
		ret = 8;
	if (xfer(sock, &ready, 1, 0) || ready)
		ret = ret ? ret : 9; /* the target is not ready */
	if (!ret) {
		desc = fi_mr_desc(s.mr);
		w = rc_rdma(&s.qp, IBV_WR_RDMA_WRITE,
		            (void *)(uintptr_t)hmr_verbs_sge_addr(desc, s.mem),
		            WLEN, desc->lkey, s.peer.base + WOFF,
		            (uint32_t)key);
		r = rc_rdma(&s.qp, IBV_WR_RDMA_READ,
		            (void *)(uintptr_t)hmr_verbs_sge_addr(
		                    desc, (char *)s.mem + RDST),
		            RLEN, desc->lkey, s.peer.base + ROFF,
		            (uint32_t)key);
		if (hmr_hmem_copy_from(back, (char *)s.mem + RDST, RLEN))
			ret = 10;
	}
	/* Done (or failed): the target checks, or sees the socket close. */
	xfer(sock, &ready, 1, 1);
	close(sock);
	waitpid(child, &status, 0);
	/* fi_mr: V16 */
	vm_case("rxe_dmabuf_cross_cuda_to_ze_write_lands",
	        !ret && w == IBV_WC_SUCCESS && WIFEXITED(status) &&
	                WEXITSTATUS(status) == 0 && vm_kernel_imports == 1,
	        "initiator step %d, write %s, target exit %d, imports %u", ret,
	        rc_status_str(w), WIFEXITED(status) ? WEXITSTATUS(status) : -1,
	        vm_kernel_imports);
	/* fi_mr: V16 */
	vm_case("rxe_dmabuf_cross_ze_to_cuda_read_returns",
	        !ret && r == IBV_WC_SUCCESS && !memcmp(back, want, RLEN),
	        "initiator step %d, read %s, bytes %s", ret, rc_status_str(r),
	        memcmp(back, want, RLEN) ? "differ" : "equal");
	if (key)
		fi_mr_unmap_key(s.domain, key);
	side_down(&s);
}

int main(void)
{
	int sv[2];
	pid_t pid;

	/* Before hmr's first memory call: backends start once. */
	setenv("HMR_CUDA_LIBRARY", CUDA, 1);
	setenv("HMR_ZE_LIBRARY", "/payload/libze_loader.so.1", 1);
	setenv("ZE_ENABLE_ALT_DRIVERS", "/payload/libze_sim_a.so", 1);
	setenv("HMR_SIM_DMABUF", "udmabuf", 1);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		vm_case_fail("rxe_dmabuf_cross_setup", "socketpair");
		return vm_case_exit();
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(target(sv[1]));
	}
	close(sv[1]);
	initiator(sv[0], pid);
	return vm_case_exit();
}
