/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* fi_mr.h: the fi_mr(3) API of libfabric 2.1, with libfabric's layouts. */
#ifndef HMR_FI_MR_H
#define HMR_FI_MR_H

/*
 * Why this header exists: hmr implements fi_mr(3) without linking
 * libfabric.  Every struct below has libfabric's layout and every constant
 * libfabric's value, and every call is a static inline that dispatches
 * through the object's ops table exactly as <rdma/fi_domain.h> does.  So:
 *
 *  - the library exports none of libfabric's names (no symbol clash when a
 *    process links both), and
 *  - a program compiled against libfabric's own <rdma/fi_domain.h> can
 *    drive an hmr domain (tests/api/test_libfabric_compat.c proves it with
 *    Debian's 1.17 header; see hmr_domain_attr.fi_version for the struct
 *    fi_mr_attr size that older headers pass).
 *
 * Include this header or libfabric's, never both in one translation unit:
 * they define the same names.  Only what fi_mr(3) names, and what those
 * calls need, is declared here.
 */

#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FI_VERSION(major, minor) (((major) << 16) | (minor))
/* The API version this header describes; libfabric's fabric.h defines the
 * same names for its own, so HMR_DOMAIN_ATTR_INIT records whichever header
 * the caller compiled against. */
#define FI_MAJOR_VERSION  2
#define FI_MINOR_VERSION  1
#define FI_MAJOR(version) ((version) >> 16)
#define FI_MINOR(version) ((version)&0xFFFF)

typedef uint64_t fi_addr_t;
#define FI_ADDR_NOTAVAIL ((uint64_t)-1)
#define FI_KEY_NOTAVAIL  ((uint64_t)-1)

/* Capabilities, access bits and operation flags (fabric.h). */
#define FI_MSG              (1ULL << 1)
#define FI_RMA              (1ULL << 2)
#define FI_TAGGED           (1ULL << 3)
#define FI_ATOMIC           (1ULL << 4)
#define FI_COLLECTIVE       (1ULL << 6)
#define FI_READ             (1ULL << 8)
#define FI_WRITE            (1ULL << 9)
#define FI_RECV             (1ULL << 10)
#define FI_SEND             (1ULL << 11)
#define FI_REMOTE_READ      (1ULL << 12)
#define FI_REMOTE_WRITE     (1ULL << 13)
#define FI_MR_DMABUF        (1ULL << 40)
#define FI_MR_SINGLE_USE    (1ULL << 41)
#define FI_HMEM_HOST_ALLOC  (1ULL << 45)
#define FI_HMEM_DEVICE_ONLY (1ULL << 46)
#define FI_HMEM             (1ULL << 47)
#define FI_RMA_PMEM         (1ULL << 49)
#define FI_RMA_EVENT        (1ULL << 56)
/*
 * FI_AUTH_KEY is a registration flag from libfabric 1.20; Debian's 1.17
 * header does not define it, so tests/api cannot check this value.
 */
#define FI_AUTH_KEY (1ULL << 57)
/* Deprecated domain bind flag: asynchronous registration (FI_ENOSYS). */
#define FI_REG_MR (1ULL << 59)

/* mr_mode bits (fabric.h).  FI_MR_BASIC and FI_MR_SCALABLE are the 1.4
 * enum values and must be used alone. */
enum {
	FI_MR_UNSPEC,
	FI_MR_BASIC,    /* (1 << 0) */
	FI_MR_SCALABLE, /* (1 << 1) */
};
#define FI_MR_LOCAL      (1 << 2)
#define FI_MR_RAW        (1 << 3)
#define FI_MR_VIRT_ADDR  (1 << 4)
#define FI_MR_ALLOCATED  (1 << 5)
#define FI_MR_PROV_KEY   (1 << 6)
#define FI_MR_MMU_NOTIFY (1 << 7)
#define FI_MR_RMA_EVENT  (1 << 8)
#define FI_MR_ENDPOINT   (1 << 9)
#define FI_MR_HMEM       (1 << 10)
#define FI_MR_COLLECTIVE (1 << 11)

/* Error codes (fi_errno.h): the errno values, then libfabric's own. */
#define FI_SUCCESS       0
#define FI_EPERM         EPERM
#define FI_ENOENT        ENOENT
#define FI_EINTR         EINTR
#define FI_EIO           EIO
#define FI_E2BIG         E2BIG
#define FI_EBADF         EBADF
#define FI_EAGAIN        EAGAIN
#define FI_ENOMEM        ENOMEM
#define FI_EACCES        EACCES
#define FI_EFAULT        EFAULT
#define FI_EBUSY         EBUSY
#define FI_ENODEV        ENODEV
#define FI_EINVAL        EINVAL
#define FI_EMFILE        EMFILE
#define FI_ENOSPC        ENOSPC
#define FI_ENOSYS        ENOSYS
#define FI_EWOULDBLOCK   EWOULDBLOCK
#define FI_ENOMSG        ENOMSG
#define FI_ENODATA       ENODATA
#define FI_EOVERFLOW     EOVERFLOW
#define FI_EMSGSIZE      EMSGSIZE
#define FI_ENOPROTOOPT   ENOPROTOOPT
#define FI_EOPNOTSUPP    EOPNOTSUPP
#define FI_EADDRINUSE    EADDRINUSE
#define FI_EADDRNOTAVAIL EADDRNOTAVAIL
#define FI_ENETDOWN      ENETDOWN
#define FI_ENETUNREACH   ENETUNREACH
#define FI_ECONNABORTED  ECONNABORTED
#define FI_ECONNRESET    ECONNRESET
#define FI_ENOBUFS       ENOBUFS
#define FI_EISCONN       EISCONN
#define FI_ENOTCONN      ENOTCONN
#define FI_ESHUTDOWN     ESHUTDOWN
#define FI_ETIMEDOUT     ETIMEDOUT
#define FI_ECONNREFUSED  ECONNREFUSED
#define FI_EHOSTDOWN     EHOSTDOWN
#define FI_EHOSTUNREACH  EHOSTUNREACH
#define FI_EALREADY      EALREADY
#define FI_EINPROGRESS   EINPROGRESS
#define FI_EREMOTEIO     EREMOTEIO
#define FI_ECANCELED     ECANCELED
#define FI_EKEYREJECTED  EKEYREJECTED
#define FI_ERRNO_OFFSET  256
enum {
	FI_EOTHER = FI_ERRNO_OFFSET,
	FI_ETOOSMALL = 257,
	FI_EOPBADSTATE = 258,
	FI_EAVAIL = 259,
	FI_EBADFLAGS = 260,
	FI_ENOEQ = 261,
	FI_EDOMAIN = 262,
	FI_ENOCQ = 263,
	FI_ECRC = 264,
	FI_ETRUNC = 265,
	FI_ENOKEY = 266,
	FI_ENOAV = 267,
	FI_EOVERRUN = 268,
	FI_ENORX = 269,
	FI_ERRNO_MAX
};

/* Object classes (fabric.h). */
enum {
	FI_CLASS_UNSPEC,
	FI_CLASS_FABRIC,
	FI_CLASS_DOMAIN,
	FI_CLASS_EP,
	FI_CLASS_SEP,
	FI_CLASS_RX_CTX,
	FI_CLASS_SRX_CTX,
	FI_CLASS_TX_CTX,
	FI_CLASS_STX_CTX,
	FI_CLASS_PEP,
	FI_CLASS_INTERFACE,
	FI_CLASS_AV,
	FI_CLASS_MR,
	FI_CLASS_EQ,
	FI_CLASS_CQ,
	FI_CLASS_CNTR,
};

/* fi_control commands (fabric.h). */
enum {
	FI_GETFIDFLAG,
	FI_SETFIDFLAG,
	FI_GETOPSFLAG,
	FI_SETOPSFLAG,
	FI_ALIAS,
	FI_GETWAIT,
	FI_ENABLE, /* NULL */
	FI_BACKLOG,
	FI_GET_RAW_MR, /* struct fi_mr_raw_attr */
	FI_MAP_RAW_MR, /* struct fi_mr_map_raw */
	FI_UNMAP_KEY,  /* uint64_t key */
	FI_QUEUE_WORK,
	FI_CANCEL_WORK,
	FI_FLUSH_WORK,
	FI_REFRESH, /* struct fi_mr_modify */
};

struct fid;
struct fid_av;
struct fid_mr;
struct fid_domain;

struct fi_ops {
	size_t size;
	int (*close)(struct fid *fid);
	int (*bind)(struct fid *fid, struct fid *bfid, uint64_t flags);
	int (*control)(struct fid *fid, int command, void *arg);
	int (*ops_open)(struct fid *fid, const char *name, uint64_t flags,
	                void **ops, void *context);
	int (*tostr)(const struct fid *fid, char *buf, size_t len);
	int (*ops_set)(struct fid *fid, const char *name, uint64_t flags,
	               void *ops, void *context);
};

/* All fabric objects start with this structure. */
struct fid {
	size_t fclass;
	void *context;
	struct fi_ops *ops;
};

enum fi_hmem_iface {
	FI_HMEM_SYSTEM = 0,
	FI_HMEM_CUDA,
	FI_HMEM_ROCR,
	FI_HMEM_ZE,
	FI_HMEM_NEURON,
	FI_HMEM_SYNAPSEAI,
};

struct fid_mr {
	struct fid fid;
	void *mem_desc;
	uint64_t key;
};

struct fi_mr_dmabuf {
	int fd;
	uint64_t offset;
	size_t len;
	void *base_addr;
};

struct fi_mr_auth_key {
	struct fid_av *av;
	fi_addr_t src_addr;
};

/*
 * The 2.1 layout.  The struct grew at its end, one release at a time
 * (libfabric's include/rdma/fi_domain.h history): iface and device came
 * in 1.9, hmem_data in 1.19, the dmabuf member of the first union (with
 * FI_MR_DMABUF) in 1.20, page_size in 1.22, base_mr and sub_mr_cnt in
 * 2.0.  hmr reads a field only when hmr_domain_attr.fi_version says the
 * caller's header has it (core/mr.c: attr_by_version).
 */
struct fi_mr_attr {
	union {
		const struct iovec *mr_iov;
		const struct fi_mr_dmabuf *dmabuf;
	};
	size_t iov_count;
	uint64_t access;
	uint64_t offset;
	uint64_t requested_key;
	void *context;
	size_t auth_key_size;
	uint8_t *auth_key;
	enum fi_hmem_iface iface;
	union {
		uint64_t reserved;
		int cuda;
		int ze;
		int neuron;
		int synapseai;
	} device;
	void *hmem_data;
	size_t page_size;
	const struct fid_mr *base_mr;
	size_t sub_mr_cnt;
};

struct fi_mr_modify {
	uint64_t flags;
	struct fi_mr_attr attr;
};

struct fi_mr_raw_attr {
	uint64_t flags;
	uint64_t *base_addr;
	uint8_t *raw_key;
	size_t *key_size;
};

struct fi_mr_map_raw {
	uint64_t flags;
	uint64_t base_addr;
	uint8_t *raw_key;
	size_t key_size;
	uint64_t *key;
};

/*
 * Domain operations other than memory registration are outside fi_mr(3);
 * hmr's domains fill every slot of this table with a function returning
 * -FI_ENOSYS.  The argument types are left incomplete on purpose.
 */
struct fi_ops_domain {
	size_t size;
	int (*av_open)(struct fid_domain *, void *, void **, void *);
	int (*cq_open)(struct fid_domain *, void *, void **, void *);
	int (*endpoint)(struct fid_domain *, void *, void **, void *);
	int (*scalable_ep)(struct fid_domain *, void *, void **, void *);
	int (*cntr_open)(struct fid_domain *, void *, void **, void *);
	int (*poll_open)(struct fid_domain *, void *, void **);
	int (*stx_ctx)(struct fid_domain *, void *, void **, void *);
	int (*srx_ctx)(struct fid_domain *, void *, void **, void *);
	int (*query_atomic)(struct fid_domain *, int, int, void *, uint64_t);
	int (*query_collective)(struct fid_domain *, int, void *, uint64_t);
	int (*endpoint2)(struct fid_domain *, void *, void **, uint64_t,
	                 void *);
};

struct fi_ops_mr {
	size_t size;
	int (*reg)(struct fid *fid, const void *buf, size_t len,
	           uint64_t access, uint64_t offset, uint64_t requested_key,
	           uint64_t flags, struct fid_mr **mr, void *context);
	int (*regv)(struct fid *fid, const struct iovec *iov, size_t count,
	            uint64_t access, uint64_t offset, uint64_t requested_key,
	            uint64_t flags, struct fid_mr **mr, void *context);
	int (*regattr)(struct fid *fid, const struct fi_mr_attr *attr,
	               uint64_t flags, struct fid_mr **mr);
};

struct fid_domain {
	struct fid fid;
	struct fi_ops_domain *ops;
	struct fi_ops_mr *mr;
};

/* Completion counters (fi_eq.h layout); hmr_cntr_open() makes one. */
struct fid_cntr;
struct fi_cntr_err_entry;
struct fi_ops_cntr {
	size_t size;
	uint64_t (*read)(struct fid_cntr *cntr);
	uint64_t (*readerr)(struct fid_cntr *cntr);
	int (*add)(struct fid_cntr *cntr, uint64_t value);
	int (*set)(struct fid_cntr *cntr, uint64_t value);
	int (*wait)(struct fid_cntr *cntr, uint64_t threshold, int timeout);
	int (*adderr)(struct fid_cntr *cntr, uint64_t value);
	int (*seterr)(struct fid_cntr *cntr, uint64_t value);
};

struct fid_cntr {
	struct fid fid;
	struct fi_ops_cntr *ops;
};

/* The calls.  Each one dispatches through the object's ops table. */

static inline int fi_close(struct fid *fid)
{
	return fid->ops->close(fid);
}

static inline int fi_control(struct fid *fid, int command, void *arg)
{
	return fid->ops->control(fid, command, arg);
}

/* Binding an event queue with FI_REG_MR asked for asynchronous
 * registration, deprecated since 1.5: hmr returns -FI_ENOSYS. */
static inline int fi_domain_bind(struct fid_domain *domain, struct fid *fid,
                                 uint64_t flags)
{
	return domain->fid.ops->bind(&domain->fid, fid, flags);
}

static inline int fi_mr_reg(struct fid_domain *domain, const void *buf,
                            size_t len, uint64_t acs, uint64_t offset,
                            uint64_t requested_key, uint64_t flags,
                            struct fid_mr **mr, void *context)
{
	return domain->mr->reg(&domain->fid, buf, len, acs, offset,
	                       requested_key, flags, mr, context);
}

static inline int fi_mr_regv(struct fid_domain *domain, const struct iovec *iov,
                             size_t count, uint64_t acs, uint64_t offset,
                             uint64_t requested_key, uint64_t flags,
                             struct fid_mr **mr, void *context)
{
	return domain->mr->regv(&domain->fid, iov, count, acs, offset,
	                        requested_key, flags, mr, context);
}

static inline int fi_mr_regattr(struct fid_domain *domain,
                                const struct fi_mr_attr *attr, uint64_t flags,
                                struct fid_mr **mr)
{
	return domain->mr->regattr(&domain->fid, attr, flags, mr);
}

static inline void *fi_mr_desc(struct fid_mr *mr)
{
	return mr->mem_desc;
}

static inline uint64_t fi_mr_key(struct fid_mr *mr)
{
	return mr->key;
}

static inline int fi_mr_raw_attr(struct fid_mr *mr, uint64_t *base_addr,
                                 uint8_t *raw_key, size_t *key_size,
                                 uint64_t flags)
{
	struct fi_mr_raw_attr attr;
	attr.flags = flags;
	attr.base_addr = base_addr;
	attr.raw_key = raw_key;
	attr.key_size = key_size;
	return mr->fid.ops->control(&mr->fid, FI_GET_RAW_MR, &attr);
}

static inline int fi_mr_map_raw(struct fid_domain *domain, uint64_t base_addr,
                                uint8_t *raw_key, size_t key_size,
                                uint64_t *key, uint64_t flags)
{
	struct fi_mr_map_raw map;
	map.flags = flags;
	map.base_addr = base_addr;
	map.raw_key = raw_key;
	map.key_size = key_size;
	map.key = key;
	return domain->fid.ops->control(&domain->fid, FI_MAP_RAW_MR, &map);
}

static inline int fi_mr_unmap_key(struct fid_domain *domain, uint64_t key)
{
	return domain->fid.ops->control(&domain->fid, FI_UNMAP_KEY, &key);
}

static inline int fi_mr_bind(struct fid_mr *mr, struct fid *bfid,
                             uint64_t flags)
{
	return mr->fid.ops->bind(&mr->fid, bfid, flags);
}

static inline int fi_mr_refresh(struct fid_mr *mr, const struct iovec *iov,
                                size_t count, uint64_t flags)
{
	struct fi_mr_modify modify;
	memset(&modify, 0, sizeof(modify));
	modify.flags = flags;
	modify.attr.mr_iov = iov;
	modify.attr.iov_count = count;
	return mr->fid.ops->control(&mr->fid, FI_REFRESH, &modify);
}

static inline int fi_mr_enable(struct fid_mr *mr)
{
	return mr->fid.ops->control(&mr->fid, FI_ENABLE, NULL);
}

/*
 * libfabric encodes <driver, device> as driver << 16 | device.  Negative
 * or out-of-range indexes give -FI_EINVAL, which no valid encoding can
 * equal.
 */
static inline int fi_hmem_ze_device(int driver_index, int device_index)
{
	if (driver_index < 0 || driver_index > 0x7fff || device_index < 0 ||
	    device_index > 0xffff)
		return -FI_EINVAL;
	return driver_index << 16 | device_index;
}

#ifdef __cplusplus
}
#endif

#endif /* HMR_FI_MR_H */
