/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dlpack.h: the DLPack ABI (legacy and 1.x managed tensors), as consumed. */
#ifndef HMRPY_DLPACK_H
#define HMRPY_DLPACK_H

#include <stdint.h>

/*
 * The structs of dlpack/dlpack.h (github.com/dmlc/dlpack), declared here
 * from the specification so the extension builds without that header.
 * The layouts are the ABI every producer (PyTorch, JAX, CuPy, NumPy)
 * compiles against; only the fields hmr reads are named.
 */

/* DLDeviceType: the values are fixed by the standard. */
enum {
	HMRPY_DL_CPU = 1,
	HMRPY_DL_CUDA = 2,
	HMRPY_DL_CUDA_HOST = 3,
	HMRPY_DL_OPENCL = 4,
	HMRPY_DL_VULKAN = 7,
	HMRPY_DL_METAL = 8,
	HMRPY_DL_VPI = 9,
	HMRPY_DL_ROCM = 10,
	HMRPY_DL_ROCM_HOST = 11,
	HMRPY_DL_EXT_DEV = 12,
	HMRPY_DL_CUDA_MANAGED = 13,
	HMRPY_DL_ONEAPI = 14,
};

struct hmrpy_dl_device {
	int32_t device_type; /* An enum in C: int-sized on every ABI. */
	int32_t device_id;
};

struct hmrpy_dl_dtype {
	uint8_t code;
	uint8_t bits;
	uint16_t lanes;
};

struct hmrpy_dl_tensor {
	void *data;
	struct hmrpy_dl_device device;
	int32_t ndim;
	struct hmrpy_dl_dtype dtype;
	int64_t *shape;
	int64_t *strides; /* In elements; NULL: compact row-major. */
	uint64_t byte_offset;
};

/* Capsule "dltensor": DLPack before 1.0. */
struct hmrpy_dl_managed {
	struct hmrpy_dl_tensor dl_tensor;
	void *manager_ctx;
	void (*deleter)(struct hmrpy_dl_managed *self);
};

/* Capsule "dltensor_versioned": DLPack 1.x, which can say "read-only". */
#define HMRPY_DL_FLAG_READ_ONLY (1ULL << 0)
struct hmrpy_dl_managed_versioned {
	struct {
		uint32_t major;
		uint32_t minor;
	} version;
	void *manager_ctx;
	void (*deleter)(struct hmrpy_dl_managed_versioned *self);
	uint64_t flags;
	struct hmrpy_dl_tensor dl_tensor;
};

/* The newest major version this consumer understands. */
#define HMRPY_DL_MAJOR 1

#endif /* HMRPY_DLPACK_H */
