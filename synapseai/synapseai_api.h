/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* synapseai_api.h: the SynapseAI, HCL and hl-thunk subset hmr calls. */
#ifndef HMR_SYNAPSEAI_API_H
#define HMR_SYNAPSEAI_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hmr/hmr.h>

/*
 * hmr builds without Habana's SDK (no distribution packages its headers):
 * these declarations follow the vendor's public headers, read, not
 * copied:
 *
 *  [S1] synapse_api.h, synapse_api_types.h, synapse_common_types.h as
 *       HabanaAI/HCL vendors them (dependencies/synapse/include/), the
 *       headers Intel Gaudi software installs as
 *       /usr/include/habanalabs/synapse_api.h.  SYN_API_CALL is empty on
 *       Linux; in C, synapse_common_types.h does "#define size_t
 *       uint64_t".
 *  [H1] HabanaAI/HCL hcl/include/hccl.h ("Returns FD for HBM memory
 *       region if it was registered for gaudi-direct") and hccl_types.h.
 *       libSynapse.so exports hcclLookupDMABuff (it compiles HCL's API
 *       wrapper in and forwards to libhcl.so), which is where libfabric
 *       looks it up.
 *  [T1] HabanaAI/hl-thunk-open include/uapi/hlthunk.h: hl-thunk returns
 *       an fd or a negative errno.
 *
 * The tests (tests/synapseai/test_synapseai_faults.c) re-read every type
 * below with the simulator's independent declarations substituted
 * (HMR_SYNAPSEAI_SDK_TYPES) and assert that each function type matches.
 */
/* [S1] synapse_common_types.h, struct synDeviceInfoV2: field order and
 * types as declared (the asserts pin the x86-64 layout). */
struct hmr_synDeviceInfoV2 {
	uint64_t sramBaseAddress;
	uint64_t dramBaseAddress; /* device-physical: not an address */
	uint32_t sramSize;
	uint64_t dramSize; /* HBM bytes */
	uint64_t tpcEnabledMask;
	uint8_t dramEnabled;
	uint32_t deviceId;             /* the PCI device id */
	uint32_t fd;                   /* the runtime's device node */
	int deviceType;                /* enum synDeviceType */
	uint8_t deviceIndex;           /* module id */
	uint64_t globalHbmBaseAddress; /* start of the mapped HBM pool */
};

_Static_assert(offsetof(struct hmr_synDeviceInfoV2, fd) == 48,
               "synDeviceInfoV2");
_Static_assert(offsetof(struct hmr_synDeviceInfoV2, globalHbmBaseAddress) == 64,
               "synDeviceInfoV2");
_Static_assert(sizeof(struct hmr_synDeviceInfoV2) == 72, "synDeviceInfoV2");

#ifndef HMR_SYNAPSEAI_SDK_TYPES
typedef int hmr_synStatus;        /* [S1] enum synStatus */
typedef int hmr_synDmaDir;        /* [S1] enum synDmaDir */
typedef uint32_t hmr_synDeviceId; /* [S1] synapse_api_types.h */
typedef struct hmr_InternalStreamHandle *hmr_synStreamHandle; /* [S1] */
typedef struct hmr_synDeviceInfoV2 hmr_synDeviceInfoV2;
#endif

/*
 * [S1] synStatus values hmr tells apart, with the -FI_E* code each maps
 * to (synapseai_load.c names the rest by number).  A status not listed is
 * -FI_EIO.
 */
#define HMR_SYN_STATUSES(X)                                                    \
	X(synSuccess, 0, 0)                                                    \
	X(synInvalidArgument, 1, -FI_EINVAL)                                   \
	X(synOutOfHostMemory, 3, -FI_ENOMEM)                                   \
	X(synOutOfDeviceMemory, 4, -FI_ENOMEM)                                 \
	X(synObjectNotInitialized, 6, -FI_EIO)                                 \
	X(synNoDeviceFound, 8, -FI_ENODEV)                                     \
	X(synDeviceTypeMismatch, 9, -FI_ENODEV)                                \
	X(synFailedToAllocateDeviceMemory, 14, -FI_ENOMEM)                     \
	X(synDeviceReset, 17, -FI_EIO)                                         \
	X(synUnsupported, 18, -FI_EOPNOTSUPP)                                  \
	X(synDeviceAlreadyAcquired, 20, -FI_EBUSY)                             \
	X(synBusy, 22, -FI_EBUSY)                                              \
	X(synAllResourcesTaken, 23, -FI_EBUSY)                                 \
	X(synUnavailable, 24, -FI_EIO)                                         \
	X(synFail, 26, -FI_EIO)                                                \
	X(synOutOfResources, 27, -FI_ENOMEM)                                   \
	X(synUninitialized, 28, -FI_EIO)                                       \
	X(synAlreadyInitialized, 29, -FI_EIO)                                  \
	X(synSynapseTerminated, 31, -FI_EIO)                                   \
	X(synMappingNotFound, 34, -FI_EFAULT)                                  \
	X(synTimeout, 42, -FI_ETIMEDOUT)                                       \
	X(synNullPtr, 44, -FI_EINVAL)

#define HMR_SYN_ENUM(name, value, code) HMR_##name = value,
enum { HMR_SYN_STATUSES(HMR_SYN_ENUM) };
#undef HMR_SYN_ENUM

enum {
	HMR_SYN_HOST_TO_DRAM = 0, /* [S1] synDmaDir */
	HMR_SYN_DRAM_TO_HOST = 1,
	HMR_HCCL_SUCCESS = 0, /* [H1] hcclResult_t */
	HMR_HCCL_NO_DEVICE_FOUND = 1,
	HMR_HCCL_UNSUPPORTED = 2,
	HMR_HCCL_OUT_OF_MEMORY = 3,
	HMR_HCCL_INVALID_ARGUMENT = 7,
};

/*
 * Every entry point hmr calls, each written once:
 *   X(name, REQ or OPT, return type, parameter types)
 * The lists make the function-pointer types (hmr_<name>_fn), the members
 * of struct hmr_synapseai and the loading tables (synapseai_load.c).  A
 * REQ entry the library lacks refuses it; an OPT entry is left NULL and
 * its callers check.  Only what start-up needs is REQ.  The comment in
 * front of each group names the header its prototypes come from.
 *
 * libSynapse.so.  synDestroy is deliberately absent: see
 * synapseai_load.c.
 */
#define HMR_SYN_CALLS(X)                                                       \
	/* [S1] synapse_api.h: the instance and the device */                  \
	X(synInitialize, REQ, hmr_synStatus, (void))                           \
	X(synDeviceGetCount, REQ, hmr_synStatus, (uint32_t *))                 \
	X(synDeviceAcquire, REQ, hmr_synStatus,                                \
	  (hmr_synDeviceId *, const char *))                                   \
	X(synDeviceRelease, REQ, hmr_synStatus, (const hmr_synDeviceId))       \
	X(synDeviceGetInfoV2, REQ, hmr_synStatus,                              \
	  (const hmr_synDeviceId, hmr_synDeviceInfoV2 *))                      \
	/* [S1] synapse_api.h: statuses and version ("size_t" is uint64_t      \
	 * in C, synapse_common_types.h) */                                    \
	X(synStatusGetBriefDescription, OPT, hmr_synStatus,                    \
	  (hmr_synStatus, char *, uint64_t))                                   \
	X(synDriverGetVersion, OPT, hmr_synStatus, (char *, const int))        \
	/* [S1] synapse_api.h: device and host memory */                       \
	X(synDeviceMalloc, OPT, hmr_synStatus,                                 \
	  (const hmr_synDeviceId, const uint64_t, uint64_t, const uint32_t,    \
	   uint64_t *))                                                        \
	X(synDeviceFree, OPT, hmr_synStatus,                                   \
	  (const hmr_synDeviceId, const uint64_t, const uint32_t))             \
	X(synHostMap, OPT, hmr_synStatus,                                      \
	  (const hmr_synDeviceId, const uint64_t, const void *))               \
	X(synHostUnmap, OPT, hmr_synStatus,                                    \
	  (const hmr_synDeviceId, const void *))                               \
	X(synHostMalloc, OPT, hmr_synStatus,                                   \
	  (const hmr_synDeviceId, const uint64_t, const uint32_t, void **))    \
	X(synHostFree, OPT, hmr_synStatus,                                     \
	  (const hmr_synDeviceId, const void *, const uint32_t))               \
	/* [S1] synapse_api.h: streams and copies */                           \
	X(synStreamCreateGeneric, OPT, hmr_synStatus,                          \
	  (hmr_synStreamHandle *, const hmr_synDeviceId, const uint32_t))      \
	X(synStreamDestroy, OPT, hmr_synStatus, (const hmr_synStreamHandle))   \
	X(synStreamSynchronize, OPT, hmr_synStatus,                            \
	  (const hmr_synStreamHandle))                                         \
	X(synMemCopyAsync, OPT, hmr_synStatus,                                 \
	  (const hmr_synStreamHandle, const uint64_t, const uint64_t,          \
	   const uint64_t, const hmr_synDmaDir))                               \
	/* [H1] hccl.h: an int (an hcclResult_t value), not an fd */           \
	X(hcclLookupDMABuff, OPT, int, (uint64_t, uint64_t, int *))

/* libhl-thunk.so.  [T1] hlthunk.h: the one call of the hl-thunk route. */
#define HMR_HLTHUNK_CALLS(X)                                                   \
	X(hlthunk_device_mapped_memory_export_dmabuf_fd, REQ, int,             \
	  (int, uint64_t, uint64_t, uint64_t, uint32_t))

#define HMR_SYN_FN_TYPE(name, req, ret, params)                                \
	typedef ret(*hmr_##name##_fn) params;
HMR_SYN_CALLS(HMR_SYN_FN_TYPE)
HMR_HLTHUNK_CALLS(HMR_SYN_FN_TYPE)
#undef HMR_SYN_FN_TYPE

/*
 * The loaded runtime and what start-up learned: the entry points and
 * counts, written once by hmr__synapseai_load (under hmem's once).  The
 * device's fields (acquired, device, device_fd, module, device_type,
 * hbm_base, hbm_size) are written by synapseai_device.c under its lock
 * before it publishes the device as held, and are read only while
 * hmr__synapseai_held() is true.
 * The mutable copy and host-mapping state lives in synapseai_host.c.
 */
struct hmr_synapseai {
#define HMR_SYN_MEMBER(name, req, ret, params) hmr_##name##_fn name;
	HMR_SYN_CALLS(HMR_SYN_MEMBER)
	HMR_HLTHUNK_CALLS(HMR_SYN_MEMBER)
#undef HMR_SYN_MEMBER
	bool hlthunk;           /* libhl-thunk loaded: the preferred route */
	bool acquired;          /* hmr acquired the device: it releases it */
	hmr_synDeviceId device; /* the process's one device (Synapse: 0) */
	uint32_t device_count;  /* Gaudis on the host */
	int device_fd;          /* the runtime's device node (not hmr's) */
	unsigned module;        /* deviceIndex */
	int device_type;        /* [S1] synDeviceType: 4 Gaudi2, 5 Gaudi3 */
	char library[256];      /* the libSynapse.so the loader found */
	uint64_t hbm_base;      /* globalHbmBaseAddress */
	uint64_t hbm_size;      /* dramSize */
};

extern struct hmr_synapseai hmr__synapseai;

/* synapseai_load.c: dlopen both libraries and start; and back. */
int hmr__synapseai_load(char *why, size_t why_len);
void hmr__synapseai_unload(void);

/*
 * synapseai_device.c: the process's one device.  hmr never acquires it on
 * its own account (a framework's acquire would then fail): Gaudi memory
 * classifies as such only while the process holds the device, which hmr
 * notices lazily.  Only hmr_hmem_alloc may acquire, and gives back what it
 * acquired.
 */
/* Whether the device is held, with its fields valid: one atomic load once
 * seen; until then each call asks the runtime (synDeviceGetInfoV2). */
bool hmr__synapseai_held(void);
/* 0 while held; else -FI_ENODEV and a warning naming `what`. */
int hmr__synapseai_need(const char *what);
/* hmr_hmem_alloc: the held device, acquired by hmr when nobody holds it;
 * 0, or the acquire's error.  Each success is paired with one
 * hmr__synapseai_alloc_done, when the allocation is freed or failed. */
int hmr__synapseai_hold_for_alloc(void);
void hmr__synapseai_alloc_done(void);
/* Unload: gives back a device hmr acquired, drops hmr's host state. */
void hmr__synapseai_device_fini(void);

/*
 * The error wrappers every vendor result goes through: 0 on success;
 * otherwise one warning naming the call and the vendor's status name
 * ("synHostMap: synMappingNotFound (34): MMU Mapping for given address is
 * missing") and the -FI_E* code.
 */
int hmr__synapseai_check(const char *call, hmr_synStatus st);
int hmr__hccl_check(const char *call, int result);
/* hl-thunk: a negative errno is -FI_E* of the same errno. */
int hmr__hlthunk_check(const char *call, int result);
#define HMR_SYN(name, ...)                                                     \
	hmr__synapseai_check(#name, hmr__synapseai.name(__VA_ARGS__))

/* synapseai_info.c: hmr_hmem_backend_info, _device_info, _alloc, _free. */
int hmr__synapseai_describe(struct hmr_hmem_backend_info *info);
int hmr__synapseai_device(uint32_t index, struct hmr_hmem_device_info *info);
int hmr__synapseai_alloc(uint64_t device, size_t len, void **ptr);
int hmr__synapseai_free(void *ptr);

/* synapseai_host.c: host mappings and copies. */
/* 0 and the mapping when p lies in host memory hmr mapped (host_register);
 * -FI_ENOENT otherwise. */
int hmr__synapseai_host_query(uintptr_t p, uint64_t *base, uint64_t *size);
int hmr__synapseai_host_register(void *ptr, size_t len);
int hmr__synapseai_host_unregister(void *ptr);
int hmr__synapseai_copy_to(void *dev, const void *host, size_t len);
int hmr__synapseai_copy_from(void *host, const void *dev, size_t len);
/* Drops the stream, the staging buffer and hmr's mappings. */
void hmr__synapseai_host_fini(void);

#endif /* HMR_SYNAPSEAI_API_H */
