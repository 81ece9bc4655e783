/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs.h: the verbs registrar's state, shared by its files. */
#ifndef HMR_VERBS_H
#define HMR_VERBS_H

#include <infiniband/verbs.h>
#include <stdatomic.h>

#include "base/limits.h"
#include "core/domain.h"

/* rdma-core 45 added these (kernel 6.2); older headers lack them, and
 * the kernel's values are fixed by its uAPI (ib_user_verbs.h). */
#ifndef IBV_ACCESS_FLUSH_GLOBAL
#define IBV_ACCESS_FLUSH_GLOBAL     (1 << 8)
#define IBV_ACCESS_FLUSH_PERSISTENT (1 << 9)
#endif
#define HMR_IBV_DEVICE_FLUSH_GLOBAL     (1ULL << 38)
#define HMR_IBV_DEVICE_FLUSH_PERSISTENT (1ULL << 39)

/* dma-buf support of (NIC, GPU device): tried until the NIC refuses it
 * once (EOPNOTSUPP), then refused for good, for that device only. */
enum hmr_dmabuf_state {
	HMR_DMABUF_UNKNOWN = 0,
	HMR_DMABUF_REFUSED,
};

/* What the device offers, read once at open (ibv_query_device_ex). */
struct hmr_verbs_caps {
	bool odp;          /* On-demand paging for RC WRITE and READ. */
	bool odp_implicit; /* The implicit ODP MR (IBV_ODP_SUPPORT_IMPLICIT). */
	bool atomics;      /* atomic_cap is not IBV_ATOMIC_NONE. */
	bool flush_global; /* FLUSH placement types (device_cap_flags_ex). */
	bool flush_persistent;
};

struct hmr_verbs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	bool own_pd;     /* We allocated pd (and opened ctx). */
	bool nic_dmabuf; /* The fd -1 probe said EBADF: the NIC imports. */
	struct hmr_verbs_caps caps;
	/* Added to every registration: what the domain's flags ask
	 * (RELAXED_ORDERING, MW_BIND), and to on-demand ones (HUGETLB). */
	int access_extra;
	int access_odp;
	/* HMR_DOMAIN_ODP_IMPLICIT: the MR over the whole address space that
	 * host registrations share, and the FI_* rights it grants. */
	struct ibv_mr *implicit;
	uint64_t implicit_access;
	/* dma-buf support per (interface, device).  Device numbers can be
	 * large (Level Zero's are driver << 16 | device), so each device
	 * claims a slot of its interface the first time it is registered:
	 * `device` holds its number + 1 (0: free), claimed lock-free. */
	struct {
		_Atomic uint64_t device;
		_Atomic int state;
	} dmabuf[FI_HMEM_SYNAPSEAI + 1][HMR_MAX_DEVICES];
	/* The cache serves this interface's device memory (its backend's
	 * FI_MR_*_CACHE_MONITOR_ENABLED, read at open). */
	bool cache_device[FI_HMEM_SYNAPSEAI + 1];
};

static inline struct hmr_verbs *hmr__verbs(struct hmr_domain *d)
{
	return d->registrar_data;
}

/* verbs_access.c: the IBV_ACCESS_* flags of one registration, and what
 * the domain's caps and flags ask of the device (checked at open). */
int hmr__verbs_access(const struct hmr_domain *d, const struct hmr_mr *mr);
int hmr__verbs_features(struct hmr_domain *d);
void hmr__verbs_features_fini(struct hmr_domain *d);

/* One contiguous range to register, and what memory it is. */
struct hmr_verbs_range {
	void *p;
	size_t len;
	uint64_t iova; /* Its NIC address (hmr__verbs_nic_addr). */
	enum fi_hmem_iface iface;
	uint64_t device;
	bool device_memory; /* dma-buf or peer memory, not ibv_reg_mr. */
};

struct hmr_cache_entry;

/* What a verbs MR keeps in hmr_mr.registrar_space: the desc handed out
 * (first: hmr_verbs_mr() reads it there), and the cached registration
 * it shares when the cache served it. */
struct hmr_verbs_mr {
	struct hmr_verbs_desc desc;
	struct hmr_cache_entry *entry;
};

/* The IBV_ACCESS_* rights through which a peer addresses a region (a
 * window bound to it, a FLUSH of it): a region with none of them is
 * local-only, reached through its lkey alone. */
#define HMR_VERBS_PEER_ACCESS                                                  \
	(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |                    \
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND |                       \
	 IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_FLUSH_PERSISTENT)

/* verbs_mr.c */
/*
 * *iova = the NIC address a region with these IBV_ACCESS_* rights is
 * registered at: va (its first byte here) under FI_MR_VIRT_ADDR, else 0
 * when a peer addresses it, else the page offset of pos (va, or the
 * offset into a dma-buf).  -FI_EINVAL, logged, when a peer's region
 * starts mid-page or [*iova, *iova + len) overflows.
 */
int hmr__verbs_nic_addr(bool virt_addr, int access, uint64_t va, uint64_t pos,
                        uint64_t len, uint64_t *iova);
int hmr__verbs_reg(struct hmr_domain *d, struct hmr_mr *mr,
                   const struct hmr_mr_req *req);
int hmr__verbs_dereg(struct hmr_domain *d, struct hmr_mr *mr);
/* Register r with the NIC (host, dma-buf or peer-memory path). */
int hmr__verbs_reg_range(struct hmr_domain *d, const struct hmr_verbs_range *r,
                         int access, struct ibv_mr **out);

/* verbs_cache.c: the domain's registration cache (doc/cache.md).  Only
 * registrations without remote rights are cached: a closed MR's rkey must
 * stop working at fi_close, and a shared registration's would not. */
int hmr__verbs_cache_open(struct hmr_domain *d);
void hmr__verbs_cache_close(struct hmr_domain *d);
bool hmr__verbs_cacheable(struct hmr_domain *d, const struct hmr_verbs_range *r,
                          int access);
/* *iova: the NIC address of the registration *out (which may start
 * before r when *entry is set). */
int hmr__verbs_cache_get(struct hmr_domain *d, const struct hmr_verbs_range *r,
                         int access, struct hmr_cache_entry **entry,
                         struct ibv_mr **out, uint64_t *iova);
void hmr__verbs_cache_put(struct hmr_domain *d, struct hmr_cache_entry *entry);

/* verbs_peermem.c: is a peer-memory module for iface loaded? */
bool hmr__verbs_peermem(enum fi_hmem_iface iface, char *which, size_t len);

#endif /* HMR_VERBS_H */
