/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* gpu_util.h: the real CUDA driver, opened as an application opens it. */
#ifndef HMR_TESTS_GPU_UTIL_H
#define HMR_TESTS_GPU_UTIL_H

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <hmr/hmr.h>

#include "harness.h"

/*
 * The cases of tests/gpu run on a machine with an NVIDIA GPU and its
 * driver (libcuda.so.1, found by the loader; scripts/gpu-check.sh).  They
 * check, on the real driver, the facts of lab/gpu.md that hmr and the
 * simulator (tests/sim/cuda) rely on, and hmr's answers.  HMR_CUDA_LIBRARY
 * names another driver for a trial against the simulator, here.
 */

#define GPU_SYMS(X)                                                            \
	X(init, "cuInit", (unsigned))                                          \
	X(retain, "cuDevicePrimaryCtxRetain", (CUcontext *, int))              \
	X(set, "cuCtxSetCurrent", (CUcontext))                                 \
	X(attr, "cuDeviceGetAttribute", (int *, CUdevice_attribute, CUdevice)) \
	X(alloc, "cuMemAlloc_v2", (CUdeviceptr *, size_t))                     \
	X(free, "cuMemFree_v2", (CUdeviceptr))                                 \
	X(htod, "cuMemcpyHtoD_v2", (CUdeviceptr, const void *, size_t))        \
	X(dtoh, "cuMemcpyDtoH_v2", (void *, CUdeviceptr, size_t))              \
	X(host_register, "cuMemHostRegister_v2", (void *, size_t, unsigned))   \
	X(range, "cuMemGetAddressRange_v2",                                    \
	  (CUdeviceptr *, size_t *, CUdeviceptr))                              \
	X(attrs, "cuPointerGetAttributes",                                     \
	  (unsigned, CUpointer_attribute *, void **, CUdeviceptr))             \
	X(ptr_attr, "cuPointerGetAttribute",                                   \
	  (void *, CUpointer_attribute, CUdeviceptr))                          \
	X(reserve, "cuMemAddressReserve",                                      \
	  (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long))    \
	X(addr_free, "cuMemAddressFree", (CUdeviceptr, size_t))                \
	X(create, "cuMemCreate",                                               \
	  (CUmemGenericAllocationHandle *, size_t,                             \
	   const CUmemAllocationProp *, unsigned long long))                   \
	X(release, "cuMemRelease", (CUmemGenericAllocationHandle))             \
	X(map, "cuMemMap",                                                     \
	  (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,          \
	   unsigned long long))                                                \
	X(unmap, "cuMemUnmap", (CUdeviceptr, size_t))                          \
	X(access, "cuMemSetAccess",                                            \
	  (CUdeviceptr, size_t, const CUmemAccessDesc *, size_t))              \
	X(granularity, "cuMemGetAllocationGranularity",                        \
	  (size_t *, const CUmemAllocationProp *,                              \
	   CUmemAllocationGranularity_flags))                                  \
	X(export, "cuMemGetHandleForAddressRange",                             \
	  (void *, CUdeviceptr, size_t, CUmemRangeHandleType,                  \
	   unsigned long long))                                                \
	X(ipc_get, "cuIpcGetMemHandle", (CUipcMemHandle *, CUdeviceptr))       \
	X(ipc_close, "cuIpcCloseMemHandle", (CUdeviceptr))

#define GPU_FIELD(name, sym, params) CUresult(*name) params;
struct gpu {
	GPU_SYMS(GPU_FIELD)
	CUcontext ctx;
	size_t gran; /* VMM granularity of device 0 */
};
#undef GPU_FIELD

#define CU_OK(expr) ASSERT_EQ((int)(expr), CUDA_SUCCESS)

/* The driver, initialized, device 0's primary context current. */
static inline struct gpu gpu_open(void)
{
	const char *path = getenv("HMR_CUDA_LIBRARY");
	CUmemAllocationProp prop;
	struct gpu g;
	void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW);

	if (!h)
		HMR_FAIL("no CUDA driver: %s", dlerror());
#define GPU_LOAD(name, sym, params)                                            \
	if (!(*(void **)&g.name = dlsym(h, sym)))                              \
		HMR_FAIL("the driver lacks %s", sym);
	GPU_SYMS(GPU_LOAD)
#undef GPU_LOAD
	CU_OK(g.init(0));
	CU_OK(g.retain(&g.ctx, 0));
	CU_OK(g.set(g.ctx));
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	CU_OK(g.granularity(&g.gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	return g;
}

/* One granule of new physical memory mapped at `at`, read/write for
 * device 0. */
static inline void gpu_map_chunk(struct gpu *g, CUdeviceptr at)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc access;
	CUmemGenericAllocationHandle h;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.allocFlags.gpuDirectRDMACapable = 1;
	memset(&access, 0, sizeof(access));
	access.location = prop.location;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CU_OK(g->create(&h, g->gran, &prop, 0));
	CU_OK(g->map(at, g->gran, 0, h, 0));
	CU_OK(g->release(h)); /* The mapping keeps it. */
	CU_OK(g->access(at, g->gran, &access, 1));
}

/* A reservation of n granules, granule i mapped where map[i] is set. */
static inline CUdeviceptr gpu_vmm(struct gpu *g, const int *map, int n)
{
	CUdeviceptr va;

	CU_OK(g->reserve(&va, (size_t)n * g->gran, 0, 0, 0));
	for (int i = 0; i < n; i++)
		if (map[i])
			gpu_map_chunk(g, va + i * g->gran);
	return va;
}

/* Chunk i of va replaced by new physical memory (only its id changes). */
static inline void gpu_replace(struct gpu *g, CUdeviceptr va, int i)
{
	CU_OK(g->unmap(va + i * g->gran, g->gran));
	gpu_map_chunk(g, va + i * g->gran);
}

/* fn(arg) on a new thread, which has no current context. */
static inline void *gpu_contextless(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	void *ret;

	ASSERT_EQ(pthread_create(&t, NULL, fn, arg), 0);
	ASSERT_EQ(pthread_join(t, &ret), 0);
	return ret;
}

#endif /* HMR_TESTS_GPU_UTIL_H */
