/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rocr_check.c: hmr's ROCr declarations checked against hsa.h's. */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stddef.h>

/*
 * Built only where hsa/hsa_ext_amd.h is found: nothing here runs; it
 * compiles or the build fails.  hmr's function types are read again with
 * the header's own types in place of the ABI ints, and each must then be
 * the type of the header's prototype.  The H56 entries (the dma-buf
 * calls) are checked only against headers that declare them (ROCm 5.6
 * and later: HMR_ROCR_HEADER_HAS_DMABUF, found by CMake); Debian's 5.2.3
 * headers do not.
 */
#define HMR_ROCR_SDK_TYPES
typedef hsa_status_t hmr_hsa_status_t;
typedef hsa_system_info_t hmr_hsa_system_info_t;
typedef hsa_agent_info_t hmr_hsa_agent_info_t;
typedef hsa_agent_t hmr_hsa_agent_t;
typedef hsa_amd_pointer_info_t hmr_hsa_pointer_info_t;
typedef hsa_amd_ipc_memory_t hmr_hsa_ipc_memory_t;
#include "rocr/rocr_api.h"

/* The ABI ints hmr uses without the header have the enums' size. */
_Static_assert(sizeof(int) == sizeof(hsa_status_t), "hsa_status_t");
_Static_assert(sizeof(int) == sizeof(hsa_system_info_t), "system info");
_Static_assert(sizeof(int) == sizeof(hsa_agent_info_t), "agent info");
_Static_assert(sizeof(uint32_t) == sizeof(hsa_device_type_t), "type");
_Static_assert(sizeof(int) == sizeof(hsa_amd_pointer_type_t), "ptr type");

/* hmr's structs have the header's layout, field by field. */
#define FIELD(ours, theirs, f)                                                 \
	_Static_assert(offsetof(ours, f) == offsetof(theirs, f) &&             \
	                       sizeof(((ours *)0)->f) ==                       \
	                               sizeof(((theirs *)0)->f),               \
	               #theirs "." #f)
_Static_assert(sizeof(struct hmr_hsa_agent) == sizeof(hsa_agent_t), "agent");
FIELD(struct hmr_hsa_agent, hsa_agent_t, handle);
_Static_assert(sizeof(struct hmr_hsa_pointer_info) ==
                       sizeof(hsa_amd_pointer_info_t),
               "pointer info");
FIELD(struct hmr_hsa_pointer_info, hsa_amd_pointer_info_t, size);
FIELD(struct hmr_hsa_pointer_info, hsa_amd_pointer_info_t, type);
FIELD(struct hmr_hsa_pointer_info, hsa_amd_pointer_info_t, agentBaseAddress);
FIELD(struct hmr_hsa_pointer_info, hsa_amd_pointer_info_t, hostBaseAddress);
FIELD(struct hmr_hsa_pointer_info, hsa_amd_pointer_info_t, sizeInBytes);
FIELD(struct hmr_hsa_pointer_info, hsa_amd_pointer_info_t, userData);
FIELD(struct hmr_hsa_pointer_info, hsa_amd_pointer_info_t, agentOwner);
FIELD(struct hmr_hsa_pointer_info, hsa_amd_pointer_info_t, global_flags);
_Static_assert(sizeof(struct hmr_hsa_ipc_memory) ==
                       sizeof(hsa_amd_ipc_memory_t),
               "ipc handle");
FIELD(struct hmr_hsa_ipc_memory, hsa_amd_ipc_memory_t, handle);

#define SAME(a, b) _Static_assert((long long)(a) == (long long)(b), #a)
SAME(HMR_HSA_STATUS_SUCCESS, HSA_STATUS_SUCCESS);
SAME(HMR_HSA_STATUS_INFO_BREAK, HSA_STATUS_INFO_BREAK);
SAME(HMR_HSA_STATUS_ERROR, HSA_STATUS_ERROR);
SAME(HMR_HSA_STATUS_ERROR_INVALID_ARGUMENT, HSA_STATUS_ERROR_INVALID_ARGUMENT);
SAME(HMR_HSA_STATUS_ERROR_INVALID_ALLOCATION,
     HSA_STATUS_ERROR_INVALID_ALLOCATION);
SAME(HMR_HSA_STATUS_ERROR_INVALID_AGENT, HSA_STATUS_ERROR_INVALID_AGENT);
SAME(HMR_HSA_STATUS_ERROR_OUT_OF_RESOURCES, HSA_STATUS_ERROR_OUT_OF_RESOURCES);
SAME(HMR_HSA_STATUS_ERROR_RESOURCE_FREE, HSA_STATUS_ERROR_RESOURCE_FREE);
SAME(HMR_HSA_STATUS_ERROR_NOT_INITIALIZED, HSA_STATUS_ERROR_NOT_INITIALIZED);
SAME(HMR_HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS,
     HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS);
SAME(HMR_HSA_STATUS_ERROR_INVALID_INDEX, HSA_STATUS_ERROR_INVALID_INDEX);
SAME(HMR_HSA_STATUS_ERROR_INVALID_MEMORY_POOL,
     HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
SAME(HMR_HSA_AGENT_INFO_DEVICE, HSA_AGENT_INFO_DEVICE);
SAME(HMR_HSA_AGENT_INFO_NAME, HSA_AGENT_INFO_NAME);
SAME(HMR_HSA_SYSTEM_INFO_VERSION_MAJOR, HSA_SYSTEM_INFO_VERSION_MAJOR);
SAME(HMR_HSA_SYSTEM_INFO_VERSION_MINOR, HSA_SYSTEM_INFO_VERSION_MINOR);
SAME(HMR_HSA_DEVICE_TYPE_CPU, HSA_DEVICE_TYPE_CPU);
SAME(HMR_HSA_DEVICE_TYPE_GPU, HSA_DEVICE_TYPE_GPU);
SAME(HMR_HSA_POINTER_UNKNOWN, HSA_EXT_POINTER_TYPE_UNKNOWN);
SAME(HMR_HSA_POINTER_HSA, HSA_EXT_POINTER_TYPE_HSA);
SAME(HMR_HSA_POINTER_LOCKED, HSA_EXT_POINTER_TYPE_LOCKED);
SAME(HMR_HSA_POINTER_GRAPHICS, HSA_EXT_POINTER_TYPE_GRAPHICS);
SAME(HMR_HSA_POINTER_IPC, HSA_EXT_POINTER_TYPE_IPC);
SAME(HMR_HSA_SYSTEM_INFO_BUILD_VERSION, HSA_AMD_SYSTEM_INFO_BUILD_VERSION);
#if HMR_ROCR_HEADER_HAS_DMABUF
SAME(HMR_HSA_SYSTEM_INFO_DMABUF_SUPPORTED,
     HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED);
#endif

/* Callbacks hmr passes have the types the runtime calls. */
_Static_assert(__builtin_types_compatible_p(hmr_hsa_dealloc_cb,
                                            hsa_amd_deallocation_callback_t),
               "deallocation callback");

/* Each entry of the list, against the header's prototype. */
#define CHECK(name)                                                            \
	_Static_assert(__builtin_types_compatible_p(hmr_##name##_fn,           \
	                                            __typeof__(&name)),        \
	               #name);
#define CHECK_H52(name) CHECK(name)
#if HMR_ROCR_HEADER_HAS_DMABUF
#define CHECK_H56(name) CHECK(name)
#else
#define CHECK_H56(name)
#endif
#define ABI(name, header, req, params) CHECK_##header(name)
HMR_ROCR_CALLS(ABI)
