/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dmabuf.c: dma-buf export, the EFA BDF query and the allocation-id hook. */
#include "sim_neuron.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * dma-buf export.  The fd is a dup of the tensor's memfd, NOT a real
 * dma-buf (this kernel cannot make one), or in the test VM a udmabuf of
 * the whole memfd (sim_dmabuf_fd): either way offset 0 of the fd is the
 * first byte of the tensor, its base VA.
 *
 * nrt_get_dmabuf_fd (v1) has no offset to report, so only the base works
 * and the fd's offset 0 is va, as the callers assume (libfabric
 * src/hmem_neuron.c sets the offset to 0 for v1).  An interior va fails
 * with NRT_INVALID: libfabric commit fe30e577c says v1 fails for a VA
 * that is not "aligned" and fabtests' efa_mr_test expects every interior
 * offset to fail with v1; the status is undocumented, NRT_INVALID is
 * what libnrt 2.32 was seen to return for refused VAs (aws-neuron/nkipy
 * nrt_dmabuf_fix.py).
 *
 * nrt_get_dmabuf_fd_v2 accepts any va inside a device tensor and reports
 * in *offset where va lies in the fd: here va - base.  (The runtime may
 * start its dma-buf at the page holding va instead; a caller must use
 * *offset as given, never recompute it.)
 *
 * Both: the range [va, va + size) must end within the tensor's pages;
 * host memory and unknown addresses give NRT_INVALID; a core whose
 * dma-buf switch is off gives NRT_FAILURE (libfabric then falls back to
 * ibv_reg_mr); running out of fds gives NRT_RESOURCE.  The caller closes
 * the fd.
 */
static NRT_STATUS sim_dmabuf(uint64_t va, uint64_t size, int *fd,
                             uint64_t *offset, int interior_ok)
{
	NRT_STATUS rc = NRT_INVALID;
	struct nrt_tensor *t;
	uint64_t off;
	int dup_fd;

	if (!fd || size == 0 || (interior_ok && !offset))
		return NRT_INVALID;
	pthread_mutex_lock(&sim.lock);
	t = sim_find_va((uintptr_t)va);
	if (!t || t->placement != NRT_TENSOR_PLACEMENT_DEVICE)
		goto out;
	off = va - t->va;
	if (!sim_cfg.dmabuf[t->nc]) {
		rc = NRT_FAILURE;
		goto out;
	}
	if ((!interior_ok && off != 0) || size > t->span - off)
		goto out;
	dup_fd = sim_dmabuf_fd(t->fd, 0, t->span);
	if (dup_fd < 0) {
		rc = NRT_RESOURCE;
		goto out;
	}
	*fd = dup_fd;
	if (offset)
		*offset = off;
	rc = NRT_SUCCESS;
out:
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API NRT_STATUS nrt_get_dmabuf_fd(uint64_t va, uint64_t size, int *fd)
{
	SIM_ENTER(nrt_get_dmabuf_fd);
	return sim_dmabuf(va, size, fd, NULL, 0);
}

#if SIM_NRT_DMABUF_V2
SIM_API NRT_STATUS nrt_get_dmabuf_fd_v2(uint64_t va, uint64_t size, int *fd,
                                        uint64_t *offset)
{
	SIM_ENTER(nrt_get_dmabuf_fd_v2);
	return sim_dmabuf(va, size, fd, offset, 1);
}
#endif

/*
 * nrt.h: the BDF of the EFA NIC attached to the device whose HBM holds
 * va.  It answers for any address inside a live DEVICE tensor, which
 * makes it the runtime's only "is this Neuron memory?" query (NIXL's
 * libfabric plugin uses it that way); anything else is NRT_FAILURE.  The
 * simulated NIC of device D is 0000:<0x10 + D>:00.0.
 */
SIM_API NRT_STATUS nrt_get_attached_efa_bdf(const void *va, char *efa_bdf,
                                            size_t *len)
{
	struct nrt_tensor *t;
	char bdf[16];
	int n = 0;

	SIM_ENTER(nrt_get_attached_efa_bdf);
	if (!va || !efa_bdf || !len)
		return NRT_FAILURE;
	pthread_mutex_lock(&sim.lock);
	t = sim_find_va((uintptr_t)va);
	if (t && t->placement == NRT_TENSOR_PLACEMENT_DEVICE)
		n = snprintf(bdf, sizeof(bdf), "0000:%02x:00.0",
		             0x10 + sim_device_of(t->nc));
	pthread_mutex_unlock(&sim.lock);
	if (n <= 0)
		return NRT_FAILURE;
	if (*len < (size_t)n + 1)
		return NRT_RESOURCE; /* "buffer is not large enough" */
	memcpy(efa_bdf, bdf, (size_t)n + 1);
	*len = (size_t)n;
	return NRT_SUCCESS;
}

/*
 * Test hook, not a runtime symbol: the id of the live tensor whose Neuron
 * VA range holds va (device or HOST placement), 0 if none.  Ids are never
 * reused, so a test sees a freed VA come back as a new allocation.
 */
SIM_API unsigned long long hmr_sim_neuron_alloc_id(const void *va)
{
	unsigned long long id = 0;
	struct nrt_tensor *t;

	pthread_mutex_lock(&sim.lock);
	t = sim_find_va((uintptr_t)va);
	if (t)
		id = t->id;
	pthread_mutex_unlock(&sim.lock);
	return id;
}
