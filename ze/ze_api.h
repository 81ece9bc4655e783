/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ze_api.h: the Level Zero API subset hmr calls, declared without the SDK. */
#ifndef HMR_ZE_API_H
#define HMR_ZE_API_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * hmr builds without libze-dev: these declarations have the loader's ABI
 * (Level Zero API 1.4, what Debian 12's libze1 1.8 speaks).  Where
 * level_zero/ze_api.h is found, ze_check.c asserts at compile time that
 * every constant, every struct layout and every function type of the list
 * below equals the SDK's.
 */
#ifndef HMR_ZE_SDK_TYPES
/* ze_check.c substitutes the SDK's own types for these. */
typedef uint32_t hmr_ze_result_t; /* enum _ze_result_t */
typedef struct hmr_ze_driver_st *hmr_ze_driver_handle_t;
typedef struct hmr_ze_device_st *hmr_ze_device_handle_t;
typedef struct hmr_ze_context_st *hmr_ze_context_handle_t;
typedef struct hmr_ze_cmdlist_st *hmr_ze_command_list_handle_t;
typedef struct hmr_ze_event_st *hmr_ze_event_handle_t;
typedef struct hmr_ze_ipc_mem_handle hmr_ze_ipc_mem_handle_t;
typedef struct hmr_ze_context_desc hmr_ze_context_desc_t;
typedef struct hmr_ze_command_queue_desc hmr_ze_command_queue_desc_t;
typedef struct hmr_ze_command_queue_group_properties
        hmr_ze_command_queue_group_properties_t;
typedef struct hmr_ze_memory_allocation_properties
        hmr_ze_memory_allocation_properties_t;
typedef struct hmr_ze_device_properties hmr_ze_device_properties_t;
typedef struct hmr_ze_device_external_memory_properties
        hmr_ze_device_external_memory_properties_t;
typedef struct hmr_ze_device_mem_alloc_desc hmr_ze_device_mem_alloc_desc_t;
typedef uint32_t hmr_zel_handle_type_t; /* enum _zel_handle_type_t */
typedef struct hmr_zel_component_version hmr_zel_component_version_t;
#endif

/* Status values hmr names in its log lines (ze_api.h 1.4's complete
 * list; ze_check.c compares each). */
#define HMR_ZE_RESULTS(X)                                                      \
	X(SUCCESS, 0)                                                          \
	X(NOT_READY, 1)                                                        \
	X(ERROR_DEVICE_LOST, 0x70000001)                                       \
	X(ERROR_OUT_OF_HOST_MEMORY, 0x70000002)                                \
	X(ERROR_OUT_OF_DEVICE_MEMORY, 0x70000003)                              \
	X(ERROR_MODULE_BUILD_FAILURE, 0x70000004)                              \
	X(ERROR_MODULE_LINK_FAILURE, 0x70000005)                               \
	X(ERROR_DEVICE_REQUIRES_RESET, 0x70000006)                             \
	X(ERROR_DEVICE_IN_LOW_POWER_STATE, 0x70000007)                         \
	X(ERROR_INSUFFICIENT_PERMISSIONS, 0x70010000)                          \
	X(ERROR_NOT_AVAILABLE, 0x70010001)                                     \
	X(ERROR_DEPENDENCY_UNAVAILABLE, 0x70020000)                            \
	X(WARNING_DROPPED_DATA, 0x70020001)                                    \
	X(ERROR_UNINITIALIZED, 0x78000001)                                     \
	X(ERROR_UNSUPPORTED_VERSION, 0x78000002)                               \
	X(ERROR_UNSUPPORTED_FEATURE, 0x78000003)                               \
	X(ERROR_INVALID_ARGUMENT, 0x78000004)                                  \
	X(ERROR_INVALID_NULL_HANDLE, 0x78000005)                               \
	X(ERROR_HANDLE_OBJECT_IN_USE, 0x78000006)                              \
	X(ERROR_INVALID_NULL_POINTER, 0x78000007)                              \
	X(ERROR_INVALID_SIZE, 0x78000008)                                      \
	X(ERROR_UNSUPPORTED_SIZE, 0x78000009)                                  \
	X(ERROR_UNSUPPORTED_ALIGNMENT, 0x7800000a)                             \
	X(ERROR_INVALID_SYNCHRONIZATION_OBJECT, 0x7800000b)                    \
	X(ERROR_INVALID_ENUMERATION, 0x7800000c)                               \
	X(ERROR_UNSUPPORTED_ENUMERATION, 0x7800000d)                           \
	X(ERROR_UNSUPPORTED_IMAGE_FORMAT, 0x7800000e)                          \
	X(ERROR_INVALID_NATIVE_BINARY, 0x7800000f)                             \
	X(ERROR_INVALID_GLOBAL_NAME, 0x78000010)                               \
	X(ERROR_INVALID_KERNEL_NAME, 0x78000011)                               \
	X(ERROR_INVALID_FUNCTION_NAME, 0x78000012)                             \
	X(ERROR_INVALID_GROUP_SIZE_DIMENSION, 0x78000013)                      \
	X(ERROR_INVALID_GLOBAL_WIDTH_DIMENSION, 0x78000014)                    \
	X(ERROR_INVALID_KERNEL_ARGUMENT_INDEX, 0x78000015)                     \
	X(ERROR_INVALID_KERNEL_ARGUMENT_SIZE, 0x78000016)                      \
	X(ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE, 0x78000017)                    \
	X(ERROR_INVALID_MODULE_UNLINKED, 0x78000018)                           \
	X(ERROR_INVALID_COMMAND_LIST_TYPE, 0x78000019)                         \
	X(ERROR_OVERLAPPING_REGIONS, 0x7800001a)                               \
	X(WARNING_ACTION_REQUIRED, 0x7800001b)                                 \
	X(ERROR_UNKNOWN, 0x7ffffffe)

#define HMR_ZE_RESULT_ENUM(name, value) HMR_ZE_RESULT_##name = value,
enum { HMR_ZE_RESULTS(HMR_ZE_RESULT_ENUM) };
#undef HMR_ZE_RESULT_ENUM

enum {
	HMR_ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES = 0x3,
	HMR_ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES = 0x6,
	HMR_ZE_STRUCTURE_TYPE_DEVICE_EXTERNAL_MEMORY_PROPERTIES = 0xc,
	HMR_ZE_STRUCTURE_TYPE_CONTEXT_DESC = 0xd,
	HMR_ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC = 0xe,
	HMR_ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC = 0x15,
	HMR_ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES = 0x17,
	HMR_ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_FD = 0x1a,
};

enum {
	HMR_ZE_MEMORY_TYPE_UNKNOWN = 0,
	HMR_ZE_MEMORY_TYPE_HOST = 1,
	HMR_ZE_MEMORY_TYPE_DEVICE = 2,
	HMR_ZE_MEMORY_TYPE_SHARED = 3,
};

enum {
	HMR_ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF = 1u << 1,
	HMR_ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE = 1u << 0,
	HMR_ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY = 1u << 1,
	HMR_ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS = 1,
	HMR_ZE_COMMAND_QUEUE_PRIORITY_NORMAL = 0,
	HMR_ZE_MAX_IPC_HANDLE_SIZE = 64,
	HMR_ZE_MAX_DEVICE_UUID_SIZE = 16,
	HMR_ZE_MAX_DEVICE_NAME = 256,
	HMR_ZEL_COMPONENT_STRING_SIZE = 64,
	HMR_ZEL_HANDLE_DRIVER = 0,
};

/* The structs hmr fills or reads, with the SDK's layouts (ze_check.c
 * compares size and every offset).  Enums are 32-bit in the ABI. */
struct hmr_ze_ipc_mem_handle {
	char data[HMR_ZE_MAX_IPC_HANDLE_SIZE];
};

struct hmr_ze_context_desc {
	uint32_t stype;
	const void *pNext;
	uint32_t flags;
};

struct hmr_ze_command_queue_desc {
	uint32_t stype;
	const void *pNext;
	uint32_t ordinal;
	uint32_t index;
	uint32_t flags;
	uint32_t mode;
	uint32_t priority;
};

struct hmr_ze_command_queue_group_properties {
	uint32_t stype;
	void *pNext;
	uint32_t flags;
	size_t maxMemoryFillPatternSize;
	uint32_t numQueues;
};

struct hmr_ze_memory_allocation_properties {
	uint32_t stype;
	void *pNext;
	uint32_t type;
	uint64_t id;
	uint64_t pageSize;
};

struct hmr_ze_external_memory_export_fd {
	uint32_t stype;
	const void *pNext;
	uint32_t flags;
	int fd;
};

struct hmr_ze_device_properties {
	uint32_t stype;
	void *pNext;
	uint32_t type;
	uint32_t vendorId;
	uint32_t deviceId;
	uint32_t flags;
	uint32_t subdeviceId;
	uint32_t coreClockRate;
	uint64_t maxMemAllocSize;
	uint32_t maxHardwareContexts;
	uint32_t maxCommandQueuePriority;
	uint32_t numThreadsPerEU;
	uint32_t physicalEUSimdWidth;
	uint32_t numEUsPerSubslice;
	uint32_t numSubslicesPerSlice;
	uint32_t numSlices;
	uint64_t timerResolution;
	uint32_t timestampValidBits;
	uint32_t kernelTimestampValidBits;
	uint8_t uuid[HMR_ZE_MAX_DEVICE_UUID_SIZE];
	char name[HMR_ZE_MAX_DEVICE_NAME];
};

struct hmr_ze_device_external_memory_properties {
	uint32_t stype;
	void *pNext;
	uint32_t memoryAllocationImportTypes;
	uint32_t memoryAllocationExportTypes;
	uint32_t imageImportTypes;
	uint32_t imageExportTypes;
};

struct hmr_ze_device_mem_alloc_desc {
	uint32_t stype;
	const void *pNext;
	uint32_t flags;
	uint32_t ordinal;
};

struct hmr_zel_version {
	int major;
	int minor;
	int patch;
};

struct hmr_zel_component_version {
	char component_name[HMR_ZEL_COMPONENT_STRING_SIZE];
	uint32_t spec_version;
	struct hmr_zel_version component_lib_version;
};

/*
 * Every loader entry point hmr calls, each written once:
 *   X(name, REQ or OPT, parameter types)
 * The list makes the function-pointer types (hmr_<name>_fn), the members
 * of struct hmr_ze, the loading table (ze_load.c) and the ABI check
 * against the SDK's prototypes (ze_check.c).  All return ze_result_t.
 * zelLoaderTranslateHandle (loader 1.7 and later) turns the loader's
 * wrapped driver handle into the driver's own for the zex calls below;
 * zelLoaderGetVersions names the loader's version.
 */
#define HMR_ZE_CALLS(X)                                                        \
	X(zeInit, REQ, (uint32_t))                                             \
	X(zeDriverGet, REQ, (uint32_t *, hmr_ze_driver_handle_t *))            \
	X(zeDriverGetExtensionFunctionAddress, REQ,                            \
	  (hmr_ze_driver_handle_t, const char *, void **))                     \
	X(zeDeviceGet, REQ,                                                    \
	  (hmr_ze_driver_handle_t, uint32_t *, hmr_ze_device_handle_t *))      \
	X(zeDeviceGetCommandQueueGroupProperties, REQ,                         \
	  (hmr_ze_device_handle_t, uint32_t *,                                 \
	   hmr_ze_command_queue_group_properties_t *))                         \
	X(zeContextCreate, REQ,                                                \
	  (hmr_ze_driver_handle_t, const hmr_ze_context_desc_t *,              \
	   hmr_ze_context_handle_t *))                                         \
	X(zeContextDestroy, REQ, (hmr_ze_context_handle_t))                    \
	X(zeCommandListCreateImmediate, REQ,                                   \
	  (hmr_ze_context_handle_t, hmr_ze_device_handle_t,                    \
	   const hmr_ze_command_queue_desc_t *,                                \
	   hmr_ze_command_list_handle_t *))                                    \
	X(zeCommandListDestroy, REQ, (hmr_ze_command_list_handle_t))           \
	X(zeCommandListAppendMemoryCopy, REQ,                                  \
	  (hmr_ze_command_list_handle_t, void *, const void *, size_t,         \
	   hmr_ze_event_handle_t, uint32_t, hmr_ze_event_handle_t *))          \
	X(zeMemGetAllocProperties, REQ,                                        \
	  (hmr_ze_context_handle_t, const void *,                              \
	   hmr_ze_memory_allocation_properties_t *, hmr_ze_device_handle_t *)) \
	X(zeMemGetAddressRange, REQ,                                           \
	  (hmr_ze_context_handle_t, const void *, void **, size_t *))          \
	X(zeMemGetIpcHandle, REQ,                                              \
	  (hmr_ze_context_handle_t, const void *, hmr_ze_ipc_mem_handle_t *))  \
	X(zeMemOpenIpcHandle, REQ,                                             \
	  (hmr_ze_context_handle_t, hmr_ze_device_handle_t,                    \
	   hmr_ze_ipc_mem_handle_t, uint32_t, void **))                        \
	X(zeMemCloseIpcHandle, REQ, (hmr_ze_context_handle_t, const void *))   \
	X(zelLoaderTranslateHandle, OPT,                                       \
	  (hmr_zel_handle_type_t, void *, void **))                            \
	/* What hmr_hmem_backend_info and hmr_hmem_device_info tell. */        \
	X(zelLoaderGetVersions, OPT,                                           \
	  (size_t *, hmr_zel_component_version_t *))                           \
	X(zeDeviceGetProperties, REQ,                                          \
	  (hmr_ze_device_handle_t, hmr_ze_device_properties_t *))              \
	X(zeDeviceGetExternalMemoryProperties, REQ,                            \
	  (hmr_ze_device_handle_t,                                             \
	   hmr_ze_device_external_memory_properties_t *))                      \
	/* For hmr_hmem_alloc (self-checks, samples), not registration. */     \
	X(zeMemAllocDevice, REQ,                                               \
	  (hmr_ze_context_handle_t, const hmr_ze_device_mem_alloc_desc_t *,    \
	   size_t, size_t, hmr_ze_device_handle_t, void **))                   \
	X(zeMemFree, REQ, (hmr_ze_context_handle_t, void *))

/*
 * Intel's host import (compute-runtime's zex_driver.h, in no header
 * Debian ships, so unchecked), per driver through
 * zeDriverGetExtensionFunctionAddress.  Level Zero's core API has no host
 * registration.  They take the driver's own handle.
 */
#define HMR_ZE_EXTENSIONS(X)                                                   \
	X(zexDriverImportExternalPointer,                                      \
	  (hmr_ze_driver_handle_t, void *, size_t))                            \
	X(zexDriverReleaseImportedPointer, (hmr_ze_driver_handle_t, void *))

#define HMR_ZE_FN_TYPE(name, req, params)                                      \
	typedef hmr_ze_result_t(*hmr_##name##_fn) params;
HMR_ZE_CALLS(HMR_ZE_FN_TYPE)
#undef HMR_ZE_FN_TYPE
#define HMR_ZE_EXT_TYPE(name, params)                                          \
	typedef hmr_ze_result_t(*hmr_##name##_fn) params;
HMR_ZE_EXTENSIONS(HMR_ZE_EXT_TYPE)
#undef HMR_ZE_EXT_TYPE

/* One device of one driver. */
struct hmr_ze_device {
	hmr_ze_device_handle_t handle;
	/* The immediate copy list, created at the first copy; `lock`
	 * guards its creation and every append (a command list is not
	 * thread-safe). */
	pthread_mutex_t lock;
	hmr_ze_command_list_handle_t list;
};

/* One driver, at its index in zeDriverGet's array. */
struct hmr_ze_driver {
	hmr_ze_driver_handle_t handle; /* The loader's (maybe wrapped). */
	hmr_ze_driver_handle_t own;    /* The driver's own, for zex calls. */
	hmr_ze_context_handle_t ctx;
	uint32_t device_count;
	struct hmr_ze_device *devices;
#define HMR_ZE_EXT_MEMBER(name, params) hmr_##name##_fn name;
	HMR_ZE_EXTENSIONS(HMR_ZE_EXT_MEMBER)
#undef HMR_ZE_EXT_MEMBER
};

/* The loaded loader and what was learned at start.  Written once by
 * hmr__ze_load (under hmem's once), read-only after, but for the devices'
 * lists (their locks). */
struct hmr_ze {
#define HMR_ZE_MEMBER(name, req, params) hmr_##name##_fn name;
	HMR_ZE_CALLS(HMR_ZE_MEMBER)
#undef HMR_ZE_MEMBER
	uint32_t driver_count;
	struct hmr_ze_driver *drivers;
};

extern struct hmr_ze hmr__ze;

/* libfabric's fi_hmem_ze_device() encoding: driver << 16 | device. */
#define HMR_ZE_DEVICE_BITS 16
#define HMR_ZE_MAX_DRIVERS 0x8000u
#define HMR_ZE_MAX_DEVICES 0x10000u
static inline uint64_t hmr__ze_encode(uint32_t driver, uint32_t device)
{
	return (uint64_t)driver << HMR_ZE_DEVICE_BITS | device;
}

/* The driver and device an hmr device number names; false (and a log
 * line) when it names none. */
bool hmr__ze_decode(uint64_t device, struct hmr_ze_driver **drv,
                    struct hmr_ze_device **dev);

/* ze_load.c: dlopen, zeInit, every driver's devices and context. */
int hmr__ze_load(char *why, size_t why_len);
void hmr__ze_unload(void);

/*
 * The error wrapper every loader call's result goes through: 0 for
 * ZE_RESULT_SUCCESS; otherwise one warning naming the call and the
 * result ("zeMemOpenIpcHandle: ZE_RESULT_ERROR_INVALID_ARGUMENT
 * (0x78000004)") and the -FI_E* code of hmr__ze_errno.
 */
int hmr__ze_check(const char *call, hmr_ze_result_t r);
#define HMR_ZE(name, ...) hmr__ze_check(#name, hmr__ze.name(__VA_ARGS__))
/* The -FI_E* code for a result, without a log line. */
int hmr__ze_errno(hmr_ze_result_t r);
/* "ZE_RESULT_ERROR_UNKNOWN (0x7ffffffe)", for log lines. */
const char *hmr__ze_result_name(hmr_ze_result_t r, char *buf, size_t len);

/* The loaded loader's path (ze_load.c). */
void hmr__ze_library(char *buf, size_t len);

/* ze_copy.c: a copy through the device's immediate list. */
int hmr__ze_copy(struct hmr_ze_driver *drv, struct hmr_ze_device *dev,
                 void *dst, const void *src, size_t len);
/* Destroy the device's list, if it was created (at unload). */
void hmr__ze_copy_fini(struct hmr_ze_device *dev);

#endif /* HMR_ZE_API_H */
