/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* synapseai.c: the SynapseAI backend's ops: classification and dma-buf. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/config.h"
#include "base/host.h"
#include "base/log.h"
#include "base/range.h"
#include "hmem/hmem.h"
#include "synapseai/synapseai_api.h"

/* libfabric has no such setting (it caches no Gaudi memory); hmr's
 * follows the FI_MR_<VENDOR>_CACHE_MONITOR_ENABLED pattern. */
HMR_CONFIG_VAR(HMR_MR_SYNAPSEAI_CACHE_MONITOR_ENABLED, "1",
               "The registration cache keeps registrations of Gaudi HBM "
               "(an address keeps its HBM pages while the device is held, "
               "so a freed and reallocated buffer is the same memory)");

/*
 * Synapse has no pointer query, no allocation lookup and no buffer id.
 * What it does give is the HBM range of the process's one device:
 * synDeviceMalloc allocates from the global HBM pool that the runtime
 * maps, whole, at acquire, starting at globalHbmBaseAddress.  So a
 * pointer is device memory exactly when it lies in that range, and the
 * "allocation" hmr reports is the whole range.  No buffer id is needed
 * for a registration cache to stay correct: the pool's addresses keep the
 * same HBM pages while the device is acquired, so a freed and reallocated
 * address is still the same memory (see doc/hmem-synapseai.md).
 */

static int syn_init(char *why, size_t why_len)
{
	return hmr__synapseai_load(why, why_len);
}

static void syn_fini(void)
{
	hmr__synapseai_unload();
}

static bool in_hbm(uintptr_t p, size_t len)
{
	return hmr__range_inside(p, len, hmr__synapseai.hbm_base,
	                         hmr__synapseai.hbm_size);
}

static int syn_query(const void *ptr, size_t len, struct hmr_hmem_info *info)
{
	const struct hmr_synapseai *s = &hmr__synapseai;
	uintptr_t p = (uintptr_t)ptr;
	uint64_t base, size;

	/* Until the process holds the device, no memory is the Gaudi's. */
	if (hmr__synapseai_held() && in_hbm(p, 1)) {
		if (!in_hbm(p, len ? len : 1)) {
			hmr_warn("[%p, +%zu) runs past the end of the Gaudi's "
			         "HBM [%#llx, +%llu)",
			         ptr, len, (unsigned long long)s->hbm_base,
			         (unsigned long long)s->hbm_size);
			return -FI_EINVAL;
		}
		memset(info, 0, sizeof(*info));
		info->iface = FI_HMEM_SYNAPSEAI;
		info->device = s->device;
		info->base = s->hbm_base;
		info->size = s->hbm_size;
		/* The HBM is one buffer: an address keeps its pages, so
		 * its identity never changes (doc/hmem-synapseai.md). */
		info->buffer_id = (uint64_t)s->device + 1;
		info->flags = HMR_HMEM_DEVICE_ONLY;
		return 0;
	}
	if (hmr__synapseai_host_query(p, &base, &size) == 0) {
		memset(info, 0, sizeof(*info));
		info->iface = FI_HMEM_SYNAPSEAI;
		info->device = s->device;
		info->base = base;
		info->size = size;
		info->flags = HMR_HMEM_HOST_ALLOC;
		return 0;
	}
	return -FI_ENOENT;
}

/*
 * Route 1, hl-thunk: a new dma-buf the caller owns.  The kernel wants
 * the start of the mapped area (the HBM base) as addr, and page-aligned
 * sizes and offsets.  It is asked for offset 0 and a size reaching the
 * end of the range, so byte k of the dma-buf is HBM byte k whether the
 * driver starts it at addr + offset (hardware) or at addr (the
 * simulator's memfd): ptr is at offset ptr - base either way.
 */
static int export_hlthunk(uintptr_t p, size_t len, int *fd)
{
	const struct hmr_synapseai *s = &hmr__synapseai;
	uint64_t end, size;
	int r;

	if (!hmr__range_end(p, len, &end) ||
	    !hmr__align_up(end - s->hbm_base, hmr__host_page_size(), &size) ||
	    size > s->hbm_size) {
		hmr_warn(
		        "[%#llx, +%zu): the page-rounded export would run past "
		        "the HBM [%#llx, +%llu)",
		        (unsigned long long)p, len,
		        (unsigned long long)s->hbm_base,
		        (unsigned long long)s->hbm_size);
		return -FI_EINVAL;
	}
	r = s->hlthunk_device_mapped_memory_export_dmabuf_fd(
	        s->device_fd, s->hbm_base, size, 0, O_RDWR | O_CLOEXEC);
	if (r < 0)
		return hmr__hlthunk_check(
		        "hlthunk_device_mapped_memory_export_dmabuf_fd", r);
	*fd = r;
	return 0;
}

/*
 * Route 2, hcclLookupDMABuff: HCL's one gaudi-direct dma-buf of the whole
 * HBM pool, whatever address is asked (it ignores addr and size).  Byte 0
 * is the pool start, globalHbmBaseAddress, so ptr is at ptr - base, not
 * at libfabric's 0.  The fd is HCL's: hmr hands out a dup, so that
 * dmabuf_put closes what it got on both routes and never HCL's fd.  With
 * no gaudi-direct fd HCL returns success without writing *fd.
 */
static int export_hccl(uintptr_t p, size_t len, int *fd)
{
	const struct hmr_synapseai *s = &hmr__synapseai;
	uint64_t end;
	struct stat st;
	int hcl_fd = -1, r;

	if (!s->hcclLookupDMABuff) {
		hmr_info("synapseai: neither libhl-thunk nor hcclLookupDMABuff "
		         "is present: no dma-buf export");
		return -FI_EOPNOTSUPP;
	}
	r = s->hcclLookupDMABuff(p, len, &hcl_fd);
	if (r != HMR_HCCL_SUCCESS)
		return hmr__hccl_check("hcclLookupDMABuff", r);
	if (hcl_fd < 0) {
		hmr_info("synapseai: HCL has no gaudi-direct dma-buf (its "
		         "scale-out is not running); install libhl-thunk.so "
		         "to export without HCL");
		return -FI_EOPNOTSUPP;
	}
	/* A dma-buf's inode carries its size: it must reach the range. */
	if (hmr__range_end(p - s->hbm_base, len, &end) &&
	    fstat(hcl_fd, &st) == 0 && st.st_size > 0 &&
	    (uint64_t)st.st_size < end) {
		hmr_warn("HCL's dma-buf (%lld bytes) does not reach [%#llx, "
		         "+%zu)",
		         (long long)st.st_size, (unsigned long long)p, len);
		return -FI_EINVAL;
	}
	*fd = fcntl(hcl_fd, F_DUPFD_CLOEXEC, 0);
	if (*fd < 0) {
		r = errno;
		hmr_warn("dup of HCL's dma-buf fd %d: %s", hcl_fd, strerror(r));
		return r == EMFILE  ? -FI_EMFILE
		       : r == EBADF ? -FI_EBADF
		                    : -FI_EIO;
	}
	return 0;
}

/*
 * hl-thunk when it is loaded, else HCL's fd.  A failed hl-thunk export
 * is not retried through HCL: hcclLookupDMABuff may crash in a process
 * where HCL never started, and only hl-thunk tells why it refused.
 */
static int syn_dmabuf_get(const void *ptr, size_t len, uint64_t flags, int *fd,
                          uint64_t *offset)
{
	const struct hmr_synapseai *s = &hmr__synapseai;
	uintptr_t p = (uintptr_t)ptr;
	int ret;

	(void)flags; /* Gaudi offers no choice of mapping. */
	if (!hmr__synapseai_held() || !in_hbm(p, len)) {
		hmr_warn("[%p, +%zu) is not inside the Gaudi's HBM [%#llx, "
		         "+%llu): only device memory is exported",
		         ptr, len, (unsigned long long)s->hbm_base,
		         (unsigned long long)s->hbm_size);
		return in_hbm(p, 1) ? -FI_EINVAL : -FI_EOPNOTSUPP;
	}
	ret = s->hlthunk ? export_hlthunk(p, len, fd) : export_hccl(p, len, fd);
	if (ret)
		return ret;
	*offset = p - s->hbm_base;
	return 0;
}

/* Both routes hand out an fd hmr owns (HCL's is dup'ed). */
static int syn_dmabuf_put(int fd)
{
	if (close(fd) == 0)
		return 0;
	hmr_warn("close of dma-buf fd %d: %s", fd, strerror(errno));
	return -FI_EBADF;
}

/*
 * No IPC (Synapse has no handle to open another process's device memory;
 * a dma-buf fd passed over a socket is the way) and no peer-memory
 * module: Gaudi memory reaches a NIC as a dma-buf only.
 */
const struct hmr_backend_ops hmr__synapseai_backend = {
        .iface = FI_HMEM_SYNAPSEAI,
        .peermem_modules = NULL,
        .init = syn_init,
        .fini = syn_fini,
        .query = syn_query,
        .host_register = hmr__synapseai_host_register,
        .host_unregister = hmr__synapseai_host_unregister,
        .copy_to = hmr__synapseai_copy_to,
        .copy_from = hmr__synapseai_copy_from,
        .dmabuf_get = syn_dmabuf_get,
        .dmabuf_put = syn_dmabuf_put,
        .describe = hmr__synapseai_describe,
        .device = hmr__synapseai_device,
        .alloc = hmr__synapseai_alloc,
        .free = hmr__synapseai_free,
        .cache_setting = "HMR_MR_SYNAPSEAI_CACHE_MONITOR_ENABLED",
};
