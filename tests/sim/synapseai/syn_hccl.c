/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* syn_hccl.c: hcclLookupDMABuff, the gaudi-direct dma-buf of HCL. */
#include "syn.h"

#include <fcntl.h>
#include <unistd.h>

/*
 * What the real one does (HabanaAI/HCL: hccl_wrapper.cpp,
 * hccl_context.cpp, libfabric/hl_ofi_component.cpp,
 * platform/gen2_arch_common/scaleout_provider.cpp):
 * - addr and size are IGNORED.  It returns, for any address (a host
 *   pointer included), the one dma-buf fd HCL exported when its
 *   gaudi-direct scale-out started: hl-thunk's export of the whole
 *   "global_hbm" pool, the pool synDeviceMalloc allocates from, with
 *   offset = pool start - mapped area start.  Byte 0 of that fd is the
 *   pool's first byte, so a buffer at p is at fd offset p - pool start;
 *   libfabric's "offset 0" is right only for a buffer at the pool start.
 * - The fd belongs to HCL: the same number comes back every call and the
 *   caller must not close it (libfabric's put_dmabuf_fd for SynapseAI is
 *   a no-op).
 * - The return value is an hcclResult_t.  With no gaudi-direct fd (HCL
 *   not started over verbs, or the export failed) HCL's VERIFY throws
 *   and the wrapper returns the global DFA status, normally hcclSuccess,
 *   WITHOUT writing *fd: that is why libfabric tests *fd < 0, not the
 *   return value.  A NULL fd gives hcclInvalidArgument.
 *
 * The simulator: HCL's pool is the whole HBM of the acquired device and
 * starts at globalHbmBaseAddress (the runtime's own buffers fill its
 * first SIM_SYN_RESERVED bytes, so no user buffer sits at offset 0).
 * The fd is made at the first call after acquire, through the same
 * export as hlthunk_device_mapped_memory_export_dmabuf_fd(fd,
 * globalHbmBaseAddress, dramSize, 0, O_RDWR | O_CLOEXEC), so its byte 0
 * is globalHbmBaseAddress on hardware and here alike, and it is closed
 * when the device is released.  Without an acquired device, or when the
 * device's dma-buf switch is off, the call returns hcclSuccess and leaves
 * *fd alone (the real one may crash instead when HCL never started).
 */

SIM_API int hcclLookupDMABuff(uint64_t addr, uint64_t size, int *fd)
{
	long st;
	int rc = hcclSuccess;

	(void)addr;
	(void)size;
	if (hmr_sim_synapseai__fail("hcclLookupDMABuff", hcclInternalError,
	                            &st))
		return (int)st;
	if (!fd)
		return hcclInvalidArgument;
	pthread_mutex_lock(&syn.lock);
	if (syn.initialized && syn.acquired && syn.hccl_fd < 0) {
		int nfd = hmr_sim_synapseai__export(syn.fd, syn.hl.hbm_base,
		                                    syn.hl.hbm_size, 0,
		                                    O_RDWR | O_CLOEXEC);

		syn.hccl_fd = nfd >= 0 ? nfd : -1;
	}
	if (syn.initialized && syn.acquired && syn.hccl_fd >= 0)
		*fd = syn.hccl_fd;
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

/* The device's release closes HCL's fd. */
void syn_hccl_reset(void)
{
	if (syn.hccl_fd >= 0)
		close(syn.hccl_fd);
	syn.hccl_fd = -1;
}
