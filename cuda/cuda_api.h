/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cuda_api.h: the CUDA driver API subset hmr calls, declared without the SDK.
 */
#ifndef HMR_CUDA_API_H
#define HMR_CUDA_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/limits.h"

/*
 * hmr builds without the CUDA SDK: these declarations have the driver's
 * ABI.  Where cuda.h is found, cuda_check.c asserts at compile time that
 * every constant equals cuda.h's and every function type equals
 * cudaTypedefs.h's PFN_ type of the ABI version the list below names.
 */
#ifndef HMR_CUDA_SDK_TYPES
/* The ABI's types; cuda_check.c substitutes cuda.h's own for these and
 * compares every function type below with cudaTypedefs.h's. */
typedef int hmr_CUresult; /* enum cudaError_enum */
typedef int hmr_CUdevice;
typedef unsigned long long hmr_CUdeviceptr;
typedef struct hmr_CUctx_st *hmr_CUcontext;
typedef struct {
	char reserved[64];
} hmr_CUipcMemHandle;
typedef int hmr_CUpointer_attribute;
typedef int hmr_CUdevice_attribute;
typedef int hmr_CUmemRangeHandleType;
typedef int hmr_CUdriverProcAddressQueryResult;
typedef unsigned long long hmr_cuuint64_t;
#endif

enum {
	HMR_CUDA_SUCCESS = 0,
	HMR_CUDA_ERROR_INVALID_VALUE = 1,
	HMR_CUDA_ERROR_OUT_OF_MEMORY = 2,
	HMR_CUDA_ERROR_NOT_INITIALIZED = 3,
	HMR_CUDA_ERROR_STUB_LIBRARY = 34,
	HMR_CUDA_ERROR_NO_DEVICE = 100,
	HMR_CUDA_ERROR_INVALID_DEVICE = 101,
	HMR_CUDA_ERROR_NOT_SUPPORTED = 801,
};

enum {
	HMR_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
	HMR_CU_POINTER_ATTRIBUTE_BUFFER_ID = 7,
	HMR_CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
	HMR_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
	HMR_CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE = 10,
	HMR_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
	HMR_CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
	HMR_CU_POINTER_ATTRIBUTE_MAPPED = 13,
};

enum {
	HMR_CU_MEMORYTYPE_HOST = 1,
	HMR_CU_MEMORYTYPE_DEVICE = 2,
};

enum {
	HMR_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124,
	/* CUDA 13: dma-bufs of page-locked host memory. */
	HMR_CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED = 146,
};

enum {
	HMR_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 1,
	HMR_CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE = 1,
	HMR_CU_GET_PROC_ADDRESS_DEFAULT = 0,
	HMR_CU_MEMHOSTREGISTER_PORTABLE = 1,
	HMR_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1,
};

/* The version hmr's declarations follow: cuGetProcAddress is asked for
 * min(driver version, this). */
#define HMR_CUDA_API_VERSION 12000

/*
 * Every driver entry point hmr calls, each written once:
 *   X(name, symbol for dlsym, cudaTypedefs.h ABI version, REQ or OPT,
 *     parameter types)
 * The list makes the function-pointer types (hmr_<name>_fn), the members
 * of struct hmr_cuda, the loading table (cuda_load.c) and the ABI check
 * against the toolkit's PFN_<name>_v<version> (cuda_check.c).  An OPT
 * entry a driver lacks is left NULL and every caller checks it; a REQ
 * entry it lacks refuses the driver, so only what hmr cannot work
 * without is REQ.  Return types are all CUresult.
 *
 * HMR_CUDA_BOOT: resolved with dlsym before the driver starts;
 * cuGetProcAddress resolves HMR_CUDA_CALLS afterwards.
 */
#define HMR_CUDA_BOOT(X)                                                       \
	X(cuInit, cuInit, 2000, REQ, (unsigned))                               \
	X(cuDriverGetVersion, cuDriverGetVersion, 2020, REQ, (int *))          \
	X(cuGetErrorName, cuGetErrorName, 6000, OPT,                           \
	  (hmr_CUresult, const char **))                                       \
	/* Driver 12.0 and later; 11.3 to 11.8 have the one below. */          \
	X(cuGetProcAddress_v2, cuGetProcAddress_v2, 12000, OPT,                \
	  (const char *, void **, int, hmr_cuuint64_t,                         \
	   hmr_CUdriverProcAddressQueryResult *))                              \
	X(cuGetProcAddress_v1, cuGetProcAddress, 11030, OPT,                   \
	  (const char *, void **, int, hmr_cuuint64_t))

#define HMR_CUDA_CALLS(X)                                                      \
	X(cuDeviceGetCount, cuDeviceGetCount, 2000, REQ, (int *))              \
	X(cuDeviceGet, cuDeviceGet, 2000, REQ, (hmr_CUdevice *, int))          \
	X(cuDeviceGetAttribute, cuDeviceGetAttribute, 2000, REQ,               \
	  (int *, hmr_CUdevice_attribute, hmr_CUdevice))                       \
	X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000, REQ,       \
	  (hmr_CUcontext *, hmr_CUdevice))                                     \
	X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, 11000, REQ, \
	  (hmr_CUdevice))                                                      \
	X(cuDeviceGetName, cuDeviceGetName, 2000, OPT,                         \
	  (char *, int, hmr_CUdevice))                                         \
	X(cuCtxGetCurrent, cuCtxGetCurrent, 4000, REQ, (hmr_CUcontext *))      \
	X(cuCtxSetCurrent, cuCtxSetCurrent, 4000, REQ, (hmr_CUcontext))        \
	X(cuPointerGetAttributes, cuPointerGetAttributes, 7000, REQ,           \
	  (unsigned, hmr_CUpointer_attribute *, void **, hmr_CUdeviceptr))     \
	/* For hmr_hmem_alloc (self-checks, samples), not registration. */     \
	X(cuMemAlloc, cuMemAlloc_v2, 3020, OPT, (hmr_CUdeviceptr *, size_t))   \
	X(cuMemFree, cuMemFree_v2, 3020, OPT, (hmr_CUdeviceptr))               \
	X(cuMemcpyHtoD, cuMemcpyHtoD_v2, 3020, OPT,                            \
	  (hmr_CUdeviceptr, const void *, size_t))                             \
	X(cuMemcpyDtoH, cuMemcpyDtoH_v2, 3020, OPT,                            \
	  (void *, hmr_CUdeviceptr, size_t))                                   \
	X(cuMemHostRegister, cuMemHostRegister_v2, 6050, OPT,                  \
	  (void *, size_t, unsigned))                                          \
	X(cuMemHostUnregister, cuMemHostUnregister, 4000, OPT, (void *))       \
	/* The mapped chunk of VMM memory (cuda_query.c). */                   \
	X(cuMemGetAddressRange, cuMemGetAddressRange_v2, 3020, OPT,            \
	  (hmr_CUdeviceptr *, size_t *, hmr_CUdeviceptr))                      \
	/* Driver 11.7 and later. */                                           \
	X(cuMemGetHandleForAddressRange, cuMemGetHandleForAddressRange, 11070, \
	  OPT,                                                                 \
	  (void *, hmr_CUdeviceptr, size_t, hmr_CUmemRangeHandleType,          \
	   unsigned long long))                                                \
	X(cuIpcGetMemHandle, cuIpcGetMemHandle, 4010, OPT,                     \
	  (hmr_CUipcMemHandle *, hmr_CUdeviceptr))                             \
	X(cuIpcOpenMemHandle, cuIpcOpenMemHandle_v2, 11000, OPT,               \
	  (hmr_CUdeviceptr *, hmr_CUipcMemHandle, unsigned))                   \
	X(cuIpcCloseMemHandle, cuIpcCloseMemHandle, 4010, OPT,                 \
	  (hmr_CUdeviceptr))

#define HMR_CUDA_FN_TYPE(name, sym, ver, req, params)                          \
	typedef hmr_CUresult(*hmr_##name##_fn) params;
HMR_CUDA_BOOT(HMR_CUDA_FN_TYPE)
HMR_CUDA_CALLS(HMR_CUDA_FN_TYPE)
#undef HMR_CUDA_FN_TYPE

/* The loaded driver: resolved entry points and what was learned at start.
 * Written once by hmr__cuda_load (under hmem's once), read-only after. */
struct hmr_cuda {
	int driver_version;
	int device_count;
#define HMR_CUDA_MEMBER(name, sym, ver, req, params) hmr_##name##_fn name;
	HMR_CUDA_BOOT(HMR_CUDA_MEMBER)
	HMR_CUDA_CALLS(HMR_CUDA_MEMBER)
#undef HMR_CUDA_MEMBER
	/* Per device: primary context, dma-buf support of device memory and
	 * of page-locked host memory (asked per device, never assumed from
	 * device 0). */
	hmr_CUcontext ctx[HMR_MAX_DEVICES];
	bool dmabuf[HMR_MAX_DEVICES];
	bool host_dmabuf[HMR_MAX_DEVICES];
};

extern struct hmr_cuda hmr__cuda;

/* cuda_load.c: dlopen, resolve, cuInit, probe the devices. */
int hmr__cuda_load(char *why, size_t why_len);
/* The path of the driver library loaded. */
void hmr__cuda_library(char *buf, size_t len);
void hmr__cuda_unload(void);

/*
 * The error wrapper every driver call's result goes through: 0 for
 * CUDA_SUCCESS; otherwise one warning naming the call and the driver's own
 * error name ("cuMemHostRegister: CUDA_ERROR_INVALID_VALUE (1)") and the
 * -FI_E* code for the status (invalid value -FI_EINVAL, out of memory
 * -FI_ENOMEM, not supported -FI_EOPNOTSUPP, no or invalid device
 * -FI_ENODEV, anything else -FI_EIO).
 */
int hmr__cuda_check(const char *call, hmr_CUresult r);
#define HMR_CU(name, ...) hmr__cuda_check(#name, hmr__cuda.name(__VA_ARGS__))

/* cuda_query.c: the query slot. */
struct hmr_hmem_info;
int hmr__cuda_query(const void *ptr, size_t len, struct hmr_hmem_info *info);

/* cuda_info.c: the describe, device, alloc and free slots. */
struct hmr_hmem_backend_info;
struct hmr_hmem_device_info;
int hmr__cuda_describe(struct hmr_hmem_backend_info *info);
int hmr__cuda_device(uint32_t index, struct hmr_hmem_device_info *info);
int hmr__cuda_alloc(uint64_t device, size_t len, void **ptr);
int hmr__cuda_free(void *ptr);

/* Run with device `dev`'s primary context current (cuda_load.c). */
hmr_CUcontext hmr__cuda_push(int dev);
void hmr__cuda_pop(hmr_CUcontext previous);

#endif /* HMR_CUDA_API_H */
