/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_unaligned.c: offset addressing of local-only regions mid-page. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "mr_util.h"
#include "vm_case.h"

/*
 * Without FI_MR_VIRT_ADDR a region a peer addresses is registered at NIC
 * address 0, so it must start on a page (verbs_offset.c shows the
 * refusal).  A local-only region is registered at its own page offset
 * instead, and these cases post real RDMA on rxe0 through the lkeys of
 * such regions, host memory and simulated CUDA memory (the peer-memory
 * path, as in verbs_offset.c), with and without the registration cache.
 */
#define DLEN (1 << 16)
#define RW   (FI_REMOTE_WRITE | FI_REMOTE_READ)
#define OFFS (HMR_MR_MODE_DEFAULT & ~(uint64_t)FI_MR_VIRT_ADDR)

static struct mt t;
static char why[256];

/*
 * A local-only region (no remote right) has no peer counting its offsets:
 * it is registered at its own page offset, so a buffer anywhere in a page
 * registers, and hmr_verbs_sge_addr gives its lkey's addresses.  src (the
 * local side of a WRITE) and back (of a READ) start `off` into a page; the
 * target is a page-aligned remote region.  What the NIC moved is checked
 * on both sides, with the bytes around each buffer untouched, and the
 * lkey reaches exactly [sge, sge + len): one byte before or past it is a
 * local protection error.  The same buffers with a remote right are still
 * refused.
 */
#define GUARD 0xee
/* fi_mr: V8 V15 */
#define LOCAL_LKEY "verbs_offset_local_unaligned_at_%s_write_read_by_lkey"
/* fi_mr: V8 */
#define LOCAL_CACHED "verbs_offset_local_unaligned_at_%s_cached_write_read"
/* fi_mr: V17 */
#define REMOTE_EINVAL "verbs_offset_remote_unaligned_at_%s_is_einval"

struct unaligned {
	const char *name;
	size_t off, len;
};

/* Fills p[0, n) with a pattern that differs per offset. */
static void pattern(char *p, size_t n, size_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (char)((i * 31 + seed * 7 + 1) & 0xff);
}

/* Every byte of p[0, n) is v. */
static bool all(const char *p, size_t n, int v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((p[i] & 0xff) != v)
			return false;
	return true;
}

/* The lkey of mr reaches [sge, sge + len) and not a byte more on either
 * side: 0, or -1 with why. */
static int lkey_bounds(struct fid_mr *mr, char *buf, size_t len, uint32_t rkey)
{
	const struct hmr_verbs_desc *desc = fi_mr_desc(mr);
	uint64_t sge = hmr_verbs_sge_addr(desc, buf);
	int lo = rc_rdma(&t.pair, IBV_WR_RDMA_WRITE,
	                 (void *)(uintptr_t)(sge - 1), (uint32_t)len,
	                 desc->lkey, 0, rkey);
	int hi = rc_rdma(&t.pair, IBV_WR_RDMA_WRITE,
	                 (void *)(uintptr_t)(sge + 1), (uint32_t)len,
	                 desc->lkey, 0, rkey);
	int va = rc_rdma(&t.pair, IBV_WR_RDMA_WRITE, buf, (uint32_t)len,
	                 desc->lkey, 0, rkey);

	/* A completion, with an error (rxe: a local protection error). */
	if (lo > IBV_WC_SUCCESS && hi > IBV_WC_SUCCESS && va > IBV_WC_SUCCESS)
		return 0;
	snprintf(why, sizeof(why),
	         "sge %#llx: a byte before %s, past %s, at the address %s",
	         (unsigned long long)sge, rc_status_str(lo), rc_status_str(hi),
	         rc_status_str(va));
	return -1;
}

/* WRITE from src + off, READ back into back + off, both local-only MRs
 * registered on d: 0, or -1 with why. */
static int local_unaligned(struct fid_domain *d, const struct unaligned *u,
                           char *src_area, char *back_area, char *tgt,
                           uint32_t rkey, bool bounds)
{
	char *src = src_area + u->off, *back = back_area + u->off;
	const struct hmr_verbs_desc *sd, *bd;
	struct fid_mr *smr = NULL, *bmr = NULL;
	size_t span = u->off + u->len + 64;
	int ret, w, r;

	memset(src_area, GUARD, span);
	memset(back_area, GUARD, span);
	memset(tgt, 0, u->len + 64);
	pattern(src, u->len, u->off);
	ret = mt_reg(d, src, u->len, FI_WRITE, 0, &smr);
	if (!ret)
		ret = mt_reg(d, back, u->len, FI_READ, 0, &bmr);
	if (ret) {
		snprintf(why, sizeof(why), "registration: %s",
		         hmr_strerror(ret));
		goto out;
	}
	sd = fi_mr_desc(smr);
	bd = fi_mr_desc(bmr);
	w = rc_rdma(&t.pair, IBV_WR_RDMA_WRITE,
	            (void *)(uintptr_t)hmr_verbs_sge_addr(sd, src),
	            (uint32_t)u->len, sd->lkey, 0, rkey);
	r = rc_rdma(&t.pair, IBV_WR_RDMA_READ,
	            (void *)(uintptr_t)hmr_verbs_sge_addr(bd, back),
	            (uint32_t)u->len, bd->lkey, 0, rkey);
	ret = -1;
	if (w != IBV_WC_SUCCESS || r != IBV_WC_SUCCESS)
		snprintf(why, sizeof(why), "write %s, read %s",
		         rc_status_str(w), rc_status_str(r));
	else if (memcmp(tgt, src, u->len) || !all(tgt + u->len, 64, 0))
		snprintf(why, sizeof(why), "the target is not src's bytes");
	else if (memcmp(back, src, u->len) || !all(back_area, u->off, GUARD) ||
	         !all(back + u->len, 64, GUARD))
		snprintf(why, sizeof(why),
		         "back is not the target's bytes, or bytes around it "
		         "changed");
	else if (!all(src_area, u->off, GUARD) || !all(src + u->len, 64, GUARD))
		snprintf(why, sizeof(why), "bytes around src changed");
	else if (bounds && (sd->iova != u->off || sd->start != (uintptr_t)src))
		snprintf(why, sizeof(why),
		         "desc iova %#llx start %p, want %#zx %p",
		         (unsigned long long)sd->iova,
		         (void *)(uintptr_t)sd->start, u->off, (void *)src);
	else
		ret = bounds ? lkey_bounds(smr, src, u->len, rkey) : 0;
out:
	if (smr)
		fi_close(&smr->fid);
	if (bmr)
		fi_close(&bmr->fid);
	return ret;
}

/* A remote right on the same buffer: still -FI_EINVAL. */
static int remote_refused(struct fid_domain *d, char *p, size_t len)
{
	struct fid_mr *a, *b;
	int rr = mt_reg(d, p, len, FI_REMOTE_READ, 0, &a),
	    rw = mt_reg(d, p, len, FI_REMOTE_WRITE | FI_WRITE, 0, &b);

	if (a) /* Registered: a failure, closed all the same. */
		fi_close(&a->fid);
	if (b)
		fi_close(&b->fid);
	if (rr == -FI_EINVAL && rw == -FI_EINVAL)
		return 0;
	snprintf(why, sizeof(why), "remote read %s, remote write %s",
	         hmr_strerror(rr), hmr_strerror(rw));
	return -1;
}

static void case_local_unaligned(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	const struct unaligned u[] = {
	        {"1", 1, 3 * pg},
	        {"7", 7, 64},
	        {"7_spanning_pages", 7, 2 * pg + 9},
	        {"4095", 4095, 2 * pg + 2},
	        {"page_minus_1", pg - 1, pg + 2},
	};
	char *sa = aligned_alloc(pg, 5 * pg), *ba = aligned_alloc(pg, 5 * pg),
	     *tgt = aligned_alloc(pg, 5 * pg);
	struct fid_domain *d, *cd;
	struct fid_mr *tmr;
	char name[128];
	uint32_t rkey;
	size_t i;

	if (mt_domain(&t, OFFS, 0, HMR_DOMAIN_CACHE_OFF, &d) ||
	    mt_domain(&t, OFFS, 0, 0, &cd) ||
	    mt_reg(d, tgt, 5 * pg, RW, 0, &tmr)) {
		vm_case_fail("verbs_offset_local_unaligned", "set-up");
		return;
	}
	rkey = (uint32_t)fi_mr_key(tmr);
	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		snprintf(name, sizeof(name), LOCAL_LKEY, u[i].name);
		vm_case(name,
		        !local_unaligned(d, &u[i], sa, ba, tgt, rkey, true),
		        "%s", why);
		snprintf(name, sizeof(name), LOCAL_CACHED, u[i].name);
		vm_case(name,
		        !local_unaligned(cd, &u[i], sa, ba, tgt, rkey, false),
		        "%s", why);
		snprintf(name, sizeof(name), REMOTE_EINVAL, u[i].name);
		vm_case(name, !remote_refused(d, sa + u[i].off, u[i].len), "%s",
		        why);
	}
	fi_close(&tmr->fid);
	fi_close(&cd->fid);
	fi_close(&d->fid);
	free(sa);
	free(ba);
	free(tgt);
}

/*
 * The cache serves a buffer inside a cached local-only region that starts
 * mid-page: the MR shares the region's registration, its desc names the
 * region's start and NIC address, and hmr_verbs_sge_addr of the inner
 * buffer moves the inner buffer's bytes, both ways.
 */
static void case_cached_inner(void)
{
	/* fi_mr: V8 */
	const char *name = "verbs_offset_cached_unaligned_serves_inner_buffer";
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = 96;
	char want[96], *area = aligned_alloc(pg, 4 * pg),
	               *tgt = aligned_alloc(pg, pg);
	char *outer = area + 7, *inner = area + 7 + pg + 5;
	const struct hmr_verbs_desc *od, *id;
	struct fid_domain *d;
	struct fid_mr *omr, *imr, *tmr;
	uint32_t rkey;
	int w, r;

	if (mt_domain(&t, OFFS, 0, 0, &d) ||
	    mt_reg(d, outer, 3 * pg, FI_READ | FI_WRITE, 0, &omr) ||
	    mt_reg(d, inner, n, FI_READ | FI_WRITE, 0, &imr) ||
	    mt_reg(d, tgt, pg, RW, 0, &tmr)) {
		vm_case_fail(name, "set-up");
		return;
	}
	od = fi_mr_desc(omr);
	id = fi_mr_desc(imr);
	rkey = (uint32_t)fi_mr_key(tmr);
	memset(area, GUARD, 4 * pg);
	memset(tgt, 0, pg);
	pattern(want, n, 5);
	memcpy(inner, want, n);
	w = rc_rdma(&t.pair, IBV_WR_RDMA_WRITE,
	            (void *)(uintptr_t)hmr_verbs_sge_addr(id, inner),
	            (uint32_t)n, id->lkey, 8, rkey);
	memset(inner, GUARD, n);
	r = rc_rdma(&t.pair, IBV_WR_RDMA_READ,
	            (void *)(uintptr_t)hmr_verbs_sge_addr(id, inner + 1),
	            (uint32_t)n - 1, id->lkey, 9, rkey);
	vm_case(name,
	        hmr_verbs_mr(imr) == hmr_verbs_mr(omr) &&
	                id->start == od->start && id->iova == 7 &&
	                od->start == (uintptr_t)outer && w == IBV_WC_SUCCESS &&
	                r == IBV_WC_SUCCESS && all(tgt, 8, 0) &&
	                !memcmp(tgt + 8, want, n) &&
	                !memcmp(inner + 1, want + 1, n - 1) &&
	                all(tgt + 8 + n, 64, 0) && (inner[0] & 0xff) == GUARD &&
	                all(area, (size_t)(inner - area), GUARD) &&
	                all(inner + n, 64, GUARD),
	        "shared %d, desc start %#llx iova %#llx (outer %p), write %s, "
	        "read %s",
	        hmr_verbs_mr(imr) == hmr_verbs_mr(omr),
	        (unsigned long long)id->start, (unsigned long long)id->iova,
	        (void *)outer, rc_status_str(w), rc_status_str(r));
	fi_close(&imr->fid);
	fi_close(&omr->fid);
	fi_close(&tmr->fid);
	fi_close(&d->fid);
	free(area);
	free(tgt);
}

/* Local-only simulated CUDA memory 7 bytes into a page, on the
 * peer-memory path (registered at hca_va 7), both ways through its lkey;
 * with a remote right it is still refused. */
static void case_local_unaligned_cuda(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	const struct unaligned u = {"7", 7, 2 * pg + 9};
	char *tgt = aligned_alloc(pg, 4 * pg);
	unsigned long long dev = 0;
	struct fid_domain *d;
	struct fid_mr *tmr;
	char *p;

	mt_peermem(1);
	if (mt_cu_alloc(&dev, DLEN) ||
	    mt_domain(&t, OFFS, FI_HMEM, HMR_DOMAIN_CACHE_OFF, &d) ||
	    mt_reg(d, tgt, 4 * pg, RW, 0, &tmr)) {
		vm_case_fail("verbs_offset_local_unaligned_cuda", "set-up");
		return;
	}
	p = (char *)(uintptr_t)dev;
	/* fi_mr: V8 V15 */
	vm_case("verbs_offset_local_unaligned_cuda_write_read_by_lkey",
	        !local_unaligned(d, &u, p, p + DLEN / 2, tgt,
	                         (uint32_t)fi_mr_key(tmr), true),
	        "%s", why);
	/* fi_mr: V17 */
	vm_case("verbs_offset_remote_unaligned_cuda_is_einval",
	        !remote_refused(d, p + 7, pg), "%s", why);
	fi_close(&tmr->fid);
	fi_close(&d->fid);
	mt_cu_free(dev);
	free(tgt);
}

int main(void)
{
	mt_sim_env(); /* Before hmr's first memory query. */
	if (mt_init(&t, "rxe0"))
		return vm_case_exit();
	case_local_unaligned();
	case_cached_inner();
	if (mt_load_sim()) {
		vm_case_fail("verbs_offset_local_unaligned_cuda",
		             "simulator %s", getenv("HMR_CUDA_LIBRARY"));
	} else {
		case_local_unaligned_cuda();
	}
	mt_fini(&t);
	return vm_case_exit();
}
