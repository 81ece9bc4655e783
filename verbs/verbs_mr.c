/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_mr.c: one registration through rdma-core: host, dma-buf, peer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/host.h"
#include "base/range.h"
#include "base/oserr.h"
#include "base/log.h"
#include "cache/cache.h"
#include "hmem/hmem.h"
#include "verbs/verbs.h"

/*
 * The kernel registers a region only at a NIC address with the page offset
 * of its first byte (ib_uverbs_reg_mr: start and hca_va; ibv_reg_dmabuf_mr:
 * offset and iova), on every NIC.  Under FI_MR_VIRT_ADDR that address is
 * the virtual one.  Without it, a region a peer addresses is registered at
 * 0, so the NIC itself resolves the peer's offsets (ibv_reg_mr(3): hca_va
 * 0 has the effect of ZERO_BASED); one that starts mid-page cannot be,
 * and is refused here, on every path, rather than shift the peer's
 * offsets.  A local-only region has no peer counting offsets: it is
 * registered at its own page offset, and the SGE addresses of its lkey
 * come from hmr_verbs_sge_addr (desc->iova + buf - desc->start), so any
 * buffer works.  iova <= va there, so iova + len cannot overflow where
 * va + len does not; checked all the same, as every end is.
 */
int hmr__verbs_nic_addr(bool virt_addr, int access, uint64_t va, uint64_t pos,
                        uint64_t len, uint64_t *iova)
{
	uint64_t in = pos & (hmr__host_page_size() - 1), at, end;

	if (virt_addr)
		at = va;
	else if (!(access & HMR_VERBS_PEER_ACCESS))
		at = in;
	else if (!in)
		at = 0;
	else {
		hmr_warn(
		        "offset addressing of [%#llx, +%llu) with remote "
		        "rights: the region starts %#llx into a page, and the "
		        "kernel gives a region only a NIC address with its own "
		        "page offset, so offset 0 cannot be byte 0; register "
		        "memory that starts on a page, register it for local "
		        "access only, or offer FI_MR_VIRT_ADDR",
		        (unsigned long long)va, (unsigned long long)len,
		        (unsigned long long)in);
		return -FI_EINVAL;
	}
	if (!hmr__range_end(at, len, &end)) {
		hmr_warn("NIC address %#llx + %llu of the region at %#llx "
		         "overflows",
		         (unsigned long long)at, (unsigned long long)len,
		         (unsigned long long)va);
		return -FI_EINVAL;
	}
	*iova = at;
	return 0;
}

/* rdma-core's errno as a -FI_E* code (a kernel's ENOTSUPP, 524, too). */
static int ibv_err(int err)
{
	return err > 0 ? hmr__os_error(err) : -FI_EIO;
}

#define DMABUF_ACCESS                                                          \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                    \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |                   \
	 IBV_ACCESS_RELAXED_ORDERING)

/* ibv_reg_dmabuf_mr(3) takes DMABUF_ACCESS flags only: a domain asking
 * MW_BIND or a registration asking FLUSH cannot use a dma-buf. */
static int dmabuf_access(int access, char *why, size_t why_len)
{
	if (!(access & ~DMABUF_ACCESS))
		return 0;
	snprintf(why, why_len,
	         "dma-buf: ibv_reg_dmabuf_mr takes no access flags %#x "
	         "(MW_BIND, FLUSH)",
	         access & ~DMABUF_ACCESS);
	return -FI_EOPNOTSUPP;
}

/* ibv_reg_dmabuf_mr(3): the iova must have the same page offset as the
 * dma-buf offset.  Said here (-FI_EINVAL), instead of shifting the peer's
 * addresses or leaving the kernel's EINVAL unexplained. */
static int dmabuf_page(uint64_t iova, uint64_t offset, char *why,
                       size_t why_len)
{
	uint64_t mask = hmr__host_page_size() - 1;

	if ((iova & mask) == (offset & mask))
		return 0;
	snprintf(why, why_len,
	         "dma-buf: the buffer is %#llx into a page, its NIC address "
	         "%#llx is not: ibv_reg_dmabuf_mr(3) wants the same page "
	         "offset",
	         (unsigned long long)(offset & mask), (unsigned long long)iova);
	return -FI_EINVAL;
}

/* Host memory (and host-allocated memory of a runtime). */
static int reg_host(struct hmr_domain *d, const struct hmr_verbs_range *r,
                    int access, struct ibv_mr **out)
{
	struct hmr_verbs *v = hmr__verbs(d);
	uint64_t va = r->iova;
	int err;

	/* Pages may come and go while the MR lives: ODP follows them. */
	if (v->caps.odp && !hmr__allocated(d))
		access |= IBV_ACCESS_ON_DEMAND | v->access_odp;
	*out = ibv_reg_mr_iova(v->pd, r->p, r->len, va, access);
	if (*out)
		return 0;
	err = errno;
	hmr_warn("ibv_reg_mr_iova(%p, %zu, hca_va %#llx, access %#x): %s", r->p,
	         r->len, (unsigned long long)va, access, strerror(err));
	return ibv_err(err);
}

/* HMR_DOMAIN_ODP_IMPLICIT: the implicit MR, when it grants all this
 * registration asks. */
static bool use_implicit(const struct hmr_verbs *v, const struct hmr_mr *mr)
{
	return v->implicit && !(mr->access & ~v->implicit_access) &&
	       !(mr->flags & FI_RMA_PMEM);
}

/* The caller's own dma-buf (FI_MR_DMABUF), registered at *iova: under
 * FI_MR_VIRT_ADDR its address base_addr + offset (fi_mr(3)), which core/
 * put in mr->base; otherwise 0, or the offset's page offset when local. */
static int reg_caller_dmabuf(struct hmr_domain *d, const struct hmr_mr *mr,
                             const struct fi_mr_dmabuf *b, int access,
                             struct ibv_mr **out, uint64_t *iova_out)
{
	uint64_t iova;
	char why[200];
	int ret;

	ret = hmr__verbs_nic_addr(hmr__virt_addr(d), access, mr->base,
	                          b->offset, b->len, &iova);
	if (ret) {
		hmr_warn("FI_MR_DMABUF fd %d at offset %#llx refused", b->fd,
		         (unsigned long long)b->offset);
		return ret;
	}
	ret = dmabuf_page(iova, b->offset, why, sizeof(why));
	if (!ret)
		ret = dmabuf_access(access, why, sizeof(why));
	if (ret) {
		hmr_warn("FI_MR_DMABUF fd %d: %s", b->fd, why);
		return ret;
	}
	*out = ibv_reg_dmabuf_mr(hmr__verbs(d)->pd, b->offset, b->len, iova,
	                         b->fd, access);
	*iova_out = iova;
	if (*out)
		return 0;
	hmr_warn("ibv_reg_dmabuf_mr(fd %d, offset %llu, len %zu, iova %#llx): "
	         "%s",
	         b->fd, (unsigned long long)b->offset, b->len,
	         (unsigned long long)iova, strerror(errno));
	return ibv_err(errno);
}

/* Path 1: the backend exports a dma-buf, the NIC imports it, the fd goes
 * back through the backend whatever happened. */
/* The dma-buf state of (iface, device): its slot, claimed the first time;
 * NULL when every slot of the interface holds another device. */
static _Atomic int *device_state(struct hmr_verbs *v, enum fi_hmem_iface iface,
                                 uint64_t device)
{
	uint64_t want = device + 1, seen;
	size_t i;

	if ((unsigned)iface > FI_HMEM_SYNAPSEAI || want == 0)
		return NULL;
	for (i = 0; i < HMR_MAX_DEVICES; i++) {
		seen = atomic_load(&v->dmabuf[iface][i].device);
		if (!seen && atomic_compare_exchange_strong(
		                     &v->dmabuf[iface][i].device, &seen, want))
			return &v->dmabuf[iface][i].state;
		if (seen == want)
			return &v->dmabuf[iface][i].state;
	}
	return NULL;
}

static int try_dmabuf(struct hmr_domain *d, const struct hmr_verbs_range *r,
                      int access, struct ibv_mr **out, char *why,
                      size_t why_len)
{
	struct hmr_verbs *v = hmr__verbs(d);
	const struct hmr_backend_ops *b = hmr__hmem_backend(r->iface);
	_Atomic int *state;
	int fd, err;
	uint64_t offset;
	void *p = r->p;

	if (!v->nic_dmabuf) {
		snprintf(why, why_len, "dma-buf: the NIC does not import them");
		return -FI_EOPNOTSUPP;
	}
	state = b ? device_state(v, r->iface, r->device) : NULL;
	if (!state) {
		snprintf(why, why_len,
		         "dma-buf: no backend for the device, or more than %d "
		         "of its devices",
		         HMR_MAX_DEVICES);
		return -FI_EOPNOTSUPP;
	}
	err = dmabuf_access(access, why, why_len);
	if (err)
		return err;
	if (atomic_load(state) == HMR_DMABUF_REFUSED) {
		snprintf(why, why_len,
		         "dma-buf: refused before for this device");
		return -FI_EOPNOTSUPP;
	}
	err = b->dmabuf_get(p, r->len, 0, &fd, &offset);
	if (err) {
		snprintf(why, why_len, "dma-buf: export failed (%s)",
		         hmr_strerror(err));
		return err;
	}
	err = dmabuf_page(r->iova, offset, why, why_len);
	if (err) {
		b->dmabuf_put(fd);
		return err;
	}
	*out = ibv_reg_dmabuf_mr(v->pd, offset, r->len, r->iova, fd, access);
	err = *out ? 0 : errno;
	b->dmabuf_put(fd);
	if (!err)
		return 0;
	snprintf(why, why_len, "dma-buf: ibv_reg_dmabuf_mr: %s", strerror(err));
	if (err == EOPNOTSUPP || err == ENOTSUP) {
		/* A real refusal demotes this device only, for good. */
		atomic_store(state, HMR_DMABUF_REFUSED);
		hmr_info("%s device %llu: dma-buf refused, demoted",
		         hmr_hmem_iface_name(r->iface),
		         (unsigned long long)r->device);
	}
	return -FI_EOPNOTSUPP;
}

/* Path 2: a peer-memory module lets ibv_reg_mr pin device memory. */
static int try_peermem(struct hmr_domain *d, const struct hmr_verbs_range *r,
                       int access, struct ibv_mr **out, char *why,
                       size_t why_len)
{
	char module[64];

	if (!hmr__verbs_peermem(r->iface, module, sizeof(module))) {
		snprintf(why, why_len, "peer-memory: no module loaded");
		return -FI_EOPNOTSUPP;
	}
	*out = ibv_reg_mr_iova(hmr__verbs(d)->pd, r->p, r->len, r->iova,
	                       access);
	if (*out)
		return 0;
	snprintf(why, why_len, "peer-memory (%s): ibv_reg_mr_iova: %s", module,
	         strerror(errno));
	return -FI_EOPNOTSUPP;
}

static int reg_device(struct hmr_domain *d, const struct hmr_verbs_range *r,
                      int access, struct ibv_mr **out)
{
	char why1[160], why2[160];

	if (hmr__hmem_p2p_disabled()) {
		hmr_warn("%s memory: FI_HMEM_DISABLE_P2P forbids both the "
		         "dma-buf and the peer-memory path",
		         hmr_hmem_iface_name(r->iface));
		return -FI_EOPNOTSUPP;
	}
	if (!try_dmabuf(d, r, access, out, why1, sizeof(why1)))
		return 0;
	if (!try_peermem(d, r, access, out, why2, sizeof(why2)))
		return 0;
	hmr_warn("%s device %llu memory cannot be registered: %s; %s",
	         hmr_hmem_iface_name(r->iface), (unsigned long long)r->device,
	         why1, why2);
	return -FI_EOPNOTSUPP;
}

int hmr__verbs_reg_range(struct hmr_domain *d, const struct hmr_verbs_range *r,
                         int access, struct ibv_mr **out)
{
	if (r->device_memory)
		return reg_device(d, r, access, out);
	return reg_host(d, r, access, out);
}

int hmr__verbs_reg(struct hmr_domain *d, struct hmr_mr *mr,
                   const struct hmr_mr_req *req)
{
	int access = hmr__verbs_access(d, mr);
	struct hmr_verbs_mr *vm;
	struct hmr_verbs_range r = {
	        .p = mr->iov[0].iov_base,
	        .len = mr->iov[0].iov_len,
	        .iface = mr->iface,
	        .device = mr->device,
	        .device_memory = mr->iface != FI_HMEM_SYSTEM &&
	                         !(mr->hmem_flags & HMR_HMEM_HOST_ALLOC),
	};
	struct ibv_mr *imr = NULL;
	int ret;

	_Static_assert(sizeof(*vm) <= sizeof(mr->registrar_space),
	               "the desc lives in the MR");
	vm = (struct hmr_verbs_mr *)mr->registrar_space;
	vm->entry = NULL;
	/* A sub-MR is a registration of its own on verbs, on its memory's
	 * path: the NIC checks its rights and bounds, not the base's. */
	if (req->flags & FI_MR_DMABUF)
		ret = reg_caller_dmabuf(d, mr, req->attr.dmabuf, access, &imr,
		                        &r.iova);
	else if ((ret = hmr__verbs_nic_addr(hmr__virt_addr(d), access, mr->base,
	                                    mr->base, r.len, &r.iova)))
		return ret;
	else if (!r.device_memory && use_implicit(hmr__verbs(d), mr))
		imr = hmr__verbs(d)->implicit;
	else if (hmr__verbs_cacheable(d, &r, access))
		ret = hmr__verbs_cache_get(d, &r, access, &vm->entry, &imr,
		                           &r.iova);
	else
		ret = hmr__verbs_reg_range(d, &r, access, &imr);
	if (ret)
		return ret;
	vm->desc.lkey = imr->lkey;
	vm->desc.rkey = imr->rkey;
	vm->desc.mr = imr;
	/* A cached registration may start before this MR: the NIC addresses
	 * its bytes from the registration's start, at its NIC address. */
	vm->desc.start = vm->entry ? vm->entry->start : mr->base;
	vm->desc.iova = r.iova;
	mr->registrar_data = vm;
	mr->key = imr->rkey;
	mr->mr_fid.mem_desc = &vm->desc;
	return 0;
}

int hmr__verbs_dereg(struct hmr_domain *d, struct hmr_mr *mr)
{
	struct hmr_verbs_mr *vm = mr->registrar_data;
	int err;

	if (!vm || vm->desc.mr == hmr__verbs(d)->implicit)
		goto out;
	if (vm->entry) {
		hmr__verbs_cache_put(d, vm->entry);
		vm->entry = NULL;
		goto out;
	}
	/* ibv_dereg_mr(3): it fails while a memory window is bound. */
	err = ibv_dereg_mr(vm->desc.mr);
	if (err) {
		hmr_warn("ibv_dereg_mr (rkey %#x): %s; a memory window still "
		         "bound? The MR stays open",
		         vm->desc.rkey, strerror(err));
		return -FI_EBUSY;
	}
out:
	mr->registrar_data = NULL;
	return 0;
}
