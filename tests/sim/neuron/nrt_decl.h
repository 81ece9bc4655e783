/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* nrt_decl.h: the Neuron runtime (libnrt.so.1) calls the simulator exports. */
#ifndef HMR_SIM_NRT_DECL_H
#define HMR_SIM_NRT_DECL_H

/*
 * Neuron publishes no Debian package, so the few declarations needed are
 * written here, with the vendor's names, enumerator values and parameter
 * types.  Sources (read, not copied):
 *
 *   [nrt.h]    aws-neuron/aws-neuron-sdk src/libnrt/include/nrt/nrt.h
 *   [status.h] aws-neuron/aws-neuron-sdk src/libnrt/include/nrt/nrt_status.h
 *   [exp.h]    aws-neuron/aws-neuron-sdk
 *              src/libnrt/include/nrt/nrt_experimental.h
 *              (all three as of SDK 2.28.0, commit 86a92868, unchanged at
 *              81ce03ae; installed as /opt/aws/neuron/include/nrt/ by the
 *              aws-neuronx-runtime-lib package)
 *   [ofi]      ofiwg/libfabric src/hmem_neuron.c, commit af8ddbe9
 *              (nrt_get_dmabuf_fd_v2, which no public nrt.h declares yet)
 *
 * The runtime is C++ with a C ABI; every enum below is a 4-byte int.
 */

#include <stddef.h>
#include <stdint.h>

/* [status.h]: the whole enum, values are ABI. */
typedef enum {
	NRT_SUCCESS = 0,
	NRT_FAILURE = 1,
	NRT_INVALID = 2,
	NRT_INVALID_HANDLE = 3,
	NRT_RESOURCE = 4,
	NRT_TIMEOUT = 5,
	NRT_HW_ERROR = 6,
	NRT_QUEUE_FULL = 7,
	NRT_LOAD_NOT_ENOUGH_NC = 9,
	NRT_UNSUPPORTED_NEFF_VERSION = 10,
	NRT_FAIL_HOST_MEM_ALLOC = 11, /* "DO NOT USE", kept for ABI */
	NRT_UNINITIALIZED = 13,       /* called before nrt_init() */
	NRT_CLOSED = 14,              /* called after nrt_close() */
	NRT_QUEUE_EMPTY = 15,
	NRT_EXEC_UNIT_UNRECOVERABLE = 101,
	NRT_EXEC_BAD_INPUT = 1002,
	NRT_EXEC_COMPLETED_WITH_NUM_ERR = 1003,
	NRT_EXEC_COMPLETED_WITH_ERR = 1004,
	NRT_EXEC_NC_BUSY = 1005,
	NRT_EXEC_OOB = 1006,
	NRT_COLL_PENDING = 1100,
	NRT_EXEC_HW_ERR_COLLECTIVES = 1200,
	NRT_EXEC_HW_ERR_HBM_UE = 1201,
	NRT_EXEC_HW_ERR_NC_UE = 1202,
	NRT_EXEC_HW_ERR_DMA_ABORT = 1203,
	NRT_EXEC_SW_NQ_OVERFLOW = 1204,
	NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE = 1205,
	NRT_NETWORK_PROXY_FAILURE = 1206,
} NRT_STATUS;

/* [nrt.h]: "Do not change the value of existing enums!" */
typedef enum {
	NRT_TENSOR_PLACEMENT_DEVICE,  /* 0: device (HBM) memory */
	NRT_TENSOR_PLACEMENT_HOST,    /* 1: DMA-able host memory, <= 4 MiB */
	NRT_TENSOR_PLACEMENT_VIRTUAL, /* 2: ordinary host memory */
} nrt_tensor_placement_t;

/* [nrt.h] */
typedef enum {
	NRT_FRAMEWORK_TYPE_INVALID = 0,
	NRT_FRAMEWORK_TYPE_NO_FW = 1,
	NRT_FRAMEWORK_TYPE_TENSORFLOW,
	NRT_FRAMEWORK_TYPE_PYTORCH,
	NRT_FRAMEWORK_TYPE_MXNET,
	NRT_FRAMEWORK_TYPE_PRECHECK,
} nrt_framework_type_t;

/* [nrt.h]: opaque to callers. */
typedef struct nrt_tensor nrt_tensor_t;

#ifdef __cplusplus
extern "C" {
#endif

/* [nrt.h] */
NRT_STATUS nrt_init(nrt_framework_type_t framework, const char *fw_version,
                    const char *fal_version);
/* [nrt.h] declares "void nrt_close();" (C++): the same ABI as (void). */
void nrt_close(void);

/* [nrt.h]: each documented "can be called before nrt_init()". */
NRT_STATUS nrt_get_total_nc_count(uint32_t *vnc_count); /* deprecated */
NRT_STATUS nrt_get_total_vnc_count(uint32_t *vnc_count);
NRT_STATUS nrt_get_visible_nc_count(uint32_t *vnc_count); /* deprecated */
NRT_STATUS nrt_get_visible_vnc_count(uint32_t *vnc_count);

/* [nrt.h]: vnc is -1 for host placements. */
NRT_STATUS nrt_tensor_allocate(nrt_tensor_placement_t tensor_placement, int vnc,
                               size_t size, const char *name,
                               nrt_tensor_t **tensor);
void nrt_tensor_free(nrt_tensor_t **tensor);
NRT_STATUS nrt_tensor_read(const nrt_tensor_t *tensor, void *buf, size_t offset,
                           size_t size);
NRT_STATUS nrt_tensor_write(nrt_tensor_t *tensor, const void *buf,
                            size_t offset, size_t size);
size_t nrt_tensor_get_size(const nrt_tensor_t *tensor); /* 0 on error */
void *nrt_tensor_get_va(const nrt_tensor_t *tensor);    /* NULL on error */

/*
 * [nrt.h]: dma-buf of a device range "registered for EFA peer direct".
 * In the public header since commit a232445a (January 2026); libfabric
 * has resolved it from libnrt since 2023 (ofiwg/libfabric PR #8517).
 */
NRT_STATUS nrt_get_dmabuf_fd(uint64_t va, uint64_t size, int *fd);

/*
 * [ofi]: the function-pointer type libfabric resolves with
 * dlsym("nrt_get_dmabuf_fd_v2"); *offset is where va lies in the fd.
 */
NRT_STATUS nrt_get_dmabuf_fd_v2(uint64_t va, uint64_t size, int *fd,
                                uint64_t *offset);

/*
 * [nrt.h] (public since SDK 2.28.0): BDF of the EFA NIC attached to the device
 * holding the HBM allocation at va.  NRT_SUCCESS, NRT_RESOURCE (buffer
 * too small) or NRT_FAILURE.  *len: in, buffer size with the NUL; out,
 * string length without it.
 */
NRT_STATUS nrt_get_attached_efa_bdf(const void *va, char *efa_bdf, size_t *len);

/* [exp.h]: CPU copy into "mmaped device memory". */
NRT_STATUS nrt_memcpy_to_device(void *dest, const void *src, size_t size);

/* [status.h] (public since commit a232445a, January 2026) */
const char *nrt_get_status_as_str(NRT_STATUS status);

#ifdef __cplusplus
}
#endif

#endif /* HMR_SIM_NRT_DECL_H */
