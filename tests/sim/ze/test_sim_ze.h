/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_ze.h: what the simulator's self-test files share. */
#ifndef HMR_TEST_SIM_ZE_H
#define HMR_TEST_SIM_ZE_H

/*
 * The self-test dlopens the REAL loader (libze_loader.so.1), as a backend
 * does, and reaches the simulated drivers only through it.  CTest runs
 * every case once per loader mode (HMR_SIM_ZE_TEST_MODE, with the
 * matching ZE_* variables set by CMake):
 *   direct      one driver, handles passed straight through
 *   intercept   one driver, ZE_ENABLE_LOADER_INTERCEPT=1 (wrapped handles)
 *   two         drivers a and b (wrapped handles; index 1 is real)
 *   validation  one driver under the loader's validation layer
 * HMR_SIM_ZE_DRIVER_A/_B name the drivers' paths; the test hooks are
 * found with dlopen(path, RTLD_NOLOAD) once the loader has loaded them.
 */

#include "harness.h"
#include "sim/ze/sim_ze_app.h"

#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>

/* Loader entry points the test uses: ze<Name>, type ze_pfn<Name>_t. */
#define ZE_SYMS(X)                                                             \
	X(Init)                                                                \
	X(DriverGet)                                                           \
	X(DriverGetApiVersion)                                                 \
	X(DriverGetProperties)                                                 \
	X(DriverGetIpcProperties)                                              \
	X(DriverGetExtensionProperties)                                        \
	X(DriverGetExtensionFunctionAddress)                                   \
	X(DeviceGet)                                                           \
	X(DeviceGetProperties)                                                 \
	X(DeviceGetSubDevices)                                                 \
	X(DeviceGetCommandQueueGroupProperties)                                \
	X(DeviceGetMemoryProperties)                                           \
	X(DeviceGetExternalMemoryProperties)                                   \
	X(DeviceGetP2PProperties)                                              \
	X(DeviceCanAccessPeer)                                                 \
	X(ContextCreate)                                                       \
	X(ContextDestroy)                                                      \
	X(MemAllocDevice)                                                      \
	X(MemAllocHost)                                                        \
	X(MemAllocShared)                                                      \
	X(MemFree)                                                             \
	X(MemFreeExt)                                                          \
	X(MemGetAllocProperties)                                               \
	X(MemGetAddressRange)                                                  \
	X(MemGetIpcHandle)                                                     \
	X(MemOpenIpcHandle)                                                    \
	X(MemCloseIpcHandle)                                                   \
	X(CommandQueueCreate)                                                  \
	X(CommandQueueDestroy)                                                 \
	X(CommandQueueExecuteCommandLists)                                     \
	X(CommandQueueSynchronize)                                             \
	X(CommandListCreate)                                                   \
	X(CommandListCreateImmediate)                                          \
	X(CommandListDestroy)                                                  \
	X(CommandListClose)                                                    \
	X(CommandListReset)                                                    \
	X(CommandListAppendMemoryCopy)                                         \
	X(CommandListAppendBarrier)                                            \
	X(EventPoolCreate)

#define ZE_FIELD(name) ze_pfn##name##_t name;
struct ze_loader {
	void *dl;
	ZE_SYMS(ZE_FIELD)
};
#undef ZE_FIELD
extern struct ze_loader ze;

enum test_mode { MODE_DIRECT, MODE_INTERCEPT, MODE_TWO, MODE_VALIDATION };
extern enum test_mode mode;

/* One driver as a case uses it. */
struct env {
	ze_driver_handle_t drv;
	ze_device_handle_t dev[8];
	uint32_t ndev;
	ze_context_handle_t ctx;
	ze_command_list_handle_t list; /* immediate, on dev[0] */
	struct ze_hooks hooks;
};

#define ZE_OK(expr)     ASSERT_U64_EQ((expr), ZE_RESULT_SUCCESS)
#define ZE_RC(expr, rc) ASSERT_U64_EQ((expr), (rc))

void load_loader(void);
void init_loader(void);
int driver_count(void);
void setup_driver(struct env *e, char id);
void setup(struct env *e);
void teardown(struct env *e);
ze_result_t unimplemented(void);

size_t page(void);
void *dev_alloc(struct env *e, int dev, size_t size);
void *host_alloc(struct env *e, size_t size);
void copy(struct env *e, void *dst, const void *src, size_t size);
ze_result_t props(struct env *e, const void *p,
                  ze_memory_allocation_properties_t *mp,
                  ze_device_handle_t *dev);
ze_result_t export_fd(struct env *e, const void *p, int *fd);
void *base_of(struct env *e, const void *p, size_t *size);
int fd_open(int fd);
int child_status(pid_t pid);

#endif /* HMR_TEST_SIM_ZE_H */
