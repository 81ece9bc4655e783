/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* access.c: hmr_mr_access, the target-side check of software RMA. */
#include "core/domain.h"
#include "base/log.h"

/*
 * A check reads the MR's state into a view first, then decides on the
 * view alone.  Without the lock (the common case) the view is read while
 * writers may run; it counts only if the shard's sequence count was even
 * and unchanged around the reading (domain.h: what keeps the memory
 * readable).  Each field is loaded once (volatile: no torn or repeated
 * load), so a copy is a copy, never read again after the count was
 * checked; and ThreadSanitizer, which cannot see that the count guards
 * them, does not look at these loads (UNSEEN: it still sees the atomics
 * and everything the check calls in other files).
 */
#define LOAD(x) HMR_READ_ONCE(x)
/* On every function of the check, so that the compiler may inline them
 * into one another (it does not mix sanitizer settings). */
#define UNSEEN __attribute__((no_sanitize("thread")))
/* What the unlocked check runs, inlined: a call is a tenth of it. */
#define HOT __attribute__((always_inline))

struct view {
	uint64_t flags;  /* Registration flags. */
	uint64_t access; /* FI_* access bits. */
	uint64_t base;
	size_t len;
	size_t iov_count;
	size_t nbinds;
	const struct iovec *iov; /* &one when iov_count is 1. */
	struct iovec one;
	bool enabled;
	bool refreshing;
	bool spent;     /* FI_MR_SINGLE_USE, used. */
	bool same_auth; /* The caller's auth key is the MR's. */
};

/* Where [off, off + len) of the region lies; NULL if it is outside or
 * spans iovs. */
UNSEEN static void *locate(const struct view *v, uint64_t off, size_t len)
{
	size_t i;

	for (i = 0; i < v->iov_count; i++) {
		if (off < v->iov[i].iov_len) {
			if (len > v->iov[i].iov_len - off)
				return NULL;
			return (char *)v->iov[i].iov_base + off;
		}
		off -= v->iov[i].iov_len;
	}
	return NULL;
}

/* Copy what decide() reads.  Unlocked, the MR may be changing: every
 * byte is read once, and auth_key_size is bounded before it indexes. */
HOT UNSEEN static inline void read_view(const struct hmr_mr *mr,
                                        const uint8_t *auth_key,
                                        size_t auth_key_size, struct view *v)
{
	size_t size = LOAD(mr->auth_key_size), i;

	v->flags = LOAD(mr->flags);
	v->access = LOAD(mr->access);
	v->base = LOAD(mr->base);
	v->len = LOAD(mr->len);
	v->iov_count = LOAD(mr->iov_count);
	v->nbinds = LOAD(mr->nbinds);
	v->one.iov_base = LOAD(mr->iov_one.iov_base);
	v->one.iov_len = LOAD(mr->iov_one.iov_len);
	v->iov = v->iov_count == 1 ? &v->one : LOAD(mr->iov);
	v->enabled = LOAD(mr->enabled);
	/* Atomics of the same size read plainly, as the rest: a relaxed
	 * atomic load would show ThreadSanitizer a race with a new MR's
	 * memset that the count makes harmless. */
	_Static_assert(sizeof(mr->refreshing) == sizeof(int) &&
	                       sizeof(mr->used) == sizeof(bool),
	               "plain views of refreshing and used");
	v->refreshing = *(const volatile int *)&mr->refreshing != 0;
	v->spent = (v->flags & FI_MR_SINGLE_USE) &&
	           *(const volatile bool *)&mr->used;
	v->same_auth = auth_key_size == size && size <= HMR_AUTH_KEY_MAX;
	for (i = 0; v->same_auth && i < auth_key_size; i++)
		v->same_auth = LOAD(mr->auth_key[i]) == auth_key[i];
}

HOT UNSEEN static inline int decide(const struct hmr_domain *d,
                                    const struct view *v, uint64_t addr,
                                    size_t len, uint64_t access, void **ptr)
{
	uint64_t off;
	void *p;

	if (v->spent)
		return -FI_ENOKEY;
	if (!v->enabled || v->refreshing)
		return -FI_EOPBADSTATE;
	if (!(v->access & access) || !v->same_auth)
		return -FI_EACCES;
	off = hmr__virt_addr(d) ? addr - v->base : addr;
	if (hmr__virt_addr(d) && addr < v->base)
		return -FI_EFAULT;
	p = off < v->len ? locate(v, off, len) : NULL;
	if (!p)
		return -FI_EFAULT;
	*ptr = p;
	return 0;
}

/* Under the lock of key's shard: the check, and what an access changes
 * (a single-use key spent, bound counters counted). */
UNSEEN static int check_locked(struct hmr_domain *d, struct hmr_shard *s,
                               const void *auth_key, size_t auth_key_size,
                               uint64_t key, uint64_t addr, size_t len,
                               uint64_t access, void **ptr)
{
	struct hmr_mr *mr = hmr__keymap_find(&s->mrs, key);
	struct view v;
	int ret;

	if (!mr)
		return -FI_ENOKEY;
	read_view(mr, auth_key, auth_key_size, &v);
	ret = decide(d, &v, addr, len, access, ptr);
	if (ret)
		return ret;
	/* The one access a single-use key allows: only one racer wins. */
	if ((v.flags & FI_MR_SINGLE_USE) && atomic_exchange(&mr->used, true))
		return -FI_ENOKEY;
	hmr__mr_count_access(mr, access);
	return 0;
}

/* Without the lock: 1 with the answer in *ret, or 0 when only the locked
 * check can tell (a writer ran, or the access changes the MR's state). */
UNSEEN static int check_unlocked(struct hmr_domain *d, struct hmr_shard *s,
                                 const void *auth_key, size_t auth_key_size,
                                 uint64_t key, uint64_t addr, size_t len,
                                 uint64_t access, void **ptr, int *ret)
{
	unsigned long seq = atomic_load_explicit(&s->seq, memory_order_acquire);
	struct hmr_mr *mr;
	struct view v;

	if (seq & 1)
		return 0;
	mr = hmr__keymap_find_racy(&s->mrs, key);
	if (mr)
		read_view(mr, auth_key, auth_key_size, &v);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq)
		return 0;
	if (!mr) {
		*ret = -FI_ENOKEY;
		return 1;
	}
	/* Multiple iovs live outside the MR, and may be freed under us. */
	if ((v.flags & FI_MR_SINGLE_USE) || v.nbinds || v.iov_count != 1)
		return 0;
	*ret = decide(d, &v, addr, len, access, ptr);
	return 1;
}

UNSEEN static int access_auth(struct hmr_domain *d, const void *auth_key,
                              size_t auth_key_size, uint64_t key, uint64_t addr,
                              size_t len, uint64_t access, void **ptr)
{
	struct hmr_shard *s;
	int ret;

	if (!ptr || !len ||
	    (access != FI_REMOTE_READ && access != FI_REMOTE_WRITE) ||
	    (auth_key_size && !auth_key))
		return -FI_EINVAL;
	s = hmr__shard(d, hmr__key_shard(d, key));
	if (!check_unlocked(d, s, auth_key, auth_key_size, key, addr, len,
	                    access, ptr, &ret)) {
		/* Readers change nothing a lock-free reader reads: the
		 * plain mutex, no sequence change. */
		pthread_mutex_lock(&s->lock);
		ret = check_locked(d, s, auth_key, auth_key_size, key, addr,
		                   len, access, ptr);
		pthread_mutex_unlock(&s->lock);
	}
	if (ret && hmr__log_enabled(HMR_LOG_DEBUG))
		hmr_dbg("key %#llx [%#llx, +%zu) access 0x%llx: %d",
		        (unsigned long long)key, (unsigned long long)addr, len,
		        (unsigned long long)access, ret);
	return ret;
}

int hmr_mr_access_auth(struct fid_domain *domain, const void *auth_key,
                       size_t auth_key_size, uint64_t key, uint64_t addr,
                       size_t len, uint64_t access, void **ptr)
{
	int ret = hmr__domain_usable(domain);

	if (ret)
		return ret;
	return access_auth(hmr__domain(&domain->fid), auth_key, auth_key_size,
	                   key, addr, len, access, ptr);
}

int hmr_mr_access(struct fid_domain *domain, uint64_t key, uint64_t addr,
                  size_t len, uint64_t access, void **ptr)
{
	struct hmr_domain *d;
	int ret = hmr__domain_usable(domain);

	if (ret)
		return ret;
	d = hmr__domain(&domain->fid);
	return access_auth(d, d->auth_key, d->attr.auth_key_size, key, addr,
	                   len, access, ptr);
}
