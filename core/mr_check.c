/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* mr_check.c: what fi_mr(3) and the domain's mode allow in a request. */
#include "base/range.h"
#include "base/host.h"
#include "base/log.h"
#include "core/mr_check.h"

#define HMR_KNOWN_ACCESS                                                       \
	(FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |             \
	 FI_REMOTE_WRITE | FI_COLLECTIVE)
#define HMR_KNOWN_FLAGS                                                        \
	(FI_RMA_EVENT | FI_RMA_PMEM | FI_HMEM_DEVICE_ONLY |                    \
	 FI_HMEM_HOST_ALLOC | FI_MR_DMABUF | FI_MR_SINGLE_USE | FI_AUTH_KEY)
#define HMR_HMEM_FLAGS (FI_HMEM_DEVICE_ONLY | FI_HMEM_HOST_ALLOC | FI_MR_DMABUF)

static int check_flags(const struct hmr_domain *d, uint64_t flags)
{
	uint64_t caps = d->attr.caps;

	if (flags & ~HMR_KNOWN_FLAGS) {
		hmr_warn("unknown registration flags 0x%llx",
		         (unsigned long long)(flags & ~HMR_KNOWN_FLAGS));
		return -FI_EBADFLAGS;
	}
	if ((flags & FI_RMA_EVENT) && !(caps & FI_RMA_EVENT)) {
		hmr_warn("FI_RMA_EVENT needs the FI_RMA_EVENT domain cap");
		return -FI_EBADFLAGS;
	}
	if ((flags & FI_RMA_PMEM) && !(caps & FI_RMA_PMEM)) {
		hmr_warn("FI_RMA_PMEM needs the FI_RMA_PMEM domain cap");
		return -FI_EBADFLAGS;
	}
	if ((flags & HMR_HMEM_FLAGS) && !(caps & FI_HMEM)) {
		hmr_warn("FI_HMEM_DEVICE_ONLY, FI_HMEM_HOST_ALLOC and "
		         "FI_MR_DMABUF need the FI_HMEM domain cap");
		return -FI_EBADFLAGS;
	}
	/* A NIC checks its own keys: hmr cannot spend one after one access,
	 * so a single-use key would silently stay usable. */
	if ((flags & FI_MR_SINGLE_USE) && d->registrar->provides_keys) {
		hmr_warn("FI_MR_SINGLE_USE: a %s domain's keys are checked by "
		         "the NIC, which cannot spend a key once",
		         hmr_domain_kind_name(d->attr.kind));
		return -FI_EBADFLAGS;
	}
	if (flags & FI_AUTH_KEY) {
		hmr_warn("FI_AUTH_KEY needs an FI_AV_AUTH_KEY domain; hmr has "
		         "none");
		return -FI_EBADFLAGS;
	}
	return 0;
}

static int check_access(const struct hmr_domain *d, uint64_t access)
{
	if (access & ~HMR_KNOWN_ACCESS) {
		hmr_warn("unknown access bits 0x%llx",
		         (unsigned long long)(access & ~HMR_KNOWN_ACCESS));
		return -FI_EINVAL;
	}
	if ((access & FI_COLLECTIVE) && !(d->attr.caps & FI_COLLECTIVE)) {
		hmr_warn("FI_COLLECTIVE access needs the FI_COLLECTIVE cap");
		return -FI_EINVAL;
	}
	return 0;
}

static int check_iovs(const struct hmr_domain *d, const struct iovec *iov,
                      size_t count)
{
	uint64_t total = 0;
	size_t i;

	if (!iov || count == 0 || count > d->attr.mr_iov_limit) {
		hmr_warn("iov %p with count %zu (mr_iov_limit %zu)",
		         (const void *)iov, count, d->attr.mr_iov_limit);
		return -FI_EINVAL;
	}
	for (i = 0; i < count; i++) {
		if (!iov[i].iov_base ||
		    !hmr__range_valid((uintptr_t)iov[i].iov_base,
		                      iov[i].iov_len)) {
			hmr_warn("iov[%zu] = {%p, %zu}: NULL, empty or "
			         "wrapping",
			         i, iov[i].iov_base, iov[i].iov_len);
			return -FI_EINVAL;
		}
		/* The region's length (offsets run over every iov) must
		 * itself be a length. */
		if (!hmr__range_end(total, iov[i].iov_len, &total)) {
			hmr_warn("iovs of more than 2^64 bytes in all");
			return -FI_EINVAL;
		}
	}
	return 0;
}

static int check_dmabuf(const struct fi_mr_attr *attr)
{
	const struct fi_mr_dmabuf *b = attr->dmabuf;

	if (!b || attr->base_mr || !hmr__range_valid(b->offset, b->len)) {
		hmr_warn("FI_MR_DMABUF: dmabuf %p empty or wrapping, or "
		         "base_mr set",
		         (const void *)b);
		return -FI_EINVAL;
	}
	if (b->fd < 0) {
		hmr_warn("FI_MR_DMABUF: fd %d", b->fd);
		return -FI_EBADF;
	}
	return 0;
}

int hmr__mr_check(struct hmr_domain *d, struct hmr_mr_req *req)
{
	const struct fi_mr_attr *attr = &req->attr;
	int ret;

	ret = check_flags(d, req->flags);
	if (!ret)
		ret = check_access(d, attr->access);
	if (ret)
		return ret;
	if (attr->offset) {
		hmr_warn("offset must be 0 (got %llu)",
		         (unsigned long long)attr->offset);
		return -FI_EINVAL;
	}
	/* A sub-MR inherits hmem_data and page_size: ignored there. */
	if (!attr->base_mr && (attr->hmem_data ||
	                       (attr->page_size &&
	                        !hmr__host_page_size_valid(attr->page_size)))) {
		hmr_warn("hmem_data must be NULL and page_size 0 or a page "
		         "size of this system (got %zu)",
		         attr->page_size);
		return -FI_EINVAL;
	}
	if (attr->auth_key_size > HMR_AUTH_KEY_MAX ||
	    (attr->auth_key_size && !attr->auth_key)) {
		hmr_warn("auth_key_size %zu (max %d) or NULL auth_key",
		         attr->auth_key_size, HMR_AUTH_KEY_MAX);
		return -FI_EINVAL;
	}
	if (req->flags & FI_MR_DMABUF)
		return check_dmabuf(attr);
	return check_iovs(d, attr->mr_iov, attr->iov_count);
}

/* Shared with fi_mr_refresh: [iov] lies inside one of the MR's iovs. */
bool hmr__mr_covers(const struct hmr_mr *mr, const struct iovec *v)
{
	size_t i;

	for (i = 0; i < mr->iov_count; i++) {
		if (hmr__range_inside((uintptr_t)v->iov_base, v->iov_len,
		                      (uintptr_t)mr->iov[i].iov_base,
		                      mr->iov[i].iov_len))
			return true;
	}
	return false;
}

/* Under the base's shard lock. */
static int check_sub_locked(const struct hmr_mr_req *req)
{
	const struct hmr_mr *base = req->base_mr;
	size_t i;

	if (base->mr_fid.fid.ops == &hmr__closed_ops) {
		hmr_warn("base_mr is closed");
		return -FI_EINVAL;
	}
	if (req->attr.access & ~base->access) {
		hmr_warn("sub-MR access 0x%llx exceeds its base's 0x%llx",
		         (unsigned long long)req->attr.access,
		         (unsigned long long)base->access);
		return -FI_EINVAL;
	}
	for (i = 0; i < req->attr.iov_count; i++) {
		if (!hmr__mr_covers(base, &req->attr.mr_iov[i])) {
			hmr_warn("sub-MR iov[%zu] is not inside its base", i);
			return -FI_EINVAL;
		}
	}
	return 0;
}

int hmr__mr_check_sub(struct hmr_domain *d, const struct hmr_mr_req *req)
{
	struct hmr_shard *s;
	int ret;

	if (req->base_mr->domain != d) {
		hmr_warn("base_mr belongs to another domain");
		return -FI_EINVAL;
	}
	s = hmr__shard(d, req->base_mr->shard);
	pthread_mutex_lock(&s->lock);
	ret = check_sub_locked(req);
	pthread_mutex_unlock(&s->lock);
	return ret;
}
