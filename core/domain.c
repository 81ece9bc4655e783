/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* domain.c: opening and closing domains, their mr_mode, and their ops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "base/alloc.h"
#include "base/ops.h"
#include "core/domain.h"
#include "core/shard.h"
#include "base/log.h"

#define HMR_KNOWN_CAPS                                                         \
	(FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_COLLECTIVE | FI_READ |   \
	 FI_WRITE | FI_RECV | FI_SEND | FI_REMOTE_READ | FI_REMOTE_WRITE |     \
	 FI_HMEM | FI_RMA_EVENT | FI_RMA_PMEM)
#define HMR_KNOWN_MR_MODE                                                      \
	(FI_MR_LOCAL | FI_MR_RAW | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |         \
	 FI_MR_PROV_KEY | FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT |                 \
	 FI_MR_ENDPOINT | FI_MR_HMEM | FI_MR_COLLECTIVE)
#define HMR_BASIC_MODE (FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)

/*
 * Closed domains stay as inert shells (every call -FI_EBADF) for the next
 * HMR_DOMAIN_SHELLS closes in the process, then are freed: a call through
 * a handle closed longer ago than that is undefined, as in libfabric, but
 * memory stays bounded however many domains a program opens.
 */
static pthread_mutex_t shells_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hmr_domain *shells[HMR_DOMAIN_SHELLS]; /* (shells_lock) */
static size_t shell_next;                            /* (shells_lock) */

__attribute__((destructor)) static void free_domain_shells(void)
{
	size_t i;

	pthread_mutex_lock(&shells_lock);
	for (i = 0; i < HMR_DOMAIN_SHELLS; i++) {
		free(shells[i]);
		shells[i] = NULL;
	}
	pthread_mutex_unlock(&shells_lock);
}

static void retire(struct hmr_domain *d)
{
	struct hmr_domain *oldest;

	d->domain_fid.fid.ops = &hmr__closed_ops;
	d->domain_fid.ops = &hmr__closed_domain_ops;
	d->domain_fid.mr = &hmr__closed_mr_ops;
	pthread_mutex_lock(&shells_lock);
	oldest = shells[shell_next];
	shells[shell_next] = d;
	shell_next = (shell_next + 1) % HMR_DOMAIN_SHELLS;
	pthread_mutex_unlock(&shells_lock);
	free(oldest);
}

static uint64_t random64(void)
{
	uint64_t v;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	/* No entropy yet (early boot): keys need uniqueness, not secrecy,
	 * and the raw-key check only guards against mistakes. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^
	       (uint64_t)(uintptr_t)&v;
}

/* Each kind's table with its NULL slots filled from the stubs, so core/
 * never tests a slot for NULL.  Written once under merge_once. */
static pthread_once_t merge_once = PTHREAD_ONCE_INIT;
static struct hmr_registrar_ops merged[HMR_DOMAIN_VERBS + 1];

HMR_OPS_CHECK(struct hmr_registrar_ops, probe, HMR_REGISTRAR_SLOTS);

static void merge(struct hmr_registrar_ops *m,
                  const struct hmr_registrar_ops *r)
{
	HMR_OPS_MERGE(HMR_REGISTRAR_SLOTS, m, r, &hmr__registrar_stubs);
}

static void merge_kinds(void)
{
	merge(&merged[HMR_DOMAIN_SOFTWARE], &hmr__software_registrar);
	merge(&merged[HMR_DOMAIN_VERBS], &hmr__verbs_registrar);
}

static const struct hmr_registrar_ops *registrar_of(enum hmr_domain_kind k)
{
	if (k != HMR_DOMAIN_SOFTWARE && k != HMR_DOMAIN_VERBS)
		return NULL;
	pthread_once(&merge_once, merge_kinds);
	return &merged[k];
}

const char *hmr_domain_kind_name(enum hmr_domain_kind kind)
{
	switch (kind) {
	case HMR_DOMAIN_SOFTWARE:
		return "software";
	case HMR_DOMAIN_VERBS:
		return "verbs";
	}
	return "unknown";
}

int hmr_domain_probe(enum hmr_domain_kind kind, char *why, size_t why_len)
{
	const struct hmr_registrar_ops *r = registrar_of(kind);
	char unused[8];

	if (!why || !why_len) {
		why = unused;
		why_len = sizeof(unused);
	}
	why[0] = '\0';
	if (!r) {
		snprintf(why, why_len, "unknown domain kind %d", (int)kind);
		return -FI_EINVAL;
	}
	return r->probe(why, why_len);
}

/* The effective mr_mode, as fi_getinfo reports it. */
static int effective_mr_mode(const struct hmr_domain_attr *attr,
                             const struct hmr_registrar_ops *r, uint64_t needed,
                             uint64_t *mr_mode)
{
	uint64_t req = attr->mr_mode, keep;

	if (req == FI_MR_BASIC) {
		*mr_mode = FI_MR_BASIC;
		return 0;
	}
	if (req & (FI_MR_BASIC | FI_MR_SCALABLE)) {
		if (req != FI_MR_SCALABLE) {
			hmr_warn("FI_MR_BASIC/FI_MR_SCALABLE must be used "
			         "alone (mr_mode 0x%llx)",
			         (unsigned long long)req);
			return -FI_EINVAL;
		}
		req = 0;
	}
	req &= HMR_KNOWN_MR_MODE;
	keep = needed;
	if (attr->flags & HMR_DOMAIN_EMULATE_MR_MODE)
		keep |= r->supported_mr_mode;
	/* These bits belong to a capability: without it they mean nothing. */
	if (!(attr->caps & FI_HMEM))
		keep &= ~(uint64_t)FI_MR_HMEM, needed &= ~(uint64_t)FI_MR_HMEM;
	if (!(attr->caps & FI_COLLECTIVE))
		keep &= ~(uint64_t)FI_MR_COLLECTIVE;
	if (!(attr->caps & FI_RMA_EVENT))
		keep &= ~(uint64_t)FI_MR_RMA_EVENT;
	needed &= ~(uint64_t)(FI_MR_COLLECTIVE | FI_MR_RMA_EVENT);
	if (needed & ~req) {
		hmr_info("%s domain needs mr_mode 0x%llx, caller offers 0x%llx",
		         hmr_domain_kind_name(attr->kind),
		         (unsigned long long)needed, (unsigned long long)req);
		return -FI_ENODATA;
	}
	*mr_mode = req & keep;
	return 0;
}

/* The bytes of hmr_domain_attr to read for a caller's `size`: whole
 * fields only.  A size that ends inside a field (no release of the struct
 * ever ended there) must not leave half of it read: half of auth_key_size
 * is a different length for the caller's auth key buffer. */
#define ATTR_END(f)                                                            \
	(offsetof(struct hmr_domain_attr, f) +                                 \
	 sizeof(((struct hmr_domain_attr *)0)->f))
static size_t whole_fields(size_t size)
{
	static const size_t ends[] = {
	        ATTR_END(size),           ATTR_END(kind),
	        ATTR_END(fi_version),     ATTR_END(mr_mode),
	        ATTR_END(caps),           ATTR_END(mr_key_size),
	        ATTR_END(mr_iov_limit),   ATTR_END(flags),
	        ATTR_END(auth_key),       ATTR_END(auth_key_size),
	        ATTR_END(nic_name),       ATTR_END(pd),
	        ATTR_END(cache_max_size), ATTR_END(cache_max_count),
	};
	size_t i, n = 0;

	_Static_assert(ATTR_END(cache_max_count) ==
	                       sizeof(struct hmr_domain_attr),
	               "a field added to hmr_domain_attr goes in ends[]");
	for (i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (ends[i] <= size)
			n = ends[i];
	return n;
}

static int check_attr(const struct hmr_domain_attr *in,
                      struct hmr_domain_attr *out)
{
	size_t min =
	        offsetof(struct hmr_domain_attr, mr_mode) + sizeof(in->mr_mode);

	memset(out, 0, sizeof(*out));
	if (!in) {
		out->mr_mode = HMR_MR_MODE_DEFAULT;
	} else if (in->size < min) {
		hmr_warn("hmr_domain_attr.size %zu is too small", in->size);
		return -FI_EINVAL;
	} else {
		memcpy(out, in, whole_fields(in->size));
	}
	out->size = sizeof(*out);
	if (out->caps & ~HMR_KNOWN_CAPS) {
		hmr_warn("unknown caps 0x%llx",
		         (unsigned long long)(out->caps & ~HMR_KNOWN_CAPS));
		return -FI_EINVAL;
	}
	if (out->mr_key_size > 8 || out->mr_iov_limit > HMR_MR_IOV_LIMIT_MAX ||
	    out->auth_key_size > HMR_AUTH_KEY_MAX ||
	    (out->auth_key_size && !out->auth_key)) {
		hmr_warn("bad mr_key_size %zu, mr_iov_limit %zu or auth key",
		         out->mr_key_size, out->mr_iov_limit);
		return -FI_EINVAL;
	}
	if (!out->mr_key_size)
		out->mr_key_size = 8;
	if (!out->mr_iov_limit)
		out->mr_iov_limit = HMR_MR_IOV_LIMIT_DEFAULT;
	if (!out->fi_version)
		out->fi_version = FI_VERSION(2, 1);
	return 0;
}

static int domain_close(struct fid *fid)
{
	struct hmr_domain *d = hmr__domain(fid);
	struct hmr_bindable *b;
	size_t mrs, mapped;
	bool busy;

	hmr__shards_wrlock_all(d);
	hmr__shards_count(d, &mrs, &mapped);
	busy = mrs || mapped;
	pthread_mutex_lock(&d->bind_lock);
	for (b = d->bindables; b; b = b->next)
		busy = busy || atomic_load(&b->open);
	pthread_mutex_unlock(&d->bind_lock);
	hmr__shards_unlock_all(d);
	if (busy) {
		hmr_warn("domain busy: %zu MRs, %zu mapped keys, or an open "
		         "counter/endpoint",
		         mrs, mapped);
		return -FI_EBUSY;
	}
	d->registrar->close(d);
	hmr__domain_free_bindables(d);
	hmr__shards_fini(d);
	pthread_mutex_destroy(&d->bind_lock);
	retire(d);
	return 0;
}

static int domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid;
	(void)bfid;
	if (flags & FI_REG_MR)
		hmr_warn("asynchronous registration (FI_REG_MR) is deprecated "
		         "and not supported: registration is synchronous");
	return -FI_ENOSYS;
}

static int domain_control(struct fid *fid, int command, void *arg)
{
	struct hmr_domain *d = hmr__domain(fid);

	if (!arg)
		return -FI_EINVAL;
	switch (command) {
	case FI_MAP_RAW_MR:
		return hmr__domain_map_raw(d, arg);
	case FI_UNMAP_KEY:
		return hmr__domain_unmap_key(d, *(uint64_t *)arg);
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops domain_fi_ops = {
        .size = sizeof(struct fi_ops),
        .close = domain_close,
        .bind = domain_bind,
        .control = domain_control,
        .ops_open = hmr__fid_enosys_ops_open,
        .tostr = hmr__fid_enosys_tostr,
        .ops_set = hmr__fid_enosys_ops_set,
};

extern struct fi_ops_domain hmr__domain_enosys_ops;

int hmr_domain_open(const struct hmr_domain_attr *attr,
                    struct fid_domain **domain)
{
	const struct hmr_registrar_ops *r;
	struct hmr_domain *d;
	int ret;

	if (!domain)
		return -FI_EINVAL;
	*domain = NULL;
	d = hmr__calloc(1, sizeof(*d));
	if (!d)
		return -FI_ENOMEM;
	ret = check_attr(attr, &d->attr);
	if (ret)
		goto err_free;
	r = registrar_of(d->attr.kind);
	if (!r) {
		hmr_warn("unknown domain kind %d", (int)d->attr.kind);
		ret = -FI_EINVAL;
		goto err_free;
	}
	if (d->attr.auth_key_size)
		memcpy(d->auth_key, d->attr.auth_key, d->attr.auth_key_size);
	d->attr.auth_key = NULL; /* Ours is d->auth_key. */
	d->key_max = d->attr.mr_key_size == 8
	                     ? UINT64_MAX - 1 /* FI_KEY_NOTAVAIL is taken. */
	                     : (1ULL << (8 * d->attr.mr_key_size)) - 1;
	d->tag = random64();
	d->secret = random64();
	if (pthread_mutex_init(&d->bind_lock, NULL)) {
		ret = -FI_ENOMEM;
		goto err_free;
	}
	ret = hmr__shards_init(d, random64());
	if (ret)
		goto err_mutex;
	d->domain_fid.fid.fclass = FI_CLASS_DOMAIN;
	d->domain_fid.fid.ops = &domain_fi_ops;
	d->domain_fid.ops = &hmr__domain_enosys_ops;
	d->domain_fid.mr = &hmr__mr_ops;
	d->registrar = r;
	d->needed_mr_mode = r->needed_mr_mode;
	/* Open first: the device decides what it needs (ODP lifts
	 * FI_MR_ALLOCATED, for one). */
	ret = r->open(d);
	/* The caller's string is valid only during this call. */
	d->attr.nic_name = NULL;
	if (ret)
		goto err_shards;
	ret = effective_mr_mode(&d->attr, r, d->needed_mr_mode, &d->mr_mode);
	if (ret)
		goto err_registrar;
	*domain = &d->domain_fid;
	return 0;

err_registrar:
	r->close(d);
err_shards:
	hmr__shards_fini(d);
err_mutex:
	pthread_mutex_destroy(&d->bind_lock);
err_free:
	free(d);
	return ret;
}

int hmr_domain_mr_mode(struct fid_domain *domain, uint64_t *mr_mode)
{
	int ret = hmr__domain_usable(domain);

	if (ret || !mr_mode)
		return ret ? ret : -FI_EINVAL;
	*mr_mode = hmr__domain(&domain->fid)->mr_mode;
	return 0;
}

int hmr_domain_caps(struct fid_domain *domain, uint64_t *caps)
{
	int ret = hmr__domain_usable(domain);

	if (ret || !caps)
		return ret ? ret : -FI_EINVAL;
	*caps = hmr__domain(&domain->fid)->attr.caps;
	return 0;
}
