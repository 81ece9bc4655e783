/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* neuron.c: the Neuron backend's ops: query, dma-buf, copies. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/config.h"
#include "base/log.h"
#include "base/range.h"
#include "hmem/hmem.h"
#include "neuron/neuron_api.h"

/* libfabric has no such setting (it caches no Neuron memory); hmr's
 * follows the FI_MR_<VENDOR>_CACHE_MONITOR_ENABLED pattern. */
HMR_CONFIG_VAR(HMR_MR_NEURON_CACHE_MONITOR_ENABLED, "1",
               "The registration cache keeps registrations of Neuron device "
               "memory (a tensor's id is its /dev/neuron mapping's: a new "
               "tensor at a freed address gets a new id and misses)");

static int neuron_init(char *why, size_t why_len)
{
	int ret = hmr__neuron_load(why, why_len);

	if (!ret)
		hmr__neuron_maps_init();
	return ret;
}

static void neuron_fini(void)
{
	hmr__neuron_maps_fini();
}

/* What nrt_get_attached_efa_bdf says of addr. */
enum bdf_answer { BDF_NO, BDF_YES, BDF_UNKNOWN };

static enum bdf_answer ask_bdf(const void *addr)
{
	char bdf[64], name[64];
	size_t len = sizeof(bdf);
	hmr_NRT_STATUS s;

	s = hmr__neuron.nrt_get_attached_efa_bdf(addr, bdf, &len);
	switch (s) {
	case HMR_NRT_SUCCESS:
		return BDF_YES;
	/* nrt.h: NRT_FAILURE for anything not "allocated on a Neuron
	 * device"; before the application's nrt_init, or after its
	 * nrt_close, there is no such memory either. */
	case HMR_NRT_FAILURE:
	case HMR_NRT_UNINITIALIZED:
	case HMR_NRT_CLOSED:
		return BDF_NO;
	default:
		/* Undocumented for this call: the mapping alone decides. */
		hmr_warn("nrt_get_attached_efa_bdf(%p): %s", addr,
		         hmr__neuron_status_name(s, name, sizeof(name)));
		return BDF_UNKNOWN;
	}
}

/*
 * Neuron memory is what lies in a /dev/neuron mapping (neuron_maps.c).
 * Where the runtime has nrt_get_attached_efa_bdf, it must confirm the
 * address as a device allocation (HMR_HMEM_DEVICE_ONLY); what it disowns
 * (a HOST-placement tensor, unallocated HBM inside a per-HBM mapping) is
 * reported as host memory, whichever way the mappings were asked.  When
 * asking the kernel costs a read of /proc/self/maps, the runtime is asked
 * first, so a host pointer costs no read.  base and size are the
 * mapping's: with NEURON_RT_MAP_HBM one mapping holds many tensors.
 */
static int neuron_query(const void *ptr, size_t len, struct hmr_hmem_info *info)
{
	enum bdf_answer bdf = BDF_UNKNOWN;
	struct hmr_neuron_map m;
	int ret;

	(void)len;
	if (hmr__neuron.nrt_get_attached_efa_bdf && !hmr__neuron_maps_fast()) {
		bdf = ask_bdf(ptr);
		if (bdf == BDF_NO)
			return -FI_ENOENT;
	}
	ret = hmr__neuron_map_find((uintptr_t)ptr, &m);
	if (ret <= 0)
		return ret ? ret : -FI_ENOENT;
	if (hmr__neuron.nrt_get_attached_efa_bdf && bdf == BDF_UNKNOWN &&
	    hmr__neuron_maps_fast())
		bdf = ask_bdf(ptr);
	if (bdf == BDF_NO)
		return -FI_ENOENT;
	memset(info, 0, sizeof(*info));
	info->iface = FI_HMEM_NEURON;
	info->device = m.device;
	info->base = m.start;
	info->size = m.end - m.start;
	info->buffer_id = m.id;
	/* Callers name Neuron devices as they please (a NeuronCore, the
	 * device, -1 from aws-ofi-nccl): the hint is not checked. */
	info->flags = HMR_HMEM_DEVICE_UNCHECKED;
	if (bdf == BDF_YES)
		info->flags |= HMR_HMEM_DEVICE_ONLY;
	return 0;
}

/* The Neuron mapping that holds all of [ptr, ptr + len). */
static int mapping_of(const void *ptr, size_t len, struct hmr_neuron_map *m)
{
	int ret = hmr__neuron_map_find((uintptr_t)ptr, m);

	if (ret < 0)
		return ret;
	if (!ret) {
		hmr_warn("%p is not in a /dev/neuron mapping", ptr);
		return -FI_EINVAL;
	}
	if (!hmr__range_inside((uintptr_t)ptr, len, m->start,
	                       m->end - m->start)) {
		hmr_warn("[%p, +%zu) runs past its Neuron mapping [%#lx, "
		         "%#lx): one dma-buf or copy covers one mapping",
		         ptr, len, (unsigned long)m->start,
		         (unsigned long)m->end);
		return -FI_EINVAL;
	}
	return 0;
}

/* NEURON_RT_MAP_HBM: the runtime maps each HBM whole, so a mapping is
 * not one allocation and its start is no tensor's base. */
static bool mapping_is_one_allocation(void)
{
	const char *v = getenv("NEURON_RT_MAP_HBM");

	return !v || !*v || strcmp(v, "0") == 0;
}

/*
 * A wrong offset would let the NIC write next to the buffer, so the one
 * the runtime reports is held against the fd's size where the fd tells
 * it (a dma-buf answers lseek SEEK_END with its size).
 */
static int check_offset(int fd, uint64_t offset, size_t len)
{
	off_t size = lseek(fd, 0, SEEK_END);
	uint64_t end;

	if (size < 0 ||
	    (hmr__range_end(offset, len, &end) && end <= (uint64_t)size)) {
		lseek(fd, 0, SEEK_SET);
		return 0;
	}
	hmr_warn("the runtime put %zu bytes at offset %llu of a dma-buf of "
	         "%lld bytes",
	         len, (unsigned long long)offset, (long long)size);
	return -FI_EIO;
}

/* Only v1: it exports from its va, which must start an allocation. */
static int export_v1(const void *ptr, size_t len,
                     const struct hmr_neuron_map *m, int *fd, uint64_t *offset)
{
	uintptr_t p = (uintptr_t)ptr;

	if (p != m->start && !mapping_is_one_allocation()) {
		hmr_warn("%p is %lu bytes into a mapping that holds several "
		         "tensors (NEURON_RT_MAP_HBM), and this runtime has "
		         "only nrt_get_dmabuf_fd, which needs an allocation's "
		         "start: register from the tensor's start, or use a "
		         "runtime with nrt_get_dmabuf_fd_v2",
		         ptr, (unsigned long)(p - m->start));
		return -FI_EINVAL;
	}
	/* The mapping is the allocation: export it from its start. */
	*offset = p - m->start;
	return HMR_NRT(nrt_get_dmabuf_fd, m->start, *offset + len, fd);
}

/*
 * Called only to register for a NIC, never to probe.  v2 takes any
 * address and reports the offset; v1 needs the allocation's start
 * (export_v1).  flags: Neuron has one mapping type; HMR_DMABUF_PCIE is
 * accepted and means nothing here.
 */
static int neuron_dmabuf_get(const void *ptr, size_t len, uint64_t flags,
                             int *fd, uint64_t *offset)
{
	struct hmr_neuron_map m;
	uint64_t off = 0;
	int ret, out = -1;

	(void)flags;
	if (!hmr__neuron.nrt_get_dmabuf_fd_v2 &&
	    !hmr__neuron.nrt_get_dmabuf_fd) {
		hmr_info("this Neuron runtime exports no dma-buf");
		return -FI_EOPNOTSUPP;
	}
	ret = mapping_of(ptr, len, &m);
	if (ret)
		return ret;
	if (hmr__neuron.nrt_get_dmabuf_fd_v2)
		ret = HMR_NRT(nrt_get_dmabuf_fd_v2, (uintptr_t)ptr, len, &out,
		              &off);
	else
		ret = export_v1(ptr, len, &m, &out, &off);
	if (!ret)
		ret = check_offset(out, off, len);
	if (ret) {
		if (out >= 0)
			close(out);
		return ret;
	}
	*fd = out;
	*offset = off;
	return 0;
}

/* The caller owns the fd (nrt.h has no call to give one back). */
static int neuron_dmabuf_put(int fd)
{
	return close(fd) == 0 ? 0 : -FI_EBADF;
}

/*
 * The device mapping is the CPU's too (read/write for its owner, slow
 * over PCIe): what the runtime has no call for is a plain memcpy, where
 * the mapping allows it; a mapping the CPU may not touch answers
 * -FI_ENOSYS rather than a fault.
 */
static int cpu_copy(void *dst, const void *src, const void *dev, size_t len,
                    bool to_device)
{
	struct hmr_neuron_map m;
	int ret = mapping_of(dev, len, &m);

	if (ret)
		return ret;
	if (!(to_device ? m.writable : m.readable)) {
		hmr_warn("the Neuron runtime has no call to copy %s a device "
		         "address, and the mapping of %p is not %s by the CPU",
		         to_device ? "to" : "from", dev,
		         to_device ? "writable" : "readable");
		return -FI_ENOSYS;
	}
	memcpy(dst, src, len);
	return 0;
}

static int neuron_copy_to(void *dev, const void *host, size_t len)
{
	if (hmr__neuron.nrt_memcpy_to_device)
		return HMR_NRT(nrt_memcpy_to_device, dev, host, len);
	return cpu_copy(dev, host, dev, len, true);
}

/* nrt_tensor_read takes a tensor handle, never an address. */
static int neuron_copy_from(void *host, const void *dev, size_t len)
{
	return cpu_copy(host, dev, dev, len, false);
}

static int neuron_host_register(void *ptr, size_t len)
{
	hmr_warn("[%p, +%zu): the Neuron runtime cannot register host "
	         "memory (it has no such call)",
	         ptr, len);
	return -FI_ENOSYS;
}

static int neuron_host_unregister(void *ptr)
{
	hmr_warn("%p: the Neuron runtime has no host registration to undo",
	         ptr);
	return -FI_ENOSYS;
}

/* peermem_modules NULL: no peer-memory module serves Neuron memory to
 * every NIC (doc/hmem-neuron.md: EFA's own driver is the exception). */
const struct hmr_backend_ops hmr__neuron_backend = {
        .iface = FI_HMEM_NEURON,
        .init = neuron_init,
        .fini = neuron_fini,
        .query = neuron_query,
        .host_register = neuron_host_register,
        .host_unregister = neuron_host_unregister,
        .copy_to = neuron_copy_to,
        .copy_from = neuron_copy_from,
        .dmabuf_get = neuron_dmabuf_get,
        .dmabuf_put = neuron_dmabuf_put,
        .describe = hmr__neuron_describe,
        .device = hmr__neuron_device,
        .cache_setting = "HMR_MR_NEURON_CACHE_MONITOR_ENABLED",
};
