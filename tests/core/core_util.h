/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* core_util.h: helpers the core tests share: open domains, register MRs. */
#ifndef HMR_TESTS_CORE_UTIL_H
#define HMR_TESTS_CORE_UTIL_H

#include <unistd.h>

#include <hmr/hmr.h>

#include "harness.h"

#define REMOTE_RW (FI_REMOTE_READ | FI_REMOTE_WRITE)

/*
 * A software domain that keeps the requested mr_mode bits it can emulate
 * (HMR_DOMAIN_EMULATE_MR_MODE), so a test gets exactly the mode it names;
 * mr_mode 0 gives the plain default registration.
 */
static inline struct fid_domain *
open_domain_keysize(uint64_t mr_mode, uint64_t caps, size_t key_size)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain = NULL;

	attr.mr_mode = mr_mode;
	attr.caps = caps;
	attr.mr_key_size = key_size;
	attr.flags = HMR_DOMAIN_EMULATE_MR_MODE;
	ASSERT_OK(hmr_domain_open(&attr, &domain));
	ASSERT_TRUE(domain != NULL);
	return domain;
}

static inline struct fid_domain *open_domain(uint64_t mr_mode, uint64_t caps)
{
	return open_domain_keysize(mr_mode, caps, 0);
}

/* fi_mr_reg that must succeed. */
static inline struct fid_mr *reg_ok(struct fid_domain *domain, void *buf,
                                    size_t len, uint64_t access, uint64_t key,
                                    uint64_t flags)
{
	struct fid_mr *mr = NULL;

	ASSERT_OK(
	        fi_mr_reg(domain, buf, len, access, 0, key, flags, &mr, NULL));
	ASSERT_TRUE(mr != NULL);
	return mr;
}

/* fi_mr_regattr of one iov that must succeed. */
static inline struct fid_mr *regattr_ok(struct fid_domain *domain,
                                        struct fi_mr_attr *attr, uint64_t flags)
{
	struct fid_mr *mr = NULL;

	ASSERT_OK(fi_mr_regattr(domain, attr, flags, &mr));
	ASSERT_TRUE(mr != NULL);
	return mr;
}

/* An attr for one iov (the iovec lives in the caller). */
static inline void attr_init(struct fi_mr_attr *attr, struct iovec *iov,
                             void *buf, size_t len, uint64_t access,
                             uint64_t key)
{
	memset(attr, 0, sizeof(*attr));
	iov->iov_base = buf;
	iov->iov_len = len;
	attr->mr_iov = iov;
	attr->iov_count = 1;
	attr->access = access;
	attr->requested_key = key;
}

static inline void close_ok(struct fid *fid)
{
	ASSERT_OK(fi_close(fid));
}

/*
 * What most binding and flag tests need, opened by one call and closed in
 * the order the rules allow by another: a domain, one MR of [buf, buf +
 * len) under FIXTURE_KEY, counters and endpoints.  Counters and endpoints
 * go first (an MR with an open bound one is busy), then the MRs the test
 * added, then the MR, a file descriptor the test keeps here, the domain.
 * A test that closes something earlier uses fixture_close_one.
 */
#define FIXTURE_KEY    1
#define FIXTURE_CNTRS  2
#define FIXTURE_EPS    2
#define FIXTURE_EXTRAS 2

struct fixture_spec {
	uint64_t mr_mode, caps; /* The domain's (open_domain). */
	void *buf;              /* The MR's memory; NULL: no MR. */
	size_t len;             /* Its length; 0 means 64. */
	uint64_t access, flags; /* Its access and registration flags. */
	int cntrs, eps;         /* Counters and endpoints to open. */
};

struct fixture {
	struct fid_domain *domain;
	struct fid_mr *mr;
	struct fid_mr *extra[FIXTURE_EXTRAS]; /* Other MRs of the test. */
	struct fid_cntr *cntr[FIXTURE_CNTRS];
	struct fid *ep[FIXTURE_EPS];
	int fd; /* A file of the test's (a dma-buf stand-in), or -1. */
};

static inline struct fid_cntr *cntr_open_ok(struct fid_domain *domain)
{
	struct fid_cntr *cntr = NULL;

	ASSERT_OK(hmr_cntr_open(domain, &cntr));
	ASSERT_TRUE(cntr != NULL);
	ASSERT_EQ(cntr->fid.fclass, FI_CLASS_CNTR);
	return cntr;
}

static inline struct fid *ep_open_ok(struct fid_domain *domain)
{
	struct fid *ep = NULL;

	ASSERT_OK(hmr_ep_open(domain, &ep));
	ASSERT_TRUE(ep != NULL);
	return ep;
}

/* FIXTURE(.caps = FI_RMA_EVENT, .buf = buf, ...): fixture_open of a spec
 * named field by field. */
#define FIXTURE(...) fixture_open((struct fixture_spec){__VA_ARGS__})

static inline struct fixture fixture_open(struct fixture_spec s)
{
	struct fixture f;
	int i;

	memset(&f, 0, sizeof(f));
	f.fd = -1;
	ASSERT_TRUE(s.cntrs <= FIXTURE_CNTRS && s.eps <= FIXTURE_EPS);
	f.domain = open_domain(s.mr_mode, s.caps);
	if (s.buf)
		f.mr = reg_ok(f.domain, s.buf, s.len ? s.len : 64, s.access,
		              FIXTURE_KEY, s.flags);
	for (i = 0; i < s.cntrs; i++)
		f.cntr[i] = cntr_open_ok(f.domain);
	for (i = 0; i < s.eps; i++)
		f.ep[i] = ep_open_ok(f.domain);
	return f;
}

/* Close `fid`, one of the fixture's, now (an order the test checks);
 * fixture_close then skips it. */
static inline void fixture_close_one(struct fixture *f, struct fid *fid)
{
	int i;

	close_ok(fid);
	if (f->mr && &f->mr->fid == fid)
		f->mr = NULL;
	for (i = 0; i < FIXTURE_EXTRAS; i++)
		if (f->extra[i] && &f->extra[i]->fid == fid)
			f->extra[i] = NULL;
	for (i = 0; i < FIXTURE_CNTRS; i++)
		if (f->cntr[i] && &f->cntr[i]->fid == fid)
			f->cntr[i] = NULL;
	for (i = 0; i < FIXTURE_EPS; i++)
		if (f->ep[i] == fid)
			f->ep[i] = NULL;
}

static inline void fixture_close(struct fixture *f)
{
	int i;

	for (i = FIXTURE_CNTRS - 1; i >= 0; i--)
		if (f->cntr[i])
			close_ok(&f->cntr[i]->fid);
	for (i = FIXTURE_EPS - 1; i >= 0; i--)
		if (f->ep[i])
			close_ok(f->ep[i]);
	for (i = FIXTURE_EXTRAS - 1; i >= 0; i--)
		if (f->extra[i])
			close_ok(&f->extra[i]->fid);
	if (f->mr)
		close_ok(&f->mr->fid);
	if (f->fd >= 0)
		ASSERT_OK(close(f->fd));
	close_ok(&f->domain->fid);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

/* hmr_mr_access of 8 bytes at 0 of FIXTURE_KEY on the fixture's domain. */
static inline int fixture_poke(const struct fixture *f, uint64_t access)
{
	void *ptr = NULL;

	return hmr_mr_access(f->domain, FIXTURE_KEY, 0, 8, access, &ptr);
}

/* The key a peer uses: fi_mr_key(), or the raw key mapped under FI_MR_RAW
 * (then unmap it with fi_mr_unmap_key when done). */
static inline uint64_t map_own_key(struct fid_domain *domain, struct fid_mr *mr)
{
	uint8_t raw[256];
	size_t size = sizeof(raw);
	uint64_t base = 0, key = 0;

	ASSERT_OK(fi_mr_raw_attr(mr, &base, raw, &size, 0));
	ASSERT_OK(fi_mr_map_raw(domain, base, raw, size, &key, 0));
	return key;
}

static inline size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

#endif /* HMR_TESTS_CORE_UTIL_H */
