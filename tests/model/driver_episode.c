/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* driver_episode.c: one episode: the domains, the operation loop, teardown. */
#include <stdio.h>
#include <string.h>

#include "driver.h"

/* Weights per operation, in enum drv_op order: REG REGV REGATTR SUB ACCESS
 * ACCESS_AUTH CLOSE BIND ENABLE REFRESH RAW_ATTR MAP_RAW UNMAP RES_OPEN
 * RES_CLOSE CNTR_CHECK DOMAIN_CLOSE.  New operations go at the end: the
 * indexes are the fuzz targets' input format. */
const struct drv_profile drv_profile_mixed = {
        "mixed", {6, 3, 6, 6, 24, 4, 8, 4, 3, 2, 3, 3, 2, 2, 1, 2, 1}};
const struct drv_profile drv_profile_reg = {
        "reg", {10, 8, 12, 10, 12, 0, 8, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0}};
const struct drv_profile drv_profile_single_use = {
        "single_use", {8, 2, 8, 6, 30, 2, 6, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0}};
const struct drv_profile drv_profile_objects = {
        "objects", {6, 2, 4, 6, 10, 0, 10, 10, 8, 1, 1, 1, 1, 5, 4, 4, 3}};
const struct drv_profile drv_profile_raw = {
        "raw", {6, 2, 4, 3, 10, 0, 6, 0, 0, 0, 12, 16, 8, 0, 0, 0, 0}};
const struct drv_profile drv_profile_refresh = {
        "refresh", {8, 4, 6, 4, 8, 0, 4, 0, 0, 16, 1, 1, 1, 0, 0, 0, 0}};
const struct drv_profile drv_profile_shared = {
        "shared", {6, 3, 6, 6, 24, 4, 8, 4, 3, 2, 3, 2, 1, 2, 1, 2, 0}};
const struct drv_profile drv_profile_auth = {
        "auth", {4, 2, 10, 4, 10, 20, 4, 0, 2, 0, 1, 1, 1, 0, 0, 0, 0}};

static unsigned check(const struct drv *d, unsigned what)
{
	return d->opts.checks & what;
}

/* A domain configuration: the mr_mode bits a test can emulate, caps, key
 * size, iov limit, auth key and API version. */
static void gen_domain(struct drv *d, struct hmr_domain_attr *a)
{
	static const uint64_t bits[] = {
	        FI_MR_LOCAL,     FI_MR_RAW,      FI_MR_VIRT_ADDR,
	        FI_MR_ALLOCATED, FI_MR_PROV_KEY, FI_MR_MMU_NOTIFY,
	        FI_MR_RMA_EVENT, FI_MR_ENDPOINT,
	};
	static const uint64_t caps[] = {FI_RMA_EVENT, FI_RMA_PMEM,
	                                FI_COLLECTIVE, FI_RMA, FI_HMEM};
	static const size_t key_sizes[] = {0, 1, 2, 4, 8};
	static const size_t limits[] = {0, 1, 2, 4, 8, 16};
	/* The releases where struct fi_mr_attr grew, and before. */
	static const uint32_t versions[] = {
	        0,
	        FI_VERSION(2, 1),
	        FI_VERSION(2, 0),
	        FI_VERSION(1, 22),
	        FI_VERSION(1, 20),
	        FI_VERSION(1, 19),
	        FI_VERSION(1, 17),
	        FI_VERSION(1, 8),
	};
	uint64_t sel = drv_pick(d->src, 8), set = drv_pick(d->src, 256);
	uint64_t cset = drv_pick(d->src, 32);
	size_t i;

	a->mr_mode = 0;
	for (i = 0; i < 8; i++)
		if (set & (1u << i))
			a->mr_mode |= bits[i];
	if (drv_pick(d->src, 4))
		a->mr_mode &= ~(uint64_t)FI_MR_ENDPOINT; /* 1 in 8 keep it. */
	if (sel == 0)
		a->mr_mode = FI_MR_BASIC;
	else if (sel == 1)
		a->mr_mode = FI_MR_SCALABLE;
	for (i = 0; i < 5; i++)
		if (cset & (1u << i))
			a->caps |= caps[i];
	a->flags = drv_pick(d->src, 4) ? HMR_DOMAIN_EMULATE_MR_MODE : 0;
	a->mr_key_size = key_sizes[drv_pick(d->src, 5)];
	a->mr_iov_limit = limits[drv_pick(d->src, 6)];
	/* 2.0 and later (sub-MRs) in half of the domains. */
	a->fi_version = versions[drv_pick(d->src, 8)];
	a->auth_key =
	        drv_auth_pool((unsigned)drv_pick(d->src, 3), &a->auth_key_size);
}

/* The peer: a plain software domain with DRV_PEER MRs, whose raw keys
 * become the first entries of d->raw. */
static void open_peer(struct drv *d)
{
	uint64_t base, len, hole;
	size_t i;

	drv_arena(&base, &len, &hole);
	if (hmr_domain_open(NULL, &d->peer))
		drv_fail(d, "cannot open the peer domain");
	for (i = 0; i < DRV_PEER; i++) {
		struct drv_rawkey *rk = &d->raw[d->nraw];
		uint64_t rbase = 0;

		if (fi_mr_reg(d->peer, (void *)(uintptr_t)(base + i * 256), 256,
		              FI_REMOTE_READ | FI_REMOTE_WRITE, 0, i + 1, 0,
		              &d->peer_mr[i], NULL))
			drv_fail(d, "cannot register in the peer domain");
		rk->size = sizeof(rk->bytes);
		if (fi_mr_raw_attr(d->peer_mr[i], &rbase, rk->bytes, &rk->size,
		                   0))
			drv_fail(d, "fi_mr_raw_attr fails in the peer domain");
		rk->prov.kind = MODEL_RAW_PEER;
		rk->prov.mr = -1;
		rk->prov.base = rbase;
		/* The key a raw key carries is what map_raw gives back. */
		if (fi_mr_map_raw(d->peer, rbase, rk->bytes, rk->size,
		                  &rk->prov.key, 0) ||
		    fi_mr_unmap_key(d->peer, rk->prov.key))
			drv_fail(d, "the peer cannot map its own raw key");
		d->nraw++;
	}
	if (hmr_cntr_open(d->peer, &d->peer_cntr))
		drv_fail(d, "cannot open a counter in the peer domain");
}

static void close_peer(struct drv *d)
{
	size_t i;
	int rc = fi_close(&d->peer_cntr->fid);

	for (i = 0; i < DRV_PEER && !rc; i++)
		rc = fi_close(&d->peer_mr[i]->fid);
	if (!rc)
		rc = fi_close(&d->peer->fid);
	if (rc)
		drv_fail(d, "closing the peer domain: %d", rc);
	d->peer = NULL;
}

static bool open_domain(struct drv *d)
{
	struct hmr_domain_attr a = HMR_DOMAIN_ATTR_INIT;
	uint64_t mode = 0;
	int p, rc;

	if (d->opts.domain) {
		/* Shared: the model of a domain this thread did not open. */
		if (model_domain_open(&d->m, d->opts.domain_attr, &drv_env) ||
		    hmr_domain_mr_mode(d->opts.domain, &mode))
			drv_fail(d, "the shared domain is not modelled");
		d->dom = d->opts.domain;
		d->m.mr_mode = mode;
		return true;
	}
	gen_domain(d, &a);
	p = model_domain_open(&d->m, &a, &drv_env);
	rc = hmr_domain_open(&a, &d->dom);
	drv_trace(d,
	          "domain_open(mr_mode %#llx caps %#llx flags %#llx "
	          "key_size %zu iov_limit %zu auth %zu version %#x) = %d "
	          "(model %d)",
	          (unsigned long long)a.mr_mode, (unsigned long long)a.caps,
	          (unsigned long long)a.flags, a.mr_key_size, a.mr_iov_limit,
	          a.auth_key_size, a.fi_version, rc, p);
	if (!rc && hmr_domain_mr_mode(d->dom, &mode))
		drv_fail(d, "hmr_domain_mr_mode fails on an open domain");
	if (check(d, DRV_CHECK_OBJ) && ((rc == 0) != (p == 0)))
		drv_fail(d, "hmr_domain_open returned %d, the model %d", rc, p);
	if (check(d, DRV_CHECK_OBJ) && !rc && mode != d->m.mr_mode)
		drv_fail(d, "effective mr_mode %#llx, the model's %#llx",
		         (unsigned long long)mode,
		         (unsigned long long)d->m.mr_mode);
	if (!rc && p) {
		/* Unchecked: an open the model refuses is not modelled. */
		fi_close(&d->dom->fid);
		d->dom = NULL;
		return false;
	}
	if (rc)
		return false;
	d->m.mr_mode = mode;
	return true;
}

static void run_op(struct drv *d, enum drv_op op)
{
	switch (op) {
	case DRV_OP_REG:
	case DRV_OP_REGV:
	case DRV_OP_REGATTR:
	case DRV_OP_SUB:
		drv_op_reg(d, op);
		break;
	case DRV_OP_ACCESS:
	case DRV_OP_ACCESS_AUTH:
		drv_op_access(d, op == DRV_OP_ACCESS_AUTH);
		break;
	case DRV_OP_CLOSE:
		drv_op_close(d);
		break;
	case DRV_OP_BIND:
		drv_op_bind(d);
		break;
	case DRV_OP_ENABLE:
		drv_op_enable(d);
		break;
	case DRV_OP_REFRESH:
		drv_op_refresh(d);
		break;
	case DRV_OP_RAW_ATTR:
		drv_op_raw_attr(d);
		break;
	case DRV_OP_MAP_RAW:
		drv_op_map_raw(d);
		break;
	case DRV_OP_UNMAP:
		drv_op_unmap(d);
		break;
	case DRV_OP_RES_OPEN:
		drv_op_res_open(d);
		break;
	case DRV_OP_RES_CLOSE:
		drv_op_res_close(d);
		break;
	case DRV_OP_CNTR_CHECK:
		drv_op_cntr_check(d);
		break;
	default:
		drv_op_domain_close(d);
		break;
	}
}

static enum drv_op pick_op(struct drv *d)
{
	const unsigned char *w = d->opts.profile->weight;
	unsigned total = 0, r, i;

	for (i = 0; i < DRV_OPS; i++)
		total += w[i];
	r = (unsigned)drv_pick(d->src, total);
	for (i = 0; i < DRV_OPS; i++) {
		if (r < w[i])
			return (enum drv_op)i;
		r -= w[i];
	}
	return DRV_OP_CNTR_CHECK;
}

/* Close the domain, then check that it stays closed: a second close is
 * -FI_EBADF, and no access or registration goes through it. */
static void close_domain(struct drv *d)
{
	uint64_t base, len, hole;
	struct fid_mr *mr = (struct fid_mr *)(uintptr_t)1;
	void *ptr = NULL;
	int rc, i;

	drv_arena(&base, &len, &hole);
	if ((rc = fi_close(&d->dom->fid)))
		drv_fail(d, "teardown: closing the domain: %d", rc);
	if ((d->opts.checks & DRV_CHECK_OBJ) &&
	    (rc = fi_close(&d->dom->fid)) != -FI_EBADF)
		drv_fail(d, "a second close of the domain: %d", rc);
	for (i = 0; i < MODEL_MAX_MRS; i++) {
		if (d->m.mr[i].state == MODEL_FREE || !d->m.mr[i].iov_count)
			continue;
		rc = hmr_mr_access(
		        d->dom, d->m.mr[i].key,
		        model_virt_addr(&d->m) ? d->m.mr[i].iov[0].addr : 0, 1,
		        FI_REMOTE_READ, &ptr);
		if (rc == 0)
			drv_fail(d, "GRANT through a closed domain, MR %d", i);
	}
	rc = fi_mr_reg(d->dom, (void *)(uintptr_t)base, 64, FI_REMOTE_READ, 0,
	               0, 0, &mr, NULL);
	if (rc == 0 || mr != NULL)
		drv_fail(d, "fi_mr_reg on a closed domain: %d, *mr %p", rc,
		         (void *)mr);
}

/* Close what is open, leaves first; every close must now succeed. */
static void teardown(struct drv *d)
{
	bool again = true;
	int i, rc;

	for (i = 0; i < MODEL_MAX_RES; i++)
		if (d->m.res[i].used && d->m.res[i].open &&
		    (rc = fi_close(d->res[i])))
			drv_fail(d, "teardown: closing resource %d: %d", i, rc);
	while (d->m.nmapped) {
		uint64_t key = d->m.mapped[0].key;

		if ((rc = fi_mr_unmap_key(d->dom, key)))
			drv_fail(d, "teardown: unmapping key %#llx: %d",
			         (unsigned long long)key, rc);
		model_unmap_commit(&d->m, key);
	}
	while (again) {
		again = false;
		for (i = 0; i < MODEL_MAX_MRS; i++) {
			if (d->m.mr[i].state != MODEL_LIVE || d->m.mr[i].subs)
				continue;
			if ((rc = fi_close(&d->mr[i]->fid)))
				drv_fail(d, "teardown: closing MR %d: %d", i,
				         rc);
			model_close_commit(&d->m, i);
			again = true;
		}
	}
	if (!d->opts.domain)
		close_domain(d);
	d->dom = NULL;
	close_peer(d);
}

long drv_episode(struct drv *d, struct drv_src *src, long max_steps)
{
	long steps = 0;

	d->src = src;
	d->nraw = 0;
	d->closes = 0;
	memset(d->mr, 0, sizeof(d->mr));
	memset(d->res, 0, sizeof(d->res));
	d->stats.episodes++;
	open_peer(d);
	if (!open_domain(d)) {
		close_peer(d);
		return 0;
	}
	while (steps < max_steps && !src->done) {
		d->step++;
		steps++;
		run_op(d, pick_op(d));
	}
	d->stats.steps += (unsigned long)steps;
	teardown(d);
	return steps;
}
