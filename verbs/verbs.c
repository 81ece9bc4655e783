/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs.c: the verbs registrar: probing, opening and closing a NIC. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/alloc.h"
#include "base/log.h"
#include "verbs/verbs.h"

static int verbs_probe(char *why, size_t why_len)
{
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (!list) {
		snprintf(why, why_len,
		         "no RDMA device (ibv_get_device_list: "
		         "%s)",
		         strerror(errno));
		return -FI_ENODEV;
	}
	ibv_free_device_list(list);
	if (n == 0) {
		snprintf(why, why_len, "no RDMA device");
		return -FI_ENODEV;
	}
	return 0;
}

static int open_nic(struct hmr_verbs *v, const char *name)
{
	struct ibv_device **list;
	int n = 0, i, ret = -FI_ENODEV;

	list = ibv_get_device_list(&n);
	if (!list) {
		hmr_warn("ibv_get_device_list: %s", strerror(errno));
		return -FI_ENODEV;
	}
	for (i = 0; i < n; i++) {
		if (name && strcmp(ibv_get_device_name(list[i]), name) != 0)
			continue;
		v->ctx = ibv_open_device(list[i]);
		ret = v->ctx ? 0 : -FI_ENODEV;
		break;
	}
	if (ret)
		hmr_warn("RDMA device %s: %s", name ? name : "(first)",
		         i == n ? "not found" : strerror(errno));
	ibv_free_device_list(list);
	return ret;
}

/* fd -1: a kernel that imports dma-bufs fails on the fd (EBADF); one
 * that cannot says EOPNOTSUPP before looking at it. */
static bool probe_dmabuf(struct ibv_pd *pd)
{
	struct ibv_mr *mr =
	        ibv_reg_dmabuf_mr(pd, 0, 4096, 0, -1, IBV_ACCESS_LOCAL_WRITE);

	if (mr) { /* Cannot happen with fd -1; do not leak it if it does. */
		ibv_dereg_mr(mr);
		return true;
	}
	hmr_info("dma-buf probe on %s: %s",
	         ibv_get_device_name(pd->context->device), strerror(errno));
	return errno == EBADF;
}

/*
 * HMR_VERBS_DMABUF: "probe" (default) asks the kernel as above; "on"
 * skips the probe and lets the first real refusal demote each device (for
 * NICs whose probe answer is wrong, and to test demotion); "off" never
 * tries dma-buf.
 */
HMR_CONFIG_VAR(HMR_VERBS_DMABUF, "probe",
               "dma-buf registration on a NIC: probe (ask the NIC once), "
               "on (try, and demote a device at its first refusal), off");

static bool dmabuf_mode(struct ibv_pd *pd)
{
	const char *mode = hmr__config_get("HMR_VERBS_DMABUF", NULL);

	if (mode && strcmp(mode, "on") == 0)
		return true;
	if (mode && strcmp(mode, "off") == 0)
		return false;
	if (mode && strcmp(mode, "probe") != 0)
		hmr_warn("HMR_VERBS_DMABUF=%s: not probe, on or off; probing",
		         mode);
	return probe_dmabuf(pd);
}

static void probe_caps(struct hmr_verbs *v)
{
	struct ibv_device_attr_ex attr;
	const struct ibv_odp_caps *odp = &attr.odp_caps;
	uint32_t rc = IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ;

	memset(&attr, 0, sizeof(attr));
	if (ibv_query_device_ex(v->ctx, NULL, &attr)) {
		hmr_info("ibv_query_device_ex on %s: %s: no ODP, atomics or "
		         "FLUSH assumed",
		         ibv_get_device_name(v->ctx->device), strerror(errno));
		return;
	}
	v->caps.odp = (odp->general_caps & IBV_ODP_SUPPORT) &&
	              (odp->per_transport_caps.rc_odp_caps & rc) == rc;
	v->caps.odp_implicit =
	        v->caps.odp && (odp->general_caps & IBV_ODP_SUPPORT_IMPLICIT);
	v->caps.atomics = attr.orig_attr.atomic_cap != IBV_ATOMIC_NONE;
	v->caps.flush_global =
	        attr.device_cap_flags_ex & HMR_IBV_DEVICE_FLUSH_GLOBAL;
	v->caps.flush_persistent =
	        attr.device_cap_flags_ex & HMR_IBV_DEVICE_FLUSH_PERSISTENT;
}

/* The mr_mode bits the caller offers, FI_MR_BASIC spelled out. */
static uint64_t offered_mr_mode(uint64_t mode)
{
	if (mode == FI_MR_BASIC)
		return FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	return mode & (FI_MR_BASIC | FI_MR_SCALABLE) ? 0 : mode;
}

/*
 * FI_MR_VIRT_ADDR and FI_MR_ALLOCATED are kept when the caller offers
 * them: virtually addressed, pinned registrations, as libfabric's verbs
 * provider makes.  Without VIRT_ADDR, peers address a region by its offset
 * and the NIC resolves it (hca_va 0); without ALLOCATED, host memory is
 * registered on demand where the device pages (ODP), and the domain does
 * not open where it cannot.
 */
static void choose_mr_mode(struct hmr_domain *d, const struct hmr_verbs *v)
{
	uint64_t offered = offered_mr_mode(d->attr.mr_mode);

	if (!(offered & FI_MR_VIRT_ADDR))
		d->needed_mr_mode &= ~(uint64_t)FI_MR_VIRT_ADDR;
	if (v->caps.odp && !(offered & FI_MR_ALLOCATED))
		d->needed_mr_mode &= ~(uint64_t)FI_MR_ALLOCATED;
}

/* The caller's protection domain, or our own on the NIC named. */
static int get_pd(struct hmr_verbs *v, const struct hmr_domain_attr *attr)
{
	int ret;

	if (attr->pd) {
		v->pd = attr->pd;
		v->ctx = v->pd->context;
		return 0;
	}
	ret = open_nic(v, attr->nic_name);
	if (ret)
		return ret;
	v->pd = ibv_alloc_pd(v->ctx);
	if (!v->pd) {
		hmr_warn("ibv_alloc_pd: %s", strerror(errno));
		ibv_close_device(v->ctx);
		return -FI_ENOMEM;
	}
	v->own_pd = true;
	return 0;
}

static void put_pd(struct hmr_verbs *v)
{
	if (v->own_pd) {
		ibv_dealloc_pd(v->pd);
		ibv_close_device(v->ctx);
	}
}

static int verbs_open(struct hmr_domain *d)
{
	struct hmr_verbs *v = hmr__calloc(1, sizeof(*v));
	int ret;

	if (!v)
		return -FI_ENOMEM;
	ret = get_pd(v, &d->attr);
	if (ret)
		goto err_free;
	probe_caps(v);
	v->nic_dmabuf = dmabuf_mode(v->pd);
	choose_mr_mode(d, v);
	d->registrar_data = v;
	ret = hmr__verbs_features(d);
	if (ret)
		goto err_pd;
	ret = hmr__verbs_cache_open(d);
	if (ret)
		goto err_features;
	/* One contiguous range per verbs MR. */
	d->attr.mr_iov_limit = 1;
	hmr_info("verbs domain on %s: odp %s, dma-buf import %s, %s "
	         "addressing",
	         ibv_get_device_name(v->ctx->device),
	         v->caps.odp ? "yes" : "no", v->nic_dmabuf ? "yes" : "no",
	         d->needed_mr_mode & FI_MR_VIRT_ADDR ? "virtual" : "offset");
	return 0;

err_features:
	hmr__verbs_features_fini(d);
err_pd:
	d->registrar_data = NULL;
	put_pd(v);
err_free:
	free(v);
	return ret;
}

static void verbs_close(struct hmr_domain *d)
{
	struct hmr_verbs *v = hmr__verbs(d);

	if (!v)
		return;
	hmr__verbs_cache_close(d);
	hmr__verbs_features_fini(d);
	put_pd(v);
	free(v);
	d->registrar_data = NULL;
}

const struct hmr_registrar_ops hmr__verbs_registrar = {
        .needed_mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                          FI_MR_PROV_KEY | FI_MR_HMEM,
        .supported_mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                             FI_MR_PROV_KEY | FI_MR_HMEM | FI_MR_RAW,
        .provides_keys = true,
        .checks_backing = true,
        .probe = verbs_probe,
        .open = verbs_open,
        .reg = hmr__verbs_reg,
        .dereg = hmr__verbs_dereg,
        .close = verbs_close,
};

struct ibv_mr *hmr_verbs_mr(struct fid_mr *mr)
{
	struct hmr_mr *m = (struct hmr_mr *)mr;

	if (!mr || mr->fid.fclass != FI_CLASS_MR ||
	    mr->fid.ops == &hmr__closed_ops ||
	    m->domain->attr.kind != HMR_DOMAIN_VERBS)
		return NULL;
	return ((struct hmr_verbs_mr *)m->registrar_data)->desc.mr;
}

struct ibv_pd *hmr_verbs_pd(struct fid_domain *domain)
{
	struct hmr_domain *d;

	if (hmr__domain_usable(domain))
		return NULL;
	d = hmr__domain(&domain->fid);
	return d->attr.kind == HMR_DOMAIN_VERBS ? hmr__verbs(d)->pd : NULL;
}
