/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_synapseai.h: what the simulator's two test files share. */
#ifndef HMR_TEST_SIM_SYNAPSEAI_H
#define HMR_TEST_SIM_SYNAPSEAI_H

/*
 * The test loads libSynapse.so and libhl-thunk.so from
 * HMR_SIM_SYNAPSEAI_DIR with dlopen, as a backend would (a case skips
 * without it).  Each case runs in its own process, so it may set the
 * simulator's environment before load().
 */

#include "harness.h"
#include "syn_decl.h"

#include <stdint.h>

/* Library (syn or thunk) and entry point. */
#define SYN_SYMS(X)                                                            \
	X(syn, synInitialize)                                                  \
	X(syn, synDestroy)                                                     \
	X(syn, synDriverGetVersion)                                            \
	X(syn, synStatusGetBriefDescription)                                   \
	X(syn, synDeviceGetCount)                                              \
	X(syn, synDeviceGetCountByDeviceType)                                  \
	X(syn, synDeviceAcquireByDeviceType)                                   \
	X(syn, synDeviceAcquireByModuleId)                                     \
	X(syn, synDeviceAcquire)                                               \
	X(syn, synDeviceRelease)                                               \
	X(syn, synDeviceGetInfo)                                               \
	X(syn, synDeviceGetInfoV2)                                             \
	X(syn, synDeviceGetMemoryInfo)                                         \
	X(syn, synDeviceMalloc)                                                \
	X(syn, synDeviceFree)                                                  \
	X(syn, synHostMalloc)                                                  \
	X(syn, synHostFree)                                                    \
	X(syn, synHostMap)                                                     \
	X(syn, synHostUnmap)                                                   \
	X(syn, synStreamCreateGeneric)                                         \
	X(syn, synStreamDestroy)                                               \
	X(syn, synStreamSynchronize)                                           \
	X(syn, synDeviceSynchronize)                                           \
	X(syn, synMemCopyAsync)                                                \
	X(syn, synMemsetD8Async)                                               \
	X(syn, hcclLookupDMABuff)                                              \
	X(thunk, hlthunk_open)                                                 \
	X(thunk, hlthunk_open_by_module_id)                                    \
	X(thunk, hlthunk_close)                                                \
	X(thunk, hlthunk_device_memory_export_dmabuf_fd)                       \
	X(thunk, hlthunk_device_mapped_memory_export_dmabuf_fd)

#define SYN_FIELD(lib, fn) __typeof__(fn) *fn;

struct syn_api {
	void *syn, *thunk;
	SYN_SYMS(SYN_FIELD)
	unsigned long (*calls)(const char *name);
};

extern struct syn_api api;

#define SYN_OK(expr) ASSERT_EQ((expr), synSuccess)

/* Loads both libraries (skips without HMR_SIM_SYNAPSEAI_DIR). */
void load(void);
/* load(), synInitialize, acquire module (-1: any), device info. */
void setup(int module, synDeviceInfoV2 *info);
size_t page(void);
void fill(unsigned char *buf, size_t len, unsigned seed);
/* A child process reads the byte at addr: its wait status. */
int child_touch(uint64_t addr);
/* Device to/from host through a stream; host must be device-mapped. */
void h2d(synStreamHandle s, uint64_t dev, const void *host, uint64_t len);
void d2h(synStreamHandle s, void *host, uint64_t dev, uint64_t len);

#endif /* HMR_TEST_SIM_SYNAPSEAI_H */
