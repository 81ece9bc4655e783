/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* device.c: devices, their attributes, and contexts (primary and own). */
#include "sim_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_CTX_STACK 64

/* The calling thread's context stack; the top is the current context. */
static _Thread_local struct {
	CUcontext stack[SIM_CTX_STACK];
	int depth;
} sim_tls;

static int sim_dev_ok(CUdevice dev)
{
	return dev >= 0 && dev < sim_cfg.ndev;
}

int sim_ctx_valid(CUcontext ctx)
{
	return ctx && ctx->magic == SIM_CTX_MAGIC && ctx->alive;
}

CUcontext sim_ctx_current(void)
{
	return sim_tls.depth ? sim_tls.stack[sim_tls.depth - 1] : NULL;
}

/* The current context, which allocations and copies need. */
CUresult sim_ctx_require(CUcontext *ctx)
{
	CUcontext cur = sim_ctx_current();
	int ok;

	pthread_mutex_lock(&sim.lock);
	ok = sim_ctx_valid(cur);
	pthread_mutex_unlock(&sim.lock);
	if (!ok)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (ctx)
		*ctx = cur;
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	SIM_ENTER("cuDeviceGetCount");
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = sim_cfg.ndev;
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
	SIM_ENTER("cuDeviceGet");
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_dev_ok(ordinal))
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
	SIM_ENTER("cuDeviceGetName");
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "HMR Simulated GPU %d", dev);
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len,
                                             CUdevice dev)
{
	SIM_ENTER("cuDeviceGetPCIBusId");
	if (!pciBusId || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(pciBusId, (size_t)len, "0000:%02x:00.0", 0x41 + dev);
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
	SIM_ENTER("cuDeviceTotalMem");
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*bytes = SIM_DEV_MEMORY;
	return CUDA_SUCCESS;
}

#if SIM_HAS(11040)
SIM_API CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	SIM_ENTER("cuDeviceGetUuid");
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	memcpy(uuid->bytes, "HMR-SIM-CUDA-GPU", 16);
	uuid->bytes[15] = (char)('0' + dev);
	return CUDA_SUCCESS;
}
#endif

/* Values of a recent data-center GPU; the RDMA-relevant ones are exact. */
static int sim_attr_value(CUdevice_attribute a, CUdevice dev)
{
	switch ((int)a) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		return 1024;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
		return 32;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		return 108;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		return 8;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
		return 0x41 + dev;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
	case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM:
	case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED:
		return 1;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS:
		return CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST;
	case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
		return sim.dev[dev].dmabuf;
	case CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED:
		return sim.dev[dev].dmabuf && sim.dev[dev].host_dmabuf;
	default: /* integrated, TCC, pageable access, PCI domain... */
		return 0;
	}
}

/* Attributes newer than the simulated driver's (approximate versions). */
static int sim_attr_known(CUdevice_attribute a)
{
	int v = sim_cfg.driver_version;

	if (v < 11070 && a >= CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED)
		return 0;
	if (v < 13000 && a >= CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED)
		return 0;
	return (int)a > 0 && a < CU_DEVICE_ATTRIBUTE_MAX;
}

SIM_API CUresult CUDAAPI cuDeviceGetAttribute(int *pi,
                                              CUdevice_attribute attrib,
                                              CUdevice dev)
{
	SIM_ENTER("cuDeviceGetAttribute");
	if (!pi || !sim_attr_known(attrib))
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*pi = sim_attr_value(attrib, dev);
	return CUDA_SUCCESS;
}

/* Contexts.  A released primary context and its memory are destroyed. */

SIM_API CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	SIM_ENTER("cuDevicePrimaryCtxRetain");
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&sim.lock);
	sim.dev[dev].primary.refs++;
	sim.dev[dev].primary.alive = 1;
	*pctx = &sim.dev[dev].primary;
	pthread_mutex_unlock(&sim.lock);
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
	struct CUctx_st *ctx;
	CUresult rc = CUDA_SUCCESS;

	SIM_ENTER("cuDevicePrimaryCtxRelease");
	if (!sim_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&sim.lock);
	ctx = &sim.dev[dev].primary;
	if (ctx->refs == 0) {
		rc = CUDA_ERROR_INVALID_CONTEXT;
	} else if (--ctx->refs == 0) {
		ctx->alive = 0;
		sim_free_ctx_allocs(ctx);
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
	SIM_ENTER("cuDevicePrimaryCtxReset");
	if (!sim_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&sim.lock);
	sim_free_ctx_allocs(&sim.dev[dev].primary);
	pthread_mutex_unlock(&sim.lock);
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev,
                                                    unsigned int *flags,
                                                    int *active)
{
	SIM_ENTER("cuDevicePrimaryCtxGetState");
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&sim.lock);
	*flags = sim.dev[dev].primary.flags;
	*active = sim.dev[dev].primary.alive;
	pthread_mutex_unlock(&sim.lock);
	return CUDA_SUCCESS;
}

CUresult sim_ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	struct CUctx_st *ctx;

	if (!pctx || (flags & ~(unsigned int)CU_CTX_FLAGS_MASK))
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	if (sim_tls.depth == SIM_CTX_STACK)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx->magic = SIM_CTX_MAGIC;
	ctx->device = dev;
	ctx->refs = 1;
	ctx->alive = 1;
	ctx->flags = flags;
	pthread_mutex_lock(&sim.lock);
	ctx->next = sim.contexts;
	sim.contexts = ctx;
	pthread_mutex_unlock(&sim.lock);
	sim_tls.stack[sim_tls.depth++] = ctx;
	*pctx = ctx;
	return CUDA_SUCCESS;
}

#if SIM_HAS(12050)
/* cuda.h maps cuCtxCreate to cuCtxCreate_v4. */
SIM_API CUresult CUDAAPI cuCtxCreate(CUcontext *pctx,
                                     CUctxCreateParams *ctxCreateParams,
                                     unsigned int flags, CUdevice dev)
{
	SIM_ENTER("cuCtxCreate");
	if (ctxCreateParams && (ctxCreateParams->numExecAffinityParams ||
	                        ctxCreateParams->cigParams))
		return CUDA_ERROR_NOT_SUPPORTED;
	return sim_ctx_create(pctx, flags, dev);
}
#endif

static void sim_tls_forget(CUcontext ctx)
{
	int j = 0;

	for (int i = 0; i < sim_tls.depth; i++)
		if (sim_tls.stack[i] != ctx)
			sim_tls.stack[j++] = sim_tls.stack[i];
	sim_tls.depth = j;
}

SIM_API CUresult CUDAAPI cuCtxDestroy(CUcontext ctx)
{
	CUresult rc = CUDA_SUCCESS;

	SIM_ENTER("cuCtxDestroy");
	pthread_mutex_lock(&sim.lock);
	if (!sim_ctx_valid(ctx) || ctx->primary) {
		rc = CUDA_ERROR_INVALID_CONTEXT;
	} else {
		ctx->alive = 0;
		ctx->refs = 0;
		sim_free_ctx_allocs(ctx);
	}
	pthread_mutex_unlock(&sim.lock);
	if (rc == CUDA_SUCCESS)
		sim_tls_forget(ctx);
	return rc;
}

SIM_API CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
	SIM_ENTER("cuCtxGetCurrent");
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = sim_ctx_current();
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	int ok;

	SIM_ENTER("cuCtxSetCurrent");
	if (!ctx) {
		if (sim_tls.depth)
			sim_tls.depth--;
		return CUDA_SUCCESS;
	}
	pthread_mutex_lock(&sim.lock);
	ok = sim_ctx_valid(ctx);
	pthread_mutex_unlock(&sim.lock);
	if (!ok)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (sim_tls.depth)
		sim_tls.stack[sim_tls.depth - 1] = ctx;
	else
		sim_tls.stack[sim_tls.depth++] = ctx;
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
	int ok;

	SIM_ENTER("cuCtxPushCurrent");
	pthread_mutex_lock(&sim.lock);
	ok = sim_ctx_valid(ctx);
	pthread_mutex_unlock(&sim.lock);
	if (!ok)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (sim_tls.depth == SIM_CTX_STACK)
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_tls.stack[sim_tls.depth++] = ctx;
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx)
{
	SIM_ENTER("cuCtxPopCurrent");
	if (!sim_tls.depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	sim_tls.depth--;
	if (pctx)
		*pctx = sim_tls.stack[sim_tls.depth];
	return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
	CUcontext ctx;
	CUresult rc;

	SIM_ENTER("cuCtxGetDevice");
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sim_ctx_require(&ctx);
	if (rc == CUDA_SUCCESS)
		*device = ctx->device;
	return rc;
}

SIM_API CUresult CUDAAPI cuCtxSynchronize(void)
{
	SIM_ENTER("cuCtxSynchronize");
	return sim_ctx_require(NULL);
}

#if SIM_HAS(13000)
static CUresult sim_ctx_or_current(CUcontext ctx, CUcontext *out)
{
	int ok;

	if (!ctx)
		return sim_ctx_require(out);
	pthread_mutex_lock(&sim.lock);
	ok = sim_ctx_valid(ctx);
	pthread_mutex_unlock(&sim.lock);
	*out = ctx;
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

SIM_API CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	CUresult rc;

	SIM_ENTER("cuCtxGetDevice");
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sim_ctx_or_current(ctx, &ctx);
	if (rc == CUDA_SUCCESS)
		*device = ctx->device;
	return rc;
}

SIM_API CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
	SIM_ENTER("cuCtxSynchronize");
	return sim_ctx_or_current(ctx, &ctx);
}
#endif

/* No streams are simulated: only the NULL and the special streams. */
SIM_API CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
	SIM_ENTER("cuStreamSynchronize");
	if (hStream && hStream != CU_STREAM_LEGACY &&
	    hStream != CU_STREAM_PER_THREAD)
		return CUDA_ERROR_INVALID_HANDLE;
	return sim_ctx_require(NULL);
}
