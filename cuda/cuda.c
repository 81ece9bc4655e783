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

/* One batched cuPointerGetAttributes per query. */
static int cuda_query(const void *ptr, size_t len, struct hmr_hmem_info *info)
{
	hmr_CUpointer_attribute attrs[] = {
	        HMR_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	        HMR_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
	        HMR_CU_POINTER_ATTRIBUTE_BUFFER_ID,
	        HMR_CU_POINTER_ATTRIBUTE_IS_MANAGED,
	        HMR_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
	        HMR_CU_POINTER_ATTRIBUTE_RANGE_SIZE,
	        HMR_CU_POINTER_ATTRIBUTE_MAPPED,
	};
	unsigned memtype = 0;
	int ordinal = -1, managed = 0, mapped = 0;
	unsigned long long buffer_id = 0;
	hmr_CUdeviceptr start = 0;
	size_t size = 0;
	void *data[] = {&memtype, &ordinal, &buffer_id, &managed,
	                &start,   &size,    &mapped};
	int r;

	(void)len;
	r = hmr__cuda.cuPointerGetAttributes(sizeof(attrs) / sizeof(attrs[0]),
	                                     attrs, data,
	                                     (hmr_CUdeviceptr)(uintptr_t)ptr);
	/* INVALID_VALUE / NOT_INITIALIZED, or memory type 0: not CUDA's. */
	if (r == HMR_CUDA_ERROR_INVALID_VALUE ||
	    r == HMR_CUDA_ERROR_NOT_INITIALIZED || (r == 0 && memtype == 0))
		return -FI_ENOENT;
	if (r != HMR_CUDA_SUCCESS)
		return hmr__cuda_check("cuPointerGetAttributes", r);
	memset(info, 0, sizeof(*info));
	info->iface = FI_HMEM_CUDA;
	info->device = ordinal < 0 ? 0 : (uint64_t)ordinal;
	info->base = start;
	info->size = size;
	info->buffer_id = buffer_id;
	if (managed)
		info->flags |= HMR_HMEM_MANAGED;
	else if (memtype == HMR_CU_MEMORYTYPE_DEVICE)
		info->flags |= HMR_HMEM_DEVICE_ONLY;
	else if (memtype == HMR_CU_MEMORYTYPE_HOST)
		info->flags |= HMR_HMEM_HOST_ALLOC;
	return 0;
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

	if (cuda_query(ptr, 1, &info) || info.device >= HMR_MAX_DEVICES)
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
 * Export from the allocation's (page-aligned) start, as a real dma-buf
 * starts there, so *offset = ptr - start.  A range that runs past the
 * allocation (several VMM segments) is refused: one fd covers one.
 */
static int cuda_dmabuf_get(const void *ptr, size_t len, uint64_t flags, int *fd,
                           uint64_t *offset)
{
	size_t page = hmr__host_page_size();
	struct hmr_hmem_info info;
	uintptr_t p = (uintptr_t)ptr, start;
	uint64_t end;
	int ret = cuda_query(ptr, len, &info);

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
	if (!hmr__range_inside(p, len, info.base, info.size) ||
	    !hmr__range_end(info.base, info.size, &end) ||
	    !hmr__align_up(end, page, &end)) {
		hmr_warn("[%p, +%zu) runs past its allocation [%#llx, +%llu): "
		         "a dma-buf covers one allocation or VMM segment; "
		         "register each segment separately",
		         ptr, len, (unsigned long long)info.base,
		         (unsigned long long)info.size);
		return -FI_EINVAL;
	}
	start = (uintptr_t)info.base & ~(uintptr_t)(page - 1);
	ret = export_range((int)info.device, start, (size_t)(end - start),
	                   flags, fd);
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
        .query = cuda_query,
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
