/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* driver_raw.c: fi_mr_raw_attr, fi_mr_map_raw (forged, truncated), unmap. */
#include <stdlib.h>
#include <string.h>

#include "driver.h"

static unsigned check(const struct drv *d, unsigned what)
{
	return d->opts.checks & what;
}

void drv_raw_closed(struct drv *d, int id)
{
	size_t i;

	for (i = 0; i < d->nraw; i++)
		if (d->raw[i].prov.kind == MODEL_RAW_OWN &&
		    d->raw[i].prov.mr == id)
			d->raw[i].prov.stale = true;
}

/* Keep a raw key this domain issued (the peer's stay in front). */
static void keep_raw(struct drv *d, int id, const uint8_t *bytes, size_t size,
                     uint64_t base)
{
	size_t i = d->nraw < DRV_RAWS
	                   ? d->nraw++
	                   : DRV_PEER + (size_t)drv_pick(d->src,
	                                                 DRV_RAWS - DRV_PEER);
	struct drv_rawkey *rk = &d->raw[i];

	memcpy(rk->bytes, bytes, size);
	rk->size = size;
	rk->prov.kind = MODEL_RAW_OWN;
	rk->prov.mr = id;
	rk->prov.key = d->m.mr[id].key;
	rk->prov.base = base;
	rk->prov.stale = false;
}

/* A buffer size for fi_mr_raw_attr: none, one short, exact, larger. */
static size_t gen_size(struct drv *d)
{
	size_t s = d->m.raw_size;

	switch (drv_pick(d->src, 6)) {
	case 0:
		return 0;
	case 1:
		return s ? s - 1 : 0;
	case 3:
		return s + drv_pick(d->src, 16);
	case 4:
		return (size_t)drv_pick(d->src, DRV_RAW_MAX);
	default:
		return s;
	}
}

void drv_op_raw_attr(struct drv *d)
{
	int id = drv_pick_mr(d, !drv_pick(d->src, 8)), p, rc;
	size_t size = gen_size(d), ks = size;
	bool raw_null = !drv_pick(d->src, 16);
	bool ks_null = !drv_pick(d->src, 32), base_null = !drv_pick(d->src, 32);
	uint64_t flags =
	        drv_pick(d->src, 16) ? 0 : 1ULL << drv_pick(d->src, 64);
	uint64_t base = 0, mbase = 0;
	uint8_t *buf;

	if (id < 0)
		return;
	/* Exact size: writing past *key_size trips ASan. */
	buf = malloc(size ? size : 1);
	p = model_raw_attr(&d->m, id, flags, ks_null, base_null, raw_null, size,
	                   &mbase);
	rc = fi_mr_raw_attr(d->mr[id], base_null ? NULL : &base,
	                    raw_null ? NULL : buf, ks_null ? NULL : &ks, flags);
	drv_trace(d,
	          "%lu: raw_attr(mr %d, size %zu%s%s%s, %#llx) = %d size "
	          "%zu base %#llx (model %d %#llx)",
	          d->step, id, size, raw_null ? " raw NULL" : "",
	          ks_null ? " size NULL" : "", base_null ? " base NULL" : "",
	          (unsigned long long)flags, rc, ks, (unsigned long long)base,
	          p, (unsigned long long)mbase);
	if (check(d, DRV_CHECK_RAW) && p != MODEL_UNKNOWN &&
	    ((rc == 0) != (p == 0)))
		drv_fail(d, "fi_mr_raw_attr returned %d, the model %d", rc, p);
	if (check(d, DRV_CHECK_RAW) && (rc == 0 || rc == -FI_ETOOSMALL) &&
	    ks != d->m.raw_size)
		drv_fail(d, "fi_mr_raw_attr: *key_size %zu, not %zu", ks,
		         d->m.raw_size);
	if (rc == 0 && p == 0 && check(d, DRV_CHECK_RAW) && base != mbase)
		drv_fail(d, "fi_mr_raw_attr: base %#llx, the model's %#llx",
		         (unsigned long long)base, (unsigned long long)mbase);
	if (rc == 0 && ks <= size && ks <= DRV_RAW_MAX &&
	    d->m.mr[id].state == MODEL_LIVE)
		keep_raw(d, id, buf, ks, base);
	free(buf);
}

/* The bytes handed to fi_mr_map_raw: a kept raw key, whole, truncated,
 * padded, with a byte flipped or a word replaced. */
static uint8_t *gen_raw(struct drv *d, struct drv_rawkey *rk, size_t *size,
                        struct model_raw *prov)
{
	struct drv_src *s = d->src;
	size_t n = rk->size, i;
	uint8_t *buf;

	*prov = rk->prov;
	switch (drv_pick(s, 8)) {
	case 5:
		n = n ? n - 1 - (size_t)drv_pick(s, n) : 0;
		break;
	case 6:
		n += 1 + (size_t)drv_pick(s, 16);
		break;
	case 7:
		n = (size_t)drv_pick(s, DRV_RAW_MAX + 1);
		break;
	default:
		break;
	}
	buf = malloc(n ? n : 1); /* Exact: reading past it trips ASan. */
	for (i = 0; i < n; i++)
		buf[i] = i < rk->size ? rk->bytes[i] : (uint8_t)drv_u64(s);
	if (n && !drv_pick(s, 6)) {
		i = (size_t)drv_pick(s, n);
		buf[i] ^= (uint8_t)(1u << drv_pick(s, 8));
		prov->kind = MODEL_RAW_FORGED;
	} else if (n >= 8 && !drv_pick(s, 6)) {
		uint64_t w = drv_u64(s);

		memcpy(buf + 8 * drv_pick(s, n / 8), &w, sizeof(w));
		prov->kind = MODEL_RAW_FORGED;
	}
	*size = n;
	return buf;
}

static void mapped(struct drv *d, uint64_t key)
{
	size_t i;

	for (i = 0; i < d->m.nmapped; i++)
		if (d->m.mapped[i].key == key)
			break;
	if (i == d->m.nmapped && d->m.nmapped == MODEL_MAX_KEYS) {
		/* The model holds no more keys: give this one back. */
		if (fi_mr_unmap_key(d->dom, key))
			drv_fail(d, "cannot unmap a key just mapped");
		return;
	}
	model_map_commit(&d->m, key);
	d->stats.raw_maps++;
}

void drv_op_map_raw(struct drv *d)
{
	struct drv_rawkey *rk = &d->raw[drv_pick(d->src, d->nraw)];
	bool raw_null = !drv_pick(d->src, 32), key_null = !drv_pick(d->src, 32);
	uint64_t flags =
	        drv_pick(d->src, 16) ? 0 : 1ULL << drv_pick(d->src, 64);
	uint64_t base = rk->prov.base, key = 0, mkey = 0;
	struct model_raw prov;
	size_t size;
	uint8_t *buf = gen_raw(d, rk, &size, &prov);
	int p, rc;

	if (!drv_pick(d->src, 6))
		base = drv_pick(d->src, 2) ? base + 1 : drv_u64(d->src);
	p = model_map_raw(&d->m, &prov, base, size, raw_null, key_null, flags,
	                  &mkey);
	rc = fi_mr_map_raw(d->dom, base, raw_null ? NULL : buf, size,
	                   key_null ? NULL : &key, flags);
	free(buf);
	drv_trace(d,
	          "%lu: map_raw(kind %d mr %d%s size %zu base %#llx "
	          "%#llx) = %d key %#llx (model %d %#llx)",
	          d->step, (int)prov.kind, prov.mr, prov.stale ? " stale" : "",
	          size, (unsigned long long)base, (unsigned long long)flags, rc,
	          (unsigned long long)key, p, (unsigned long long)mkey);
	if (check(d, DRV_CHECK_RAW) && p != MODEL_UNKNOWN &&
	    ((rc == 0) != (p == 0)))
		drv_fail(d, "fi_mr_map_raw returned %d, the model %d", rc, p);
	if (check(d, DRV_CHECK_RAW) && rc == 0 && p == 0 && key != mkey)
		drv_fail(d, "fi_mr_map_raw gave key %#llx, not %#llx",
		         (unsigned long long)key, (unsigned long long)mkey);
	if (rc == 0)
		mapped(d, key);
	else
		d->stats.raw_refused++;
}

void drv_op_unmap(struct drv *d)
{
	uint64_t key;
	int p, rc;

	/* On a domain shared with other threads, a key this thread never
	 * mapped may be another thread's mapping: unmap only our own. */
	if (d->opts.domain && !d->m.nmapped)
		return;
	if (d->m.nmapped && (d->opts.domain || drv_pick(d->src, 4)))
		key = d->m.mapped[drv_pick(d->src, d->m.nmapped)].key;
	else
		key = drv_pick(d->src, 2)
		              ? drv_gen_key(d)
		              : d->raw[drv_pick(d->src, DRV_PEER)].prov.key;
	p = model_unmap(&d->m, key);
	rc = fi_mr_unmap_key(d->dom, key);
	drv_trace(d, "%lu: unmap(%#llx) = %d (model %d)", d->step,
	          (unsigned long long)key, rc, p);
	if (rc == 0 && p != 0)
		drv_fail(d, "fi_mr_unmap_key unmapped a key never mapped");
	if (check(d, DRV_CHECK_RAW) && rc != 0 && p == 0)
		drv_fail(d, "fi_mr_unmap_key returned %d for a mapped key", rc);
	if (rc == 0) {
		model_unmap_commit(&d->m, key);
		d->stats.unmaps++;
	}
}
