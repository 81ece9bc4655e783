/* cuda_api.h: the CUDA driver API subset hmr calls, declared without the SDK.
 */
#ifndef HMR_CUDA_API_H
#define HMR_CUDA_API_H

#include <stdbool.h>
#include <stdint.h>

/*
 * hmr builds without the CUDA SDK: these declarations have the driver's
 * ABI.  Where cuda.h is found, cuda_check.c asserts at compile time that
 * every constant equals cuda.h's and every function type equals
 * cudaTypedefs.h's PFN_ type of the ABI version named in its comment.
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
	HMR_CUDA_ERROR_NOT_INITIALIZED = 3,
	HMR_CUDA_ERROR_DEINITIALIZED = 4,
	HMR_CUDA_ERROR_STUB_LIBRARY = 34,
	HMR_CUDA_ERROR_NO_DEVICE = 100,
	HMR_CUDA_ERROR_NOT_FOUND = 500,
	HMR_CUDA_ERROR_NOT_SUPPORTED = 801,
};

enum {
	HMR_CU_POINTER_ATTRIBUTE_CONTEXT = 1,
	HMR_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
	HMR_CU_POINTER_ATTRIBUTE_BUFFER_ID = 7,
	HMR_CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
	HMR_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
	HMR_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
	HMR_CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
	HMR_CU_POINTER_ATTRIBUTE_MAPPED = 13,
};

enum {
	HMR_CU_MEMORYTYPE_HOST = 1,
	HMR_CU_MEMORYTYPE_DEVICE = 2,
	HMR_CU_MEMORYTYPE_UNIFIED = 4,
};

enum {
	HMR_CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
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

/* Function types; the comment names the cudaTypedefs.h PFN_ they match. */
typedef hmr_CUresult (*hmr_cuInit_fn)(unsigned);          /* cuInit_v2000 */
typedef hmr_CUresult (*hmr_cuDriverGetVersion_fn)(int *); /* v2020 */
typedef hmr_CUresult (
        *hmr_cuGetProcAddress_v2_fn)(/* v12000 */
                                     const char *, void **, int, hmr_cuuint64_t,
                                     hmr_CUdriverProcAddressQueryResult *);
typedef hmr_CUresult (*hmr_cuGetProcAddress_v1_fn)(/* v11030 */
                                                   const char *, void **, int,
                                                   hmr_cuuint64_t);
typedef hmr_CUresult (*hmr_cuGetErrorName_fn)(hmr_CUresult,
                                              const char **);    /* v6000 */
typedef hmr_CUresult (*hmr_cuDeviceGetCount_fn)(int *);          /* v2000 */
typedef hmr_CUresult (*hmr_cuDeviceGet_fn)(hmr_CUdevice *, int); /* v2000 */
typedef hmr_CUresult (*hmr_cuDeviceGetAttribute_fn)(             /* v2000 */
                                                    int *,
                                                    hmr_CUdevice_attribute,
                                                    hmr_CUdevice);
typedef hmr_CUresult (*hmr_cuDevicePrimaryCtxRetain_fn)(/* v7000 */
                                                        hmr_CUcontext *,
                                                        hmr_CUdevice);
typedef hmr_CUresult (*hmr_cuDevicePrimaryCtxRelease_fn)(/* v11000 */
                                                         hmr_CUdevice);
typedef hmr_CUresult (*hmr_cuCtxGetCurrent_fn)(hmr_CUcontext *); /* v4000 */
typedef hmr_CUresult (*hmr_cuCtxSetCurrent_fn)(hmr_CUcontext);   /* v4000 */
typedef hmr_CUresult (*hmr_cuPointerGetAttributes_fn)(           /* v7000 */
                                                      unsigned,
                                                      hmr_CUpointer_attribute *,
                                                      void **, hmr_CUdeviceptr);
typedef hmr_CUresult (*hmr_cuMemGetAddressRange_fn)(/* v3020 */
                                                    hmr_CUdeviceptr *, size_t *,
                                                    hmr_CUdeviceptr);
typedef hmr_CUresult (*hmr_cuMemcpyHtoD_fn)(hmr_CUdeviceptr, const void *,
                                            size_t); /* v3020 */
typedef hmr_CUresult (*hmr_cuMemcpyDtoH_fn)(void *, hmr_CUdeviceptr,
                                            size_t); /* v3020 */
typedef hmr_CUresult (*hmr_cuMemHostRegister_fn)(void *, size_t,
                                                 unsigned); /* v6050 */
typedef hmr_CUresult (*hmr_cuMemHostUnregister_fn)(void *); /* v4000 */
typedef hmr_CUresult (
        *hmr_cuMemGetHandleForAddressRange_fn)(/* v11070 */
                                               void *, hmr_CUdeviceptr, size_t,
                                               hmr_CUmemRangeHandleType,
                                               unsigned long long);
typedef hmr_CUresult (*hmr_cuIpcGetMemHandle_fn)(hmr_CUipcMemHandle *,
                                                 hmr_CUdeviceptr); /* v4010 */
typedef hmr_CUresult (*hmr_cuIpcOpenMemHandle_fn)(                 /* v11000 */
                                                  hmr_CUdeviceptr *,
                                                  hmr_CUipcMemHandle, unsigned);
typedef hmr_CUresult (*hmr_cuIpcCloseMemHandle_fn)(/* v4010 */
                                                   hmr_CUdeviceptr);

/* The loaded driver: resolved entry points and what was learned at start.
 * Written once by hmr__cuda_load (under hmem's once), read-only after. */
struct hmr_cuda {
	int driver_version;
	int device_count;
	hmr_cuGetErrorName_fn cuGetErrorName;
	hmr_cuDeviceGetCount_fn cuDeviceGetCount;
	hmr_cuDeviceGet_fn cuDeviceGet;
	hmr_cuDeviceGetAttribute_fn cuDeviceGetAttribute;
	hmr_cuDevicePrimaryCtxRetain_fn cuDevicePrimaryCtxRetain;
	hmr_cuDevicePrimaryCtxRelease_fn cuDevicePrimaryCtxRelease;
	hmr_cuCtxGetCurrent_fn cuCtxGetCurrent;
	hmr_cuCtxSetCurrent_fn cuCtxSetCurrent;
	hmr_cuPointerGetAttributes_fn cuPointerGetAttributes;
	hmr_cuMemGetAddressRange_fn cuMemGetAddressRange;
	hmr_cuMemcpyHtoD_fn cuMemcpyHtoD;
	hmr_cuMemcpyDtoH_fn cuMemcpyDtoH;
	hmr_cuMemHostRegister_fn cuMemHostRegister;
	hmr_cuMemHostUnregister_fn cuMemHostUnregister;
	hmr_cuMemGetHandleForAddressRange_fn cuMemGetHandleForAddressRange;
	hmr_cuIpcGetMemHandle_fn cuIpcGetMemHandle;
	hmr_cuIpcOpenMemHandle_fn cuIpcOpenMemHandle;
	hmr_cuIpcCloseMemHandle_fn cuIpcCloseMemHandle;
};

#define HMR_CUDA_MAX_DEVICES 64

extern struct hmr_cuda hmr__cuda;
/* Per device, filled at start: primary context, dma-buf support. */
extern hmr_CUcontext hmr__cuda_ctx[HMR_CUDA_MAX_DEVICES];
extern bool hmr__cuda_dmabuf[HMR_CUDA_MAX_DEVICES];
extern bool hmr__cuda_host_dmabuf[HMR_CUDA_MAX_DEVICES];

/* cuda_load.c: dlopen, resolve, cuInit, probe the devices. */
int hmr__cuda_load(char *why, size_t why_len);
void hmr__cuda_unload(void);
/* "CUDA_ERROR_INVALID_VALUE (1)" for log lines. */
const char *hmr__cuda_error(hmr_CUresult r, char *buf, size_t len);

/* cuda_ctx.c: run with device `dev`'s primary context current. */
hmr_CUcontext hmr__cuda_push(int dev);
void hmr__cuda_pop(hmr_CUcontext previous);

#endif /* HMR_CUDA_API_H */
