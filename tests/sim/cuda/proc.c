/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* proc.c: cuGetProcAddress (11.3 ABI) and cuGetProcAddress_v2 (12.0). */
#define __CUDA_API_VERSION_INTERNAL 1 /* declares every ABI version */
#include "sim_cuda.h"

#include <string.h>

/*
 * One row per ABI version of each base name, with the CUDA version that
 * introduced it (cudaTypedefs.h's PFN_<name>_v<version>).  A lookup for
 * cudaVersion gets the newest row not newer than both cudaVersion and the
 * simulated driver version; per-thread rows only when asked for.
 */
struct sim_proc {
	const char *name;
	int version;
	int ptds;
	void *fn;
};

/* clang-format off */
#define P(name, version, fn)    {name, version, 0, (void *)(fn)}
#define PTDS(name, version, fn) {name, version, 1, (void *)(fn)}
/* clang-format on */

static const struct sim_proc sim_procs[] = {
        P("cuInit", 2000, cuInit),
        P("cuDriverGetVersion", 2020, cuDriverGetVersion),
        P("cuGetErrorName", 6000, cuGetErrorName),
        P("cuGetErrorString", 6000, cuGetErrorString),
        P("cuGetProcAddress", 11030, cuGetProcAddress),
#if SIM_HAS(12000)
        P("cuGetProcAddress", 12000, cuGetProcAddress_v2),
#endif
        P("cuDeviceGet", 2000, cuDeviceGet),
        P("cuDeviceGetCount", 2000, cuDeviceGetCount),
        P("cuDeviceGetName", 2000, cuDeviceGetName),
        P("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
        P("cuDeviceGetPCIBusId", 4010, cuDeviceGetPCIBusId),
        P("cuDeviceTotalMem", 2000, cuDeviceTotalMem),
        P("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
        P("cuDeviceGetUuid", 9020, cuDeviceGetUuid),
#if SIM_HAS(11040)
        P("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
#endif
        P("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
        P("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
        P("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
        P("cuDevicePrimaryCtxReset", 7000, cuDevicePrimaryCtxReset),
        P("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2),
        P("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState),
        P("cuCtxCreate", 2000, cuCtxCreate),
        P("cuCtxCreate", 3020, cuCtxCreate_v2),
#if SIM_HAS(11040)
        P("cuCtxCreate", 11040, cuCtxCreate_v3),
#endif
#if SIM_HAS(12050)
        P("cuCtxCreate", 12050, cuCtxCreate_v4),
#endif
        P("cuCtxDestroy", 2000, cuCtxDestroy),
        P("cuCtxDestroy", 4000, cuCtxDestroy_v2),
        P("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
        P("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
        P("cuCtxPushCurrent", 2000, cuCtxPushCurrent),
        P("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
        P("cuCtxPopCurrent", 2000, cuCtxPopCurrent),
        P("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
        P("cuCtxGetDevice", 2000, cuCtxGetDevice),
        P("cuCtxSynchronize", 2000, cuCtxSynchronize),
#if SIM_HAS(13000)
        P("cuCtxGetDevice", 13000, cuCtxGetDevice_v2),
        P("cuCtxSynchronize", 13000, cuCtxSynchronize_v2),
#endif
        P("cuStreamSynchronize", 2000, cuStreamSynchronize),
        PTDS("cuStreamSynchronize", 7000, cuStreamSynchronize_ptsz),
        P("cuPointerGetAttribute", 4000, cuPointerGetAttribute),
        P("cuPointerGetAttributes", 7000, cuPointerGetAttributes),
        P("cuPointerSetAttribute", 6000, cuPointerSetAttribute),
        P("cuMemGetInfo", 2000, cuMemGetInfo),
        P("cuMemGetInfo", 3020, cuMemGetInfo_v2),
        P("cuMemAlloc", 2000, cuMemAlloc),
        P("cuMemAlloc", 3020, cuMemAlloc_v2),
        P("cuMemFree", 2000, cuMemFree),
        P("cuMemFree", 3020, cuMemFree_v2),
        P("cuMemGetAddressRange", 2000, cuMemGetAddressRange),
        P("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2),
        P("cuMemAllocHost", 2000, cuMemAllocHost),
        P("cuMemAllocHost", 3020, cuMemAllocHost_v2),
        P("cuMemFreeHost", 2000, cuMemFreeHost),
        P("cuMemHostAlloc", 2020, cuMemHostAlloc),
        P("cuMemHostGetDevicePointer", 2020, cuMemHostGetDevicePointer),
        P("cuMemHostGetDevicePointer", 3020, cuMemHostGetDevicePointer_v2),
        P("cuMemHostRegister", 4000, cuMemHostRegister),
        P("cuMemHostRegister", 6050, cuMemHostRegister_v2),
        P("cuMemHostUnregister", 4000, cuMemHostUnregister),
        P("cuMemAllocManaged", 6000, cuMemAllocManaged),
        P("cuMemcpy", 4000, cuMemcpy),
        PTDS("cuMemcpy", 7000, cuMemcpy_ptds),
        P("cuMemcpyHtoD", 2000, cuMemcpyHtoD),
        P("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2),
        PTDS("cuMemcpyHtoD", 7000, cuMemcpyHtoD_v2_ptds),
        P("cuMemcpyDtoH", 2000, cuMemcpyDtoH),
        P("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2),
        PTDS("cuMemcpyDtoH", 7000, cuMemcpyDtoH_v2_ptds),
        P("cuMemcpyDtoD", 2000, cuMemcpyDtoD),
        P("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2),
        PTDS("cuMemcpyDtoD", 7000, cuMemcpyDtoD_v2_ptds),
        P("cuMemsetD8", 2000, cuMemsetD8),
        P("cuMemsetD8", 3020, cuMemsetD8_v2),
        PTDS("cuMemsetD8", 7000, cuMemsetD8_v2_ptds),
#if SIM_HAS(11070)
        P("cuMemGetHandleForAddressRange", 11070,
          cuMemGetHandleForAddressRange),
#endif
        P("cuMemGetAllocationGranularity", 10020,
          cuMemGetAllocationGranularity),
        P("cuMemCreate", 10020, cuMemCreate),
        P("cuMemRelease", 10020, cuMemRelease),
        P("cuMemAddressReserve", 10020, cuMemAddressReserve),
        P("cuMemAddressFree", 10020, cuMemAddressFree),
        P("cuMemMap", 10020, cuMemMap),
        P("cuMemUnmap", 10020, cuMemUnmap),
        P("cuMemSetAccess", 10020, cuMemSetAccess),
        P("cuMemGetAccess", 10020, cuMemGetAccess),
        P("cuMemRetainAllocationHandle", 11000, cuMemRetainAllocationHandle),
        P("cuMemExportToShareableHandle", 10020, cuMemExportToShareableHandle),
        P("cuMemImportFromShareableHandle", 10020,
          cuMemImportFromShareableHandle),
        P("cuMemGetAllocationPropertiesFromHandle", 10020,
          cuMemGetAllocationPropertiesFromHandle),
        P("cuIpcGetMemHandle", 4010, cuIpcGetMemHandle),
        P("cuIpcOpenMemHandle", 4010, cuIpcOpenMemHandle),
        P("cuIpcOpenMemHandle", 11000, cuIpcOpenMemHandle_v2),
        P("cuIpcCloseMemHandle", 4010, cuIpcCloseMemHandle),
};

#define SIM_NPROCS (sizeof(sim_procs) / sizeof(sim_procs[0]))

/* *known: some version of symbol exists (maybe too new). */
static const struct sim_proc *sim_proc_lookup(const char *symbol,
                                              int cudaVersion, cuuint64_t flags,
                                              int *known)
{
	int limit = cudaVersion < sim_cfg.driver_version
	                    ? cudaVersion
	                    : sim_cfg.driver_version;
	int want_ptds =
	        (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
	const struct sim_proc *legacy = NULL, *ptds = NULL;

	*known = 0;
	for (size_t i = 0; i < SIM_NPROCS; i++) {
		const struct sim_proc *e = &sim_procs[i];
		const struct sim_proc **best = e->ptds ? &ptds : &legacy;

		if (strcmp(e->name, symbol) != 0)
			continue;
		*known = 1;
		if (e->version > limit || (e->ptds && !want_ptds))
			continue;
		if (!*best || e->version > (*best)->version)
			*best = e;
	}
	return ptds ? ptds : legacy;
}

static CUresult sim_proc_args(const char *symbol, void **pfn, int cudaVersion,
                              cuuint64_t flags)
{
	if (!symbol || !pfn || cudaVersion <= 0 ||
	    (flags &
	     ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
	                   CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* 11.3 ABI: a symbol that cannot be returned is CUDA_ERROR_NOT_FOUND. */
SIM_API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn,
                                          int cudaVersion, cuuint64_t flags)
{
	const struct sim_proc *e;
	CUresult rc;
	int known;

	SIM_ENTER_NOINIT("cuGetProcAddress");
	rc = sim_proc_args(symbol, pfn, cudaVersion, flags);
	if (rc != CUDA_SUCCESS)
		return rc;
	e = sim_proc_lookup(symbol, cudaVersion, flags, &known);
	*pfn = e ? e->fn : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

#if SIM_HAS(12000)
/*
 * 12.0 ABI: CUDA_SUCCESS even when *pfn is NULL; symbolStatus tells
 * SYMBOL_NOT_FOUND from VERSION_NOT_SUFFICIENT (a version too old for
 * cudaVersion or for the simulated driver version).
 */
SIM_API CUresult CUDAAPI cuGetProcAddress_v2(
        const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
        CUdriverProcAddressQueryResult *symbolStatus)
{
	const struct sim_proc *e;
	CUresult rc;
	int known;

	SIM_ENTER_NOINIT("cuGetProcAddress");
	rc = sim_proc_args(symbol, pfn, cudaVersion, flags);
	if (rc != CUDA_SUCCESS)
		return rc;
	e = sim_proc_lookup(symbol, cudaVersion, flags, &known);
	*pfn = e ? e->fn : NULL;
	if (symbolStatus)
		*symbolStatus =
		        e       ? CU_GET_PROC_ADDRESS_SUCCESS
		        : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
		                : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_SUCCESS;
}
#endif
