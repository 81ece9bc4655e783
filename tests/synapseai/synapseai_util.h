/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* synapseai_util.h: the application's side of the SynapseAI tests. */
#ifndef HMR_TESTS_SYNAPSEAI_UTIL_H
#define HMR_TESTS_SYNAPSEAI_UTIL_H

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "harness.h"
#include "syn_decl.h" /* tests/sim/synapseai: the simulator's prototypes */

/*
 * hmr loads the simulated stack itself (HMR_SYNAPSEAI_LIBRARY and
 * HMR_HLTHUNK_LIBRARY, set by CTest); the tests open the same files to
 * act as the application: acquire the device, allocate, read the truth.
 * CTest gives every case the same environment; a case that needs another
 * configuration sets it first thing (case_env), before hmr or the
 * simulator read it.
 */
#define APP_FN(fn) __typeof__(fn) *fn;
#define APP_SYMS(X)                                                            \
	X(synInitialize)                                                       \
	X(synDeviceAcquireByModuleId)                                          \
	X(synDeviceRelease)                                                    \
	X(synDeviceGetInfoV2)                                                  \
	X(synDeviceMalloc)                                                     \
	X(synDeviceFree)                                                       \
	X(synHostMalloc)                                                       \
	X(synHostMap)                                                          \
	X(synHostUnmap)                                                        \
	X(synHostFree)                                                         \
	X(synStreamCreateGeneric)                                              \
	X(synStreamDestroy)                                                    \
	X(synStreamSynchronize)                                                \
	X(synMemCopyAsync)                                                     \
	X(hcclLookupDMABuff)

struct app {
	APP_SYMS(APP_FN)
	unsigned long (*calls)(const char *name);
	synDeviceInfoV2 info;
};

static struct app app;

static inline void case_env(const char *name, const char *value)
{
	if (setenv(name, value, 1))
		HMR_FAIL("setenv %s", name);
}

/* The library the tests' CTest entry names; skips without it. */
static inline void *app_lib(const char *var)
{
	const char *path = getenv(var);
	void *h;

	if (!path || !*path)
		HMR_SKIP("%s is not set", var);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		HMR_FAIL("dlopen %s: %s", path, dlerror());
	return h;
}

static inline void *app_sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p)
		HMR_FAIL("the simulator lacks %s", name);
	return p;
}

/* The entry points, without calling any. */
#define APP_LOAD(fn) *(void **)&app.fn = app_sym(h, #fn);
static inline void app_load(void)
{
	void *h = app_lib("HMR_TEST_SIM_SYNAPSE");

	APP_SYMS(APP_LOAD)
	*(void **)&app.calls = app_sym(h, "hmr_sim_synapseai_calls");
}
#undef APP_LOAD

/* The application starts first: synInitialize, acquire, device info. */
static inline void app_start(void)
{
	synDeviceId id = 99;

	app_load();
	ASSERT_EQ(app.synInitialize(), synSuccess);
	ASSERT_EQ(app.synDeviceAcquireByModuleId(&id, 0), synSuccess);
	ASSERT_EQ(id, 0);
	ASSERT_EQ(app.synDeviceGetInfoV2(0, &app.info), synSuccess);
}

static inline uint64_t app_malloc(uint64_t len)
{
	uint64_t p = 0;

	ASSERT_EQ(app.synDeviceMalloc(0, len, 0, 0, &p), synSuccess);
	return p;
}

/* Device bytes through the application's own stream and pinned buffer. */
static inline void app_write(uint64_t dev, const void *src, size_t len)
{
	synStreamHandle s;
	void *pinned;

	ASSERT_EQ(app.synStreamCreateGeneric(&s, 0, 0), synSuccess);
	ASSERT_EQ(app.synHostMalloc(0, len, 0, &pinned), synSuccess);
	memcpy(pinned, src, len);
	ASSERT_EQ(app.synMemCopyAsync(s, (uintptr_t)pinned, len, dev,
	                              HOST_TO_DRAM),
	          synSuccess);
	ASSERT_EQ(app.synStreamSynchronize(s), synSuccess);
	ASSERT_EQ(app.synStreamDestroy(s), synSuccess);
	ASSERT_EQ(app.synHostFree(0, pinned, 0), synSuccess);
}

static inline void pattern(unsigned char *buf, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] =
		        (unsigned char)((i * 131 + seed * 7 + (i >> 9)) & 0xff);
}

static inline size_t page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* The bytes at fd offset off equal want (the fd mapped, as a NIC would
 * import it). */
static inline void expect_fd_bytes(int fd, uint64_t off,
                                   const unsigned char *want, size_t len)
{
	uint64_t start = off / page() * page();
	size_t span = (size_t)(off - start) + len;
	unsigned char *map;

	map = mmap(NULL, span, PROT_READ, MAP_SHARED, fd, (off_t)start);
	ASSERT_TRUE(map != MAP_FAILED);
	if (memcmp(map + (off - start), want, len) != 0)
		HMR_FAIL("fd %d at offset %#llx: not the buffer's bytes", fd,
		         (unsigned long long)off);
	munmap(map, span);
}

static inline struct fid_domain *hmem_domain(void)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *d;

	attr.caps = FI_HMEM;
	ASSERT_OK(hmr_domain_open(&attr, &d));
	return d;
}

static inline int reg_iface(struct fid_domain *d, uint64_t p, size_t len,
                            enum fi_hmem_iface iface, int device,
                            struct fid_mr **mr)
{
	struct iovec iov = {(void *)(uintptr_t)p, len};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_READ | FI_REMOTE_WRITE,
	                          .iface = iface};

	attr.device.synapseai = device;
	return fi_mr_regattr(d, &attr, 0, mr);
}

#endif /* HMR_TESTS_SYNAPSEAI_UTIL_H */
