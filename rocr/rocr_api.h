/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rocr_api.h: the ROCr (HSA) runtime subset hmr calls, declared without the
 * SDK, and the backend's internal interface. */
#ifndef HMR_ROCR_API_H
#define HMR_ROCR_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/limits.h"

/*
 * hmr builds without ROCm: these declarations have libhsa-runtime64's ABI
 * (hsa.h and hsa_ext_amd.h).  Where those headers are found (Debian's
 * libhsa-runtime-dev, or /opt/rocm/include), rocr_check.c asserts at
 * compile time that every constant, struct layout and function type below
 * is the header's.
 */
#ifndef HMR_ROCR_SDK_TYPES
/* The ABI's types; rocr_check.c substitutes the header's own. */
typedef int hmr_hsa_status_t;      /* enum hsa_status_t */
typedef int hmr_hsa_system_info_t; /* enum hsa_system_info_t */
typedef int hmr_hsa_agent_info_t;  /* enum hsa_agent_info_t */
typedef struct hmr_hsa_agent hmr_hsa_agent_t;
typedef struct hmr_hsa_pointer_info hmr_hsa_pointer_info_t;
typedef struct hmr_hsa_ipc_memory hmr_hsa_ipc_memory_t;
#endif

/* hsa_agent_t: an opaque handle, equal handles name the same agent. */
struct hmr_hsa_agent {
	uint64_t handle;
};

/* hsa_amd_pointer_info_t (hsa_ext_amd.h).  The caller sets `size`; the
 * runtime writes at most that many bytes and may lower it. */
struct hmr_hsa_pointer_info {
	uint32_t size;
	int type; /* HMR_HSA_POINTER_* */
	void *agentBaseAddress;
	void *hostBaseAddress;
	size_t sizeInBytes;
	void *userData;
	struct hmr_hsa_agent agentOwner;
	uint32_t global_flags;
};

/* hsa_amd_ipc_memory_t: 256 bits naming a shared allocation. */
struct hmr_hsa_ipc_memory {
	uint32_t handle[8];
};

enum {
	HMR_HSA_STATUS_SUCCESS = 0x0,
	HMR_HSA_STATUS_INFO_BREAK = 0x1,
	HMR_HSA_STATUS_ERROR = 0x1000,
	HMR_HSA_STATUS_ERROR_INVALID_ARGUMENT = 0x1001,
	HMR_HSA_STATUS_ERROR_INVALID_ALLOCATION = 0x1003,
	HMR_HSA_STATUS_ERROR_INVALID_AGENT = 0x1004,
	HMR_HSA_STATUS_ERROR_OUT_OF_RESOURCES = 0x1008,
	HMR_HSA_STATUS_ERROR_RESOURCE_FREE = 0x100A,
	HMR_HSA_STATUS_ERROR_NOT_INITIALIZED = 0x100B,
	HMR_HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS = 0x100D,
	HMR_HSA_STATUS_ERROR_INVALID_INDEX = 0x100E,
	HMR_HSA_STATUS_ERROR_INVALID_MEMORY_POOL = 40, /* hsa_ext_amd.h */
};

enum {
	HMR_HSA_AGENT_INFO_NAME = 0,           /* char[64] */
	HMR_HSA_SYSTEM_INFO_VERSION_MAJOR = 0, /* uint16_t */
	HMR_HSA_SYSTEM_INFO_VERSION_MINOR = 1, /* uint16_t */
	HMR_HSA_AGENT_INFO_DEVICE = 17,        /* hsa_device_type_t */
	HMR_HSA_DEVICE_TYPE_CPU = 0,
	HMR_HSA_DEVICE_TYPE_GPU = 1,
};

enum {
	HMR_HSA_POINTER_UNKNOWN = 0,
	HMR_HSA_POINTER_HSA = 1,      /* A pool allocation. */
	HMR_HSA_POINTER_LOCKED = 2,   /* hsa_amd_memory_lock'ed memory. */
	HMR_HSA_POINTER_GRAPHICS = 3, /* Graphics interop. */
	HMR_HSA_POINTER_IPC = 4,      /* hsa_amd_ipc_memory_attach'ed. */
};

enum {
	HMR_HSA_SYSTEM_INFO_BUILD_VERSION = 0x200, /* const char * */
	/*
	 * bool; ROCm 5.6 and later.  Not in Debian's 5.2.3 headers, hence
	 * not checked: ROCm/ROCR-Runtime src/inc/hsa.h at tag rocm-5.6.0,
	 * HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED = 0x204 (libfabric's
	 * hmem_rocr.c passes the same number).  Older runtimes answer
	 * HSA_STATUS_ERROR_INVALID_ARGUMENT.
	 */
	HMR_HSA_SYSTEM_INFO_DMABUF_SUPPORTED = 0x204,
};

typedef hmr_hsa_status_t (*hmr_hsa_agent_cb)(hmr_hsa_agent_t agent, void *data);
typedef void (*hmr_hsa_dealloc_cb)(void *ptr, void *user_data);

/*
 * Every runtime entry point hmr calls, each written once:
 *   X(name, header, REQ or OPT, parameter types)
 * `header` says where the prototype is: H52, in Debian's ROCm 5.2.3
 * headers (and every later ROCm); H56, only in ROCm 5.6 and later.  The
 * list makes the function-pointer types (hmr_<name>_fn), the members of
 * struct hmr_rocr, the dlsym table (rocr_load.c) and the check against
 * the headers' prototypes (rocr_check.c).  A REQ entry a runtime lacks
 * refuses the runtime; an OPT one is left NULL and its callers check it.
 * Every function returns hsa_status_t.
 *
 * The two H56 entries are the prototypes of ROCm/ROCR-Runtime
 * src/inc/hsa_ext_amd.h at tag rocm-5.6.0 (lines 2638 and 2662),
 * unchanged in runtime/hsa-runtime/inc/hsa_ext_amd.h today.  Without
 * them (Debian's 5.2.3) the backend works and dma-buf is unsupported.
 */
#define HMR_ROCR_CALLS(X)                                                      \
	X(hsa_status_string, H52, REQ, (hmr_hsa_status_t, const char **))      \
	X(hsa_init, H52, REQ, (void))                                          \
	X(hsa_shut_down, H52, REQ, (void))                                     \
	X(hsa_system_get_info, H52, REQ, (hmr_hsa_system_info_t, void *))      \
	X(hsa_iterate_agents, H52, REQ, (hmr_hsa_agent_cb, void *))            \
	X(hsa_agent_get_info, H52, REQ,                                        \
	  (hmr_hsa_agent_t, hmr_hsa_agent_info_t, void *))                     \
	X(hsa_amd_pointer_info, H52, REQ,                                      \
	  (const void *, hmr_hsa_pointer_info_t *, void *(*)(size_t),          \
	   uint32_t *, hmr_hsa_agent_t **))                                    \
	X(hsa_amd_register_deallocation_callback, H52, REQ,                    \
	  (void *, hmr_hsa_dealloc_cb, void *))                                \
	X(hsa_amd_deregister_deallocation_callback, H52, REQ,                  \
	  (void *, hmr_hsa_dealloc_cb))                                        \
	X(hsa_amd_memory_lock, H52, REQ,                                       \
	  (void *, size_t, hmr_hsa_agent_t *, int, void **))                   \
	X(hsa_amd_memory_unlock, H52, REQ, (void *))                           \
	X(hsa_memory_copy, H52, REQ, (void *, const void *, size_t))           \
	X(hsa_amd_ipc_memory_create, H52, REQ,                                 \
	  (void *, size_t, hmr_hsa_ipc_memory_t *))                            \
	X(hsa_amd_ipc_memory_attach, H52, REQ,                                 \
	  (const hmr_hsa_ipc_memory_t *, size_t, uint32_t,                     \
	   const hmr_hsa_agent_t *, void **))                                  \
	X(hsa_amd_ipc_memory_detach, H52, REQ, (void *))                       \
	X(hsa_amd_portable_export_dmabuf, H56, OPT,                            \
	  (const void *, size_t, int *, uint64_t *))                           \
	X(hsa_amd_portable_close_dmabuf, H56, OPT, (int))

#define HMR_ROCR_FN_TYPE(name, header, req, params)                            \
	typedef hmr_hsa_status_t(*hmr_##name##_fn) params;
HMR_ROCR_CALLS(HMR_ROCR_FN_TYPE)
#undef HMR_ROCR_FN_TYPE

/* Whether dma-buf export can work here, and why (rocr_dmabuf.c). */
enum hmr_rocr_dmabuf {
	HMR_ROCR_DMABUF_NO,      /* Refused at once, with the reason. */
	HMR_ROCR_DMABUF_UNKNOWN, /* The runtime says yes; the kernel's
	                          * configuration could not be read: the
	                          * export is tried, the NIC decides. */
	HMR_ROCR_DMABUF_YES,     /* Runtime and kernel both say yes. */
};

/*
 * The loaded runtime: entry points and what was learned at start.
 * Written once by hmr__rocr_load (under hmem's once), read-only after.
 */
struct hmr_rocr {
#define HMR_ROCR_MEMBER(name, header, req, params) hmr_##name##_fn name;
	HMR_ROCR_CALLS(HMR_ROCR_MEMBER)
#undef HMR_ROCR_MEMBER
	/* GPU agents in hsa_iterate_agents order: an allocation's device
	 * is its owner's index here (the number a device hint names). */
	int gpu_count;
	hmr_hsa_agent_t gpu[HMR_MAX_DEVICES];
	int cpu_count;
	hmr_hsa_agent_t cpu[HMR_MAX_DEVICES];
	enum hmr_rocr_dmabuf dmabuf;
	char dmabuf_why[160];
	char library[256]; /* The path loaded. */
};

extern struct hmr_rocr hmr__rocr;

/* rocr_info.c: the describe and device slots. */
struct hmr_hmem_backend_info;
struct hmr_hmem_device_info;
int hmr__rocr_describe(struct hmr_hmem_backend_info *info);
int hmr__rocr_device(uint32_t index, struct hmr_hmem_device_info *info);

/* rocr_load.c: dlopen, resolve, hsa_init, the agents, dma-buf support. */
int hmr__rocr_load(char *why, size_t why_len);
void hmr__rocr_unload(void);

/*
 * The error wrapper every runtime call's result goes through: 0 for
 * HSA_STATUS_SUCCESS; otherwise one warning naming the call and
 * hsa_status_string's text ("hsa_amd_memory_lock: HSA_STATUS_ERROR_OUT_
 * OF_RESOURCES: The runtime failed to ... (0x1008)") and the -FI_E* code
 * for the status: invalid argument, allocation, agent, memory pool,
 * index or incompatible arguments -FI_EINVAL; out of resources
 * -FI_ENOMEM; resource free (a failed close) -FI_EBADF; anything else
 * (HSA_STATUS_ERROR, not initialized, ...) -FI_EIO.
 */
int hmr__rocr_check(const char *call, hmr_hsa_status_t s);
#define HMR_HSA(name, ...) hmr__rocr_check(#name, hmr__rocr.name(__VA_ARGS__))

/* "HSA_STATUS_ERROR_...: what it means (0x1008)", hsa_status_string's
 * text, for log lines; _name: "HSA_STATUS_ERROR_... (0x1008)", its name
 * only, for the short reasons hmr_hmem_status reports. */
const char *hmr__rocr_status_text(hmr_hsa_status_t s, char *buf, size_t len);
const char *hmr__rocr_status_name(hmr_hsa_status_t s, char *buf, size_t len);

/* rocr_dmabuf.c: decide hmr__rocr.dmabuf once, at start. */
void hmr__rocr_dmabuf_detect(void);

/*
 * rocr_ids.c: buffer ids and the free event.  ROCr has no buffer id: hmr
 * gives each pool allocation it classifies a process-unique serial number
 * the first time it sees it, registers a deallocation callback on it, and
 * forgets it (and drops its range from the memtype cache) when the
 * callback fires, so an allocation at a freed address gets a new id.
 */
/* *id for the pool allocation *info describes (hsa_amd_pointer_info's
 * answer); the first time, *info is read again after the callback is
 * registered.  -FI_ENOENT: freed meanwhile. */
int hmr__rocr_track(hmr_hsa_pointer_info_t *info, uint64_t *id);
/* IPC mappings hmr attached: ids, and their length for ipc_close. */
int hmr__rocr_track_import(void *ptr, size_t len, uint64_t *id);
uint64_t hmr__rocr_import_id(const void *ptr);
/* Forget an import; its length (0 if unknown). */
size_t hmr__rocr_untrack_import(void *ptr);
/* Deregister every callback and forget everything (at fini). */
void hmr__rocr_untrack_all(void);

#endif /* HMR_ROCR_API_H */
