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
