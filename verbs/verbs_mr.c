/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_mr.c: one registration through rdma-core: host, dma-buf, peer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hmem/hmem.h"
#include "base/log.h"
#include "verbs/verbs.h"

/*
 * FI_* to IBV_ACCESS_*.  Remote write and remote atomic need local write
 * (ibv_reg_mr(3)); atomics come with FI_REMOTE_WRITE only where the domain
 * asked for FI_ATOMIC.  Local write is also what RDMA READ results
 * (FI_READ) and receives (FI_RECV) need.  Nothing else is added.
 */
static int verbs_access(const struct hmr_domain *d, uint64_t access)
{
	int ibv = 0;

	if (access & (FI_READ | FI_RECV))
		ibv |= IBV_ACCESS_LOCAL_WRITE;
	if (access & FI_REMOTE_READ)
		ibv |= IBV_ACCESS_REMOTE_READ;
	if (access & FI_REMOTE_WRITE) {
		ibv |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
		if (d->attr.caps & FI_ATOMIC)
			ibv |= IBV_ACCESS_REMOTE_ATOMIC;
	}
	return ibv;
}

static struct ibv_mr *reg_host(struct hmr_domain *d, struct hmr_mr *mr,
                               int access)
{
	struct hmr_verbs *v = hmr__verbs(d);

	/* Pages may come and go while the MR lives: ODP follows them. */
	if (v->odp && !hmr__allocated(d))
		access |= IBV_ACCESS_ON_DEMAND;
	return ibv_reg_mr(v->pd, mr->iov[0].iov_base, mr->iov[0].iov_len,
	                  access);
}

/* The caller's own dma-buf (FI_MR_DMABUF). */
static int reg_caller_dmabuf(struct hmr_domain *d, const struct fi_mr_dmabuf *b,
                             int access, struct ibv_mr **out)
{
	uint64_t iova = (uint64_t)(uintptr_t)b->base_addr + b->offset;

	*out = ibv_reg_dmabuf_mr(hmr__verbs(d)->pd, b->offset, b->len, iova,
	                         b->fd, access);
	if (*out)
		return 0;
	hmr_warn("ibv_reg_dmabuf_mr(fd %d, offset %llu, len %zu): %s", b->fd,
	         (unsigned long long)b->offset, b->len, strerror(errno));
	return errno == EOPNOTSUPP || errno == ENOTSUP ? -FI_EOPNOTSUPP
	                                               : -errno;
}

/* Path 1: the backend exports a dma-buf, the NIC imports it, the fd goes
 * back through the backend whatever happened. */
static int try_dmabuf(struct hmr_domain *d, struct hmr_mr *mr, int access,
                      struct ibv_mr **out, char *why, size_t why_len)
{
	struct hmr_verbs *v = hmr__verbs(d);
	const struct hmr_backend_ops *b = hmr__hmem_backend(mr->iface);
	_Atomic int *state;
	int fd, err;
	uint64_t offset;
	void *p = mr->iov[0].iov_base;

	if (!v->nic_dmabuf) {
		snprintf(why, why_len, "dma-buf: the NIC does not import them");
		return -FI_EOPNOTSUPP;
	}
	if (!b || mr->device >= HMR_MAX_DEVICES) {
		snprintf(why, why_len, "dma-buf: no backend for the device");
		return -FI_EOPNOTSUPP;
	}
	state = &v->dmabuf[mr->iface][mr->device];
	if (atomic_load(state) == HMR_DMABUF_REFUSED) {
		snprintf(why, why_len,
		         "dma-buf: refused before for this device");
		return -FI_EOPNOTSUPP;
	}
	err = b->dmabuf_get(p, mr->iov[0].iov_len, 0, &fd, &offset);
	if (err) {
		snprintf(why, why_len, "dma-buf: export failed (%s)",
		         hmr_strerror(err));
		return err;
	}
	*out = ibv_reg_dmabuf_mr(v->pd, offset, mr->iov[0].iov_len,
	                         (uint64_t)(uintptr_t)p, fd, access);
	err = *out ? 0 : errno;
	b->dmabuf_put(fd);
	if (!err)
		return 0;
	snprintf(why, why_len, "dma-buf: ibv_reg_dmabuf_mr: %s", strerror(err));
	if (err == EOPNOTSUPP || err == ENOTSUP) {
		/* A real refusal demotes this device only, for good. */
		atomic_store(state, HMR_DMABUF_REFUSED);
		hmr_info("%s device %llu: dma-buf refused, demoted",
		         hmr_hmem_iface_name(mr->iface),
		         (unsigned long long)mr->device);
	}
	return -FI_EOPNOTSUPP;
}

/* Path 2: a peer-memory module lets ibv_reg_mr pin device memory. */
static int try_peermem(struct hmr_domain *d, struct hmr_mr *mr, int access,
                       struct ibv_mr **out, char *why, size_t why_len)
{
	char module[64];

	if (!hmr__verbs_peermem(mr->iface, module, sizeof(module))) {
		snprintf(why, why_len, "peer-memory: no module loaded");
		return -FI_EOPNOTSUPP;
	}
	*out = ibv_reg_mr(hmr__verbs(d)->pd, mr->iov[0].iov_base,
	                  mr->iov[0].iov_len, access);
	if (*out)
		return 0;
	snprintf(why, why_len, "peer-memory (%s): ibv_reg_mr: %s", module,
	         strerror(errno));
	return -FI_EOPNOTSUPP;
}

static int reg_device(struct hmr_domain *d, struct hmr_mr *mr, int access,
                      struct ibv_mr **out)
{
	char why1[160], why2[160];

	if (hmr__hmem_p2p_disabled()) {
		hmr_warn("%s memory: FI_HMEM_DISABLE_P2P forbids both the "
		         "dma-buf and the peer-memory path",
		         hmr_hmem_iface_name(mr->iface));
		return -FI_EOPNOTSUPP;
	}
	if (!try_dmabuf(d, mr, access, out, why1, sizeof(why1)))
		return 0;
	if (!try_peermem(d, mr, access, out, why2, sizeof(why2)))
		return 0;
	hmr_warn("%s device %llu memory cannot be registered: %s; %s",
	         hmr_hmem_iface_name(mr->iface), (unsigned long long)mr->device,
	         why1, why2);
	return -FI_EOPNOTSUPP;
}

int hmr__verbs_reg(struct hmr_domain *d, struct hmr_mr *mr,
                   const struct hmr_mr_req *req)
{
	int access = verbs_access(d, mr->access) | hmr__verbs(d)->access_extra;
	struct hmr_verbs_desc *desc;
	struct ibv_mr *imr = NULL;
	int ret;

	_Static_assert(sizeof(*desc) <= sizeof(mr->registrar_space),
	               "the desc lives in the MR");
	desc = (struct hmr_verbs_desc *)mr->registrar_space;
	if (req->flags & FI_MR_DMABUF) {
		ret = reg_caller_dmabuf(d, req->attr.dmabuf, access, &imr);
	} else if (req->base_mr) {
		/* A sub-MR is a registration of its own on verbs: the NIC
		 * checks its rights, not the base's. */
		imr = reg_host(d, mr, access);
		ret = imr ? 0 : -errno;
	} else if (mr->iface != FI_HMEM_SYSTEM &&
	           !(mr->hmem_flags & HMR_HMEM_HOST_ALLOC)) {
		ret = reg_device(d, mr, access, &imr);
	} else {
		imr = reg_host(d, mr, access);
		ret = imr ? 0 : -errno;
		if (ret)
			hmr_warn("ibv_reg_mr(%p, %zu): %s", mr->iov[0].iov_base,
			         mr->iov[0].iov_len, strerror(-ret));
	}
	if (ret)
		return ret;
	desc->lkey = imr->lkey;
	desc->rkey = imr->rkey;
	desc->mr = imr;
	mr->registrar_data = desc;
	mr->key = imr->rkey;
	mr->mr_fid.mem_desc = desc;
	return 0;
}

void hmr__verbs_dereg(struct hmr_domain *d, struct hmr_mr *mr)
{
	struct hmr_verbs_desc *desc = mr->registrar_data;
	int err;

	(void)d;
	if (!desc)
		return;
	err = ibv_dereg_mr(desc->mr);
	if (err)
		hmr_warn("ibv_dereg_mr: %s", strerror(err));
	mr->registrar_data = NULL;
}
