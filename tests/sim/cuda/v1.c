/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* v1.c: old-ABI exports: v1 stubs, cuCtxCreate_v2/_v3, per-thread aliases. */

/*
 * cuda.h declares the old ABIs (cuMemAlloc with 32-bit sizes...) and the
 * _ptds/_ptsz variants only for the driver's own build.  The plain names
 * here are the CUDA 2.0-era (v1) entry points that dlsym("cuMemAlloc")
 * finds; they exist so that a backend resolving the wrong version is
 * caught: they print and return CUDA_ERROR_NOT_SUPPORTED.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include "sim_cuda.h"

#include <stdio.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

static CUresult sim_v1(const char *name)
{
	sim_calls_count(name);
	fprintf(stderr, "sim-cuda: v1 ABI %s called\n", name);
	return CUDA_ERROR_NOT_SUPPORTED;
}

SIM_API CUresult CUDAAPI cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
	return sim_v1("cuDeviceTotalMem");
}

SIM_API CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	return sim_v1("cuDeviceGetUuid");
}

SIM_API CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
	return sim_v1("cuDevicePrimaryCtxRelease");
}

SIM_API CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
	return sim_v1("cuDevicePrimaryCtxReset");
}

SIM_API CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags,
                                     CUdevice dev)
{
	return sim_v1("cuCtxCreate");
}

SIM_API CUresult CUDAAPI cuCtxDestroy(CUcontext ctx)
{
	return sim_v1("cuCtxDestroy");
}

SIM_API CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
	return sim_v1("cuCtxPushCurrent");
}

SIM_API CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx)
{
	return sim_v1("cuCtxPopCurrent");
}

SIM_API CUresult CUDAAPI cuMemGetInfo(unsigned int *free_bytes,
                                      unsigned int *total)
{
	return sim_v1("cuMemGetInfo");
}

SIM_API CUresult CUDAAPI cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
	return sim_v1("cuMemAlloc");
}

SIM_API CUresult CUDAAPI cuMemFree(CUdeviceptr_v1 dptr)
{
	return sim_v1("cuMemFree");
}

SIM_API CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr_v1 *pbase,
                                              unsigned int *psize,
                                              CUdeviceptr_v1 dptr)
{
	return sim_v1("cuMemGetAddressRange");
}

SIM_API CUresult CUDAAPI cuMemAllocHost(void **pp, unsigned int bytesize)
{
	return sim_v1("cuMemAllocHost");
}

SIM_API CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr_v1 *pdptr,
                                                   void *p, unsigned int Flags)
{
	return sim_v1("cuMemHostGetDevicePointer");
}

SIM_API CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize,
                                           unsigned int Flags)
{
	return sim_v1("cuMemHostRegister");
}

SIM_API CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr_v1 dstDevice,
                                      const void *srcHost,
                                      unsigned int ByteCount)
{
	return sim_v1("cuMemcpyHtoD");
}

SIM_API CUresult CUDAAPI cuMemcpyDtoH(void *dstHost, CUdeviceptr_v1 srcDevice,
                                      unsigned int ByteCount)
{
	return sim_v1("cuMemcpyDtoH");
}

SIM_API CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr_v1 dstDevice,
                                      CUdeviceptr_v1 srcDevice,
                                      unsigned int ByteCount)
{
	return sim_v1("cuMemcpyDtoD");
}

SIM_API CUresult CUDAAPI cuMemsetD8(CUdeviceptr_v1 dstDevice, unsigned char uc,
                                    unsigned int N)
{
	return sim_v1("cuMemsetD8");
}

SIM_API CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr *pdptr,
                                            CUipcMemHandle handle,
                                            unsigned int Flags)
{
	return sim_v1("cuIpcOpenMemHandle");
}

#pragma GCC diagnostic pop

/* cuCtxCreate's 3.2 and 11.4 ABIs are current ones, not stubs. */
SIM_API CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags,
                                        CUdevice dev)
{
	SIM_ENTER("cuCtxCreate");
	return sim_ctx_create(pctx, flags, dev);
}

#if SIM_HAS(11040)
SIM_API CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx,
                                        CUexecAffinityParam *paramsArray,
                                        int numParams, unsigned int flags,
                                        CUdevice dev)
{
	SIM_ENTER("cuCtxCreate");
	if (numParams < 0 || (numParams > 0 && !paramsArray))
		return CUDA_ERROR_INVALID_VALUE;
	if (numParams > 0)
		return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
	return sim_ctx_create(pctx, flags, dev);
}
#endif

/* Per-thread default stream variants: no streams, so the same work. */
SIM_API CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src,
                                       size_t ByteCount)
{
	return cuMemcpy(dst, src, ByteCount);
}

SIM_API CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice,
                                              const void *srcHost,
                                              size_t ByteCount)
{
	return cuMemcpyHtoD_v2(dstDevice, srcHost, ByteCount);
}

SIM_API CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost,
                                              CUdeviceptr srcDevice,
                                              size_t ByteCount)
{
	return cuMemcpyDtoH_v2(dstHost, srcDevice, ByteCount);
}

SIM_API CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice,
                                              CUdeviceptr srcDevice,
                                              size_t ByteCount)
{
	return cuMemcpyDtoD_v2(dstDevice, srcDevice, ByteCount);
}

SIM_API CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dstDevice,
                                            unsigned char uc, size_t N)
{
	return cuMemsetD8_v2(dstDevice, uc, N);
}

SIM_API CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
	return cuStreamSynchronize(hStream);
}
