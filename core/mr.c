/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* mr.c: fi_mr_reg/regv/regattr, fi_close of an MR, and its control. */
#include <stdlib.h>
#include <string.h>

#include "hmem/hmem.h"
#include "base/alloc.h"
#include "base/host.h"
#include "base/log.h"
#include "core/shard.h"
#include "core/backed.h"
#include "core/mr_check.h"

static int mr_close(struct fid *fid);
static int mr_control(struct fid *fid, int command, void *arg);

static struct fi_ops mr_fi_ops = {
        .size = sizeof(struct fi_ops),
        .close = mr_close,
        .bind = hmr__mr_bind,
        .control = mr_control,
        .ops_open = hmr__fid_enosys_ops_open,
        .tostr = hmr__fid_enosys_tostr,
        .ops_set = hmr__fid_enosys_ops_set,
};

/* Free what a closed MR still holds; the shell itself stays. */
static void mr_free(struct hmr_mr *mr)
{
	if (mr->iov != &mr->iov_one)
		free(mr->iov);
	mr->iov = NULL;
	if (mr->binds)
		free(mr->binds);
	mr->binds = NULL;
}

/* Under s's lock: nfree changes only there (no read-modify-write). */
static void nfree_add_locked(struct hmr_shard *s, size_t n)
{
	atomic_store_explicit(
	        &s->nfree,
	        atomic_load_explicit(&s->nfree, memory_order_relaxed) + n,
	        memory_order_relaxed);
}

/* Under s's lock: a shell off the free list, or NULL. */
static struct hmr_mr *shell_pop_locked(struct hmr_shard *s)
{
	struct hmr_mr *mr = s->free;

	if (mr) {
		s->free = mr->next_free;
		nfree_add_locked(s, (size_t)-1);
	}
	return mr;
}

/* Under s's lock: a shell goes to the spare if that is empty (only this
 * lock's holder fills it), otherwise to the free list. */
static void shell_put_locked(struct hmr_shard *s, struct hmr_mr *mr)
{
	if (!atomic_load_explicit(&s->spare, memory_order_relaxed)) {
		atomic_store_explicit(&s->spare, mr, memory_order_release);
		return;
	}
	mr->next_free = s->free;
	s->free = mr;
	nfree_add_locked(s, 1);
}

/* Under s's lock, by a registration that took the spare: the next one's
 * from the free list, so a burst of registrations takes no extra lock. */
static void spare_refill_locked(struct hmr_shard *s)
{
	struct hmr_mr *mr;
	size_t off;

	if (!s->free || atomic_load_explicit(&s->spare, memory_order_relaxed))
		return;
	mr = shell_pop_locked(s);
	/* A shell off the free list is cold: mr_new clears this much. */
	for (off = 0; off < offsetof(struct hmr_mr, auth_key); off += 64)
		__builtin_prefetch((char *)mr + off, 1);
	atomic_store_explicit(&s->spare, mr, memory_order_release);
}

/*
 * A closed MR's shell for a new MR of shard s: the spare, taken without
 * the lock, else one from the free list, else NULL.  Shells are never
 * freed while the domain is open (domain.h: lock-free readers).
 */
static struct hmr_mr *shell_get(struct hmr_shard *s)
{
	struct hmr_mr *mr =
	        atomic_exchange_explicit(&s->spare, NULL, memory_order_acquire);

	if (mr || !atomic_load_explicit(&s->nfree, memory_order_relaxed))
		return mr;
	/* Changes nothing a reader looks at: no sequence change. */
	pthread_mutex_lock(&s->lock);
	mr = shell_pop_locked(s);
	spare_refill_locked(s);
	pthread_mutex_unlock(&s->lock);
	return mr;
}

/* A registration that failed: its MR was never published, but its shell
 * may have been (a reader may still hold it), so it goes back. */
static void mr_discard(struct hmr_domain *d, struct hmr_mr *mr)
{
	struct hmr_shard *s = hmr__shard(d, mr->shard);

	mr_free(mr);
	pthread_mutex_lock(&s->lock);
	shell_put_locked(s, mr);
	pthread_mutex_unlock(&s->lock);
}

/* A fresh MR holding a private copy of the request, in shard `shard`
 * (whose spare it reuses when there is one). */
static int mr_new(struct hmr_domain *d, const struct hmr_mr_req *req,
                  size_t shard, struct hmr_mr **out)
{
	const struct fi_mr_attr *a = &req->attr;
	size_t count = req->flags & FI_MR_DMABUF ? 1 : a->iov_count, i;
	struct hmr_mr *mr = shell_get(hmr__shard(d, shard));

	if (mr)
		memset(mr, 0, offsetof(struct hmr_mr, auth_key));
	else if (!(mr = hmr__calloc(1, sizeof(*mr))))
		return -FI_ENOMEM;
	mr->domain = d;
	mr->shard = (uint8_t)shard;
	mr->iov = count == 1 ? &mr->iov_one
	                     : hmr__calloc(count, sizeof(*mr->iov));
	if (!mr->iov) {
		mr_discard(d, mr);
		return -FI_ENOMEM;
	}
	mr->iov_count = count;
	if (req->flags & FI_MR_DMABUF) {
		/* The registrar maps the buffer and sets iov_base. */
		mr->iov[0].iov_len = a->dmabuf->len;
		mr->base = (uint64_t)(uintptr_t)a->dmabuf->base_addr +
		           a->dmabuf->offset;
	} else {
		if (count == 1)
			mr->iov[0] = a->mr_iov[0];
		else
			memcpy(mr->iov, a->mr_iov, count * sizeof(*mr->iov));
		mr->base = (uint64_t)(uintptr_t)mr->iov[0].iov_base;
	}
	for (i = 0; i < count; i++)
		mr->len += mr->iov[i].iov_len;
	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = a->context;
	mr->mr_fid.fid.ops = &mr_fi_ops;
	mr->mr_fid.mem_desc = mr;
	mr->access = a->access;
	mr->flags = req->flags;
	mr->base_mr = req->base_mr;
	if (req->base_mr) {
		/* Inherited from the base; the request's values are ignored. */
		mr->iface = req->base_mr->iface;
		mr->device = req->base_mr->device;
		mr->hmem_flags = req->base_mr->hmem_flags;
	}
	/* Otherwise iface and device come from hmr__hmem_resolve.  page_size
	 * and sub_mr_cnt are hints (checked, then not needed). */
	/* Created disabled: every MR under FI_MR_ENDPOINT, and those that
	 * will count RMA events under FI_MR_RMA_EVENT. */
	mr->created_disabled =
	        (d->mr_mode & FI_MR_ENDPOINT) ||
	        ((d->mr_mode & FI_MR_RMA_EVENT) && (req->flags & FI_RMA_EVENT));
	mr->enabled = !mr->created_disabled;
	if (a->auth_key_size) {
		mr->auth_key_size = a->auth_key_size;
		memcpy(mr->auth_key, a->auth_key, a->auth_key_size);
	} else if (d->attr.auth_key_size) {
		mr->auth_key_size = d->attr.auth_key_size;
		memcpy(mr->auth_key, d->auth_key, d->attr.auth_key_size);
	}
	*out = mr;
	return 0;
}

/* FI_MR_PROV_KEY, under shard i's lock: the shard's next free key
 * (i, i + HMR_SHARDS, ... up to key_max), skipping live ones.  Keys
 * advance monotonically so a closed MR's key is not reissued until the
 * shard's keys wrap.  -FI_ENOSPC when the shard has none left. */
static int alloc_key(struct hmr_domain *d, size_t i, uint64_t *key)
{
	struct hmr_shard *s = hmr__shard(d, i);
	uint64_t tries, n = (d->key_max - i) / HMR_SHARDS + 1;

	for (tries = 0; tries < n; tries++) {
		uint64_t k = s->next_key;

		s->next_key = k > d->key_max - HMR_SHARDS ? i : k + HMR_SHARDS;
		if (!hmr__keymap_find(&s->mrs, k)) {
			*key = k;
			return 0;
		}
	}
	return -FI_ENOSPC;
}

static int requested_key_ok(struct hmr_domain *d, uint64_t key)
{
	if (key > d->key_max) {
		hmr_warn("requested key %#llx does not fit in %zu bytes",
		         (unsigned long long)key, d->attr.mr_key_size);
		return -FI_EKEYREJECTED;
	}
	return 0;
}

/* Under the write locks of shard i and of the base's shard: give the MR
 * its key in shard i and make it visible. */
static int publish_locked(struct hmr_domain *d, size_t i, struct hmr_mr *mr,
                          uint64_t requested_key)
{
	struct hmr_shard *s = hmr__shard(d, i);
	int ret;

	if (!hmr__prov_key(d)) {
		/* A key mapped from a peer's raw key names the peer's region
		 * in this domain's key space too. */
		if (s->mapped_count &&
		    hmr__keymap_find(&s->mapped, requested_key)) {
			hmr_info("key %#llx is in use by a mapped raw key",
			         (unsigned long long)requested_key);
			return -FI_ENOKEY;
		}
		mr->key = requested_key;
	} else if (!d->registrar->provides_keys) {
		ret = alloc_key(d, i, &mr->key);
		if (ret)
			return ret;
	}
	if (mr->base_mr && mr->base_mr->mr_fid.fid.ops == &hmr__closed_ops) {
		hmr_warn("base_mr was closed during registration");
		return -FI_EINVAL;
	}
	/* Keys a NIC makes are checked by the NIC: only the software
	 * domain's keys are looked up here (hmr_mr_access).  (A NIC's
	 * local-only MRs may even share an rkey: rxe gives them all 0.) */
	mr->in_keymap = !d->registrar->provides_keys;
	ret = mr->in_keymap ? hmr__keymap_insert(&s->mrs, mr->key, mr) : 0;
	if (ret) {
		if (ret == -FI_ENOKEY)
			hmr_info("key %#llx is in use",
			         (unsigned long long)mr->key);
		return ret;
	}
	if (mr->base_mr)
		atomic_fetch_add(&mr->base_mr->sub_count, 1);
	mr->shard = (uint8_t)i;
	s->mr_count++;
	spare_refill_locked(s);
	return 0;
}

/*
 * Publish the MR in the shard `first` (its requested key's, or this
 * thread's), locked together with its base's shard.  Provider keys that
 * this shard has run out of are looked for in the next shards.
 */
static int mr_publish(struct hmr_domain *d, struct hmr_mr *mr, size_t first,
                      uint64_t requested_key)
{
	bool roam = hmr__prov_key(d) && !d->registrar->provides_keys;
	size_t k, i, b;
	int ret = -FI_ENOSPC;

	for (k = 0; k < (roam ? HMR_SHARDS : 1) && ret == -FI_ENOSPC; k++) {
		i = (first + k) % HMR_SHARDS;
		b = mr->base_mr ? mr->base_mr->shard : i;
		hmr__shard_wrlock_pair(d, i, b);
		ret = publish_locked(d, i, mr, requested_key);
		hmr__shard_unlock_pair(d, i, b);
	}
	if (ret == -FI_ENOSPC)
		hmr_warn("all %llu keys of %zu bytes are in use",
		         (unsigned long long)d->key_max + 1,
		         d->attr.mr_key_size);
	return ret;
}

/* The device the caller named, read from the union member of its iface:
 * CUDA, Level Zero, Neuron and SynapseAI name devices with an int, and a
 * caller that set only that int in a struct it did not zero leaves
 * garbage in the other bytes of the 64-bit `reserved`. */
/*
 * A domain without FI_HMEM registers every address as host memory, and a
 * peer's access through the software domain would dereference it.  Where
 * hmr already knows the address is device memory the CPU cannot reach
 * (the memtype cache: an FI_HMEM domain or hmr_hmem_query classified it),
 * the registration is refused; memory hmr never saw is not looked up
 * (that would call a vendor runtime on every registration of host
 * memory).  doc/software-domain.md.
 */
static int refuse_known_device(const struct hmr_mr *mr)
{
	struct hmr_hmem_info info;

	if (!hmr__memtype_device_at(mr->iov, mr->iov_count, &info))
		return 0;
	hmr_warn("fi_mr_reg: the range at %p is %s device memory (device "
	         "%llu), and this domain was opened without FI_HMEM, so it "
	         "would be registered as host memory; open the domain with "
	         "FI_HMEM (and give fi_mr_attr.iface)",
	         mr->iov[0].iov_base, hmr_hmem_iface_name(info.iface),
	         (unsigned long long)info.device);
	return -FI_EINVAL;
}

static uint64_t device_hint(const struct fi_mr_attr *a)
{
	switch (a->iface) {
	case FI_HMEM_CUDA:
		return (uint64_t)(int64_t)a->device.cuda;
	case FI_HMEM_ZE:
		return (uint64_t)(int64_t)a->device.ze;
	case FI_HMEM_NEURON:
		return (uint64_t)(int64_t)a->device.neuron;
	case FI_HMEM_SYNAPSEAI:
		return (uint64_t)(int64_t)a->device.synapseai;
	default:
		return a->device.reserved;
	}
}

static int mr_register(struct hmr_domain *d, struct hmr_mr_req *req,
                       struct fid_mr **out)
{
	struct hmr_mr *mr;
	size_t shard;
	int ret;

	if (!out)
		return -FI_EINVAL;
	*out = NULL;
	ret = hmr__mr_check(d, req);
	if (ret)
		return ret;
	if (!hmr__prov_key(d)) {
		ret = requested_key_ok(d, req->attr.requested_key);
		if (ret)
			return ret;
	}
	if (req->base_mr) {
		ret = hmr__mr_check_sub(d, req);
		if (ret)
			return ret;
	}
	shard = hmr__prov_key(d) ? hmr__thread_shard()
	                         : hmr__key_shard(d, req->attr.requested_key);
	if (!hmr__prov_key(d))
		hmr__keymap_prefetch(&hmr__shard(d, shard)->mrs,
		                     req->attr.requested_key);
	ret = mr_new(d, req, shard, &mr);
	if (ret)
		return ret;
	if ((d->attr.caps & FI_HMEM) && !req->base_mr &&
	    !(req->flags & FI_MR_DMABUF)) {
		struct hmr_hmem_info info;

		ret = hmr__hmem_resolve(req->attr.iface,
		                        device_hint(&req->attr), mr->iov,
		                        mr->iov_count, req->flags, &info);
		if (ret)
			goto err_free;
		mr->iface = info.iface;
		mr->device = info.device;
		mr->hmem_flags = info.flags;
	} else if (req->flags & FI_MR_DMABUF) {
		mr->iface = req->attr.iface;
		mr->device = device_hint(&req->attr);
	} else if (!req->base_mr) {
		ret = refuse_known_device(mr);
		if (ret)
			goto err_free;
	}
	/* Sub-MRs too: the base's pages may have been unmapped since. */
	if (!(req->flags & FI_MR_DMABUF) && mr->iface == FI_HMEM_SYSTEM &&
	    hmr__allocated(d) && !d->registrar->checks_backing) {
		ret = hmr__backed(mr->iov, mr->iov_count);
		if (ret) {
			hmr_warn("FI_MR_ALLOCATED: the range is not backed");
			goto err_free;
		}
	}
	ret = d->registrar->reg(d, mr, req);
	if (ret)
		goto err_free;
	if (d->registrar->provides_keys && !mr->base_mr) {
		/* A NIC key on a plain MR: no key map or parent to update,
		 * only the count, so no lock on this common path. */
		atomic_fetch_add_explicit(&hmr__shard(d, shard)->nic_count, 1,
		                          memory_order_relaxed);
	} else {
		ret = mr_publish(d, mr, shard, req->attr.requested_key);
	}
	if (ret)
		goto err_dereg;
	mr->mr_fid.key = d->mr_mode & FI_MR_RAW ? FI_KEY_NOTAVAIL : mr->key;
	*out = &mr->mr_fid;
	return 0;

err_dereg:
	(void)d->registrar->dereg(d, mr); /* Nothing can be bound to it yet. */
err_free:
	mr_discard(d, mr);
	return ret;
}

/*
 * Copy the caller's fi_mr_attr, reading each field only if the caller's
 * API version has it (the versions: libfabric's fi_domain.h history, as
 * include/hmr/fi_mr.h lists them).  An older struct ends before the later
 * fields: reading them would read past the caller's object.
 */
static int attr_by_version(uint32_t v, const struct fi_mr_attr *in,
                           uint64_t flags, struct fi_mr_attr *out)
{
	out->mr_iov = in->mr_iov; /* The union: dmabuf from 1.20. */
	out->iov_count = in->iov_count;
	out->access = in->access;
	out->offset = in->offset;
	out->requested_key = in->requested_key;
	out->context = in->context;
	out->auth_key_size = in->auth_key_size;
	out->auth_key = in->auth_key;
	if (v >= FI_VERSION(1, 9)) {
		out->iface = in->iface;
		out->device = in->device;
	}
	if (v >= FI_VERSION(1, 19))
		out->hmem_data = in->hmem_data;
	if ((flags & FI_MR_DMABUF) && v < FI_VERSION(1, 20)) {
		hmr_warn("FI_MR_DMABUF needs API 1.20 (the caller's is %u.%u)",
		         FI_MAJOR(v), FI_MINOR(v));
		return -FI_EBADFLAGS;
	}
	if (v >= FI_VERSION(1, 22))
		out->page_size = in->page_size;
	if (v >= FI_VERSION(2, 0)) {
		out->base_mr = in->base_mr;
		out->sub_mr_cnt = in->sub_mr_cnt;
	}
	return 0;
}

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
                      uint64_t flags, struct fid_mr **mr)
{
	struct hmr_domain *d = hmr__domain(fid);
	struct hmr_mr_req req;
	int ret;

	if (mr)
		*mr = NULL;
	if (!attr)
		return -FI_EINVAL;
	memset(&req, 0, sizeof(req));
	ret = attr_by_version(d->attr.fi_version, attr, flags, &req.attr);
	if (ret)
		return ret;
	req.flags = flags;
	req.base_mr = (struct hmr_mr *)req.attr.base_mr;
	return mr_register(d, &req, mr);
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
                   uint64_t access, uint64_t offset, uint64_t requested_key,
                   uint64_t flags, struct fid_mr **mr, void *context)
{
	struct hmr_mr_req req;

	if (mr)
		*mr = NULL;
	memset(&req, 0, sizeof(req));
	req.attr.mr_iov = iov;
	req.attr.iov_count = count;
	req.attr.access = access;
	req.attr.offset = offset;
	req.attr.requested_key = requested_key;
	req.attr.context = context;
	req.flags = flags;
	if (flags & FI_MR_DMABUF) {
		hmr_warn("FI_MR_DMABUF needs fi_mr_regattr");
		return -FI_EINVAL;
	}
	return mr_register(hmr__domain(fid), &req, mr);
}

static int mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
                  uint64_t offset, uint64_t requested_key, uint64_t flags,
                  struct fid_mr **mr, void *context)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

	return mr_regv(fid, &iov, 1, access, offset, requested_key, flags, mr,
	               context);
}

struct fi_ops_mr hmr__mr_ops = {
        .size = sizeof(struct fi_ops_mr),
        .reg = mr_reg,
        .regv = mr_regv,
        .regattr = mr_regattr,
};

/* Under s's lock: keep the closed MR as an inert shell for a while (a
 * second fi_close then returns -FI_EBADF); the ring's oldest shell is
 * pushed out for reuse. */
static void mr_retire_locked(struct hmr_shard *s, struct hmr_mr *mr)
{
	size_t slot = s->shell_next++ % HMR_MR_SHELLS;
	struct hmr_mr *old = s->shells[slot];

	s->shells[slot] = mr;
	if (old)
		shell_put_locked(s, old);
	/* The next close here pushes that one out: it has been cold for
	 * HMR_MR_SHELLS closes, and may go on the free list. */
	old = s->shells[s->shell_next % HMR_MR_SHELLS];
	if (old)
		__builtin_prefetch(&old->next_free, 1);
}

/* Under the MR's shard lock: what keeps the MR from closing, or what its
 * registrar's dereg refused. */
static int close_locked(struct hmr_domain *d, struct hmr_mr *mr)
{
	size_t subs = atomic_load(&mr->sub_count);
	int ret;

	if (subs || (mr->nbinds && hmr__mr_bound_busy(mr))) {
		hmr_warn("MR %#llx busy: %zu sub-MRs or an open bound "
		         "counter or endpoint",
		         (unsigned long long)mr->key, subs);
		return -FI_EBUSY;
	}
	ret = d->registrar->dereg(d, mr);
	if (ret)
		return ret;
	if (mr->in_keymap)
		hmr__keymap_remove(&hmr__shard(d, mr->shard)->mrs, mr->key);
	if (mr->base_mr)
		atomic_fetch_sub(&mr->base_mr->sub_count, 1);
	return 0;
}

static int mr_close(struct fid *fid)
{
	struct hmr_mr *mr = (struct hmr_mr *)fid;
	struct hmr_domain *d = mr->domain;
	struct hmr_shard *s = hmr__shard(d, mr->shard);
	bool published = mr->in_keymap || mr->base_mr;
	int ret;

	if (mr->in_keymap)
		hmr__keymap_prefetch(&s->mrs, mr->key);
	/*
	 * A NIC's MR that nothing refers to (no key map entry, no parent, no
	 * bindings, no sub-MRs) has no domain state but the count: its slow
	 * dereg runs outside the lock.  Binding to an MR or deriving a
	 * sub-MR from it while closing it is the caller's race, as in
	 * libfabric.  The registrar deregisters first: a NIC may refuse (a
	 * memory window still bound), and the MR then stays open and whole.
	 */
	if (!published && !mr->nbinds && !atomic_load(&mr->sub_count)) {
		ret = d->registrar->dereg(d, mr);
		if (ret)
			return ret;
		hmr__shard_lock(s);
	} else {
		hmr__shard_lock(s);
		ret = close_locked(d, mr);
		if (ret) {
			hmr__shard_unlock(s);
			return ret;
		}
	}
	if (published)
		s->mr_count--;
	else
		atomic_fetch_sub_explicit(&s->nic_count, 1,
		                          memory_order_relaxed);
	mr->mr_fid.fid.ops = &hmr__closed_ops;
	/* fi_mr_key and fi_mr_desc read fields: a closed MR names nothing. */
	mr->mr_fid.key = FI_KEY_NOTAVAIL;
	mr->mr_fid.mem_desc = NULL;
	/* Before the ring: once there, the shell is the lock's to reuse. */
	mr_free(mr);
	mr_retire_locked(s, mr);
	hmr__shard_unlock(s);
	return 0;
}

static int mr_control(struct fid *fid, int command, void *arg)
{
	struct hmr_mr *mr = (struct hmr_mr *)fid;

	switch (command) {
	case FI_ENABLE:
		return hmr__mr_enable(mr);
	case FI_GET_RAW_MR:
		return arg ? hmr__mr_raw_attr(mr, arg) : -FI_EINVAL;
	case FI_REFRESH:
		return arg ? hmr__mr_refresh(mr, arg) : -FI_EINVAL;
	default:
		return -FI_ENOSYS;
	}
}
