/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* stubs.c: -FI_ENOSYS for the ops slots outside fi_mr(3) that hmr leaves. */
#include "core/domain.h"

/* hmr has no address vectors, queues or endpoints of libfabric's kind;
 * each slot answers -FI_ENOSYS so a libfabric-style caller gets an error
 * code rather than a NULL call. */

static int av_open(struct fid_domain *d, void *a, void **o, void *c)
{
	(void)d, (void)a, (void)o, (void)c;
	return -FI_ENOSYS;
}

static int poll_open(struct fid_domain *d, void *a, void **o)
{
	(void)d, (void)a, (void)o;
	return -FI_ENOSYS;
}

static int query_atomic(struct fid_domain *d, int t, int op, void *a,
                        uint64_t f)
{
	(void)d, (void)t, (void)op, (void)a, (void)f;
	return -FI_ENOSYS;
}

static int query_collective(struct fid_domain *d, int c, void *a, uint64_t f)
{
	(void)d, (void)c, (void)a, (void)f;
	return -FI_ENOSYS;
}

static int endpoint2(struct fid_domain *d, void *i, void **o, uint64_t f,
                     void *c)
{
	(void)d, (void)i, (void)o, (void)f, (void)c;
	return -FI_ENOSYS;
}

/* av_open, cq_open, endpoint, scalable_ep, cntr_open, stx_ctx and srx_ctx
 * share one signature in hmr's declaration, so one stub serves them. */
struct fi_ops_domain hmr__domain_enosys_ops = {
        .size = sizeof(struct fi_ops_domain),
        .av_open = av_open,
        .cq_open = av_open,
        .endpoint = av_open,
        .scalable_ep = av_open,
        .cntr_open = av_open,
        .poll_open = poll_open,
        .stx_ctx = av_open,
        .srx_ctx = av_open,
        .query_atomic = query_atomic,
        .query_collective = query_collective,
        .endpoint2 = endpoint2,
};

int hmr__fid_enosys_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid;
	(void)bfid;
	(void)flags;
	return -FI_ENOSYS;
}

int hmr__fid_enosys_control(struct fid *fid, int command, void *arg)
{
	(void)fid;
	(void)command;
	(void)arg;
	return -FI_ENOSYS;
}

int hmr__fid_enosys_ops_open(struct fid *fid, const char *name, uint64_t flags,
                             void **ops, void *context)
{
	(void)fid;
	(void)name;
	(void)flags;
	(void)ops;
	(void)context;
	return -FI_ENOSYS;
}

int hmr__fid_enosys_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void)fid;
	(void)buf;
	(void)len;
	return -FI_ENOSYS;
}

int hmr__fid_enosys_ops_set(struct fid *fid, const char *name, uint64_t flags,
                            void *ops, void *context)
{
	(void)fid;
	(void)name;
	(void)flags;
	(void)ops;
	(void)context;
	return -FI_ENOSYS;
}
