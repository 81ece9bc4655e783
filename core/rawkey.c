/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rawkey.c: fi_mr_raw_attr, fi_mr_map_raw and fi_mr_unmap_key. */
#include <string.h>

#include "base/hash.h"
#include "core/domain.h"
#include "base/log.h"

/*
 * A raw key carries what a peer needs to name the region: the key, and
 * the issuing domain's tag with a check over (tag, key, base address)
 * keyed by a secret that never leaves the domain.  So the issuing domain
 * can refuse raw keys it never issued, and a peer domain (another
 * process) maps any well-formed raw key to the key it carries.
 */
#define RAW_MAGIC   0x4b524d48u /* "HMRK" */
#define RAW_VERSION 1u

struct raw_key {
	uint32_t magic;
	uint32_t version;
	uint64_t tag;
	uint64_t key;
	uint64_t check;
};

static uint64_t raw_check(const struct hmr_domain *d, uint64_t key,
                          uint64_t base)
{
	return hmr__hash64(
	        d->secret ^
	        hmr__hash64(d->tag ^ hmr__hash64(key ^ hmr__hash64(base))));
}

int hmr__mr_raw_attr(struct hmr_mr *mr, struct fi_mr_raw_attr *attr)
{
	struct hmr_domain *d = mr->domain;
	struct raw_key rk;
	uint64_t base;

	if (attr->flags) {
		hmr_warn("fi_mr_raw_attr: flags must be 0");
		return -FI_EBADFLAGS;
	}
	if (!attr->key_size || !attr->base_addr)
		return -FI_EINVAL;
	if (*attr->key_size < sizeof(rk) || !attr->raw_key) {
		*attr->key_size = sizeof(rk);
		return -FI_ETOOSMALL;
	}
	base = hmr__virt_addr(d) ? mr->base : 0;
	rk.magic = RAW_MAGIC;
	rk.version = RAW_VERSION;
	rk.tag = d->tag;
	rk.key = mr->key;
	rk.check = raw_check(d, mr->key, base);
	memcpy(attr->raw_key, &rk, sizeof(rk));
	*attr->key_size = sizeof(rk);
	*attr->base_addr = base;
	return 0;
}

int hmr__domain_map_raw(struct hmr_domain *d, struct fi_mr_map_raw *map)
{
	struct raw_key rk;
	struct hmr_shard *s;
	uintptr_t count;
	int ret = 0;

	if (map->flags) {
		hmr_warn("fi_mr_map_raw: flags must be 0");
		return -FI_EBADFLAGS;
	}
	if (!map->raw_key || !map->key || map->key_size != sizeof(rk)) {
		hmr_warn("fi_mr_map_raw: raw key %p of %zu bytes (want %zu)",
		         (void *)map->raw_key, map->key_size, sizeof(rk));
		return -FI_EINVAL;
	}
	memcpy(&rk, map->raw_key, sizeof(rk));
	if (rk.magic != RAW_MAGIC || rk.version != RAW_VERSION ||
	    (rk.tag == d->tag &&
	     rk.check != raw_check(d, rk.key, map->base_addr))) {
		hmr_warn("fi_mr_map_raw: not a raw key this domain issued, or "
		         "not an hmr raw key");
		return -FI_EINVAL;
	}
	s = hmr__shard(d, hmr__key_shard(d, rk.key));
	pthread_mutex_lock(&s->lock);
	/* Liveness is known only for keys this domain looks up itself. */
	if (rk.tag == d->tag && !d->registrar->provides_keys &&
	    !hmr__keymap_find(&s->mrs, rk.key)) {
		hmr_info("fi_mr_map_raw: the MR of key %#llx is closed",
		         (unsigned long long)rk.key);
		ret = -FI_ENOKEY;
		goto out;
	}
	count = (uintptr_t)hmr__keymap_remove(&s->mapped, rk.key);
	ret = hmr__keymap_insert(&s->mapped, rk.key, (void *)(count + 1));
	if (ret) {
		/* Put the old count back: the insert made room for it. */
		if (count)
			hmr__keymap_insert(&s->mapped, rk.key, (void *)count);
		goto out;
	}
	s->mapped_count++;
	*map->key = rk.key;
out:
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int hmr__domain_unmap_key(struct hmr_domain *d, uint64_t key)
{
	struct hmr_shard *s = hmr__shard(d, hmr__key_shard(d, key));
	uintptr_t count;
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	count = (uintptr_t)hmr__keymap_remove(&s->mapped, key);
	if (!count) {
		ret = -FI_ENOKEY;
		goto out;
	}
	/* The slot just freed takes the lower count without growing. */
	if (count > 1)
		ret = hmr__keymap_insert(&s->mapped, key, (void *)(count - 1));
	s->mapped_count--;
out:
	pthread_mutex_unlock(&s->lock);
	if (ret == -FI_ENOKEY)
		hmr_warn("fi_mr_unmap_key: key %#llx is not mapped",
		         (unsigned long long)key);
	return ret;
}
