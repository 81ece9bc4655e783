/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ze_check.c: hmr's Level Zero declarations checked against libze-dev's. */
#include <stddef.h>

#include <level_zero/loader/ze_loader.h>
#include <level_zero/ze_api.h>

/* Built only where level_zero/ze_api.h is found: nothing here runs; it
 * compiles or the build fails.  hmr's function types are re-read with the
 * SDK's own types in place of hmr's, and each must then be exactly the
 * type of the SDK's prototype. */
#define HMR_ZE_SDK_TYPES
typedef ze_result_t hmr_ze_result_t;
typedef ze_driver_handle_t hmr_ze_driver_handle_t;
typedef ze_device_handle_t hmr_ze_device_handle_t;
typedef ze_context_handle_t hmr_ze_context_handle_t;
typedef ze_command_list_handle_t hmr_ze_command_list_handle_t;
typedef ze_event_handle_t hmr_ze_event_handle_t;
typedef ze_ipc_mem_handle_t hmr_ze_ipc_mem_handle_t;
typedef ze_context_desc_t hmr_ze_context_desc_t;
typedef ze_command_queue_desc_t hmr_ze_command_queue_desc_t;
typedef ze_command_queue_group_properties_t
        hmr_ze_command_queue_group_properties_t;
typedef ze_memory_allocation_properties_t hmr_ze_memory_allocation_properties_t;
typedef ze_device_properties_t hmr_ze_device_properties_t;
typedef ze_device_external_memory_properties_t
        hmr_ze_device_external_memory_properties_t;
typedef ze_device_mem_alloc_desc_t hmr_ze_device_mem_alloc_desc_t;
typedef zel_handle_type_t hmr_zel_handle_type_t;
typedef zel_component_version_t hmr_zel_component_version_t;
#include "ze/ze_api.h"

/* The 32-bit ints hmr uses for the SDK's enums and flags. */
_Static_assert(sizeof(uint32_t) == sizeof(ze_result_t), "ze_result_t");
_Static_assert(sizeof(uint32_t) == sizeof(ze_structure_type_t), "stype");
_Static_assert(sizeof(uint32_t) == sizeof(ze_memory_type_t), "memtype");
_Static_assert(sizeof(uint32_t) == sizeof(zel_handle_type_t), "zel");
_Static_assert(sizeof(uint32_t) == sizeof(ze_init_flags_t), "init");
_Static_assert(sizeof(uint32_t) == sizeof(ze_ipc_memory_flags_t), "ipc");

#define SAME(a, b) _Static_assert((long long)(a) == (long long)(b), #a)
#define HMR_ZE_RESULT_SAME(name, value)                                        \
	SAME(HMR_ZE_RESULT_##name, ZE_RESULT_##name);
HMR_ZE_RESULTS(HMR_ZE_RESULT_SAME)
SAME(HMR_ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES,
     ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES);
SAME(HMR_ZE_STRUCTURE_TYPE_DEVICE_EXTERNAL_MEMORY_PROPERTIES,
     ZE_STRUCTURE_TYPE_DEVICE_EXTERNAL_MEMORY_PROPERTIES);
SAME(HMR_ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
     ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC);
SAME(HMR_ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES,
     ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES);
SAME(HMR_ZE_STRUCTURE_TYPE_CONTEXT_DESC, ZE_STRUCTURE_TYPE_CONTEXT_DESC);
SAME(HMR_ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
     ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
SAME(HMR_ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES,
     ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES);
SAME(HMR_ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_FD,
     ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_FD);
SAME(HMR_ZE_MEMORY_TYPE_UNKNOWN, ZE_MEMORY_TYPE_UNKNOWN);
SAME(HMR_ZE_MEMORY_TYPE_HOST, ZE_MEMORY_TYPE_HOST);
SAME(HMR_ZE_MEMORY_TYPE_DEVICE, ZE_MEMORY_TYPE_DEVICE);
SAME(HMR_ZE_MEMORY_TYPE_SHARED, ZE_MEMORY_TYPE_SHARED);
SAME(HMR_ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF,
     ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF);
SAME(HMR_ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE,
     ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE);
SAME(HMR_ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY,
     ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY);
SAME(HMR_ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
SAME(HMR_ZE_COMMAND_QUEUE_PRIORITY_NORMAL, ZE_COMMAND_QUEUE_PRIORITY_NORMAL);
SAME(HMR_ZE_MAX_IPC_HANDLE_SIZE, ZE_MAX_IPC_HANDLE_SIZE);
SAME(HMR_ZEL_HANDLE_DRIVER, ZEL_HANDLE_DRIVER);
SAME(HMR_ZE_MAX_DEVICE_UUID_SIZE, ZE_MAX_DEVICE_UUID_SIZE);
SAME(HMR_ZE_MAX_DEVICE_NAME, ZE_MAX_DEVICE_NAME);
SAME(HMR_ZEL_COMPONENT_STRING_SIZE, ZEL_COMPONENT_STRING_SIZE);

/* Each struct hmr fills: the SDK's size, and every field at its offset
 * with its size. */
#define FIELD(ours, sdk, f)                                                    \
	_Static_assert(offsetof(struct ours, f) == offsetof(sdk, f) &&         \
	                       sizeof(((struct ours *)0)->f) ==                \
	                               sizeof(((sdk *)0)->f),                  \
	               #sdk "." #f)
#define SIZE(ours, sdk) _Static_assert(sizeof(struct ours) == sizeof(sdk), #sdk)
SIZE(hmr_ze_ipc_mem_handle, ze_ipc_mem_handle_t);
FIELD(hmr_ze_ipc_mem_handle, ze_ipc_mem_handle_t, data);
SIZE(hmr_ze_context_desc, ze_context_desc_t);
FIELD(hmr_ze_context_desc, ze_context_desc_t, stype);
FIELD(hmr_ze_context_desc, ze_context_desc_t, pNext);
FIELD(hmr_ze_context_desc, ze_context_desc_t, flags);
SIZE(hmr_ze_command_queue_desc, ze_command_queue_desc_t);
FIELD(hmr_ze_command_queue_desc, ze_command_queue_desc_t, stype);
FIELD(hmr_ze_command_queue_desc, ze_command_queue_desc_t, pNext);
FIELD(hmr_ze_command_queue_desc, ze_command_queue_desc_t, ordinal);
FIELD(hmr_ze_command_queue_desc, ze_command_queue_desc_t, index);
FIELD(hmr_ze_command_queue_desc, ze_command_queue_desc_t, flags);
FIELD(hmr_ze_command_queue_desc, ze_command_queue_desc_t, mode);
FIELD(hmr_ze_command_queue_desc, ze_command_queue_desc_t, priority);
SIZE(hmr_ze_command_queue_group_properties,
     ze_command_queue_group_properties_t);
FIELD(hmr_ze_command_queue_group_properties,
      ze_command_queue_group_properties_t, stype);
FIELD(hmr_ze_command_queue_group_properties,
      ze_command_queue_group_properties_t, pNext);
FIELD(hmr_ze_command_queue_group_properties,
      ze_command_queue_group_properties_t, flags);
FIELD(hmr_ze_command_queue_group_properties,
      ze_command_queue_group_properties_t, maxMemoryFillPatternSize);
FIELD(hmr_ze_command_queue_group_properties,
      ze_command_queue_group_properties_t, numQueues);
SIZE(hmr_ze_memory_allocation_properties, ze_memory_allocation_properties_t);
FIELD(hmr_ze_memory_allocation_properties, ze_memory_allocation_properties_t,
      stype);
FIELD(hmr_ze_memory_allocation_properties, ze_memory_allocation_properties_t,
      pNext);
FIELD(hmr_ze_memory_allocation_properties, ze_memory_allocation_properties_t,
      type);
FIELD(hmr_ze_memory_allocation_properties, ze_memory_allocation_properties_t,
      id);
FIELD(hmr_ze_memory_allocation_properties, ze_memory_allocation_properties_t,
      pageSize);
SIZE(hmr_ze_external_memory_export_fd, ze_external_memory_export_fd_t);
FIELD(hmr_ze_external_memory_export_fd, ze_external_memory_export_fd_t, stype);
FIELD(hmr_ze_external_memory_export_fd, ze_external_memory_export_fd_t, pNext);
FIELD(hmr_ze_external_memory_export_fd, ze_external_memory_export_fd_t, flags);
FIELD(hmr_ze_external_memory_export_fd, ze_external_memory_export_fd_t, fd);

SIZE(hmr_ze_device_properties, ze_device_properties_t);
FIELD(hmr_ze_device_properties, ze_device_properties_t, stype);
FIELD(hmr_ze_device_properties, ze_device_properties_t, pNext);
FIELD(hmr_ze_device_properties, ze_device_properties_t, type);
FIELD(hmr_ze_device_properties, ze_device_properties_t, vendorId);
FIELD(hmr_ze_device_properties, ze_device_properties_t, deviceId);
FIELD(hmr_ze_device_properties, ze_device_properties_t, flags);
FIELD(hmr_ze_device_properties, ze_device_properties_t, subdeviceId);
FIELD(hmr_ze_device_properties, ze_device_properties_t, coreClockRate);
FIELD(hmr_ze_device_properties, ze_device_properties_t, maxMemAllocSize);
FIELD(hmr_ze_device_properties, ze_device_properties_t, maxHardwareContexts);
FIELD(hmr_ze_device_properties, ze_device_properties_t,
      maxCommandQueuePriority);
FIELD(hmr_ze_device_properties, ze_device_properties_t, numThreadsPerEU);
FIELD(hmr_ze_device_properties, ze_device_properties_t, physicalEUSimdWidth);
FIELD(hmr_ze_device_properties, ze_device_properties_t, numEUsPerSubslice);
FIELD(hmr_ze_device_properties, ze_device_properties_t, numSubslicesPerSlice);
FIELD(hmr_ze_device_properties, ze_device_properties_t, numSlices);
FIELD(hmr_ze_device_properties, ze_device_properties_t, timerResolution);
FIELD(hmr_ze_device_properties, ze_device_properties_t, timestampValidBits);
FIELD(hmr_ze_device_properties, ze_device_properties_t,
      kernelTimestampValidBits);
FIELD(hmr_ze_device_properties, ze_device_properties_t, uuid);
FIELD(hmr_ze_device_properties, ze_device_properties_t, name);
SIZE(hmr_ze_device_external_memory_properties,
     ze_device_external_memory_properties_t);
FIELD(hmr_ze_device_external_memory_properties,
      ze_device_external_memory_properties_t, stype);
FIELD(hmr_ze_device_external_memory_properties,
      ze_device_external_memory_properties_t, pNext);
FIELD(hmr_ze_device_external_memory_properties,
      ze_device_external_memory_properties_t, memoryAllocationImportTypes);
FIELD(hmr_ze_device_external_memory_properties,
      ze_device_external_memory_properties_t, memoryAllocationExportTypes);
FIELD(hmr_ze_device_external_memory_properties,
      ze_device_external_memory_properties_t, imageImportTypes);
FIELD(hmr_ze_device_external_memory_properties,
      ze_device_external_memory_properties_t, imageExportTypes);
SIZE(hmr_ze_device_mem_alloc_desc, ze_device_mem_alloc_desc_t);
FIELD(hmr_ze_device_mem_alloc_desc, ze_device_mem_alloc_desc_t, stype);
FIELD(hmr_ze_device_mem_alloc_desc, ze_device_mem_alloc_desc_t, pNext);
FIELD(hmr_ze_device_mem_alloc_desc, ze_device_mem_alloc_desc_t, flags);
FIELD(hmr_ze_device_mem_alloc_desc, ze_device_mem_alloc_desc_t, ordinal);
SIZE(hmr_zel_component_version, zel_component_version_t);
FIELD(hmr_zel_component_version, zel_component_version_t, component_name);
FIELD(hmr_zel_component_version, zel_component_version_t, spec_version);
FIELD(hmr_zel_component_version, zel_component_version_t,
      component_lib_version);
_Static_assert(sizeof(uint32_t) == sizeof(ze_api_version_t), "api version");
_Static_assert(sizeof(struct hmr_zel_version) == sizeof(zel_version_t) &&
                       offsetof(struct hmr_zel_version, patch) ==
                               offsetof(zel_version_t, patch),
               "zel_version_t");

/* Each entry of the list, against the SDK's prototype of that name. */
#define ABI(name, req, params)                                                 \
	_Static_assert(__builtin_types_compatible_p(hmr_##name##_fn,           \
	                                            __typeof__(&name)),        \
	               #name);
HMR_ZE_CALLS(ABI)
