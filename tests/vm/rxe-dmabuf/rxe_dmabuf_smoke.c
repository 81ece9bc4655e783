/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rxe_dmabuf_smoke.c: ibv_reg_dmabuf_mr on the importing rxe, no hmr. */
#include "dmabuf_src.h"
#include "rc_pair.h"
#include "vm_case.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * Proof of the fixture itself (README.md here): on rxe0 of the
 * rdma_rxe_dmabuf module, a dma-buf from udmabuf (a sealed memfd) and one
 * from vgem register through ibv_reg_dmabuf_mr, and RDMA WRITE and READ
 * from a loopback QP reach the bytes the memfd (or the dma-buf's own
 * mapping) holds, at the dma-buf offset the iova names.
 */

#define PAGE 4096u
#define BUF  (4 * PAGE)
#define ACC                                                                    \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                    \
	 IBV_ACCESS_REMOTE_READ)
/* The MR covers dma-buf bytes [REG_OFF, REG_OFF + REG_LEN): an offset
 * inside page 1, so page_info[0] is not the dma-buf's first page. */
#define REG_OFF 0x1100u
#define REG_LEN 0x2200u
#define IOVA    0x7f0000000100ull /* same offset in its page as REG_OFF */

struct ctx {
	struct ibv_context *dev;
	struct ibv_pd *pd;
	struct rc_pair pair;
	unsigned char *host; /* the QP's local buffer */
	struct ibv_mr *host_mr;
};

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed + i * 7);
}

/* WRITE then READ through mr over view (the dma-buf's bytes); name is the
 * case prefix.  Writes span a page boundary of the dma-buf. */
static void write_read(struct ctx *c, const char *src, struct ibv_mr *mr,
                       unsigned char *view)
{
	char name[96];
	uint64_t at = IOVA + 0x800; /* dma-buf offset 0x1900 */
	size_t off = REG_OFF + 0x800, len = 0x1000;
	unsigned char before[BUF];
	int st;

	memcpy(before, view, BUF);
	fill(c->host, len, 0x31);
	st = rc_rdma(&c->pair, IBV_WR_RDMA_WRITE, c->host, (uint32_t)len,
	             c->host_mr->lkey, at, mr->rkey);
	snprintf(name, sizeof(name), "%s_write_lands_at_offset", src);
	if (st != IBV_WC_SUCCESS)
		vm_case_fail(name, "WRITE: %s", rc_status_str(st));
	else
		vm_case(name,
		        !memcmp(view + off, c->host, len) &&
		                !memcmp(view, before, off) &&
		                !memcmp(view + off + len, before + off + len,
		                        BUF - off - len),
		        "the bytes at dma-buf offset %#zx differ", off);

	fill(view + REG_OFF, REG_LEN, 0x5a);
	memset(c->host, 0, REG_LEN);
	st = rc_rdma(&c->pair, IBV_WR_RDMA_READ, c->host, REG_LEN,
	             c->host_mr->lkey, IOVA, mr->rkey);
	snprintf(name, sizeof(name), "%s_read_returns_buffer", src);
	if (st != IBV_WC_SUCCESS)
		vm_case_fail(name, "READ: %s", rc_status_str(st));
	else
		vm_case(name, !memcmp(c->host, view + REG_OFF, REG_LEN),
		        "READ returned other bytes");

	st = rc_rdma(&c->pair, IBV_WR_RDMA_WRITE, c->host, 2, c->host_mr->lkey,
	             IOVA + REG_LEN - 1, mr->rkey);
	snprintf(name, sizeof(name), "%s_write_past_end_refused", src);
	vm_case(name, st == IBV_WC_REM_ACCESS_ERR, "WRITE past the end: %s",
	        rc_status_str(st));
}

static void udmabuf_cases(struct ctx *c)
{
	int memfd = vm_sealed_memfd("rxe-dmabuf", BUF), buf, fds;
	unsigned char *view;
	struct ibv_mr *mr;
	uint32_t rkey;
	int st;

	buf = memfd < 0 ? -1 : vm_udmabuf(memfd, 0, BUF);
	view = memfd < 0 ? MAP_FAILED
	                 : mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_SHARED,
	                        memfd, 0);
	if (buf < 0 || view == MAP_FAILED) {
		vm_case_fail("udmabuf_reg", "udmabuf: %s", strerror(errno));
		return;
	}
	mr = ibv_reg_dmabuf_mr(c->pd, REG_OFF, REG_LEN, IOVA, buf, ACC);
	if (!vm_case("udmabuf_reg", mr != NULL, "ibv_reg_dmabuf_mr: %s",
	             strerror(errno)))
		goto out;
	write_read(c, "udmabuf", mr, view);
	rkey = mr->rkey;
	ibv_dereg_mr(mr);
	st = rc_rdma(&c->pair, IBV_WR_RDMA_WRITE, c->host, 8, c->host_mr->lkey,
	             IOVA, rkey);
	vm_case("udmabuf_closed_rkey_refused", st == IBV_WC_REM_ACCESS_ERR,
	        "WRITE after dereg: %s", rc_status_str(st));

	/* The MR holds the dma-buf, not the fd: closing ours keeps it. */
	fds = vm_open_fds();
	for (int i = 0; i < 200; i++) {
		int b = vm_udmabuf(memfd, 0, BUF);

		mr = b < 0 ? NULL : ibv_reg_dmabuf_mr(c->pd, 0, BUF, 0, b, ACC);
		if (b >= 0)
			close(b);
		if (!mr) {
			vm_case_fail("udmabuf_cycles_fd_flat", "cycle %d: %s",
			             i, strerror(errno));
			goto out;
		}
		ibv_dereg_mr(mr);
	}
	vm_case("udmabuf_cycles_fd_flat", vm_open_fds() == fds,
	        "%d fds before, %d after 200 cycles", fds, vm_open_fds());
out:
	munmap(view, BUF);
	close(buf);
	close(memfd);
}

static void vgem_cases(struct ctx *c)
{
	int buf = vm_vgem_dmabuf(BUF);
	unsigned char *view;
	struct ibv_mr *mr;

	view = buf < 0 ? MAP_FAILED
	               : mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_SHARED,
	                      buf, 0);
	if (buf < 0 || view == MAP_FAILED) {
		vm_case_fail("vgem_reg", "vgem: %s", strerror(errno));
		if (buf >= 0)
			close(buf);
		return;
	}
	mr = ibv_reg_dmabuf_mr(c->pd, REG_OFF, REG_LEN, IOVA, buf, ACC);
	if (vm_case("vgem_reg", mr != NULL, "ibv_reg_dmabuf_mr: %s",
	            strerror(errno))) {
		write_read(c, "vgem", mr, view);
		ibv_dereg_mr(mr);
	}
	munmap(view, BUF);
	close(buf);
}

int main(void)
{
	struct ctx c = {0};

	c.dev = rc_open_device("rxe0");
	c.pd = c.dev ? ibv_alloc_pd(c.dev) : NULL;
	c.host = aligned_alloc(PAGE, BUF);
	c.host_mr = c.pd && c.host ? ibv_reg_mr(c.pd, c.host, BUF, ACC) : NULL;
	if (!c.host_mr || rc_pair_create(&c.pair, c.pd, c.pd, 0) != 0) {
		vm_case_fail("setup", "rxe0, a PD, an MR and a QP pair: %s",
		             c.pair.err[0] ? c.pair.err : strerror(errno));
		return vm_case_exit();
	}
	udmabuf_cases(&c);
	vgem_cases(&c);
	rc_pair_destroy(&c.pair);
	ibv_dereg_mr(c.host_mr);
	free(c.host);
	ibv_dealloc_pd(c.pd);
	ibv_close_device(c.dev);
	return vm_case_exit();
}
