/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_access.c: hmr's answer to every IBV_ACCESS_* flag of ibv_reg_mr(3). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "base/log.h"
#include "verbs/verbs.h"

/*
 * ibv_reg_mr(3) lists eleven access flags; each has one answer:
 *
 * LOCAL_WRITE       FI_READ and FI_RECV (the NIC writes RDMA READ results
 *                   and received messages into the region), and with every
 *                   REMOTE_WRITE or REMOTE_ATOMIC: the kernel refuses those
 *                   without it (EINVAL), so FI_REMOTE_WRITE alone works.
 * REMOTE_WRITE      FI_REMOTE_WRITE.
 * REMOTE_READ       FI_REMOTE_READ.
 * REMOTE_ATOMIC     FI_REMOTE_WRITE on a domain with FI_ATOMIC in its caps
 *                   (fi_mr(3) counts an atomic as a write at the target).
 *                   A device without atomics refuses FI_ATOMIC at open.
 * FLUSH_PERSISTENT  The registration flag FI_RMA_PMEM (persistent memory
 * FLUSH_GLOBAL      that peers flush), with FLUSH_GLOBAL where the device
 *                   reports it too.  A device without FLUSH_PERSISTENT
 *                   refuses FI_RMA_PMEM in the caps at open.
 * MW_BIND           HMR_DOMAIN_MW_BIND: fi_mr(3) has no memory windows.
 * ZERO_BASED        Never set.  Offset addressing (no FI_MR_VIRT_ADDR)
 *                   registers with hca_va 0 (ibv_reg_mr_iova), which the
 *                   man page says has the same effect and every driver
 *                   honours; the flag itself is read by a few drivers only,
 *                   and rxe (IBTA o10-36.2.2) will not bind a memory window
 *                   to an MR that has it.
 * ON_DEMAND         Host memory when the domain's mr_mode lacks
 *                   FI_MR_ALLOCATED (the device has ODP and the caller did
 *                   not offer ALLOCATED), and HMR_DOMAIN_ODP_IMPLICIT's MR.
 * HUGETLB           HMR_DOMAIN_HUGETLB, on on-demand registrations only
 *                   (the man page: explicit ODP only); refused at open
 *                   where registrations are pinned.
 * RELAXED_ORDERING  HMR_DOMAIN_RELAXED_ORDERING (an optional flag: a NIC
 *                   without it ignores it).
 *
 * Device memory is never on demand; ibv_reg_dmabuf_mr takes LOCAL_WRITE,
 * REMOTE_* and RELAXED_ORDERING only (verbs_mr.c refuses the dma-buf path
 * for the others and says so).
 */
int hmr__verbs_access(const struct hmr_domain *d, const struct hmr_mr *mr)
{
	const struct hmr_verbs *v = d->registrar_data;
	int ibv = v->access_extra;

	if (mr->access & (FI_READ | FI_RECV))
		ibv |= IBV_ACCESS_LOCAL_WRITE;
	if (mr->access & FI_REMOTE_READ)
		ibv |= IBV_ACCESS_REMOTE_READ;
	if (mr->access & FI_REMOTE_WRITE) {
		ibv |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
		if (d->attr.caps & FI_ATOMIC)
			ibv |= IBV_ACCESS_REMOTE_ATOMIC;
	}
	if (mr->flags & FI_RMA_PMEM) {
		ibv |= IBV_ACCESS_FLUSH_PERSISTENT;
		if (v->caps.flush_global)
			ibv |= IBV_ACCESS_FLUSH_GLOBAL;
	}
	return ibv;
}

/* The capabilities the caller asks that need the device's support. */
static int check_caps(struct hmr_domain *d, const char *dev)
{
	const struct hmr_verbs *v = d->registrar_data;

	if ((d->attr.caps & FI_ATOMIC) && !v->caps.atomics) {
		hmr_info("verbs domain on %s: FI_ATOMIC asked, but the device "
		         "has no atomics (atomic_cap NONE)",
		         dev);
		return -FI_ENODATA;
	}
	if ((d->attr.caps & FI_RMA_PMEM) && !v->caps.flush_persistent) {
		hmr_info(
		        "verbs domain on %s: FI_RMA_PMEM asked, but the device "
		        "reports no FLUSH to persistence",
		        dev);
		return -FI_ENODATA;
	}
	return 0;
}

/*
 * HMR_DOMAIN_ODP_IMPLICIT: one MR over the whole address space (addr 0,
 * length SIZE_MAX), with the remote rights of the domain's caps (both
 * when the caps name neither), which every host registration shares.
 */
static int reg_implicit(struct hmr_domain *d, const char *dev)
{
	struct hmr_verbs *v = d->registrar_data;
	uint64_t remote = d->attr.caps & (FI_REMOTE_READ | FI_REMOTE_WRITE);
	struct hmr_mr probe = {.access = FI_READ | FI_WRITE | FI_SEND |
	                                 FI_RECV | FI_COLLECTIVE};

	if (!v->caps.odp_implicit) {
		hmr_warn(
		        "HMR_DOMAIN_ODP_IMPLICIT: %s has no implicit on-demand "
		        "paging (IBV_ODP_SUPPORT_IMPLICIT)",
		        dev);
		return -FI_EOPNOTSUPP;
	}
	probe.access |= remote ? remote : FI_REMOTE_READ | FI_REMOTE_WRITE;
	v->implicit =
	        ibv_reg_mr(v->pd, NULL, SIZE_MAX,
	                   hmr__verbs_access(d, &probe) | IBV_ACCESS_ON_DEMAND);
	if (!v->implicit) {
		hmr_warn("HMR_DOMAIN_ODP_IMPLICIT: ibv_reg_mr(NULL, SIZE_MAX, "
		         "ON_DEMAND) on %s: %s",
		         dev, strerror(errno));
		return errno == EOPNOTSUPP ? -FI_EOPNOTSUPP : -FI_EINVAL;
	}
	v->implicit_access = probe.access;
	return 0;
}

/* At open, once the device is known: the access flags the domain's flags
 * ask for, and whether the device can honour the caps and flags. */
int hmr__verbs_features(struct hmr_domain *d)
{
	struct hmr_verbs *v = d->registrar_data;
	const char *dev = ibv_get_device_name(v->ctx->device);
	uint64_t flags = d->attr.flags;
	int ret = check_caps(d, dev);

	if (ret)
		return ret;
	if (flags & HMR_DOMAIN_RELAXED_ORDERING)
		v->access_extra |= IBV_ACCESS_RELAXED_ORDERING;
	if (flags & HMR_DOMAIN_MW_BIND)
		v->access_extra |= IBV_ACCESS_MW_BIND;
	if (flags & HMR_DOMAIN_HUGETLB) {
		/* needed_mr_mode lacks ALLOCATED only for on-demand domains. */
		if (d->needed_mr_mode & FI_MR_ALLOCATED) {
			hmr_warn("HMR_DOMAIN_HUGETLB applies to on-demand "
			         "registrations only: %s",
			         v->caps.odp
			                 ? "the caller offers FI_MR_ALLOCATED"
			                 : "the device has no ODP");
			return -FI_EOPNOTSUPP;
		}
		v->access_odp |= IBV_ACCESS_HUGETLB;
	}
	if (flags & HMR_DOMAIN_ODP_IMPLICIT) {
		if (d->needed_mr_mode & FI_MR_VIRT_ADDR)
			return reg_implicit(d, dev);
		hmr_warn("HMR_DOMAIN_ODP_IMPLICIT needs FI_MR_VIRT_ADDR: the "
		         "implicit MR is addressed by virtual address");
		return -FI_ENODATA;
	}
	return 0;
}

void hmr__verbs_features_fini(struct hmr_domain *d)
{
	struct hmr_verbs *v = d->registrar_data;
	int err;

	if (!v->implicit)
		return;
	err = ibv_dereg_mr(v->implicit);
	if (err)
		hmr_warn("ibv_dereg_mr of the implicit MR: %s", strerror(err));
	v->implicit = NULL;
}
