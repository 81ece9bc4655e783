/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* driver_ops.c: accesses, closes, binds, enables, counters and refresh. */
#include <stdlib.h>
#include <string.h>

#include "driver.h"

static unsigned check(const struct drv *d, unsigned what)
{
	return d->opts.checks & what;
}

/* Any MR id that ever held a key this episode, or -1. */
static int pick_any_mr(struct drv *d)
{
	int start = (int)drv_pick(d->src, MODEL_MAX_MRS), i;

	for (i = 0; i < MODEL_MAX_MRS; i++) {
		int id = (start + i) % MODEL_MAX_MRS;

		if (d->m.mr[id].state != MODEL_FREE)
			return id;
	}
	return -1;
}

/* The key of an access: an MR's (live, closed, rogue), a mapped or a
 * peer's key, or anything. */
static uint64_t gen_access_key(struct drv *d, int *id)
{
	*id = drv_pick(d->src, 4) ? drv_pick_mr(d, false) : pick_any_mr(d);
	switch (drv_pick(d->src, 10)) {
	case 7:
		if (d->m.nmapped)
			return d->m.mapped[drv_pick(d->src, d->m.nmapped)].key;
		return d->raw[drv_pick(d->src, DRV_PEER)].prov.key;
	case 8:
		return drv_gen_key(d);
	case 9:
		return FI_KEY_NOTAVAIL;
	default:
		return *id >= 0 ? d->m.mr[*id].key : drv_gen_key(d);
	}
}

/* The initiator's auth key for hmr_mr_access_auth: the domain's, an MR's,
 * a pool key, one byte off, one byte short, or NULL. */
static const uint8_t *gen_auth(struct drv *d, int id, size_t *size)
{
	uint8_t *buf = d->auth_buf;
	const struct model_mr *mr = id >= 0 ? &d->m.mr[id] : NULL;

	switch (drv_pick(d->src, 8)) {
	case 0:
		*size = d->m.auth_key_size;
		return d->m.auth_key;
	case 1:
	case 2:
		if (!mr)
			break;
		*size = mr->auth_key_size;
		return mr->auth_key;
	case 3:
		return drv_auth_pool((unsigned)drv_pick(d->src, 4), size);
	case 4:
		if (!mr || !mr->auth_key_size)
			break;
		memcpy(buf, mr->auth_key, mr->auth_key_size);
		buf[drv_pick(d->src, mr->auth_key_size)] ^= 1;
		*size = mr->auth_key_size;
		return buf;
	case 5:
		if (!mr || !mr->auth_key_size)
			break;
		*size = mr->auth_key_size - 1;
		return mr->auth_key;
	case 6:
		*size = 1 + drv_pick(d->src, HMR_AUTH_KEY_MAX);
		return NULL; /* A size with no key: -FI_EINVAL. */
	default:
		break;
	}
	*size = 0;
	return NULL;
}

static void access_result(struct drv *d, int rc, int p, void *ptr,
                          uint64_t mptr, int mid, uint64_t access)
{
	if (rc == 0) {
		if (p != 0 && p != MODEL_UNKNOWN)
			drv_fail(d, "GRANT the model refuses (%d): ptr %p", p,
			         ptr);
		if ((uint64_t)(uintptr_t)ptr != mptr)
			drv_fail(d, "GRANT at %p, the model's pointer is %#llx",
			         ptr, (unsigned long long)mptr);
		model_access_commit(&d->m, mid, access);
		d->stats.grants++;
		return;
	}
	d->stats.refusals++;
	if (p == 0 && check(d, DRV_CHECK_ACCESS))
		drv_fail(d, "refused (%d) an access the model grants at %#llx",
		         rc, (unsigned long long)mptr);
}

void drv_op_access(struct drv *d, bool with_auth)
{
	const uint8_t *auth = NULL;
	uint8_t *copy = NULL;
	size_t auth_size = 0;
	uint64_t key, addr = 0, len = 0, access, mptr = 0;
	void *ptr = NULL;
	int id, mid = -1, p, rc;

	key = gen_access_key(d, &id);
	if (id >= 0)
		drv_gen_target(d, id, &addr, &len);
	else
		addr = drv_u64(d->src), len = 1 + drv_pick(d->src, 64);
	access = drv_pick(d->src, 16) ? (drv_pick(d->src, 2) ? FI_REMOTE_READ
	                                                     : FI_REMOTE_WRITE)
	                              : drv_gen_access(d);
	if (with_auth) {
		auth = gen_auth(d, id, &auth_size);
		/* Exact size: reading past auth_key_size trips ASan. */
		if (auth && auth_size) {
			copy = malloc(auth_size);
			memcpy(copy, auth, auth_size);
		}
		p = model_access(&d->m, false, auth ? copy : NULL, auth_size,
		                 key, addr, len, access, &mptr, &mid);
		rc = hmr_mr_access_auth(d->dom, auth ? copy : NULL, auth_size,
		                        key, addr, (size_t)len, access, &ptr);
		free(copy);
	} else {
		p = model_access(&d->m, true, NULL, 0, key, addr, len, access,
		                 &mptr, &mid);
		rc = hmr_mr_access(d->dom, key, addr, (size_t)len, access,
		                   &ptr);
	}
	drv_trace(d,
	          "%lu: access%s(key %#llx [mr %d] addr %#llx len %#llx "
	          "access %#llx auth %zu) = %d ptr %p (model %d %#llx)",
	          d->step, with_auth ? "_auth" : "", (unsigned long long)key,
	          id, (unsigned long long)addr, (unsigned long long)len,
	          (unsigned long long)access, auth_size, rc, ptr, p,
	          (unsigned long long)mptr);
	access_result(d, rc, p, ptr, mptr, mid, access);
	if (rc && id >= 0 && d->m.mr[id].state == MODEL_LIVE &&
	    d->m.mr[id].key == key && d->m.mr[id].used)
		d->stats.single_use_refused++;
}

void drv_op_close(struct drv *d)
{
	int id = drv_pick_mr(d, !drv_pick(d->src, 8)), p, rc;
	bool was_closed;

	if (id < 0)
		return;
	was_closed = d->m.mr[id].state == MODEL_CLOSED;
	p = model_close(&d->m, id);
	rc = fi_close(&d->mr[id]->fid);
	drv_trace(d, "%lu: close(mr %d%s%s) = %d (model %d)", d->step, id,
	          was_closed ? " again" : "", d->m.mr[id].rogue ? " rogue" : "",
	          rc, p);
	if (was_closed) {
		/* A second close is always refused, and closes nothing. */
		if (rc != -FI_EBADF)
			drv_fail(d, "a second fi_close returned %d", rc);
		return;
	}
	if (check(d, DRV_CHECK_OBJ) && !d->m.mr[id].rogue &&
	    ((rc == 0) != (p == 0)))
		drv_fail(d, "fi_close returned %d, the model %d", rc, p);
	if (rc) {
		d->stats.busy++;
		return;
	}
	model_close_commit(&d->m, id);
	d->closed_at[id] = d->closes++;
	drv_raw_closed(d, id);
	d->stats.closes++;
}

/* What to bind: an own counter or endpoint (open or closed), the peer's
 * counter, or an object that is neither. */
static struct fid *gen_bindable(struct drv *d, int id, int *res)
{
	int start = (int)drv_pick(d->src, MODEL_MAX_RES), i;

	switch (drv_pick(d->src, 16)) {
	case 0:
		*res = MODEL_FOREIGN;
		return &d->peer_cntr->fid;
	case 1:
		*res = -1;
		return &d->mr[id]->fid;
	case 2:
		*res = -1;
		return &d->dom->fid;
	default:
		break;
	}
	for (i = 0; i < MODEL_MAX_RES; i++) {
		*res = (start + i) % MODEL_MAX_RES;
		if (d->m.res[*res].used)
			return d->res[*res];
	}
	*res = MODEL_FOREIGN;
	return &d->peer_cntr->fid;
}

void drv_op_bind(struct drv *d)
{
	static const uint64_t choices[] = {
	        0,
	        FI_REMOTE_READ,
	        FI_REMOTE_WRITE,
	        FI_REMOTE_READ | FI_REMOTE_WRITE,
	        FI_READ,
	        1ULL << 40,
	};
	int id = drv_pick_mr(d, !drv_pick(d->src, 16)), res, p, rc;
	struct fid *fid;
	uint64_t flags;

	if (id < 0)
		return;
	fid = gen_bindable(d, id, &res);
	flags = choices[drv_pick(d->src, 6)];
	if (res >= 0 && d->m.res[res].kind == MODEL_EP && drv_pick(d->src, 4))
		flags = 0;
	p = model_bind(&d->m, id, res, flags);
	rc = fi_mr_bind(d->mr[id], fid, flags);
	drv_trace(d, "%lu: bind(mr %d, res %d, %#llx) = %d (model %d)", d->step,
	          id, res, (unsigned long long)flags, rc, p);
	if (check(d, DRV_CHECK_OBJ) && !d->m.mr[id].rogue &&
	    ((rc == 0) != (p == 0)))
		drv_fail(d, "fi_mr_bind returned %d, the model %d", rc, p);
	if (rc == 0 && res < 0)
		drv_fail(d, "fi_mr_bind accepted another domain's counter or "
		            "an object that is no counter or endpoint");
	if (rc == 0) {
		model_bind_commit(&d->m, id, res, flags);
		d->stats.binds++;
	}
}

void drv_op_enable(struct drv *d)
{
	int id = drv_pick_mr(d, !drv_pick(d->src, 16)), p, rc;

	if (id < 0)
		return;
	p = model_enable(&d->m, id);
	rc = fi_mr_enable(d->mr[id]);
	drv_trace(d, "%lu: enable(mr %d) = %d (model %d)", d->step, id, rc, p);
	if (check(d, DRV_CHECK_OBJ) && !d->m.mr[id].rogue &&
	    ((rc == 0) != (p == 0)))
		drv_fail(d, "fi_mr_enable returned %d, the model %d", rc, p);
	if (rc == 0 && d->m.mr[id].state == MODEL_LIVE) {
		model_enable_commit(&d->m, id);
		d->stats.enables++;
	}
}

void drv_op_res_open(struct drv *d)
{
	enum model_res_kind kind = drv_pick(d->src, 2) ? MODEL_CNTR : MODEL_EP;
	struct fid_cntr *cntr = NULL;
	struct fid *ep = NULL;
	int res = model_res_open(&d->m, kind), rc;

	if (res < 0)
		return;
	rc = kind == MODEL_CNTR ? hmr_cntr_open(d->dom, &cntr)
	                        : hmr_ep_open(d->dom, &ep);
	drv_trace(d, "%lu: %s_open = %d -> res %d", d->step,
	          kind == MODEL_CNTR ? "cntr" : "ep", rc, res);
	if (rc)
		drv_fail(d, "opening a counter or endpoint: %d", rc);
	d->res[res] = kind == MODEL_CNTR ? &cntr->fid : ep;
}

void drv_op_res_close(struct drv *d)
{
	int start = (int)drv_pick(d->src, MODEL_MAX_RES), i, res = -1, p, rc;

	for (i = 0; i < MODEL_MAX_RES && res < 0; i++)
		if (d->m.res[(start + i) % MODEL_MAX_RES].used)
			res = (start + i) % MODEL_MAX_RES;
	if (res < 0)
		return;
	p = model_res_close(&d->m, res);
	rc = fi_close(d->res[res]);
	drv_trace(d, "%lu: close(res %d) = %d (model %d)", d->step, res, rc, p);
	if (check(d, DRV_CHECK_OBJ) && (rc == 0) != (p == 0))
		drv_fail(d, "closing a counter or endpoint: %d, model %d", rc,
		         p);
	if (rc == 0)
		model_res_close_commit(&d->m, res);
}

void drv_op_cntr_check(struct drv *d)
{
	int i;

	for (i = 0; i < MODEL_MAX_RES; i++) {
		const struct model_res *r = &d->m.res[i];
		uint64_t v;

		if (!r->used || r->kind != MODEL_CNTR)
			continue;
		v = hmr_cntr_read((struct fid_cntr *)d->res[i]);
		if (check(d, DRV_CHECK_CNTR) && v != model_cntr_read(&d->m, i))
			drv_fail(d, "counter %d reads %llu, the model %llu", i,
			         (unsigned long long)v,
			         (unsigned long long)model_cntr_read(&d->m, i));
	}
}

void drv_op_refresh(struct drv *d)
{
	struct model_iov v[4] = {{0, 0}};
	struct iovec vec[4];
	size_t count = (size_t)drv_pick(d->src, 4), i;
	int id = drv_pick_mr(d, !drv_pick(d->src, 16)), p, rc;
	uint64_t flags =
	        drv_pick(d->src, 16) ? 0 : 1ULL << drv_pick(d->src, 64);

	if (id < 0)
		return;
	for (i = 0; i < count; i++) {
		if (drv_pick(d->src, 4)) {
			drv_gen_target(d, id, &v[i].addr, &v[i].len);
			if (!model_virt_addr(&d->m) && d->m.mr[id].iov_count)
				v[i].addr += d->m.mr[id].iov[0].addr;
		} else {
			drv_gen_iov(d, &v[i]);
		}
		vec[i].iov_base = (void *)(uintptr_t)v[i].addr;
		vec[i].iov_len = v[i].len;
	}
	p = model_refresh(&d->m, id, count ? v : NULL, count, flags);
	rc = fi_mr_refresh(d->mr[id], count ? vec : NULL, count, flags);
	drv_trace(d,
	          "%lu: refresh(mr %d, %zu iovs {%#llx, %#llx}, %#llx) = "
	          "%d (model %d)",
	          d->step, id, count, (unsigned long long)v[0].addr,
	          (unsigned long long)(count ? v[0].len : 0),
	          (unsigned long long)flags, rc, p);
	if (check(d, DRV_CHECK_REFRESH) && p != MODEL_UNKNOWN &&
	    ((rc == 0) != (p == 0)))
		drv_fail(d, "fi_mr_refresh returned %d, the model %d", rc, p);
	d->stats.refreshes += rc == 0;
}

void drv_op_domain_close(struct drv *d)
{
	int p = model_domain_close(&d->m), rc;

	if (p == 0 || d->opts.domain)
		return; /* It would close: the teardown does that. */
	rc = fi_close(&d->dom->fid);
	drv_trace(d, "%lu: close(domain) = %d (model %d)", d->step, rc, p);
	/* Always fatal: the episode cannot go on without its domain. */
	if (rc == 0)
		drv_fail(d, "fi_close closed a domain with live MRs, counters, "
		            "endpoints or mapped keys");
}
