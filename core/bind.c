/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* bind.c: counters, endpoints, fi_mr_bind and fi_mr_enable. */
#include <stdlib.h>

#include "base/alloc.h"
#include "core/shard.h"
#include "base/log.h"

static struct fi_ops bindable_fi_ops;

/* The bindable behind a public counter or endpoint of hmr's, or NULL. */
static struct hmr_bindable *bindable_of(struct fid *fid)
{
	if (!fid || fid->ops != &bindable_fi_ops)
		return NULL;
	if (fid->fclass == FI_CLASS_CNTR)
		return &((struct hmr_cntr *)fid)->b;
	if (fid->fclass == FI_CLASS_EP)
		return &((struct hmr_ep *)fid)->b;
	return NULL;
}

static int bindable_close(struct fid *fid)
{
	struct hmr_bindable *b = bindable_of(fid);

	/* The object stays allocated until the domain closes: an MR still
	 * bound to it may look at `open`, and a second close must find the
	 * closed ops. */
	atomic_store(&b->open, false);
	fid->ops = &hmr__closed_ops;
	if (fid->fclass == FI_CLASS_CNTR)
		((struct hmr_cntr *)fid)->cntr_fid.ops = &hmr__closed_cntr_ops;
	return 0;
}

static struct fi_ops bindable_fi_ops = {
        .size = sizeof(struct fi_ops),
        .close = bindable_close,
        .bind = hmr__fid_enosys_bind,
        .control = hmr__fid_enosys_control,
        .ops_open = hmr__fid_enosys_ops_open,
        .tostr = hmr__fid_enosys_tostr,
        .ops_set = hmr__fid_enosys_ops_set,
};

static struct hmr_cntr *cntr_of(struct fid_cntr *c)
{
	return (struct hmr_cntr *)c; /* cntr_fid is the first member. */
}

static uint64_t cntr_read(struct fid_cntr *c)
{
	return atomic_load(&cntr_of(c)->value);
}

static uint64_t cntr_readerr(struct fid_cntr *c)
{
	return atomic_load(&cntr_of(c)->err);
}

static int cntr_add(struct fid_cntr *c, uint64_t v)
{
	atomic_fetch_add(&cntr_of(c)->value, v);
	return 0;
}

static int cntr_set(struct fid_cntr *c, uint64_t v)
{
	atomic_store(&cntr_of(c)->value, v);
	return 0;
}

static int cntr_wait(struct fid_cntr *c, uint64_t threshold, int timeout)
{
	(void)c, (void)threshold, (void)timeout;
	return -FI_ENOSYS; /* No wait objects in hmr. */
}

static int cntr_adderr(struct fid_cntr *c, uint64_t v)
{
	atomic_fetch_add(&cntr_of(c)->err, v);
	return 0;
}

static int cntr_seterr(struct fid_cntr *c, uint64_t v)
{
	atomic_store(&cntr_of(c)->err, v);
	return 0;
}

static struct fi_ops_cntr cntr_ops = {
        .size = sizeof(struct fi_ops_cntr),
        .read = cntr_read,
        .readerr = cntr_readerr,
        .add = cntr_add,
        .set = cntr_set,
        .wait = cntr_wait,
        .adderr = cntr_adderr,
        .seterr = cntr_seterr,
};

static void add_bindable(struct hmr_domain *d, struct hmr_bindable *b,
                         struct fid *fid, size_t fclass)
{
	b->fid = fid;
	b->domain = d;
	fid->fclass = fclass;
	fid->ops = &bindable_fi_ops;
	atomic_store(&b->open, true);
	pthread_mutex_lock(&d->bind_lock);
	b->next = d->bindables;
	d->bindables = b;
	pthread_mutex_unlock(&d->bind_lock);
}

int hmr_cntr_open(struct fid_domain *domain, struct fid_cntr **cntr)
{
	struct hmr_cntr *c;
	int ret = hmr__domain_usable(domain);

	if (ret || !cntr)
		return ret ? ret : -FI_EINVAL;
	c = hmr__calloc(1, sizeof(*c));
	if (!c)
		return -FI_ENOMEM;
	c->cntr_fid.ops = &cntr_ops;
	add_bindable(hmr__domain(&domain->fid), &c->b, &c->cntr_fid.fid,
	             FI_CLASS_CNTR);
	*cntr = &c->cntr_fid;
	return 0;
}

uint64_t hmr_cntr_read(struct fid_cntr *cntr)
{
	return cntr ? cntr->ops->read(cntr) : 0;
}

int hmr_ep_open(struct fid_domain *domain, struct fid **ep)
{
	struct hmr_ep *e;
	int ret = hmr__domain_usable(domain);

	if (ret || !ep)
		return ret ? ret : -FI_EINVAL;
	e = hmr__calloc(1, sizeof(*e));
	if (!e)
		return -FI_ENOMEM;
	add_bindable(hmr__domain(&domain->fid), &e->b, &e->fid, FI_CLASS_EP);
	*ep = &e->fid;
	return 0;
}

void hmr__domain_free_bindables(struct hmr_domain *d)
{
	struct hmr_bindable *b, *next;

	for (b = d->bindables; b; b = next) {
		next = b->next;
		free(b->fid); /* The public fid is the owner's first member. */
	}
	d->bindables = NULL;
}

bool hmr__mr_bound_busy(const struct hmr_mr *mr)
{
	size_t i;

	for (i = 0; i < mr->nbinds; i++) {
		if (atomic_load(&mr->binds[i].res->open))
			return true;
	}
	return false;
}

/* Under the MR's shard lock, from hmr_mr_access. */
void hmr__mr_count_access(struct hmr_mr *mr, uint64_t access)
{
	size_t i;

	for (i = 0; i < mr->nbinds; i++) {
		struct hmr_bindable *b = mr->binds[i].res;

		if (b->fid->fclass == FI_CLASS_CNTR &&
		    (mr->binds[i].flags & access) && atomic_load(&b->open))
			atomic_fetch_add(&((struct hmr_cntr *)b->fid)->value,
			                 1);
	}
}

static int check_bind_flags(const struct hmr_domain *d, const struct hmr_mr *mr,
                            const struct hmr_bindable *b, uint64_t flags)
{
	const uint64_t cntr_flags = FI_REMOTE_WRITE | FI_REMOTE_READ;

	if (b->fid->fclass == FI_CLASS_EP) {
		if (flags) {
			hmr_warn("endpoint binding takes flags 0");
			return -FI_EBADFLAGS;
		}
		return 0;
	}
	if (!(d->attr.caps & FI_RMA_EVENT)) {
		hmr_warn("counter binding needs the FI_RMA_EVENT domain cap");
		return -FI_ENOSYS;
	}
	/* A NIC's accesses never pass through hmr_mr_access: a counter bound
	 * here would never count. */
	if (d->registrar->provides_keys) {
		hmr_warn("counter binding: a %s domain's remote accesses are "
		         "not seen by hmr",
		         hmr_domain_kind_name(d->attr.kind));
		return -FI_ENOSYS;
	}
	if (flags & ~cntr_flags) {
		hmr_warn("counter binding flags 0x%llx: only FI_REMOTE_WRITE "
		         "and FI_REMOTE_READ",
		         (unsigned long long)flags);
		return -FI_EBADFLAGS;
	}
	if (!flags) {
		hmr_warn("counter binding with no event flag");
		return -FI_EINVAL;
	}
	if ((d->mr_mode & FI_MR_RMA_EVENT) && !(mr->flags & FI_RMA_EVENT)) {
		hmr_warn("FI_MR_RMA_EVENT: register with FI_RMA_EVENT to bind "
		         "a counter");
		return -FI_EINVAL;
	}
	return 0;
}

/* Under the write lock: add or widen the binding. */
static int add_binding(struct hmr_mr *mr, struct hmr_bindable *b,
                       uint64_t flags)
{
	struct hmr_mr_binding *grown;
	size_t i;

	for (i = 0; i < mr->nbinds; i++) {
		if (mr->binds[i].res == b) {
			mr->binds[i].flags |= flags;
			return 0;
		}
	}
	grown = hmr__realloc(mr->binds, (mr->nbinds + 1) * sizeof(*grown));
	if (!grown)
		return -FI_ENOMEM;
	mr->binds = grown;
	mr->binds[mr->nbinds].res = b;
	mr->binds[mr->nbinds].flags = flags;
	mr->nbinds++;
	return 0;
}

int hmr__mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct hmr_mr *mr = (struct hmr_mr *)fid;
	struct hmr_domain *d = mr->domain;
	struct hmr_bindable *b = bindable_of(bfid);
	int ret;

	if (!b || b->domain != d || !atomic_load(&b->open)) {
		hmr_warn("fi_mr_bind: not an open counter or endpoint of this "
		         "domain");
		return -FI_EINVAL;
	}
	ret = check_bind_flags(d, mr, b, flags);
	if (ret)
		return ret;
	hmr__shard_lock(hmr__shard(d, mr->shard));
	if (mr->created_disabled && mr->enabled) {
		hmr_warn("fi_mr_bind after fi_mr_enable");
		ret = -FI_EOPBADSTATE;
	} else {
		ret = add_binding(mr, b, flags);
	}
	hmr__shard_unlock(hmr__shard(d, mr->shard));
	return ret;
}

int hmr__mr_enable(struct hmr_mr *mr)
{
	struct hmr_domain *d = mr->domain;
	bool has_ep = false;
	size_t i;
	int ret = 0;

	hmr__shard_lock(hmr__shard(d, mr->shard));
	for (i = 0; i < mr->nbinds; i++)
		has_ep = has_ep || mr->binds[i].res->fid->fclass == FI_CLASS_EP;
	if (!mr->enabled && (d->mr_mode & FI_MR_ENDPOINT) && !has_ep) {
		hmr_warn(
		        "FI_MR_ENDPOINT: bind an endpoint before fi_mr_enable");
		ret = -FI_EOPBADSTATE;
	} else {
		mr->enabled = true;
	}
	hmr__shard_unlock(hmr__shard(d, mr->shard));
	return ret;
}
