/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cuda.c: the CUDA backend's ops: query, copies, dma-buf, IPC. */
#include <string.h>
#include <unistd.h>

#include "cuda/cuda_api.h"
#include "base/range.h"
#include "base/config.h"
#include "hmem/hmem.h"
#include "base/host.h"
#include "base/log.h"

HMR_CONFIG_VAR(FI_MR_CUDA_CACHE_MONITOR_ENABLED, "1",
               "The registration cache keeps registrations of cuda device "
               "memory (a reallocation gets a new buffer id and misses)");

static int cuda_init(char *why, size_t why_len)
{
	return hmr__cuda_load(why, why_len);
}

static void cuda_fini(void)
{
	hmr__cuda_unload();
}

/* Page-locking needs a current context, which a new thread lacks: use
 * device 0's primary one (portable memory is visible to every device). */
static int cuda_host_register(void *ptr, size_t len)
{
	hmr_CUcontext prev;
	int ret;

	if (!hmr__cuda.cuMemHostRegister)
		return -FI_ENOSYS;
	prev = hmr__cuda_push(0);
	ret = HMR_CU(cuMemHostRegister, ptr, len,
	             HMR_CU_MEMHOSTREGISTER_PORTABLE);
	hmr__cuda_pop(prev);
	return ret;
}

static int cuda_host_unregister(void *ptr)
{
	hmr_CUcontext prev;
	int ret;

	if (!hmr__cuda.cuMemHostUnregister)
		return -FI_ENOSYS;
	prev = hmr__cuda_push(0);
	ret = HMR_CU(cuMemHostUnregister, ptr);
	hmr__cuda_pop(prev);
	return ret;
}

/* Copies need a current context; the owning device's primary one. */
static int device_of(const void *ptr)
{
	struct hmr_hmem_info info;

	if (hmr__cuda_query(ptr, 1, &info) || info.device >= HMR_MAX_DEVICES)
		return 0;
	return (int)info.device;
}

static int cuda_copy_to(void *dev, const void *host, size_t len)
{
	hmr_CUcontext prev;
	int ret;

	if (!hmr__cuda.cuMemcpyHtoD)
		return -FI_ENOSYS;
	prev = hmr__cuda_push(device_of(dev));
	ret = HMR_CU(cuMemcpyHtoD, (hmr_CUdeviceptr)(uintptr_t)dev, host, len);
	hmr__cuda_pop(prev);
	return ret;
}

static int cuda_copy_from(void *host, const void *dev, size_t len)
{
	hmr_CUcontext prev;
	int ret;

	if (!hmr__cuda.cuMemcpyDtoH)
		return -FI_ENOSYS;
	prev = hmr__cuda_push(device_of(dev));
	ret = HMR_CU(cuMemcpyDtoH, host, (hmr_CUdeviceptr)(uintptr_t)dev, len);
	hmr__cuda_pop(prev);
	return ret;
}

static int export_range(int dev, hmr_CUdeviceptr start, size_t size,
                        uint64_t flags, int *fd)
{
	hmr_CUcontext prev = hmr__cuda_push(dev);
	int r = HMR_CUDA_ERROR_NOT_SUPPORTED, ret;

	/* The PCIe mapping only when asked, and the default when refused
	 * (a refusal of the PCIe mapping is expected: not logged). */
	if (flags & HMR_DMABUF_PCIE)
		r = hmr__cuda.cuMemGetHandleForAddressRange(
		        fd, start, size,
		        HMR_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
		        HMR_CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
	ret = r == HMR_CUDA_SUCCESS
	              ? 0
	              : HMR_CU(cuMemGetHandleForAddressRange, fd, start, size,
	                       HMR_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	hmr__cuda_pop(prev);
	if (ret)
		hmr_info("cuda device %d cannot export [%#llx, +%zu)", dev,
		         start, size);
	return ret;
}

/*
 * Export the page-aligned span of [ptr, ptr + len), not the allocation:
 * the driver exports any range whose start and length are page multiples
 * (lab/gpu.md), across allocations and VMM chunks, and refuses one with
 * an unmapped part, which the reservation of an expandable segment
 * (what RANGE_START_ADDR/RANGE_SIZE give) always has.  The NIC maps no
 * more than it is asked for.  The fd starts at the page holding ptr, so
 * *offset = ptr - that page (an interior pointer's offset within it).
 */
static int cuda_dmabuf_get(const void *ptr, size_t len, uint64_t flags, int *fd,
                           uint64_t *offset)
{
	uint64_t page = hmr__host_page_size(), start, end;
	struct hmr_hmem_info info;
	uintptr_t p = (uintptr_t)ptr;
	int ret = hmr__cuda_query(ptr, 1, &info);

	if (ret)
		return ret == -FI_ENOENT ? -FI_EINVAL : ret;
	if (info.device >= (uint64_t)hmr__cuda.device_count ||
	    !((info.flags & HMR_HMEM_HOST_ALLOC)
	              ? hmr__cuda.host_dmabuf[info.device]
	              : hmr__cuda.dmabuf[info.device])) {
		hmr_info("cuda device %llu cannot export this memory as a "
		         "dma-buf",
		         (unsigned long long)info.device);
		return -FI_EOPNOTSUPP;
	}
	start = p & ~(page - 1);
	if (!len || !hmr__range_end(p, len, &end) ||
	    !hmr__align_up(end, page, &end)) {
		hmr_warn("[%p, +%zu) runs past the end of the address space",
		         ptr, len);
		return -FI_EINVAL;
	}
	ret = export_range((int)info.device, (hmr_CUdeviceptr)start,
	                   (size_t)(end - start), flags, fd);
	if (ret)
		return ret;
	*offset = p - start;
	return 0;
}

static int cuda_dmabuf_put(int fd)
{
	return close(fd) == 0 ? 0 : -FI_EBADF;
}

static int cuda_ipc_get(const void *ptr, void *handle, size_t *handle_size)
{
	hmr_CUcontext prev;
	int ret;

	if (!hmr__cuda.cuIpcGetMemHandle)
		return -FI_ENOSYS;
	if (*handle_size < sizeof(hmr_CUipcMemHandle)) {
		*handle_size = sizeof(hmr_CUipcMemHandle);
		return -FI_ETOOSMALL;
	}
	*handle_size = sizeof(hmr_CUipcMemHandle);
	/* Needs a current context (lab/gpu.md): the owner's primary one. */
	prev = hmr__cuda_push(device_of(ptr));
	ret = HMR_CU(cuIpcGetMemHandle, handle,
	             (hmr_CUdeviceptr)(uintptr_t)ptr);
	hmr__cuda_pop(prev);
	return ret;
}

static int cuda_ipc_open(uint64_t device, const void *handle,
                         size_t handle_size, void **ptr)
{
	hmr_CUipcMemHandle h;
	hmr_CUdeviceptr d;
	hmr_CUcontext prev;
	int ret;

	if (!hmr__cuda.cuIpcOpenMemHandle)
		return -FI_ENOSYS;
	if (handle_size != sizeof(h) ||
	    device >= (uint64_t)hmr__cuda.device_count) {
		hmr_warn("IPC handle of %zu bytes (want %zu) for device %llu "
		         "(of %d)",
		         handle_size, sizeof(h), (unsigned long long)device,
		         hmr__cuda.device_count);
		return -FI_EINVAL;
	}
	memcpy(&h, handle, sizeof(h));
	prev = hmr__cuda_push((int)device);
	ret = HMR_CU(cuIpcOpenMemHandle, &d, h,
	             HMR_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
	hmr__cuda_pop(prev);
	if (!ret)
		*ptr = (void *)(uintptr_t)d;
	return ret;
}

/* cuIpcCloseMemHandle needs a current context (lab/gpu.md: 201 on a
 * thread with none): the mapping's device's primary one, as ipc_open. */
static int cuda_ipc_close(void *ptr)
{
	hmr_CUcontext prev;
	int ret;

	if (!hmr__cuda.cuIpcCloseMemHandle)
		return -FI_ENOSYS;
	prev = hmr__cuda_push(device_of(ptr));
	/* The mapping's range is no longer this process's device memory. */
	hmr__memtype_remove_at((uintptr_t)ptr);
	ret = HMR_CU(cuIpcCloseMemHandle, (hmr_CUdeviceptr)(uintptr_t)ptr);
	hmr__cuda_pop(prev);
	return ret;
}

static const char *const cuda_peermem[] = {"nvidia_peermem", "nv_peer_mem",
                                           NULL};

const struct hmr_backend_ops hmr__cuda_backend = {
        .iface = FI_HMEM_CUDA,
        .init = cuda_init,
        .fini = cuda_fini,
        .query = hmr__cuda_query,
        .host_register = cuda_host_register,
        .host_unregister = cuda_host_unregister,
        .copy_to = cuda_copy_to,
        .copy_from = cuda_copy_from,
        .dmabuf_get = cuda_dmabuf_get,
        .dmabuf_put = cuda_dmabuf_put,
        .peermem_modules = cuda_peermem,
        .cache_setting = "FI_MR_CUDA_CACHE_MONITOR_ENABLED",
        .ipc_get = cuda_ipc_get,
        .ipc_open = cuda_ipc_open,
        .ipc_close = cuda_ipc_close,
        .describe = hmr__cuda_describe,
        .device = hmr__cuda_device,
        .alloc = hmr__cuda_alloc,
        .free = hmr__cuda_free,
};
