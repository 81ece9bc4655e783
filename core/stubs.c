/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* stubs.c: -FI_ENOSYS for the ops slots outside fi_mr(3) that hmr leaves. */
#include <stdio.h>

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

static int reg_probe(char *why, size_t why_len)
{
	snprintf(why, why_len, "this domain kind has no registrar");
	return -FI_ENOSYS;
}

static int reg_open(struct hmr_domain *d)
{
	(void)d;
	return -FI_ENOSYS;
}

static int reg_reg(struct hmr_domain *d, struct hmr_mr *mr,
                   const struct hmr_mr_req *req)
{
	(void)d, (void)mr, (void)req;
	return -FI_ENOSYS;
}

static int reg_dereg(struct hmr_domain *d, struct hmr_mr *mr)
{
	(void)d, (void)mr;
	return 0;
}

static void reg_close(struct hmr_domain *d)
{
	(void)d;
}

/* Positional, in struct hmr_registrar_ops's order, a missing initialiser
 * an error: a slot added to the struct and not here fails the build. */
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wmissing-field-initializers"
const struct hmr_registrar_ops hmr__registrar_stubs = {
        0, 0, false, false, reg_probe, reg_open, reg_reg, reg_dereg, reg_close,
};
#pragma GCC diagnostic pop
