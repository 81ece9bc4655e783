/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* access.c: hmr_mr_access, the target-side check of software RMA. */
#include <string.h>

#include "core/domain.h"
#include "base/log.h"

/* Where [off, off + len) of the region lies; NULL if it is outside or
 * spans iovs. */
static void *locate(const struct hmr_mr *mr, uint64_t off, size_t len)
{
	size_t i;

	for (i = 0; i < mr->iov_count; i++) {
		if (off < mr->iov[i].iov_len) {
			if (len > mr->iov[i].iov_len - off)
				return NULL;
			return (char *)mr->iov[i].iov_base + off;
		}
		off -= mr->iov[i].iov_len;
	}
	return NULL;
}

static bool same_auth(const struct hmr_mr *mr, const void *key, size_t size)
{
	return size == mr->auth_key_size &&
	       (size == 0 || memcmp(key, mr->auth_key, size) == 0);
}

/* Under the read lock of key's shard. */
static int check(struct hmr_domain *d, struct hmr_shard *s,
                 const void *auth_key, size_t auth_key_size, uint64_t key,
                 uint64_t addr, size_t len, uint64_t access, void **ptr)
{
	struct hmr_mr *mr = hmr__keymap_find(&s->mrs, key);
	uint64_t off;
	void *p;

	if (!mr)
		return -FI_ENOKEY;
	if ((mr->flags & FI_MR_SINGLE_USE) && atomic_load(&mr->used))
		return -FI_ENOKEY;
	if (!mr->enabled || atomic_load(&mr->refreshing))
		return -FI_EOPBADSTATE;
	if (!(mr->access & access) || !same_auth(mr, auth_key, auth_key_size))
		return -FI_EACCES;
	off = hmr__virt_addr(d) ? addr - mr->base : addr;
	if (hmr__virt_addr(d) && addr < mr->base)
		return -FI_EFAULT;
	p = off < mr->len ? locate(mr, off, len) : NULL;
	if (!p)
		return -FI_EFAULT;
	/* The one access a single-use key allows: only one racer wins. */
	if ((mr->flags & FI_MR_SINGLE_USE) && atomic_exchange(&mr->used, true))
		return -FI_ENOKEY;
	hmr__mr_count_access(mr, access);
	*ptr = p;
	return 0;
}

int hmr_mr_access_auth(struct fid_domain *domain, const void *auth_key,
                       size_t auth_key_size, uint64_t key, uint64_t addr,
                       size_t len, uint64_t access, void **ptr)
{
	struct hmr_domain *d;
	struct hmr_shard *s;
	int ret = hmr__domain_usable(domain);

	if (ret)
		return ret;
	if (!ptr || !len ||
	    (access != FI_REMOTE_READ && access != FI_REMOTE_WRITE) ||
	    (auth_key_size && !auth_key))
		return -FI_EINVAL;
	d = hmr__domain(&domain->fid);
	s = hmr__shard(d, hmr__key_shard(key));
	pthread_rwlock_rdlock(&s->lock);
	ret = check(d, s, auth_key, auth_key_size, key, addr, len, access, ptr);
	pthread_rwlock_unlock(&s->lock);
	if (ret && hmr__log_enabled(HMR_LOG_DEBUG))
		hmr_dbg("key %#llx [%#llx, +%zu) access 0x%llx: %d",
		        (unsigned long long)key, (unsigned long long)addr, len,
		        (unsigned long long)access, ret);
	return ret;
}

int hmr_mr_access(struct fid_domain *domain, uint64_t key, uint64_t addr,
                  size_t len, uint64_t access, void **ptr)
{
	struct hmr_domain *d;
	int ret = hmr__domain_usable(domain);

	if (ret)
		return ret;
	d = hmr__domain(&domain->fid);
	return hmr_mr_access_auth(domain, d->auth_key, d->attr.auth_key_size,
	                          key, addr, len, access, ptr);
}
