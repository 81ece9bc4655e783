/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cuda_check.c: hmr's CUDA declarations checked against the toolkit's. */
#include <cuda.h>
#include <cudaTypedefs.h>

/* Built only where cuda.h is found: nothing here runs; it compiles or the
 * build fails.  hmr's function types are re-read with cuda.h's own types
 * in place of the ABI ints, and each must then be exactly the PFN_ type of
 * the ABI version it claims. */
#define HMR_CUDA_SDK_TYPES
typedef CUresult hmr_CUresult;
typedef CUdevice hmr_CUdevice;
typedef CUdeviceptr hmr_CUdeviceptr;
typedef CUcontext hmr_CUcontext;
typedef CUipcMemHandle hmr_CUipcMemHandle;
typedef CUpointer_attribute hmr_CUpointer_attribute;
typedef CUdevice_attribute hmr_CUdevice_attribute;
typedef CUmemRangeHandleType hmr_CUmemRangeHandleType;
typedef CUdriverProcAddressQueryResult hmr_CUdriverProcAddressQueryResult;
typedef cuuint64_t hmr_cuuint64_t;
#include "cuda/cuda_api.h"

/* The ABI ints hmr uses without the SDK have the enums' size. */
_Static_assert(sizeof(int) == sizeof(CUresult), "CUresult");
_Static_assert(sizeof(int) == sizeof(CUpointer_attribute), "attr");
_Static_assert(sizeof(int) == sizeof(CUdevice_attribute), "dev attr");
_Static_assert(sizeof(int) == sizeof(CUmemRangeHandleType), "handle");
_Static_assert(sizeof(int) == sizeof(CUdriverProcAddressQueryResult), "q");
_Static_assert(sizeof(unsigned long long) == sizeof(CUdeviceptr), "dptr");
_Static_assert(sizeof(char[64]) == sizeof(CUipcMemHandle), "ipc");

#define SAME(a, b) _Static_assert((long long)(a) == (long long)(b), #a)
SAME(HMR_CUDA_SUCCESS, CUDA_SUCCESS);
SAME(HMR_CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE);
SAME(HMR_CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED);
SAME(HMR_CUDA_ERROR_STUB_LIBRARY, CUDA_ERROR_STUB_LIBRARY);
SAME(HMR_CUDA_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE);
SAME(HMR_CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_DEVICE);
SAME(HMR_CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY);
SAME(HMR_CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED);
SAME(HMR_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
SAME(HMR_CU_POINTER_ATTRIBUTE_BUFFER_ID, CU_POINTER_ATTRIBUTE_BUFFER_ID);
SAME(HMR_CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_IS_MANAGED);
SAME(HMR_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
     CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL);
SAME(HMR_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
     CU_POINTER_ATTRIBUTE_RANGE_START_ADDR);
SAME(HMR_CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_RANGE_SIZE);
SAME(HMR_CU_POINTER_ATTRIBUTE_MAPPED, CU_POINTER_ATTRIBUTE_MAPPED);
SAME(HMR_CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
     CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE);
SAME(HMR_CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_HOST);
SAME(HMR_CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE);
SAME(HMR_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
     CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED);
#if CUDA_VERSION >= 13000
SAME(HMR_CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED,
     CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED);
#endif
SAME(HMR_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
     CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD);
SAME(HMR_CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE,
     CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
SAME(HMR_CU_GET_PROC_ADDRESS_DEFAULT, CU_GET_PROC_ADDRESS_DEFAULT);
SAME(HMR_CU_MEMHOSTREGISTER_PORTABLE, CU_MEMHOSTREGISTER_PORTABLE);
SAME(HMR_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS,
     CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);

/* Each entry of the lists, against the toolkit's PFN_ type of the ABI
 * version the list names. */
#define ABI(name, sym, ver, req, params)                                       \
	_Static_assert(__builtin_types_compatible_p(hmr_##name##_fn,           \
	                                            PFN_##name##_v##ver),      \
	               "PFN_" #name "_v" #ver);
/* hmr names the two cuGetProcAddress ABIs apart; cudaTypedefs.h by
 * version only. */
typedef PFN_cuGetProcAddress_v12000 PFN_cuGetProcAddress_v2_v12000;
typedef PFN_cuGetProcAddress_v11030 PFN_cuGetProcAddress_v1_v11030;
HMR_CUDA_BOOT(ABI)
HMR_CUDA_CALLS(ABI)
