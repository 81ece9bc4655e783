/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* neuron_util.h: the application's side of the Neuron tests: the simulated
 * runtime. */
#ifndef HMR_TESTS_NEURON_UTIL_H
#define HMR_TESTS_NEURON_UTIL_H

#include <dirent.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "harness.h"
#include "sim/neuron/nrt_decl.h"

/*
 * hmr loads the simulated libnrt itself (HMR_NEURON_LIBRARY, set by
 * CTest); a test opens the same file, so both share one runtime, and
 * starts it (nrt_init) as an application does: hmr never does.
 *
 * CTest gives every case of a file the same environment: the two
 * variants' paths (HMR_TEST_SIM_NEURON_V2, HMR_TEST_SIM_NEURON_V1) and
 * HMR_NEURON_LIBRARY = v2.  A case that needs another configuration sets
 * it first thing (case_env), before hmr or the simulator read it.
 */
struct app {
	void *dl;
	__typeof__(nrt_init) *init;
	__typeof__(nrt_tensor_allocate) *allocate;
	__typeof__(nrt_tensor_free) *free;
	__typeof__(nrt_tensor_get_va) *get_va;
	__typeof__(nrt_tensor_write) *write;
	__typeof__(nrt_tensor_read) *read;
	unsigned long (*calls)(const char *name);
	unsigned long long (*alloc_id)(const void *va);
};

static inline void case_env(const char *name, const char *value)
{
	if (setenv(name, value, 1))
		HMR_FAIL("setenv %s", name);
}

/* HMR_NEURON_LIBRARY = the path in the environment variable `var`. */
static inline void case_runtime(const char *var)
{
	const char *path = getenv(var);

	if (!path || !*path)
		HMR_FAIL("%s is not set", var);
	case_env("HMR_NEURON_LIBRARY", path);
}

static inline void *app_sym(void *dl, const char *name)
{
	void *p = dlsym(dl, name);

	if (!p)
		HMR_FAIL("simulator lacks %s", name);
	return p;
}

/* The runtime hmr will load, opened and started by the application. */
static inline struct app app_open(void)
{
	const char *path = getenv("HMR_NEURON_LIBRARY");
	struct app a;

	if (!path)
		HMR_FAIL("HMR_NEURON_LIBRARY is not set");
	a.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!a.dl)
		HMR_FAIL("%s", dlerror());
	*(void **)&a.init = app_sym(a.dl, "nrt_init");
	*(void **)&a.allocate = app_sym(a.dl, "nrt_tensor_allocate");
	*(void **)&a.free = app_sym(a.dl, "nrt_tensor_free");
	*(void **)&a.get_va = app_sym(a.dl, "nrt_tensor_get_va");
	*(void **)&a.write = app_sym(a.dl, "nrt_tensor_write");
	*(void **)&a.read = app_sym(a.dl, "nrt_tensor_read");
	*(void **)&a.calls = app_sym(a.dl, "hmr_sim_neuron_calls");
	*(void **)&a.alloc_id = app_sym(a.dl, "hmr_sim_neuron_alloc_id");
	ASSERT_EQ(a.init(NRT_FRAMEWORK_TYPE_NO_FW, "2.0", ""), NRT_SUCCESS);
	return a;
}

/* A tensor on NeuronCore nc (the simulator: 2 cores per device). */
static inline nrt_tensor_t *app_alloc(struct app *a, nrt_tensor_placement_t at,
                                      int nc, size_t len)
{
	nrt_tensor_t *t = NULL;

	ASSERT_EQ(a->allocate(at, nc, len, "hmr-test", &t), NRT_SUCCESS);
	ASSERT_TRUE(a->get_va(t) != NULL);
	return t;
}

static inline char *app_va(struct app *a, nrt_tensor_t *t)
{
	return (char *)a->get_va(t);
}

static inline void fill(unsigned char *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 31 + seed);
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

	attr.device.neuron = device;
	return fi_mr_regattr(d, &attr, flags, mr);
}

#endif /* HMR_TESTS_NEURON_UTIL_H */
