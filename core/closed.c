/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* closed.c: the ops of closed objects: every call answers -FI_EBADF. */
#include "core/domain.h"

/*
 * fi_close swaps an object's tables for these, so a call through a handle
 * the caller already closed (within the window its memory is kept, see
 * doc/software-domain.md) gets -FI_EBADF instead of acting on freed or
 * recycled state: fi_mr_reg on a closed domain once returned 0 and leaked.
 */

static int closed_close(struct fid *fid)
{
	(void)fid;
	return -FI_EBADF;
}

static int closed_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid, (void)bfid, (void)flags;
	return -FI_EBADF;
}

static int closed_control(struct fid *fid, int command, void *arg)
{
	(void)fid, (void)command, (void)arg;
	return -FI_EBADF;
}

static int closed_ops_open(struct fid *fid, const char *name, uint64_t flags,
                           void **ops, void *context)
{
	(void)fid, (void)name, (void)flags, (void)ops, (void)context;
	return -FI_EBADF;
}

static int closed_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void)fid, (void)buf, (void)len;
	return -FI_EBADF;
}

static int closed_ops_set(struct fid *fid, const char *name, uint64_t flags,
                          void *ops, void *context)
{
	(void)fid, (void)name, (void)flags, (void)ops, (void)context;
	return -FI_EBADF;
}

struct fi_ops hmr__closed_ops = {
        sizeof(struct fi_ops), closed_close, closed_bind,    closed_control,
        closed_ops_open,       closed_tostr, closed_ops_set,
};

static int closed_reg(struct fid *fid, const void *buf, size_t len,
                      uint64_t access, uint64_t offset, uint64_t requested_key,
                      uint64_t flags, struct fid_mr **mr, void *context)
{
	(void)fid, (void)buf, (void)len, (void)access, (void)offset;
	(void)requested_key, (void)flags, (void)context;
	if (mr)
		*mr = NULL;
	return -FI_EBADF;
}

static int closed_regv(struct fid *fid, const struct iovec *iov, size_t count,
                       uint64_t access, uint64_t offset, uint64_t requested_key,
                       uint64_t flags, struct fid_mr **mr, void *context)
{
	(void)iov, (void)count;
	return closed_reg(fid, NULL, 0, access, offset, requested_key, flags,
	                  mr, context);
}

static int closed_regattr(struct fid *fid, const struct fi_mr_attr *attr,
                          uint64_t flags, struct fid_mr **mr)
{
	(void)attr;
	return closed_reg(fid, NULL, 0, 0, 0, 0, flags, mr, NULL);
}

struct fi_ops_mr hmr__closed_mr_ops = {
        sizeof(struct fi_ops_mr),
        closed_reg,
        closed_regv,
        closed_regattr,
};

static int closed_open(struct fid_domain *d, void *a, void **o, void *c)
{
	(void)d, (void)a, (void)o, (void)c;
	return -FI_EBADF;
}

static int closed_poll_open(struct fid_domain *d, void *a, void **o)
{
	(void)d, (void)a, (void)o;
	return -FI_EBADF;
}

static int closed_query_atomic(struct fid_domain *d, int t, int op, void *a,
                               uint64_t f)
{
	(void)d, (void)t, (void)op, (void)a, (void)f;
	return -FI_EBADF;
}

static int closed_query_collective(struct fid_domain *d, int c, void *a,
                                   uint64_t f)
{
	(void)d, (void)c, (void)a, (void)f;
	return -FI_EBADF;
}

static int closed_endpoint2(struct fid_domain *d, void *i, void **o, uint64_t f,
                            void *c)
{
	(void)d, (void)i, (void)o, (void)f, (void)c;
	return -FI_EBADF;
}

/* Positional, in struct fi_ops_domain's order: a slot added to the struct
 * and not here fails the build (-Wmissing-field-initializers). */
struct fi_ops_domain hmr__closed_domain_ops = {
        sizeof(struct fi_ops_domain),
        closed_open,
        closed_open,
        closed_open,
        closed_open,
        closed_open,
        closed_poll_open,
        closed_open,
        closed_open,
        closed_query_atomic,
        closed_query_collective,
        closed_endpoint2,
};

/* A closed counter counts nothing: reads answer 0, changes -FI_EBADF. */
static uint64_t closed_cntr_read(struct fid_cntr *c)
{
	(void)c;
	return 0;
}

static int closed_cntr_change(struct fid_cntr *c, uint64_t v)
{
	(void)c, (void)v;
	return -FI_EBADF;
}

static int closed_cntr_wait(struct fid_cntr *c, uint64_t threshold, int timeout)
{
	(void)c, (void)threshold, (void)timeout;
	return -FI_EBADF;
}

struct fi_ops_cntr hmr__closed_cntr_ops = {
        sizeof(struct fi_ops_cntr), closed_cntr_read,   closed_cntr_read,
        closed_cntr_change,         closed_cntr_change, closed_cntr_wait,
        closed_cntr_change,         closed_cntr_change,
};
