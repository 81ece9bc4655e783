/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs.h: the verbs registrar's state, shared by its files. */
#ifndef HMR_VERBS_H
#define HMR_VERBS_H

#include <infiniband/verbs.h>
#include <stdatomic.h>

#include "base/limits.h"
#include "core/domain.h"

/* dma-buf support of (NIC, GPU device): tried until the NIC refuses it
 * once (EOPNOTSUPP), then refused for good, for that device only. */
enum hmr_dmabuf_state {
	HMR_DMABUF_UNKNOWN = 0,
	HMR_DMABUF_REFUSED,
};

struct hmr_verbs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	bool own_pd;      /* We allocated pd (and opened ctx). */
	bool odp;         /* The device offers on-demand paging for RC. */
	bool nic_dmabuf;  /* The fd -1 probe said EBADF: the NIC imports. */
	int access_extra; /* IBV_ACCESS_RELAXED_ORDERING, on request. */
	_Atomic int dmabuf[FI_HMEM_SYNAPSEAI + 1][HMR_MAX_DEVICES];
};

static inline struct hmr_verbs *hmr__verbs(struct hmr_domain *d)
{
	return d->registrar_data;
}

/* verbs_mr.c */
int hmr__verbs_reg(struct hmr_domain *d, struct hmr_mr *mr,
                   const struct hmr_mr_req *req);
void hmr__verbs_dereg(struct hmr_domain *d, struct hmr_mr *mr);

/* verbs_peermem.c: is a peer-memory module for iface loaded? */
bool hmr__verbs_peermem(enum fi_hmem_iface iface, char *which, size_t len);

#endif /* HMR_VERBS_H */
