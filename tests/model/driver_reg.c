/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* driver_reg.c: fi_mr_reg, fi_mr_regv, fi_mr_regattr and sub-MRs. */
#include <stdlib.h>
#include <string.h>

#include "driver.h"

/* What *mr holds before a call: a failed call must leave NULL there. */
#define POISON ((struct fid_mr *)(uintptr_t)0x5a5a)

static unsigned check(const struct drv *d, unsigned what)
{
	return d->opts.checks & what;
}

/* A FREE slot, else the one closed longest ago; -1 if all are live. */
static int free_slot(const struct drv *d)
{
	int i, best = -1;

	for (i = 0; i < MODEL_MAX_MRS; i++) {
		if (d->m.mr[i].state == MODEL_FREE)
			return i;
		if (d->m.mr[i].state == MODEL_CLOSED &&
		    (best < 0 || d->closed_at[i] < d->closed_at[best]))
			best = i;
	}
	return best;
}

/* One iov of a sub-MR of `base`: inside one of its iovs, the whole iov,
 * one byte over either edge, up to exactly 2^64 or 2^64 - 1, across two
 * iovs, or any range at all. */
static void gen_sub_iov(struct drv *d, int base, struct model_iov *v)
{
	const struct model_mr *b = &d->m.mr[base];
	struct drv_src *s = d->src;
	size_t j = (size_t)drv_pick(s, b->iov_count ? b->iov_count : 1);
	uint64_t bs = b->iov[j].addr, bl = b->iov[j].len;
	uint64_t off = drv_pick(s, bl && bl < 65536 ? bl : 65536);

	if (!b->iov_count || !bl || off >= bl) {
		drv_gen_iov(d, v);
		return;
	}
	switch (drv_pick(s, 8)) {
	case 0:
		v->addr = bs + off;
		v->len = 1 + drv_pick(s, bl - off < 65536 ? bl - off : 65536);
		break;
	case 1:
		v->addr = bs;
		v->len = bl;
		break;
	case 2:
		v->addr = bs;
		v->len = bl + 1;
		break;
	case 3:
		v->addr = bs - 1;
		v->len = 2;
		break;
	case 4: /* Ends exactly at 2^64: the end wraps to 0. */
		v->addr = bs + off;
		v->len = 0 - v->addr;
		break;
	case 5:
		v->addr = bs + off;
		v->len = 0 - v->addr - 1;
		break;
	case 6:
		v->addr = bs + bl - 1 - drv_pick(s, bl < 4 ? bl : 4);
		v->len = 2 + drv_pick(s, 8);
		break;
	default:
		drv_gen_iov(d, v);
		break;
	}
}

static void gen_auth(struct drv *d, struct model_req *r)
{
	const uint8_t *k;

	switch (drv_pick(d->src, 8)) {
	case 5:
		k = drv_auth_pool(1, &r->auth_key_size);
		break;
	case 6:
		k = drv_auth_pool(2, &r->auth_key_size);
		break;
	case 7:
		k = drv_auth_pool(3, &r->auth_key_size);
		if (drv_pick(d->src, 2)) {
			r->auth_key_size = HMR_AUTH_KEY_MAX + 1; /* Too big. */
			k = NULL;
		} else if (drv_pick(d->src, 2)) {
			r->auth_key_size = 4; /* With a NULL auth_key. */
			r->auth_null = true;
			return;
		}
		break;
	default:
		return;
	}
	if (k)
		memcpy(r->auth_key, k, r->auth_key_size);
}

static void gen_req(struct drv *d, enum drv_op op, struct model_req *r)
{
	struct drv_src *s = d->src;
	size_t i, n;

	memset(r, 0, sizeof(*r));
	r->api = op == DRV_OP_REG    ? MODEL_REG
	         : op == DRV_OP_REGV ? MODEL_REGV
	                             : MODEL_REGATTR;
	r->base = -1;
	if (op == DRV_OP_SUB)
		r->base =
		        drv_pick(s, 16) ? drv_pick_mr(d, true) : MODEL_FOREIGN;
	n = drv_pick(s, 8);
	r->iov_count = n < 5 ? 1 : n == 5 ? 2 : 1 + drv_pick(s, 5);
	if (n == 7)
		r->iov_count = drv_pick(s, 3) ? d->m.iov_limit + 1 : 0;
	if (r->api == MODEL_REG || r->iov_count > MODEL_MAX_IOV)
		r->iov_count = 1;
	r->iov_null = r->api != MODEL_REG && !drv_pick(s, 32);
	for (i = 0; i < r->iov_count; i++) {
		if (r->base >= 0)
			gen_sub_iov(d, r->base, &r->iov[i]);
		else
			drv_gen_iov(d, &r->iov[i]);
	}
	r->access = drv_gen_access(d);
	if (r->base >= 0 && drv_pick(s, 4))
		r->access &= d->m.mr[r->base].access; /* Mostly a subset. */
	r->offset = drv_pick(s, 32) ? 0 : 1 + drv_pick(s, 4096);
	r->requested_key = drv_gen_key(d);
	r->flags = drv_gen_flags(d);
	r->out_null = !drv_pick(s, 64);
	if (r->api != MODEL_REGATTR)
		return;
	/* The memory is host memory; another iface is a wrong hint. */
	r->iface = drv_pick(s, 4) ? FI_HMEM_SYSTEM
	                          : (enum fi_hmem_iface)drv_pick(s, 6);
	r->hmem_data = !drv_pick(s, 32);
	n = drv_pick(s, 16);
	r->page_size = n == 12 ? 4096 : n == 13 ? 2u << 20 : n == 14 ? 3 : 0;
	gen_auth(d, r);
}

/* sizeof(struct fi_mr_attr) in libfabric API version v (hmr.h). */
static size_t attr_size(uint32_t v)
{
	if (v >= FI_VERSION(2, 0))
		return sizeof(struct fi_mr_attr);
	if (v >= FI_VERSION(1, 22))
		return offsetof(struct fi_mr_attr, base_mr);
	if (v >= FI_VERSION(1, 19))
		return offsetof(struct fi_mr_attr, page_size);
	if (v >= FI_VERSION(1, 9))
		return offsetof(struct fi_mr_attr, hmem_data);
	return offsetof(struct fi_mr_attr, iface);
}

static int call_lib(struct drv *d, const struct model_req *r,
                    struct fid_mr **out)
{
	struct iovec vec[MODEL_MAX_IOV];
	const struct iovec *iov = r->iov_null ? NULL : vec;
	struct fi_mr_attr attr, *copy;
	uint8_t *auth = NULL;
	size_t i, size;
	int rc;

	for (i = 0; i < r->iov_count; i++) {
		vec[i].iov_base = (void *)(uintptr_t)r->iov[i].addr;
		vec[i].iov_len = r->iov[i].len;
	}
	if (r->api == MODEL_REG)
		return fi_mr_reg(d->dom, vec[0].iov_base, vec[0].iov_len,
		                 r->access, r->offset, r->requested_key,
		                 r->flags, out, NULL);
	if (r->api == MODEL_REGV)
		return fi_mr_regv(d->dom, iov, r->iov_count, r->access,
		                  r->offset, r->requested_key, r->flags, out,
		                  NULL);
	memset(&attr, 0, sizeof(attr));
	attr.mr_iov = iov;
	attr.iov_count = r->iov_count;
	attr.access = r->access;
	attr.offset = r->offset;
	attr.requested_key = r->requested_key;
	/* An exact-size copy, so that reading past auth_key_size trips
	 * AddressSanitizer. */
	if (!r->auth_null && r->auth_key_size) {
		auth = malloc(r->auth_key_size);
		memcpy(auth, r->auth_key,
		       r->auth_key_size < sizeof(r->auth_key)
		               ? r->auth_key_size
		               : sizeof(r->auth_key));
	}
	attr.auth_key_size = r->auth_key_size;
	attr.auth_key = auth;
	attr.iface = r->iface;
	attr.device.reserved = drv_pick(d->src, 4);
	attr.hmem_data = r->hmem_data ? (void *)&attr : NULL;
	attr.page_size = r->page_size;
	attr.base_mr = r->base >= 0               ? d->mr[r->base]
	               : r->base == MODEL_FOREIGN ? d->peer_mr[0]
	                                          : NULL;
	attr.sub_mr_cnt = drv_pick(d->src, 4);
	/* The struct as long as the caller's API version has it, in an
	 * exact-size allocation: reading past its end trips ASan. */
	size = attr_size(d->m.fi_version);
	copy = malloc(size);
	memcpy(copy, &attr, size);
	rc = fi_mr_regattr(d->dom, copy, r->flags, out);
	free(copy);
	free(auth);
	return rc;
}

static void accepted(struct drv *d, int id, const struct model_req *r, int p,
                     struct fid_mr *mr)
{
	bool rogue = p < 0 || (p == MODEL_UNKNOWN && model_sub_req(&d->m, r) &&
	                       r->base >= 0 && d->m.mr[r->base].rogue);
	uint64_t key;

	if (!mr || mr == POISON)
		drv_fail(d, "registration returned 0 without an MR");
	if (p < 0 && check(d, DRV_CHECK_REG))
		drv_fail(d,
		         "the library accepted a registration the model "
		         "refuses with %d",
		         p);
	key = drv_learn_key(d, id, mr);
	drv_trace(d, "%lu: reg[%d] has key %#llx%s", d->step, id,
	          (unsigned long long)key, rogue ? " (rogue)" : "");
	if (check(d, DRV_CHECK_REG) && !rogue &&
	    !model_mr_key_ok(&d->m, r, key))
		drv_fail(d, "key %#llx is not a key this MR may have",
		         (unsigned long long)key);
	d->mr[id] = mr;
	model_reg_add(&d->m, id, r, key, rogue);
	if (check(d, DRV_CHECK_REG) &&
	    (fi_mr_key(mr) != model_public_key(&d->m, id) || !fi_mr_desc(mr)))
		drv_fail(d, "fi_mr_key %#llx (model %#llx) or NULL desc",
		         (unsigned long long)fi_mr_key(mr),
		         (unsigned long long)model_public_key(&d->m, id));
	d->stats.regs++;
	d->stats.rogue += rogue;
	d->stats.subs += d->m.mr[id].base >= 0;
}

void drv_op_reg(struct drv *d, enum drv_op op)
{
	struct fid_mr *mr = POISON;
	struct model_req r;
	int id = free_slot(d), p, rc;

	gen_req(d, op, &r);
	if (id < 0)
		return; /* Every slot holds a live MR; closes will come. */
	p = model_reg_check(&d->m, &r);
	rc = call_lib(d, &r, r.out_null ? NULL : &mr);
	drv_trace(d,
	          "%lu: reg[%d] api %d base %d iovs %zu {%#llx, %#llx}%s "
	          "access %#llx off %llu key %#llx flags %#llx auth %zu "
	          "= %d (model %d)",
	          d->step, id, (int)r.api, r.base, r.iov_count,
	          (unsigned long long)r.iov[0].addr,
	          (unsigned long long)r.iov[0].len, r.iov_null ? " NULL" : "",
	          (unsigned long long)r.access, (unsigned long long)r.offset,
	          (unsigned long long)r.requested_key,
	          (unsigned long long)r.flags, r.auth_key_size, rc, p);
	if (rc == 0) {
		accepted(d, id, &r, p, mr);
		return;
	}
	d->stats.regs_refused++;
	if (p == 0 && check(d, DRV_CHECK_REG))
		drv_fail(d,
		         "the library refused (%d) a registration the "
		         "model accepts",
		         rc);
	if (!r.out_null && mr != NULL && check(d, DRV_CHECK_REG))
		drv_fail(d, "a failed registration (%d) left *mr = %p", rc,
		         (void *)mr);
}

uint64_t drv_learn_key(struct drv *d, int id, struct fid_mr *mr)
{
	uint8_t raw[DRV_RAW_MAX];
	size_t size = 0;
	uint64_t base = 0, key = 0;
	int rc;

	if (!d->m.raw_size) {
		rc = fi_mr_raw_attr(mr, &base, NULL, &size, 0);
		if (rc != -FI_ETOOSMALL || !size || size > DRV_RAW_MAX)
			drv_fail(d,
			         "fi_mr_raw_attr with no buffer: %d, size "
			         "%zu",
			         rc, size);
		d->m.raw_size = size;
	}
	if (!(d->m.mr_mode & FI_MR_RAW))
		return fi_mr_key(mr);
	/* FI_MR_RAW: the key is had through the raw key, mapped here. */
	size = sizeof(raw);
	rc = fi_mr_raw_attr(mr, &base, raw, &size, 0);
	if (!rc)
		rc = fi_mr_map_raw(d->dom, base, raw, size, &key, 0);
	if (!rc)
		rc = fi_mr_unmap_key(d->dom, key);
	if (rc)
		drv_fail(d, "MR %d: its raw key does not map: %d", id, rc);
	return key;
}
