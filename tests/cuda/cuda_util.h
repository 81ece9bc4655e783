/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cuda_util.h: the simulated driver's entry points, for the CUDA tests. */
#ifndef HMR_TESTS_CUDA_UTIL_H
#define HMR_TESTS_CUDA_UTIL_H

#include <dlfcn.h>
#include <stdlib.h>

#include <hmr/hmr.h>

#include "harness.h"

/*
 * hmr loads the simulator itself (HMR_CUDA_LIBRARY, set by CTest); the
 * tests open the same library to allocate memory as an application would.
 */
struct sim {
	int (*init)(unsigned);
	int (*ctx_retain)(void **, int);
	int (*ctx_set)(void *);
	int (*alloc)(unsigned long long *, size_t);
	int (*alloc_host)(void **, size_t);
	int (*alloc_managed)(unsigned long long *, size_t, unsigned);
	int (*free)(unsigned long long);
	int (*free_host)(void *);
	int (*htod)(unsigned long long, const void *, size_t);
	int (*dtoh)(void *, unsigned long long, size_t);
	int (*reserve)(unsigned long long *, size_t, size_t, unsigned long long,
	               unsigned long long);
	int (*create)(unsigned long long *, size_t, const void *,
	              unsigned long long);
	int (*map)(unsigned long long, size_t, size_t, unsigned long long,
	           unsigned long long);
	int (*set_access)(unsigned long long, size_t, const void *, size_t);
	int (*unmap)(unsigned long long, size_t);
	int (*release)(unsigned long long);
	unsigned long (*calls)(const char *);
	/* The last range the simulator exported as a dma-buf. */
	unsigned long (*last_export)(unsigned long long *, size_t *);
};

/*
 * CTest gives every case of a file the same environment: the simulators'
 * paths (HMR_TEST_SIM_CUDA13, HMR_TEST_SIM_CUDA11, HMR_TEST_CUDA_STUB) and
 * the default driver.  A case that needs another configuration sets it
 * itself, first thing, before hmr or the simulator read it.
 */
static inline void case_env(const char *name, const char *value)
{
	if (setenv(name, value, 1))
		HMR_FAIL("setenv %s", name);
}

/* HMR_CUDA_LIBRARY = the path in the environment variable `var`. */
static inline void case_driver(const char *var)
{
	const char *path = getenv(var);

	if (!path)
		HMR_FAIL("%s is not set", var);
	case_env("HMR_CUDA_LIBRARY", path);
}

static inline void *sim_sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p)
		HMR_FAIL("simulator lacks %s", name);
	return p;
}

static inline struct sim sim_open(void)
{
	const char *path = getenv("HMR_CUDA_LIBRARY");
	void *h, *ctx;
	struct sim s;

	if (!path)
		HMR_FAIL("HMR_CUDA_LIBRARY is not set");
	h = dlopen(path, RTLD_NOW);
	if (!h)
		HMR_FAIL("%s", dlerror());
	*(void **)&s.init = sim_sym(h, "cuInit");
	*(void **)&s.ctx_retain = sim_sym(h, "cuDevicePrimaryCtxRetain");
	*(void **)&s.ctx_set = sim_sym(h, "cuCtxSetCurrent");
	*(void **)&s.alloc = sim_sym(h, "cuMemAlloc_v2");
	*(void **)&s.alloc_host = sim_sym(h, "cuMemAllocHost_v2");
	*(void **)&s.alloc_managed = sim_sym(h, "cuMemAllocManaged");
	*(void **)&s.free = sim_sym(h, "cuMemFree_v2");
	*(void **)&s.free_host = sim_sym(h, "cuMemFreeHost");
	*(void **)&s.htod = sim_sym(h, "cuMemcpyHtoD_v2");
	*(void **)&s.dtoh = sim_sym(h, "cuMemcpyDtoH_v2");
	*(void **)&s.reserve = sim_sym(h, "cuMemAddressReserve");
	*(void **)&s.create = sim_sym(h, "cuMemCreate");
	*(void **)&s.map = sim_sym(h, "cuMemMap");
	*(void **)&s.set_access = sim_sym(h, "cuMemSetAccess");
	*(void **)&s.unmap = sim_sym(h, "cuMemUnmap");
	*(void **)&s.release = sim_sym(h, "cuMemRelease");
	*(void **)&s.calls = sim_sym(h, "hmr_sim_cuda_calls");
	*(void **)&s.last_export = sim_sym(h, "hmr_sim_cuda_last_export");
	ASSERT_EQ(s.init(0), 0);
	ASSERT_EQ(s.ctx_retain(&ctx, 0), 0);
	ASSERT_EQ(s.ctx_set(ctx), 0);
	return s;
}

/* Device memory on `dev`: the primary context of dev made current. */
static inline unsigned long long sim_alloc_on(struct sim *s, int dev,
                                              size_t len)
{
	unsigned long long p;
	void *ctx;

	ASSERT_EQ(s->ctx_retain(&ctx, dev), 0);
	ASSERT_EQ(s->ctx_set(ctx), 0);
	ASSERT_EQ(s->alloc(&p, len), 0);
	return p;
}

static inline struct fid_domain *hmem_domain(void)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *d;

	attr.caps = FI_HMEM;
	ASSERT_OK(hmr_domain_open(&attr, &d));
	return d;
}

static inline int reg_iface(struct fid_domain *d, void *p, size_t len,
                            enum fi_hmem_iface iface, int device,
                            uint64_t flags, struct fid_mr **mr)
{
	struct iovec iov = {p, len};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_READ | FI_REMOTE_WRITE,
	                          .iface = iface};

	attr.device.cuda = device;
	return fi_mr_regattr(d, &attr, flags, mr);
}

#endif /* HMR_TESTS_CUDA_UTIL_H */
