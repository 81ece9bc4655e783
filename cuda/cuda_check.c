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
SAME(HMR_CUDA_ERROR_DEINITIALIZED, CUDA_ERROR_DEINITIALIZED);
SAME(HMR_CUDA_ERROR_STUB_LIBRARY, CUDA_ERROR_STUB_LIBRARY);
SAME(HMR_CUDA_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE);
SAME(HMR_CUDA_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND);
SAME(HMR_CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED);
SAME(HMR_CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_CONTEXT);
SAME(HMR_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
SAME(HMR_CU_POINTER_ATTRIBUTE_BUFFER_ID, CU_POINTER_ATTRIBUTE_BUFFER_ID);
SAME(HMR_CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_IS_MANAGED);
SAME(HMR_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
     CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL);
SAME(HMR_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
     CU_POINTER_ATTRIBUTE_RANGE_START_ADDR);
SAME(HMR_CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_RANGE_SIZE);
SAME(HMR_CU_POINTER_ATTRIBUTE_MAPPED, CU_POINTER_ATTRIBUTE_MAPPED);
SAME(HMR_CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_HOST);
SAME(HMR_CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE);
SAME(HMR_CU_MEMORYTYPE_UNIFIED, CU_MEMORYTYPE_UNIFIED);
SAME(HMR_CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING,
     CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
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

#define ABI(hmr_t, pfn_t)                                                      \
	_Static_assert(__builtin_types_compatible_p(hmr_t, pfn_t), #pfn_t)
ABI(hmr_cuInit_fn, PFN_cuInit_v2000);
ABI(hmr_cuDriverGetVersion_fn, PFN_cuDriverGetVersion_v2020);
ABI(hmr_cuGetProcAddress_v2_fn, PFN_cuGetProcAddress_v12000);
ABI(hmr_cuGetProcAddress_v1_fn, PFN_cuGetProcAddress_v11030);
ABI(hmr_cuGetErrorName_fn, PFN_cuGetErrorName_v6000);
ABI(hmr_cuDeviceGetCount_fn, PFN_cuDeviceGetCount_v2000);
ABI(hmr_cuDeviceGet_fn, PFN_cuDeviceGet_v2000);
ABI(hmr_cuDeviceGetAttribute_fn, PFN_cuDeviceGetAttribute_v2000);
ABI(hmr_cuDevicePrimaryCtxRetain_fn, PFN_cuDevicePrimaryCtxRetain_v7000);
ABI(hmr_cuDevicePrimaryCtxRelease_fn, PFN_cuDevicePrimaryCtxRelease_v11000);
ABI(hmr_cuCtxGetCurrent_fn, PFN_cuCtxGetCurrent_v4000);
ABI(hmr_cuCtxSetCurrent_fn, PFN_cuCtxSetCurrent_v4000);
ABI(hmr_cuPointerGetAttributes_fn, PFN_cuPointerGetAttributes_v7000);
ABI(hmr_cuMemGetAddressRange_fn, PFN_cuMemGetAddressRange_v3020);
ABI(hmr_cuMemcpyHtoD_fn, PFN_cuMemcpyHtoD_v3020);
ABI(hmr_cuMemcpyDtoH_fn, PFN_cuMemcpyDtoH_v3020);
ABI(hmr_cuMemHostRegister_fn, PFN_cuMemHostRegister_v6050);
ABI(hmr_cuMemHostUnregister_fn, PFN_cuMemHostUnregister_v4000);
ABI(hmr_cuMemGetHandleForAddressRange_fn,
    PFN_cuMemGetHandleForAddressRange_v11070);
ABI(hmr_cuIpcGetMemHandle_fn, PFN_cuIpcGetMemHandle_v4010);
ABI(hmr_cuIpcOpenMemHandle_fn, PFN_cuIpcOpenMemHandle_v11000);
ABI(hmr_cuIpcCloseMemHandle_fn, PFN_cuIpcCloseMemHandle_v4010);
