/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_cuda.h: the simulator self-tests' loader and helpers. */
#ifndef HMR_TEST_SIM_CUDA_H
#define HMR_TEST_SIM_CUDA_H
#include "harness.h"

#include <cudaTypedefs.h>
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * HMR_SIM_CUDA_LIB names the simulator (cuda13/libcuda.so.1) and
 * HMR_SIM_CUDA11_LIB its old-driver variant; without them a case skips.
 * Each case runs in its own process, so it may set the simulator's
 * environment before loading it.
 */

/* Field, base name, cudaTypedefs.h version, suffix of the exported name. */
#define SIM_SYMS(X)                                                            \
	X(Init, cuInit, 2000, )                                                \
	X(DriverGetVersion, cuDriverGetVersion, 2020, )                        \
	X(GetErrorName, cuGetErrorName, 6000, )                                \
	X(GetErrorString, cuGetErrorString, 6000, )                            \
	X(DeviceGetCount, cuDeviceGetCount, 2000, )                            \
	X(DeviceGet, cuDeviceGet, 2000, )                                      \
	X(DeviceGetAttribute, cuDeviceGetAttribute, 2000, )                    \
	X(PrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000, )                  \
	X(PrimaryCtxRelease, cuDevicePrimaryCtxRelease, 11000, _v2)            \
	X(CtxSetCurrent, cuCtxSetCurrent, 4000, )                              \
	X(MemAlloc, cuMemAlloc, 3020, _v2)                                     \
	X(MemFree, cuMemFree, 3020, _v2)                                       \
	X(MemAllocHost, cuMemAllocHost, 3020, _v2)                             \
	X(MemFreeHost, cuMemFreeHost, 2000, )                                  \
	X(MemHostRegister, cuMemHostRegister, 6050, _v2)                       \
	X(MemHostUnregister, cuMemHostUnregister, 4000, )                      \
	X(MemAllocManaged, cuMemAllocManaged, 6000, )                          \
	X(MemGetAddressRange, cuMemGetAddressRange, 3020, _v2)                 \
	X(Memcpy, cuMemcpy, 4000, )                                            \
	X(MemcpyHtoD, cuMemcpyHtoD, 3020, _v2)                                 \
	X(MemcpyDtoH, cuMemcpyDtoH, 3020, _v2)                                 \
	X(MemcpyDtoD, cuMemcpyDtoD, 3020, _v2)                                 \
	X(MemsetD8, cuMemsetD8, 3020, _v2)                                     \
	X(PointerGetAttribute, cuPointerGetAttribute, 4000, )                  \
	X(PointerGetAttributes, cuPointerGetAttributes, 7000, )                \
	X(MemGetAllocationGranularity, cuMemGetAllocationGranularity, 10020, ) \
	X(MemCreate, cuMemCreate, 10020, )                                     \
	X(MemRelease, cuMemRelease, 10020, )                                   \
	X(MemAddressReserve, cuMemAddressReserve, 10020, )                     \
	X(MemAddressFree, cuMemAddressFree, 10020, )                           \
	X(MemMap, cuMemMap, 10020, )                                           \
	X(MemUnmap, cuMemUnmap, 10020, )                                       \
	X(MemSetAccess, cuMemSetAccess, 10020, )                               \
	X(MemRetainAllocationHandle, cuMemRetainAllocationHandle, 11000, )     \
	X(MemExportToShareableHandle, cuMemExportToShareableHandle, 10020, )   \
	X(IpcGetMemHandle, cuIpcGetMemHandle, 4010, )                          \
	X(IpcOpenMemHandle, cuIpcOpenMemHandle, 11000, _v2)                    \
	X(IpcCloseMemHandle, cuIpcCloseMemHandle, 4010, )                      \
	X(GetProcAddressV1, cuGetProcAddress, 11030, )

#define SIM_FIELD(field, base, version, sfx) PFN_##base##_v##version field;
#define SIM_LOAD(field, base, version, sfx)                                    \
	*(void **)&cu.field = sym(#base #sfx);

static struct {
	void *dl;
	SIM_SYMS(SIM_FIELD)
	/* Absent from the old-driver variant: */
	PFN_cuMemGetHandleForAddressRange_v11070 MemGetHandleForAddressRange;
	PFN_cuGetProcAddress_v12000 GetProcAddress;
} cu;

static inline void *sym(const char *name)
{
	void *p = dlsym(cu.dl, name);

	if (!p)
		HMR_FAIL("simulator lacks %s", name);
	return p;
}

static inline void load_lib(const char *var)
{
	const char *path = getenv(var);

	if (!path || !*path)
		HMR_SKIP("%s is not set", var);
	cu.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!cu.dl)
		HMR_FAIL("dlopen %s: %s", path, dlerror());
	SIM_SYMS(SIM_LOAD)
	*(void **)&cu.MemGetHandleForAddressRange =
	        dlsym(cu.dl, "cuMemGetHandleForAddressRange");
	*(void **)&cu.GetProcAddress = dlsym(cu.dl, "cuGetProcAddress_v2");
}

#define CU_OK(expr) ASSERT_EQ((expr), CUDA_SUCCESS)

/* Loads the simulator, initializes it and makes dev's context current. */
static inline CUcontext setup(int dev)
{
	CUcontext ctx;

	load_lib("HMR_SIM_CUDA_LIB");
	CU_OK(cu.Init(0));
	CU_OK(cu.PrimaryCtxRetain(&ctx, dev));
	CU_OK(cu.CtxSetCurrent(ctx));
	return ctx;
}

static inline size_t page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static inline void fill(unsigned char *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 31 + seed);
}

/* A dma-buf fd for [p, p + len). */
static inline CUresult dmabuf(int *fd, CUdeviceptr p, size_t len,
                              unsigned long long flags)
{
	return cu.MemGetHandleForAddressRange(
	        fd, p, len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, flags);
}

/* Exports [p, p + span) and checks that the fd, mapped by the CPU,
 * starts with the len bytes of want. */
static inline void dmabuf_shows(CUdeviceptr p, size_t span,
                                const unsigned char *want, size_t len)
{
	unsigned char *map;
	int fd = -1;

	CU_OK(dmabuf(&fd, p, span, 0));
	map = mmap(NULL, span, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map, want, len), 0);
	munmap(map, span);
	close(fd);
}

static inline unsigned long long buffer_id(CUdeviceptr p)
{
	unsigned long long id = 0;

	CU_OK(cu.PointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p));
	return id;
}

#endif /* HMR_TEST_SIM_CUDA_H */
