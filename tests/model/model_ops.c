/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* model_ops.c: close, bind, enable, counters, refresh and raw keys. */
#include <string.h>

#include "model.h"

static bool live(const struct model *m, int id)
{
	return id >= 0 && id < MODEL_MAX_MRS && m->mr[id].state == MODEL_LIVE;
}

int model_close(const struct model *m, int id)
{
	const struct model_mr *mr = &m->mr[id];
	size_t i;

	if (!live(m, id))
		return -FI_EBADF; /* A second close. */
	if (mr->subs)
		return -FI_EBUSY;
	for (i = 0; i < mr->nbinds; i++)
		if (m->res[mr->binds[i].res].open)
			return -FI_EBUSY;
	return 0;
}

void model_close_commit(struct model *m, int id)
{
	struct model_mr *mr = &m->mr[id];

	if (mr->base >= 0)
		m->mr[mr->base].subs--;
	mr->state = MODEL_CLOSED;
}

int model_bind(const struct model *m, int id, int res, uint64_t flags)
{
	const uint64_t cntr_flags = FI_REMOTE_WRITE | FI_REMOTE_READ;
	const struct model_mr *mr = &m->mr[id];
	const struct model_res *r;

	if (!live(m, id))
		return -FI_EBADF;
	if (res < 0 || res >= MODEL_MAX_RES || !m->res[res].used ||
	    !m->res[res].open)
		return -FI_EINVAL; /* Another domain's, closed, not bindable. */
	r = &m->res[res];
	if (r->kind == MODEL_EP) {
		if (flags)
			return -FI_EBADFLAGS;
	} else {
		if (!(m->caps & FI_RMA_EVENT))
			return -FI_ENOSYS;
		if (flags & ~cntr_flags)
			return -FI_EBADFLAGS;
		if (!flags)
			return -FI_EINVAL;
		if ((m->mr_mode & FI_MR_RMA_EVENT) &&
		    !(mr->flags & FI_RMA_EVENT))
			return -FI_EINVAL;
	}
	/* Bindings of an MR created disabled end at fi_mr_enable. */
	if (mr->created_disabled && mr->enabled)
		return -FI_EOPBADSTATE;
	return 0;
}

void model_bind_commit(struct model *m, int id, int res, uint64_t flags)
{
	struct model_mr *mr = &m->mr[id];
	size_t i;

	for (i = 0; i < mr->nbinds; i++) {
		if (mr->binds[i].res == res) {
			mr->binds[i].flags |= flags; /* Bound twice: ORed. */
			return;
		}
	}
	mr->binds[mr->nbinds].res = res;
	mr->binds[mr->nbinds].flags = flags;
	mr->nbinds++;
}

int model_enable(const struct model *m, int id)
{
	const struct model_mr *mr = &m->mr[id];
	size_t i;

	if (!live(m, id))
		return -FI_EBADF;
	if (mr->enabled || !(m->mr_mode & FI_MR_ENDPOINT))
		return 0;
	/* FI_MR_ENDPOINT: an endpoint must have been bound first. */
	for (i = 0; i < mr->nbinds; i++)
		if (m->res[mr->binds[i].res].kind == MODEL_EP)
			return 0;
	return -FI_EOPBADSTATE;
}

void model_enable_commit(struct model *m, int id)
{
	m->mr[id].enabled = true;
}

int model_res_open(struct model *m, enum model_res_kind kind)
{
	int i;

	for (i = 0; i < MODEL_MAX_RES; i++) {
		if (!m->res[i].used) {
			m->res[i].used = true;
			m->res[i].open = true;
			m->res[i].kind = kind;
			m->res[i].count = 0;
			return i;
		}
	}
	return -1;
}

int model_res_close(const struct model *m, int res)
{
	/* Closing a counter or endpoint is always allowed, once. */
	return m->res[res].open ? 0 : -FI_EBADF;
}

uint64_t model_cntr_read(const struct model *m, int res)
{
	return m->res[res].open ? m->res[res].count : 0;
}

void model_res_close_commit(struct model *m, int res)
{
	m->res[res].open = false;
}

int model_refresh(const struct model *m, int id, const struct model_iov *iov,
                  size_t count, uint64_t flags)
{
	const struct model_mr *mr = &m->mr[id];
	size_t i, j;

	if (!live(m, id))
		return -FI_EBADF;
	if (flags)
		return -FI_EBADFLAGS;
	/* Refresh needs FI_MR_MMU_NOTIFY, or FI_MR_ALLOCATED unset. */
	if (!(m->mr_mode & FI_MR_MMU_NOTIFY) && model_allocated(m))
		return -FI_ENOSYS;
	if (mr->rogue)
		return MODEL_UNKNOWN;
	if (!iov || !count) {
		iov = mr->iov;
		count = mr->iov_count;
	}
	for (i = 0; i < count; i++) {
		bool in = false;

		if (!iov[i].len)
			return MODEL_UNKNOWN; /* fi_mr(3) does not say. */
		if (iov[i].len > UINT64_MAX - iov[i].addr)
			return -FI_EINVAL; /* Wraps or ends at 2^64. */
		for (j = 0; j < mr->iov_count && !in; j++) {
			uint64_t b = mr->iov[j].addr, bl = mr->iov[j].len;

			in = iov[i].addr >= b && iov[i].addr - b <= bl &&
			     iov[i].len <= bl - (iov[i].addr - b);
		}
		if (!in)
			return -FI_EINVAL;
	}
	/* The pages must be there to be refreshed (host memory). */
	for (i = 0; i < count; i++)
		if (!m->env.mapped(iov[i].addr, iov[i].len, m->env.arg))
			return -FI_EFAULT;
	return 0;
}

int model_raw_attr(const struct model *m, int id, uint64_t flags,
                   bool key_size_null, bool base_null, bool raw_null,
                   size_t key_size, uint64_t *base)
{
	if (!live(m, id))
		return -FI_EBADF;
	if (flags)
		return -FI_EBADFLAGS;
	if (key_size_null || base_null)
		return -FI_EINVAL;
	if (!m->raw_size)
		return MODEL_UNKNOWN; /* The size is not learnt yet. */
	if (raw_null || key_size < m->raw_size)
		return -FI_ETOOSMALL;
	/* The base a peer passes to fi_mr_map_raw: the region's virtual
	 * address under FI_MR_VIRT_ADDR, 0 otherwise. */
	*base = model_virt_addr(m) ? m->mr[id].iov[0].addr : 0;
	return 0;
}

int model_map_raw(const struct model *m, const struct model_raw *raw,
                  uint64_t base_addr, size_t key_size, bool raw_null,
                  bool key_null, uint64_t flags, uint64_t *key)
{
	if (flags)
		return -FI_EBADFLAGS;
	if (raw_null || key_null)
		return -FI_EINVAL;
	if (!m->raw_size || raw->kind == MODEL_RAW_FORGED)
		return MODEL_UNKNOWN;
	if (key_size != m->raw_size)
		return -FI_EINVAL; /* Truncated or padded. */
	if (raw->kind == MODEL_RAW_PEER) {
		*key = raw->key; /* A peer's key maps to the key it carries. */
		return 0;
	}
	if (base_addr != raw->base)
		return -FI_EINVAL; /* Not what this domain issued. */
	if (raw->stale) {
		/* The MR is closed; a new one may hold the same key. */
		return model_find_key(m, raw->key) >= 0 ? MODEL_UNKNOWN
		                                        : -FI_ENOKEY;
	}
	*key = raw->key;
	return 0;
}

void model_map_commit(struct model *m, uint64_t key)
{
	size_t i;

	for (i = 0; i < m->nmapped; i++) {
		if (m->mapped[i].key == key) {
			m->mapped[i].count++;
			return;
		}
	}
	if (m->nmapped < MODEL_MAX_KEYS) {
		m->mapped[m->nmapped].key = key;
		m->mapped[m->nmapped].count = 1;
		m->nmapped++;
	}
}

int model_unmap(const struct model *m, uint64_t key)
{
	size_t i;

	for (i = 0; i < m->nmapped; i++)
		if (m->mapped[i].key == key)
			return 0;
	return -FI_ENOKEY;
}

void model_unmap_commit(struct model *m, uint64_t key)
{
	size_t i;

	for (i = 0; i < m->nmapped; i++) {
		if (m->mapped[i].key == key) {
			if (--m->mapped[i].count == 0)
				m->mapped[i] = m->mapped[--m->nmapped];
			return;
		}
	}
}
