/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* model.c: domains, registrations and the access rule of the model. */
#include <string.h>

#include "model.h"

/* fi_mr(3) and doc/software-domain.md: what a registration may carry. */
#define KNOWN_ACCESS                                                           \
	(FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |             \
	 FI_REMOTE_WRITE | FI_COLLECTIVE)
#define KNOWN_FLAGS                                                            \
	(FI_RMA_EVENT | FI_RMA_PMEM | FI_HMEM_DEVICE_ONLY |                    \
	 FI_HMEM_HOST_ALLOC | FI_MR_DMABUF | FI_MR_SINGLE_USE | FI_AUTH_KEY)
#define HMEM_FLAGS (FI_HMEM_DEVICE_ONLY | FI_HMEM_HOST_ALLOC | FI_MR_DMABUF)
#define KNOWN_CAPS                                                             \
	(FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_COLLECTIVE | FI_READ |   \
	 FI_WRITE | FI_RECV | FI_SEND | FI_REMOTE_READ | FI_REMOTE_WRITE |     \
	 FI_HMEM | FI_RMA_EVENT | FI_RMA_PMEM)
#define KNOWN_MR_MODE                                                          \
	(FI_MR_LOCAL | FI_MR_RAW | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |         \
	 FI_MR_PROV_KEY | FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT |                 \
	 FI_MR_ENDPOINT | FI_MR_HMEM | FI_MR_COLLECTIVE)

/* [addr, addr + len) is a range: not empty and ending below 2^64 (a range
 * ending exactly at 2^64 overflows, STYLE.md "Ranges"). */
static bool range_ok(uint64_t addr, uint64_t len)
{
	return len && len <= UINT64_MAX - addr;
}

/* [a, a + alen) lies inside [b, b + blen); both are ranges. */
static bool range_inside(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a >= b && a - b <= blen && alen <= blen - (a - b);
}

/* The lengths add up to 2^64 or more. */
static bool oversized(const struct model_iov *iov, size_t count)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < count; i++) {
		if (iov[i].len > UINT64_MAX - total)
			return true;
		total += iov[i].len;
	}
	return false;
}

/* The effective mr_mode of a software domain (doc: "Opening"). */
static int effective_mr_mode(const struct hmr_domain_attr *a, uint64_t *mode)
{
	uint64_t req = a->mr_mode, keep = 0;

	if (req == FI_MR_BASIC) {
		*mode = FI_MR_BASIC;
		return 0;
	}
	if (req & (FI_MR_BASIC | FI_MR_SCALABLE)) {
		if (req != FI_MR_SCALABLE)
			return -FI_EINVAL; /* BASIC/SCALABLE must be alone. */
		req = 0;
	}
	if (a->flags & HMR_DOMAIN_EMULATE_MR_MODE) {
		keep = FI_MR_LOCAL | FI_MR_RAW | FI_MR_VIRT_ADDR |
		       FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_MMU_NOTIFY |
		       FI_MR_ENDPOINT;
		if (a->caps & FI_HMEM)
			keep |= FI_MR_HMEM;
		if (a->caps & FI_COLLECTIVE)
			keep |= FI_MR_COLLECTIVE;
		if (a->caps & FI_RMA_EVENT)
			keep |= FI_MR_RMA_EVENT;
	}
	*mode = req & KNOWN_MR_MODE & keep;
	return 0;
}

int model_domain_open(struct model *m, const struct hmr_domain_attr *attr,
                      const struct model_env *env)
{
	const size_t min = offsetof(struct hmr_domain_attr, mr_mode) +
	                   sizeof(attr->mr_mode);
	struct hmr_domain_attr a;
	int ret;

	memset(m, 0, sizeof(*m));
	if (env)
		m->env = *env;
	memset(&a, 0, sizeof(a));
	if (!attr) {
		a.mr_mode = HMR_MR_MODE_DEFAULT;
	} else {
		/* Only the fields that fit in attr->size are read. */
		if (attr->size < min)
			return -FI_EINVAL;
		memcpy(&a, attr,
		       attr->size < sizeof(a) ? attr->size : sizeof(a));
		/* A field is read only when all of it fits in size. */
#define CUT(f)                                                                 \
	if (offsetof(struct hmr_domain_attr, f) + sizeof(a.f) > attr->size)    \
	memset(&a.f, 0, sizeof(a.f))
		CUT(kind);
		CUT(fi_version);
		CUT(caps);
		CUT(mr_key_size);
		CUT(mr_iov_limit);
		CUT(flags);
		CUT(auth_key);
		CUT(auth_key_size);
		CUT(nic_name);
		CUT(pd);
		CUT(cache_max_size);
		CUT(cache_max_count);
#undef CUT
	}
	if (a.kind != HMR_DOMAIN_SOFTWARE && a.kind != HMR_DOMAIN_VERBS)
		return -FI_EINVAL;
	if ((a.caps & ~KNOWN_CAPS) || a.mr_key_size > 8 ||
	    a.mr_iov_limit > HMR_MR_IOV_LIMIT_MAX ||
	    a.auth_key_size > HMR_AUTH_KEY_MAX ||
	    (a.auth_key_size && !a.auth_key))
		return -FI_EINVAL;
	if (a.kind == HMR_DOMAIN_VERBS)
		return MODEL_UNKNOWN; /* Depends on the machine's NICs. */
	ret = effective_mr_mode(&a, &m->mr_mode);
	if (ret)
		return ret;
	m->software = true;
	m->caps = a.caps;
	if (!a.mr_key_size || a.mr_key_size == 8)
		m->key_max = UINT64_MAX - 1; /* FI_KEY_NOTAVAIL is no key. */
	else
		m->key_max = (1ULL << (8 * a.mr_key_size)) - 1;
	m->iov_limit =
	        a.mr_iov_limit ? a.mr_iov_limit : HMR_MR_IOV_LIMIT_DEFAULT;
	m->fi_version = a.fi_version ? a.fi_version : FI_VERSION(2, 1);
	m->auth_key_size = a.auth_key_size;
	if (a.auth_key_size)
		memcpy(m->auth_key, a.auth_key, a.auth_key_size);
	return 0;
}

bool model_virt_addr(const struct model *m)
{
	return (m->mr_mode & FI_MR_VIRT_ADDR) || m->mr_mode == FI_MR_BASIC;
}

bool model_allocated(const struct model *m)
{
	return (m->mr_mode & FI_MR_ALLOCATED) || m->mr_mode == FI_MR_BASIC;
}

bool model_prov_key(const struct model *m)
{
	return (m->mr_mode & FI_MR_PROV_KEY) || m->mr_mode == FI_MR_BASIC;
}

int model_domain_close(const struct model *m)
{
	size_t i;

	for (i = 0; i < MODEL_MAX_MRS; i++)
		if (m->mr[i].state == MODEL_LIVE)
			return -FI_EBUSY;
	for (i = 0; i < MODEL_MAX_RES; i++)
		if (m->res[i].used && m->res[i].open)
			return -FI_EBUSY;
	return m->nmapped ? -FI_EBUSY : 0;
}

int model_find_key(const struct model *m, uint64_t key)
{
	int i;

	for (i = 0; i < MODEL_MAX_MRS; i++)
		if (m->mr[i].state == MODEL_LIVE && m->mr[i].key == key)
			return i;
	return -1;
}

static bool key_mapped(const struct model *m, uint64_t key)
{
	size_t i;

	for (i = 0; i < m->nmapped; i++)
		if (m->mapped[i].key == key)
			return true;
	return false;
}

/* struct fi_mr_attr grew one release at a time (hmr.h, fi_version): a
 * field the caller's API version does not have is taken as 0. */
static bool has_field(const struct model *m, const struct model_req *r,
                      uint32_t since)
{
	return r->api == MODEL_REGATTR && m->fi_version >= since;
}

bool model_sub_req(const struct model *m, const struct model_req *r)
{
	return has_field(m, r, FI_VERSION(2, 0)) && r->base != -1;
}

static int check_flags_access(const struct model *m, const struct model_req *r)
{
	if ((r->flags & ~KNOWN_FLAGS) || (r->flags & FI_AUTH_KEY))
		return -FI_EBADFLAGS;
	if ((r->flags & FI_RMA_EVENT) && !(m->caps & FI_RMA_EVENT))
		return -FI_EBADFLAGS;
	if ((r->flags & FI_RMA_PMEM) && !(m->caps & FI_RMA_PMEM))
		return -FI_EBADFLAGS;
	if ((r->flags & HMEM_FLAGS) && !(m->caps & FI_HMEM))
		return -FI_EBADFLAGS;
	if ((r->flags & FI_MR_DMABUF) &&
	    (r->api != MODEL_REGATTR || m->fi_version < FI_VERSION(1, 20)))
		return -FI_EINVAL; /* Needs fi_mr_regattr of API 1.20. */
	if (r->access & ~KNOWN_ACCESS)
		return -FI_EINVAL;
	if ((r->access & FI_COLLECTIVE) && !(m->caps & FI_COLLECTIVE))
		return -FI_EINVAL;
	return 0;
}

static int check_iovs(const struct model *m, const struct model_req *r)
{
	size_t i;

	if (r->iov_null || r->iov_count == 0 || r->iov_count > m->iov_limit ||
	    r->iov_count > MODEL_MAX_IOV)
		return -FI_EINVAL;
	for (i = 0; i < r->iov_count; i++)
		if (!r->iov[i].addr || !range_ok(r->iov[i].addr, r->iov[i].len))
			return -FI_EINVAL;
	return 0;
}

/* A sub-MR: inside its base (each iov inside one base iov), no more
 * access than the base.  MODEL_UNKNOWN: the base is rogue, or an iov
 * lies across adjacent base iovs (inside the region, but in two). */
static int check_sub(const struct model *m, const struct model_req *r)
{
	const struct model_mr *b;
	size_t i, j;
	int ret = 0;

	if (r->base == MODEL_FOREIGN || m->mr[r->base].state != MODEL_LIVE)
		return -FI_EINVAL;
	b = &m->mr[r->base];
	if (b->rogue)
		return MODEL_UNKNOWN;
	if (r->access & ~b->access)
		return -FI_EINVAL;
	for (i = 0; i < r->iov_count; i++) {
		const struct model_iov *v = &r->iov[i];
		uint64_t covered = 0;
		bool one = false;

		for (j = 0; j < b->iov_count && !one; j++)
			one = range_inside(v->addr, v->len, b->iov[j].addr,
			                   b->iov[j].len);
		if (one)
			continue;
		/* Bytes of v that some base iov covers. */
		for (j = 0; j < b->iov_count; j++) {
			uint64_t s = v->addr > b->iov[j].addr ? v->addr
			                                      : b->iov[j].addr;
			uint64_t ve = v->addr + v->len - 1;
			uint64_t be = b->iov[j].addr + b->iov[j].len - 1;
			uint64_t e = ve < be ? ve : be;

			if (s <= e)
				covered += e - s + 1;
		}
		if (covered < v->len)
			return -FI_EINVAL;
		ret = MODEL_UNKNOWN;
	}
	return ret;
}

/* FI_HMEM domains: the memory is classified.  All of the driver's memory
 * is host memory: FI_HMEM_DEVICE_ONLY and FI_HMEM_HOST_ALLOC describe
 * other allocations (-FI_EINVAL); an iface hint other than the host's
 * depends on the backends present. */
static int check_hmem(const struct model *m, const struct model_req *r)
{
	if (r->flags & (FI_HMEM_DEVICE_ONLY | FI_HMEM_HOST_ALLOC))
		return -FI_EINVAL;
	if (has_field(m, r, FI_VERSION(1, 9)) && r->iface != FI_HMEM_SYSTEM)
		return MODEL_UNKNOWN;
	return 0;
}

static int check_key(const struct model *m, const struct model_req *r)
{
	if (model_prov_key(m))
		return 0;
	if (r->requested_key > m->key_max)
		return -FI_EKEYREJECTED;
	if (model_find_key(m, r->requested_key) >= 0 ||
	    key_mapped(m, r->requested_key))
		return -FI_ENOKEY;
	return 0;
}

int model_reg_check(const struct model *m, const struct model_req *r)
{
	bool sub = model_sub_req(m, r);
	bool hmem_data = has_field(m, r, FI_VERSION(1, 19)) && r->hmem_data;
	size_t page = has_field(m, r, FI_VERSION(1, 22)) ? r->page_size : 0;
	int ret;
	size_t i;

	if (r->out_null)
		return -FI_EINVAL;
	ret = check_flags_access(m, r);
	if (ret)
		return ret;
	if (r->offset)
		return -FI_EINVAL;
	/* A sub-MR inherits hmem_data and page_size: ignored there. */
	if (!sub &&
	    (hmem_data || (page && !m->env.page_size_ok(page, m->env.arg))))
		return -FI_EINVAL;
	if (r->api == MODEL_REGATTR && (r->auth_key_size > HMR_AUTH_KEY_MAX ||
	                                (r->auth_key_size && r->auth_null)))
		return -FI_EINVAL;
	if (r->flags & FI_MR_DMABUF)
		return MODEL_UNKNOWN; /* Not modelled: needs a dma-buf. */
	ret = check_iovs(m, r);
	if (!ret)
		ret = check_key(m, r);
	if (ret)
		return ret;
	if (sub)
		ret = check_sub(m, r);
	else if (m->caps & FI_HMEM)
		ret = check_hmem(m, r);
	/* FI_MR_ALLOCATED: every page must be backed (host memory). */
	for (i = 0; !sub && model_allocated(m) && i < r->iov_count; i++)
		if (!m->env.mapped(r->iov[i].addr, r->iov[i].len, m->env.arg))
			return -FI_EFAULT;
	/* iovs whose lengths add up to 2^64 or more: fi_mr(3) does not
	 * say; the region is refused or accepted with its length unsure. */
	if (!ret && oversized(r->iov, r->iov_count))
		return MODEL_UNKNOWN;
	return ret;
}

bool model_mr_key_ok(const struct model *m, const struct model_req *r,
                     uint64_t key)
{
	size_t i;

	if (!model_prov_key(m))
		return key == r->requested_key;
	/* Provider keys: fit in mr_key_size and unique among live MRs. */
	if (key > m->key_max || model_find_key(m, key) >= 0)
		return false;
	/* A closed MR's key is not handed out again until the key space
	 * wraps; it cannot have wrapped while fewer keys than the space
	 * holds were handed out or skipped (at most every live one). */
	if (m->nissued + MODEL_MAX_MRS > m->key_max)
		return true;
	for (i = 0; i < m->nissued; i++)
		if (m->issued[i] == key)
			return false;
	return true;
}

void model_reg_add(struct model *m, int id, const struct model_req *r,
                   uint64_t key, bool rogue)
{
	struct model_mr *mr = &m->mr[id];
	bool sub = model_sub_req(m, r) && r->base >= 0;

	memset(mr, 0, sizeof(*mr));
	mr->state = MODEL_LIVE;
	mr->rogue = rogue;
	mr->key = key;
	mr->access = r->access;
	mr->flags = r->flags;
	mr->iov_count =
	        r->iov_count < MODEL_MAX_IOV ? r->iov_count : MODEL_MAX_IOV;
	memcpy(mr->iov, r->iov, mr->iov_count * sizeof(mr->iov[0]));
	mr->oversized = oversized(mr->iov, mr->iov_count);
	if (model_prov_key(m) && m->nissued < MODEL_ISSUED)
		m->issued[m->nissued++] = key;
	mr->base = sub ? r->base : -1;
	if (sub)
		m->mr[r->base].subs++;
	/* Disabled until fi_mr_enable: every MR under FI_MR_ENDPOINT, and
	 * those registered with FI_RMA_EVENT under FI_MR_RMA_EVENT. */
	mr->created_disabled =
	        (m->mr_mode & FI_MR_ENDPOINT) ||
	        ((m->mr_mode & FI_MR_RMA_EVENT) && (r->flags & FI_RMA_EVENT));
	mr->enabled = !mr->created_disabled;
	/* auth_key_size 0 takes the domain's key. */
	if (r->api == MODEL_REGATTR && r->auth_key_size) {
		mr->auth_key_size = r->auth_key_size;
		memcpy(mr->auth_key, r->auth_key, r->auth_key_size);
	} else {
		mr->auth_key_size = m->auth_key_size;
		memcpy(mr->auth_key, m->auth_key, m->auth_key_size);
	}
}

uint64_t model_public_key(const struct model *m, int id)
{
	return (m->mr_mode & FI_MR_RAW) ? FI_KEY_NOTAVAIL : m->mr[id].key;
}

static bool same_auth(const struct model_mr *mr, const uint8_t *key,
                      size_t size)
{
	return size == mr->auth_key_size &&
	       (size == 0 || memcmp(key, mr->auth_key, size) == 0);
}

int model_access(const struct model *m, bool domain_auth, const uint8_t *auth,
                 size_t auth_size, uint64_t key, uint64_t addr, uint64_t len,
                 uint64_t access, uint64_t *ptr, int *id)
{
	const struct model_mr *mr;
	uint64_t off;
	size_t i;
	int k;

	if (domain_auth) {
		auth = m->auth_key;
		auth_size = m->auth_key_size;
	}
	if (!len || (access != FI_REMOTE_READ && access != FI_REMOTE_WRITE) ||
	    (auth_size && !auth))
		return -FI_EINVAL;
	k = model_find_key(m, key);
	if (k < 0 || m->mr[k].rogue)
		return -FI_ENOKEY;
	mr = &m->mr[k];
	if ((mr->flags & FI_MR_SINGLE_USE) && mr->used)
		return -FI_ENOKEY;
	if (!mr->enabled)
		return -FI_EOPBADSTATE;
	if (!(mr->access & access) || !same_auth(mr, auth, auth_size))
		return -FI_EACCES;
	/* Under FI_MR_VIRT_ADDR a peer names the virtual address of the
	 * first iov's first byte; otherwise offsets from 0, with the iovs
	 * one after another. */
	if (model_virt_addr(m) && addr < mr->iov[0].addr)
		return -FI_EFAULT;
	off = model_virt_addr(m) ? addr - mr->iov[0].addr : addr;
	for (i = 0; i < mr->iov_count; i++) {
		if (off < mr->iov[i].len) {
			if (len > mr->iov[i].len - off)
				return -FI_EFAULT; /* Past the iov's end. */
			*ptr = mr->iov[i].addr + off;
			*id = k;
			/* The library may refuse, but grant nowhere else. */
			return mr->oversized ? MODEL_UNKNOWN : 0;
		}
		off -= mr->iov[i].len;
	}
	return -FI_EFAULT;
}

void model_access_commit(struct model *m, int id, uint64_t access)
{
	struct model_mr *mr = &m->mr[id];
	size_t i;

	if (mr->flags & FI_MR_SINGLE_USE)
		mr->used = true;
	/* Every open counter bound for this kind of access counts it. */
	for (i = 0; i < mr->nbinds; i++) {
		struct model_res *r = &m->res[mr->binds[i].res];

		if (r->kind == MODEL_CNTR && r->open &&
		    (mr->binds[i].flags & access))
			r->count++;
	}
}
