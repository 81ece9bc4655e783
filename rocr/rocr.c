/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rocr.c: the ROCr backend's ops: query, locking, copies, dma-buf, IPC. */
#include <string.h>

#include "base/log.h"
#include "base/range.h"
#include "base/config.h"
#include "hmem/hmem.h"
#include "rocr/rocr_api.h"

HMR_CONFIG_VAR(FI_MR_ROCR_CACHE_MONITOR_ENABLED, "1",
               "The registration cache keeps registrations of rocr device "
               "memory (a reallocation gets a new buffer id and misses)");

static int rocr_init(char *why, size_t why_len)
{
	return hmr__rocr_load(why, why_len);
}

static void rocr_fini(void)
{
	hmr__rocr_unload();
}

/* The device number of a GPU agent: its place among the GPU agents, in
 * hsa_iterate_agents order (the number a device hint names); -1 if the
 * agent is not a GPU. */
static int gpu_index(hmr_hsa_agent_t a)
{
	int i;

	for (i = 0; i < hmr__rocr.gpu_count; i++)
		if (hmr__rocr.gpu[i].handle == a.handle)
			return i;
	return -1;
}

static bool is_cpu(hmr_hsa_agent_t a)
{
	int i;

	for (i = 0; i < hmr__rocr.cpu_count; i++)
		if (hmr__rocr.cpu[i].handle == a.handle)
			return true;
	return false;
}

static int pointer_info(const void *ptr, hmr_hsa_pointer_info_t *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->size = sizeof(*pi);
	return HMR_HSA(hsa_amd_pointer_info, ptr, pi, NULL, NULL, NULL);
}

/*
 * ROCr reports hostBaseAddress == agentBaseAddress for every allocation,
 * GPU memory included: the owner agent tells device memory from host
 * memory.  Memory of a GPU (pool allocations, IPC mappings, interop) is
 * device-only; memory of the CPU agent's pools and locked host memory is
 * host-alloc.  ROCr has no managed memory type: HIP's managed memory is
 * either a CPU pool allocation (host-alloc here) or, with HMM, plain
 * host memory that ROCr does not know (FI_HMEM_SYSTEM).
 */
static int describe(const hmr_hsa_pointer_info_t *pi, uint64_t id,
                    struct hmr_hmem_info *info)
{
	int dev = gpu_index(pi->agentOwner);

	memset(info, 0, sizeof(*info));
	info->iface = FI_HMEM_ROCR;
	info->base = (uintptr_t)pi->agentBaseAddress;
	info->size = pi->sizeInBytes;
	info->buffer_id = id;
	if (pi->type == HMR_HSA_POINTER_LOCKED) {
		info->base = (uintptr_t)pi->hostBaseAddress;
		info->flags = HMR_HMEM_HOST_ALLOC;
	} else if (dev >= 0) {
		info->device = (uint64_t)dev;
		info->flags = HMR_HMEM_DEVICE_ONLY;
	} else if (is_cpu(pi->agentOwner)) {
		info->flags = HMR_HMEM_HOST_ALLOC;
	} else {
		hmr_warn("rocr: memory at %p is owned by an agent "
		         "hsa_iterate_agents did not list (or beyond the "
		         "first %d GPUs)",
		         pi->agentBaseAddress, HMR_MAX_DEVICES);
		return -FI_ENODEV;
	}
	return 0;
}

/* One hsa_amd_pointer_info per query; the first query of an allocation
 * also registers its free event (rocr_ids.c). */
static int rocr_query(const void *ptr, size_t len, struct hmr_hmem_info *info)
{
	hmr_hsa_pointer_info_t pi;
	uint64_t id = 0;
	int ret;

	(void)len;
	ret = pointer_info(ptr, &pi);
	if (ret)
		return ret;
	switch (pi.type) {
	case HMR_HSA_POINTER_UNKNOWN:
		return -FI_ENOENT;
	case HMR_HSA_POINTER_HSA:
		ret = hmr__rocr_track(&pi, &id);
		if (ret)
			return ret;
		break;
	case HMR_HSA_POINTER_IPC:
		id = hmr__rocr_import_id(pi.agentBaseAddress);
		break;
	default:
		break;
	}
	return describe(&pi, id, info);
}

/* Locked for every GPU (agents NULL): any of them may reach it. */
static int rocr_host_register(void *ptr, size_t len)
{
	void *agent_ptr = NULL;

	return HMR_HSA(hsa_amd_memory_lock, ptr, len, NULL, 0, &agent_ptr);
}

static int rocr_host_unregister(void *ptr)
{
	return HMR_HSA(hsa_amd_memory_unlock, ptr);
}

/* The address agents use for host memory: locked memory may be mapped to
 * the GPUs elsewhere than on the host (agentBaseAddress), as libfabric's
 * rocr_host_memory_ptr also translates; other memory as it is. */
static int agent_view(const void *host, const void **out)
{
	hmr_hsa_pointer_info_t pi;
	int ret = pointer_info(host, &pi);

	if (ret)
		return ret;
	*out = host;
	if (pi.type == HMR_HSA_POINTER_LOCKED)
		*out = (const char *)pi.agentBaseAddress +
		       ((uintptr_t)host - (uintptr_t)pi.hostBaseAddress);
	return 0;
}

static int rocr_copy_to(void *dev, const void *host, size_t len)
{
	const void *src;
	int ret = agent_view(host, &src);

	return ret ? ret : HMR_HSA(hsa_memory_copy, dev, src, len);
}

static int rocr_copy_from(void *host, const void *dev, size_t len)
{
	const void *dst;
	int ret = agent_view(host, &dst);

	return ret ? ret : HMR_HSA(hsa_memory_copy, (void *)dst, dev, len);
}

/*
 * The fd and the offset are ROCr's own: it exports the whole KFD buffer
 * object holding ptr and reports ptr's offset in it, which is not always
 * ptr - allocation base (small allocations are carved out of larger
 * blocks), so the offset is never computed here.  HMR_DMABUF_PCIE has no
 * meaning for ROCr and is ignored.
 */
static int rocr_dmabuf_get(const void *ptr, size_t len, uint64_t flags, int *fd,
                           uint64_t *offset)
{
	struct hmr_hmem_info info;
	int ret;

	(void)flags;
	if (hmr__rocr.dmabuf == HMR_ROCR_DMABUF_NO) {
		hmr_info("rocr: no dma-buf: %s", hmr__rocr.dmabuf_why);
		return -FI_EOPNOTSUPP;
	}
	ret = rocr_query(ptr, len, &info);
	if (ret)
		return ret == -FI_ENOENT ? -FI_EINVAL : ret;
	if (!(info.flags & HMR_HMEM_DEVICE_ONLY)) {
		hmr_info("rocr: %p is host memory: ROCr exports GPU memory "
		         "only",
		         ptr);
		return -FI_EOPNOTSUPP;
	}
	if (!hmr__range_inside((uintptr_t)ptr, len, info.base, info.size)) {
		hmr_warn("[%p, +%zu) runs past its allocation [%#llx, +%llu)",
		         ptr, len, (unsigned long long)info.base,
		         (unsigned long long)info.size);
		return -FI_EINVAL;
	}
	return HMR_HSA(hsa_amd_portable_export_dmabuf, ptr, len, fd, offset);
}

/* ROCr's close is close(2), which releases the fd whatever it returns:
 * on failure the fd is never closed again here. */
static int rocr_dmabuf_put(int fd)
{
	if (!hmr__rocr.hsa_amd_portable_close_dmabuf)
		return -FI_ENOSYS;
	return HMR_HSA(hsa_amd_portable_close_dmabuf, fd);
}

/* hmr's handle: ROCr's, and the length ROCr wants again at attach. */
struct rocr_ipc_handle {
	hmr_hsa_ipc_memory_t h;
	uint64_t len;
};

/* The handle names the whole allocation holding ptr, as CUDA's does:
 * ipc_open maps it from its start. */
static int rocr_ipc_get(const void *ptr, void *handle, size_t *handle_size)
{
	struct rocr_ipc_handle h;
	hmr_hsa_pointer_info_t pi;
	int ret;

	if (*handle_size < sizeof(h)) {
		*handle_size = sizeof(h);
		return -FI_ETOOSMALL;
	}
	ret = pointer_info(ptr, &pi);
	if (ret)
		return ret;
	if (pi.type != HMR_HSA_POINTER_HSA) {
		hmr_warn("rocr: %p is not a pool allocation of this process: "
		         "no IPC handle",
		         ptr);
		return -FI_EINVAL;
	}
	memset(&h, 0, sizeof(h));
	h.len = pi.sizeInBytes;
	ret = HMR_HSA(hsa_amd_ipc_memory_create, pi.agentBaseAddress,
	              pi.sizeInBytes, &h.h);
	if (ret)
		return ret;
	memcpy(handle, &h, sizeof(h));
	*handle_size = sizeof(h);
	return 0;
}

/* Mapped for GPU `device` (its index among the GPU agents). */
static int rocr_ipc_open(uint64_t device, const void *handle,
                         size_t handle_size, void **ptr)
{
	struct rocr_ipc_handle h;
	uint64_t id;
	void *p = NULL;
	int ret;

	if (handle_size != sizeof(h) ||
	    device >= (uint64_t)hmr__rocr.gpu_count) {
		hmr_warn("IPC handle of %zu bytes (want %zu) for device %llu "
		         "(of %d)",
		         handle_size, sizeof(h), (unsigned long long)device,
		         hmr__rocr.gpu_count);
		return -FI_EINVAL;
	}
	memcpy(&h, handle, sizeof(h));
	ret = HMR_HSA(hsa_amd_ipc_memory_attach, &h.h, (size_t)h.len, 1,
	              &hmr__rocr.gpu[device], &p);
	if (ret)
		return ret;
	ret = hmr__rocr_track_import(p, (size_t)h.len, &id);
	if (ret) {
		HMR_HSA(hsa_amd_ipc_memory_detach, p);
		return ret;
	}
	*ptr = p;
	return 0;
}

static int rocr_ipc_close(void *ptr)
{
	size_t len = hmr__rocr_untrack_import(ptr);
	uint64_t end;

	/* The mapping's range is no longer this process's device memory. */
	if (hmr__range_end((uintptr_t)ptr, len ? len : 1, &end))
		hmr__memtype_remove((uintptr_t)ptr, end);
	return HMR_HSA(hsa_amd_ipc_memory_detach, ptr);
}

/* The peer-memory module of ROCm's amdgpu (ROCnRDMA). */
static const char *const rocr_peermem[] = {"amdgpu_peermem", NULL};

const struct hmr_backend_ops hmr__rocr_backend = {
        .iface = FI_HMEM_ROCR,
        .peermem_modules = rocr_peermem,
        .cache_setting = "FI_MR_ROCR_CACHE_MONITOR_ENABLED",
        .init = rocr_init,
        .fini = rocr_fini,
        .query = rocr_query,
        .host_register = rocr_host_register,
        .host_unregister = rocr_host_unregister,
        .copy_to = rocr_copy_to,
        .copy_from = rocr_copy_from,
        .dmabuf_get = rocr_dmabuf_get,
        .dmabuf_put = rocr_dmabuf_put,
        .ipc_get = rocr_ipc_get,
        .ipc_open = rocr_ipc_open,
        .ipc_close = rocr_ipc_close,
        .describe = hmr__rocr_describe,
        .device = hmr__rocr_device,
};
