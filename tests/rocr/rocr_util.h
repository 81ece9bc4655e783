/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rocr_util.h: the application's side of the ROCr tests, on the simulator. */
#ifndef HMR_TESTS_ROCR_UTIL_H
#define HMR_TESTS_ROCR_UTIL_H

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <hmr/hmr.h>

#include "harness.h"

/*
 * hmr loads the runtime itself (HMR_ROCR_LIBRARY, set by CTest); the
 * tests open the same library to allocate memory as an application
 * would, with the prototypes of Debian's headers.  CTest gives every case
 * of a file the same environment: the runtimes' paths
 * (HMR_TEST_SIM_ROCM56, HMR_TEST_SIM_ROCM52, HMR_TEST_REAL_ROCR), the
 * default runtime and a kernel configuration that allows dma-buf.  A case
 * that needs another configuration sets it itself, first thing, before
 * hmr or the simulator read it.
 */
#define APP_SYMS(X)                                                            \
	X(init, hsa_init)                                                      \
	X(iterate_agents, hsa_iterate_agents)                                  \
	X(agent_get_info, hsa_agent_get_info)                                  \
	X(iterate_pools, hsa_amd_agent_iterate_memory_pools)                   \
	X(pool_allocate, hsa_amd_memory_pool_allocate)                         \
	X(pool_free, hsa_amd_memory_pool_free)                                 \
	X(lock, hsa_amd_memory_lock)                                           \
	X(unlock, hsa_amd_memory_unlock)                                       \
	X(memory_copy, hsa_memory_copy)

#define APP_FIELD(field, symbol) __typeof__(&symbol) field;

struct app {
	APP_SYMS(APP_FIELD)
	unsigned long (*calls)(const char *name);
	unsigned long long (*buffer_id)(const void *ptr);
	hsa_agent_t cpu, gpu[16];
	hsa_amd_memory_pool_t cpu_pool, gpu_pool[16];
	int ngpu;
};

static inline void case_env(const char *name, const char *value)
{
	if (setenv(name, value, 1))
		HMR_FAIL("setenv %s", name);
}

/* HMR_ROCR_LIBRARY = the path in the environment variable `var`. */
static inline void case_runtime(const char *var)
{
	const char *path = getenv(var);

	if (!path || !*path)
		HMR_FAIL("%s is not set", var);
	case_env("HMR_ROCR_LIBRARY", path);
}

static inline void *app_sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p)
		HMR_FAIL("runtime lacks %s", name);
	return p;
}

static hsa_status_t app_first_pool(hsa_amd_memory_pool_t pool, void *data)
{
	*(hsa_amd_memory_pool_t *)data = pool;
	return HSA_STATUS_INFO_BREAK;
}

static hsa_status_t app_agent(hsa_agent_t agent, void *data)
{
	struct app *a = data;
	hsa_device_type_t type;
	hsa_amd_memory_pool_t pool = {0};

	if (a->agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) ||
	    a->iterate_pools(agent, app_first_pool, &pool) !=
	            HSA_STATUS_INFO_BREAK)
		return HSA_STATUS_ERROR;
	if (type == HSA_DEVICE_TYPE_CPU) {
		a->cpu = agent;
		a->cpu_pool = pool;
	} else if (a->ngpu < 16) {
		a->gpu_pool[a->ngpu] = pool;
		a->gpu[a->ngpu++] = agent;
	}
	return HSA_STATUS_SUCCESS;
}

#define APP_LOAD(field, symbol) *(void **)&a.field = app_sym(h, #symbol);

/* The runtime hmr loads, started by the application too. */
static inline struct app app_open(void)
{
	const char *path = getenv("HMR_ROCR_LIBRARY");
	struct app a;
	void *h;

	memset(&a, 0, sizeof(a));
	if (!path)
		HMR_FAIL("HMR_ROCR_LIBRARY is not set");
	h = dlopen(path, RTLD_NOW);
	if (!h)
		HMR_FAIL("%s", dlerror());
	APP_SYMS(APP_LOAD)
	*(void **)&a.calls = app_sym(h, "hmr_sim_rocr_calls");
	*(void **)&a.buffer_id = app_sym(h, "hmr_sim_rocr_buffer_id");
	ASSERT_EQ(a.init(), HSA_STATUS_SUCCESS);
	ASSERT_EQ(a.iterate_agents(app_agent, &a), HSA_STATUS_SUCCESS);
	return a;
}

static inline void *gpu_alloc(struct app *a, int gpu, size_t len)
{
	void *p = NULL;

	ASSERT_EQ(a->pool_allocate(a->gpu_pool[gpu], len, 0, &p),
	          HSA_STATUS_SUCCESS);
	return p;
}

/* The CPU agent's pool: host memory ROCr allocated (host-alloc). */
static inline void *cpu_alloc(struct app *a, size_t len)
{
	void *p = NULL;

	ASSERT_EQ(a->pool_allocate(a->cpu_pool, len, 0, &p),
	          HSA_STATUS_SUCCESS);
	return p;
}

static inline void app_free(struct app *a, void *p)
{
	ASSERT_EQ(a->pool_free(p), HSA_STATUS_SUCCESS);
}

static inline struct fid_domain *hmem_domain(void)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *d;

	attr.caps = FI_HMEM;
	ASSERT_OK(hmr_domain_open(&attr, &d));
	return d;
}

/* fi_mr_regattr with iface and device (fi_mr_attr has no rocr member:
 * the device is device.reserved). */
static inline int reg_iface(struct fid_domain *d, void *p, size_t len,
                            enum fi_hmem_iface iface, uint64_t device,
                            uint64_t flags, struct fid_mr **mr)
{
	struct iovec iov = {p, len};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_READ | FI_REMOTE_WRITE,
	                          .iface = iface};

	attr.device.reserved = device;
	return fi_mr_regattr(d, &attr, flags, mr);
}

/*
 * hmr's log lines, for cases that check a reason only the log carries:
 * stderr goes to a file from here on, at level info.  Call first thing.
 */
static char capture_path[64];

static inline void capture_log(void)
{
	snprintf(capture_path, sizeof(capture_path), "/tmp/hmr-rocr-log-%d",
	         (int)getpid());
	case_env("HMR_LOG_LEVEL", "info");
	if (!freopen(capture_path, "w+", stderr))
		HMR_FAIL("freopen %s", capture_path);
	setvbuf(stderr, NULL, _IONBF, 0);
}

/* The captured log holds `text`; the file is removed. */
static inline int log_has(const char *text)
{
	static char buf[1 << 16];
	FILE *f = fopen(capture_path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	if (!strstr(buf, text)) {
		fprintf(stdout, "log lacks \"%s\":\n%s\n", text, buf);
		return 0;
	}
	return 1;
}

#endif /* HMR_TESTS_ROCR_UTIL_H */
