/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* neuron_api.h: the Neuron runtime (libnrt) calls hmr makes, without the SDK.
 */
#ifndef HMR_NEURON_API_H
#define HMR_NEURON_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * hmr builds without the Neuron SDK (no distribution packages it): these
 * declarations have libnrt's ABI.  Sources, read and not copied:
 *
 *   [nrt.h]    aws-neuron/aws-neuron-sdk src/libnrt/include/nrt/nrt.h
 *   [status.h] aws-neuron/aws-neuron-sdk
 *              src/libnrt/include/nrt/nrt_status.h
 *   [exp.h]    aws-neuron/aws-neuron-sdk
 *              src/libnrt/include/nrt/nrt_experimental.h
 *              (all three SDK 2.28.0, commit 86a92868, unchanged at
 *              81ce03ae; installed as /opt/aws/neuron/include/nrt/)
 *   [ofi]      ofiwg/libfabric src/hmem_neuron.c, commit fe30e577c:
 *              nrt_get_dmabuf_fd_v2, which no public header declares
 *
 * Where nrt/nrt.h is found, neuron_check.c asserts at compile time that
 * every constant and function type below equals the header's.  The
 * runtime is C++ with a C ABI: NRT_STATUS is a 4-byte enum.
 */
#ifndef HMR_NEURON_SDK_TYPES
typedef int hmr_NRT_STATUS; /* enum NRT_STATUS [status.h] */
#endif

/* [status.h]: the values hmr tells apart (the enum is ABI). */
enum {
	HMR_NRT_SUCCESS = 0,
	HMR_NRT_FAILURE = 1, /* "non specific failure" */
	HMR_NRT_INVALID = 2,
	HMR_NRT_INVALID_HANDLE = 3,
	HMR_NRT_RESOURCE = 4, /* "failed to allocate a resource" */
	HMR_NRT_TIMEOUT = 5,
	HMR_NRT_HW_ERROR = 6,
	HMR_NRT_UNINITIALIZED = 13, /* called before nrt_init() */
	HMR_NRT_CLOSED = 14,        /* called after nrt_close() */
};

/*
 * Every libnrt entry point hmr calls, each written once:
 *   X(name, REQ or OPT, return type, parameter types, header)
 * The list makes the function-pointer types (hmr_<name>_fn), the members
 * of struct hmr_neuron, the loading table (neuron_load.c) and the check
 * against the SDK's header (neuron_check.c; `header` NONE: declared in
 * no public header, not checked).  An OPT entry the runtime lacks is left
 * NULL and every caller checks it; only what hmr cannot start without is
 * REQ.
 *
 * Not listed, on purpose: nrt_init and nrt_close.  nrt_init associates
 * the process's NeuronCores with it "exclusively ... unavailable to any
 * other process" (nrt-developer-guide.rst, NEURON_RT_NUM_CORES), and
 * nrt_close releases every tensor; both belong to the application (the
 * framework).  libfabric's library calls neither (only its fabtests
 * program calls nrt_init), and every call below acts on memory that
 * exists only after the application's nrt_init.
 */
#define HMR_NEURON_CALLS(X)                                                    \
	/* [nrt.h]: "This API can be called before nrt_init()". */             \
	X(nrt_get_total_nc_count, REQ, hmr_NRT_STATUS, (uint32_t *), NRT_H)    \
	/* [nrt.h] (SDK 2.28.0): the runtime's only question about an          \
	 * address: SUCCESS for "VA of a memory allocated on a Neuron          \
	 * device", NRT_RESOURCE (buffer too small) or NRT_FAILURE. */         \
	X(nrt_get_attached_efa_bdf, OPT, hmr_NRT_STATUS,                       \
	  (const void *, char *, size_t *), NRT_H)                             \
	/* [nrt.h] (public since a232445a; libfabric resolves it since         \
	 * 2023): no offset out, so offset 0 of the fd is va. */               \
	X(nrt_get_dmabuf_fd, OPT, hmr_NRT_STATUS, (uint64_t, uint64_t, int *), \
	  NRT_H)                                                               \
	/* [ofi]: any va inside a tensor; *offset is where va lies in the      \
	 * fd.  libfabric >= 2.5 looks it up by this name. */                  \
	X(nrt_get_dmabuf_fd_v2, OPT, hmr_NRT_STATUS,                           \
	  (uint64_t, uint64_t, int *, uint64_t *), NONE)                       \
	/* [exp.h]: a CPU copy into "mmaped device memory". */                 \
	X(nrt_memcpy_to_device, OPT, hmr_NRT_STATUS,                           \
	  (void *, const void *, size_t), EXP_H)                               \
	/* [status.h] (public since a232445a): a status's name. */             \
	X(nrt_get_status_as_str, OPT, const char *, (hmr_NRT_STATUS), STATUS_H)

#define HMR_NEURON_FN_TYPE(name, req, ret, params, hdr)                        \
	typedef ret(*hmr_##name##_fn) params;
HMR_NEURON_CALLS(HMR_NEURON_FN_TYPE)
#undef HMR_NEURON_FN_TYPE

/* The loaded runtime.  Written once by hmr__neuron_load (under hmem's
 * once), read-only after. */
struct hmr_neuron {
	uint32_t cores;    /* nrt_get_total_nc_count at start */
	char library[256]; /* The path loaded. */
#define HMR_NEURON_MEMBER(name, req, ret, params, hdr) hmr_##name##_fn name;
	HMR_NEURON_CALLS(HMR_NEURON_MEMBER)
#undef HMR_NEURON_MEMBER
};

extern struct hmr_neuron hmr__neuron;

/* neuron_info.c: the describe and device slots. */
struct hmr_hmem_backend_info;
struct hmr_hmem_device_info;
int hmr__neuron_describe(struct hmr_hmem_backend_info *info);
int hmr__neuron_device(uint32_t index, struct hmr_hmem_device_info *info);

/* neuron_load.c: dlopen (HMR_NEURON_LIBRARY overrides), resolve, count
 * the cores; -FI_ENOSYS with the reason when absent. */
int hmr__neuron_load(char *why, size_t why_len);

/*
 * The error wrapper every runtime status goes through: 0 for NRT_SUCCESS;
 * otherwise one warning naming the call and the status
 * ("nrt_get_dmabuf_fd_v2: NRT_INVALID (2)") and the -FI_E* code:
 *
 *   NRT_INVALID, NRT_INVALID_HANDLE  -FI_EINVAL   the runtime refused the
 *                                    address or size
 *   NRT_RESOURCE                     -FI_ENOMEM   it ran out of something
 *                                    (memory, fds): the call may succeed
 *                                    later; libfabric says -FI_EINVAL,
 *                                    which blames the caller's arguments
 *   NRT_FAILURE                      -FI_EOPNOTSUPP  "non specific
 *                                    failure": the runtime cannot do it
 *                                    for this memory (an export the
 *                                    driver refuses; libfabric then takes
 *                                    another path, as a caller should)
 *   NRT_UNINITIALIZED, NRT_CLOSED    -FI_ENODEV   the application has not
 *                                    started the runtime, or closed it
 *   NRT_TIMEOUT                      -FI_ETIMEDOUT
 *   anything else (NRT_HW_ERROR...)  -FI_EIO
 */
int hmr__neuron_check(const char *call, hmr_NRT_STATUS status);
#define HMR_NRT(name, ...)                                                     \
	hmr__neuron_check(#name, hmr__neuron.name(__VA_ARGS__))

/* "NRT_INVALID (2)", from the runtime's own names where it has them. */
const char *hmr__neuron_status_name(hmr_NRT_STATUS status, char *buf,
                                    size_t len);

/*
 * neuron_maps.c: the kernel's view of Neuron memory.  The driver maps
 * device memory into a process only by mmap of /dev/neuron<N>, so the
 * mapping holding an address says whether it is Neuron memory, on which
 * device, and its extent.
 */
struct hmr_neuron_map {
	uintptr_t start, end; /* [start, end) */
	uint32_t device;      /* N of /dev/neuron<N> */
	bool readable, writable;
	uint64_t id; /* Changes when another mapping takes the address. */
};

/* Once at start: PROCMAP_QUERY if the kernel has it, else reading. */
void hmr__neuron_maps_init(void);
void hmr__neuron_maps_fini(void);
/* Asking is cheap (one ioctl, Linux >= 6.11) rather than a read. */
bool hmr__neuron_maps_fast(void);
/* 1: addr lies in a Neuron mapping (*m); 0: it does not; or -FI_E*. */
int hmr__neuron_map_find(uintptr_t addr, struct hmr_neuron_map *m);
/* N when `name` (a mapping's path) is /dev/neuron<N>, or the
 * simulator's "/memfd:/dev/neuron<N> (deleted)"; -1 otherwise. */
long hmr__neuron_device_of_name(const char *name);

#endif /* HMR_NEURON_API_H */
