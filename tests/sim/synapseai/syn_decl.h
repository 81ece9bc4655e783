/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* syn_decl.h: the SynapseAI, HCCL and hl-thunk declarations the sim serves. */
#ifndef HMR_SIM_SYN_DECL_H
#define HMR_SIM_SYN_DECL_H

/*
 * No Debian package ships these headers, so the subset the simulator
 * implements is declared here, with the vendor's names, types, values and
 * struct layouts.  Sources (read, not copied):
 *
 *  [S1] synapse_common_types.h, synapse_api_types.h, synapse_api.h as
 *       vendored in HabanaAI/HCL, dependencies/synapse/include/ (header
 *       dated 2025-05; MAX_NUM_OF_DEVICES_PER_HOST 16).
 *  [S2] HabanaAI/Intel_Gaudi3_Software synapse/src/runtime/common/
 *       (synapse_api_impl.cpp, syn_common_impl.cpp, syn_singleton.cpp,
 *       device/device_manager.cpp, device/device_mem_alloc.cpp): the
 *       behaviour behind each prototype (status codes, one device per
 *       process, device id 0).
 *  [H1] HabanaAI/HCL hcl/include/hccl.h, hccl_types.h; hcl/src/
 *       hccl_wrapper.cpp, hccl/hccl_context.cpp, libfabric/
 *       hl_ofi_component.cpp: hcclLookupDMABuff.  libSynapse.so exports it
 *       (Intel_Gaudi3_Software hcl/include/internal/hccl_api_wrapper.inl,
 *       compiled into synapse/src/runtime/common/
 *       synapse_hccl_api_wrapper.cpp) and forwards it to libhcl.so's
 *       hcclLookupDMABuff_impl; libfabric and the PyTorch bridge dlsym it
 *       from libSynapse.so.
 *  [T1] HabanaAI/hl-thunk-open include/uapi/hlthunk.h and
 *       src/libhlthunk.c; the kernel's include/uapi/drm/habanalabs_accel.h
 *       (export_dmabuf_fd) and drivers/accel/habanalabs/common/memory.c
 *       (export_dmabuf_from_addr, validate_export_params).
 *  [L1] ofiwg/libfabric src/hmem_synapseai.c (synInitialize,
 *       synDeviceGetCount, hcclLookupDMABuff; synDestroy deliberately not
 *       called) and fabtests/common/hmem_synapseai.c (the hl-thunk route).
 */

#include <stdint.h>

/* [S1] synapse_common_types.h: "#define size_t uint64_t" for C callers. */
typedef uint64_t syn_size_t;

/* [S1] synapse_common_types.h, enum synStatus (all values). */
typedef enum synStatus {
	synSuccess = 0,
	synInvalidArgument = 1,
	synCbFull = 2,
	synOutOfHostMemory = 3,
	synOutOfDeviceMemory = 4,
	synObjectAlreadyInitialized = 5,
	synObjectNotInitialized = 6,
	synCommandSubmissionFailure = 7,
	synNoDeviceFound = 8,
	synDeviceTypeMismatch = 9,
	synFailedToInitializeCb = 10,
	synFailedToFreeCb = 11,
	synFailedToMapCb = 12,
	synFailedToUnmapCb = 13,
	synFailedToAllocateDeviceMemory = 14,
	synFailedToFreeDeviceMemory = 15,
	synFailedNotEnoughDevicesFound = 16,
	synDeviceReset = 17,
	synUnsupported = 18,
	synWrongParamsFile = 19,
	synDeviceAlreadyAcquired = 20,
	synNameIsAlreadyUsed = 21,
	synBusy = 22,
	synAllResourcesTaken = 23,
	synUnavailable = 24,
	synInvalidTensorDimensions = 25,
	synFail = 26,
	synOutOfResources = 27,
	synUninitialized = 28,
	synAlreadyInitialized = 29,
	synFailedSectionValidation = 30,
	synSynapseTerminated = 31,
	synAssertAsync = 32,
	synInvalidEventHandle = 33,
	synMappingNotFound = 34,
	synFailedDynamicPatching = 35,
	synFailedStaticPatching = 36,
	synFailedToSubmitWorkload = 37,
	synInvalidSectionsDefinition = 38,
	synInvalidTensorProperties = 39,
	synFailHccl = 40,
	synFailedToCollectTime = 41,
	synTimeout = 42,
	synResourceBadUsage = 43,
	synNullPtr = 44,
	synFailFuser = 45,
	synFailComplexGuid = 46,
	synFailTpcKernels = 47,
	synStatusLast = synResourceBadUsage
} synStatus;

/* [S1] synapse_common_types.h */
typedef enum synDmaDir {
	HOST_TO_DRAM,
	DRAM_TO_HOST,
	DRAM_TO_DRAM,
	DIRECTION_ENUM_MAX
} synDmaDir;

/* [S1] synapse_common_types.h */
typedef enum synDeviceType {
	synDeviceGoya2 = 1,
	synDeviceGreco = synDeviceGoya2,
	synDeviceGaudi,
	synDeviceGaudi2 = 4,
	synDeviceGaudi3,
	synDeviceEmulator,
	synDeviceTypeInvalid,
	synDeviceTypeSize
} synDeviceType;

/* [S1] synapse_common_types.h */
#define MAX_NUM_OF_DEVICES_PER_HOST (16)
#define STATUS_DESCRIPTION_MAX_SIZE (56)

/* [S1] synapse_api_types.h */
typedef uint32_t synModuleId;
typedef uint32_t synDeviceId;
struct InternalStreamHandle;
typedef struct InternalStreamHandle *synStreamHandle;
#define INVALID_MODULE_ID     0xFFFFFFFFu
#define SYN_INVALID_DEVICE_ID 0xFFFFFFFFu

/* [S1] synapse_common_types.h, field order and types as declared. */
struct synDeviceInfo {
	uint64_t sramBaseAddress;
	uint64_t dramBaseAddress;
	uint32_t sramSize;
	uint64_t dramSize;
	uint64_t tpcEnabledMask;
	uint8_t dramEnabled;
	uint32_t deviceId;
	uint32_t fd;
	synDeviceType deviceType;
};
typedef struct synDeviceInfo synDeviceInfo;

/* [S1] synapse_common_types.h: synDeviceInfo plus two trailing fields. */
struct synDeviceInfoV2 {
	uint64_t sramBaseAddress;
	uint64_t dramBaseAddress;
	uint32_t sramSize;
	uint64_t dramSize;
	uint64_t tpcEnabledMask;
	uint8_t dramEnabled;
	uint32_t deviceId;
	uint32_t fd;
	synDeviceType deviceType;
	uint8_t deviceIndex;
	uint64_t globalHbmBaseAddress;
};
typedef struct synDeviceInfoV2 synDeviceInfoV2;

/* The x86-64 layout the vendor's compiler gives these structs. */
_Static_assert(__builtin_offsetof(synDeviceInfoV2, sramSize) == 16, "abi");
_Static_assert(__builtin_offsetof(synDeviceInfoV2, dramEnabled) == 40, "abi");
_Static_assert(__builtin_offsetof(synDeviceInfoV2, fd) == 48, "abi");
_Static_assert(__builtin_offsetof(synDeviceInfoV2, deviceType) == 52, "abi");
_Static_assert(__builtin_offsetof(synDeviceInfoV2, deviceIndex) == 56, "abi");
_Static_assert(__builtin_offsetof(synDeviceInfoV2, globalHbmBaseAddress) == 64,
               "abi");
_Static_assert(sizeof(synDeviceInfoV2) == 72, "abi");
_Static_assert(sizeof(synDeviceInfo) == 56, "abi");

/*
 * [S1] synapse_api.h prototypes (SYN_API_CALL is empty on Linux).  The
 * header writes synInitialize() and synDestroy() without "void"; the ABI
 * is the same.
 */
synStatus synInitialize(void);
synStatus synDestroy(void);
synStatus synDriverGetVersion(char *pDriverVersion, const int len);
synStatus synStatusGetBriefDescription(synStatus status,
                                       char *statusDescription, syn_size_t len);
synStatus synDeviceGetCount(uint32_t *pCount);
synStatus synDeviceGetCountByDeviceType(uint32_t *pCount,
                                        const synDeviceType deviceType);
synStatus synDeviceAcquireByDeviceType(synDeviceId *pDeviceId,
                                       const synDeviceType deviceType);
synStatus synDeviceAcquireByModuleId(synDeviceId *pDeviceId,
                                     const synModuleId moduleId);
synStatus synDeviceAcquire(synDeviceId *pDeviceId, const char *pciBus);
synStatus synDeviceRelease(const synDeviceId deviceId);
synStatus synDeviceGetInfo(const synDeviceId deviceId,
                           synDeviceInfo *pDeviceInfo);
synStatus synDeviceGetInfoV2(const synDeviceId deviceId,
                             synDeviceInfoV2 *pDeviceInfo);
synStatus synDeviceGetMemoryInfo(const synDeviceId deviceId, uint64_t *free,
                                 uint64_t *total);
synStatus synDeviceMalloc(const synDeviceId deviceId, const uint64_t size,
                          uint64_t reqAddr, const uint32_t flags,
                          uint64_t *buffer);
synStatus synDeviceFree(const synDeviceId deviceId, const uint64_t buffer,
                        const uint32_t flags);
synStatus synHostMalloc(const synDeviceId deviceId, const uint64_t size,
                        const uint32_t flags, void **buffer);
synStatus synHostFree(const synDeviceId deviceId, const void *buffer,
                      const uint32_t flags);
synStatus synHostMap(const synDeviceId deviceId, const uint64_t size,
                     const void *buffer);
synStatus synHostUnmap(const synDeviceId deviceId, const void *buffer);
synStatus synStreamCreateGeneric(synStreamHandle *pStreamHandle,
                                 const synDeviceId deviceId,
                                 const uint32_t flags);
synStatus synStreamDestroy(const synStreamHandle streamHandle);
synStatus synStreamSynchronize(const synStreamHandle streamHandle);
synStatus synDeviceSynchronize(const synDeviceId deviceId);
synStatus synMemCopyAsync(const synStreamHandle streamHandle,
                          const uint64_t src, const uint64_t size,
                          const uint64_t dst, const synDmaDir direction);
synStatus synMemsetD8Async(uint64_t pDeviceMem, const unsigned char value,
                           const syn_size_t numOfElements,
                           const synStreamHandle streamHandle);

/* [H1] hccl_types.h, hcclResult_t (all values). */
typedef enum {
	hcclUninitialized = -1,
	hcclSuccess = 0,
	hcclNoDeviceFound,
	hcclUnsupported,
	hcclOutOfMemory,
	hcclUnhandledSynapseError,
	hcclSystemError,
	hcclInternalError,
	hcclInvalidArgument,
	hcclInvalidUsage,
	hcclSocketError,
	hcclLibfabricError,
	hcclTryAgainError,
	hcclBusy,
	hcclNumResults,
	hcclStreamError,
	hcclSynapseTerminated,
	hcclPortDown
} hcclResult_t;

/* [H1] hccl.h: "Returns FD for HBM memory region if it was registered for
 * gaudi-direct."  Returns an int (an hcclResult_t value), not a fd. */
int hcclLookupDMABuff(uint64_t addr, uint64_t size, int *fd);

/* [T1] hlthunk.h */
enum hlthunk_device_name {
	HLTHUNK_DEVICE_GOYA,
	HLTHUNK_DEVICE_PLACEHOLDER1,
	HLTHUNK_DEVICE_GAUDI,
	HLTHUNK_DEVICE_INVALID,
	HLTHUNK_DEVICE_DONT_CARE,
	HLTHUNK_DEVICE_GAUDI2,
	HLTHUNK_DEVICE_PLACEHOLDER2,
	HLTHUNK_DEVICE_PLACEHOLDER3,
	HLTHUNK_DEVICE_PLACEHOLDER4,
	HLTHUNK_DEVICE_MAX
};

/* [T1] hlthunk.h prototypes: an fd, or a negative errno. */
int hlthunk_open(enum hlthunk_device_name device_name, const char *busid);
int hlthunk_open_by_module_id(uint32_t module_id);
int hlthunk_close(int fd);
int hlthunk_device_memory_export_dmabuf_fd(int fd, uint64_t addr, uint64_t size,
                                           uint32_t flags);
int hlthunk_device_mapped_memory_export_dmabuf_fd(int fd, uint64_t addr,
                                                  uint64_t size,
                                                  uint64_t offset,
                                                  uint32_t flags);

#endif /* HMR_SIM_SYN_DECL_H */
