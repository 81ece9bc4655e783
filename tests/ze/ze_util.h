/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ze_util.h: the application's side of the Level Zero tests. */
#ifndef HMR_TESTS_ZE_UTIL_H
#define HMR_TESTS_ZE_UTIL_H

#include <stdlib.h>

#include <hmr/hmr.h>
#include <level_zero/ze_api.h>

#include "harness.h"
#include "sim/ze/sim_ze_app.h"

/*
 * hmr loads the REAL loader (libze_loader.so.1, or HMR_ZE_LIBRARY), which
 * loads the simulated drivers named by ZE_ENABLE_ALT_DRIVERS (CTest sets
 * it per mode, see CMakeLists.txt).  The tests open the same loader to
 * allocate memory as an application would, and reach the drivers' test
 * hooks with dlopen(RTLD_NOLOAD) once the loader has loaded them.
 *
 * CTest gives every case of a file the same environment; a case that
 * needs another configuration sets it itself, first thing (case_env),
 * before the loader, the drivers or hmr read it.
 */

/* One simulated driver as the application sees it. */
struct ze_drv {
	char id;        /* 'a' or 'b' */
	uint32_t index; /* Its position in zeDriverGet's array. */
	ze_driver_handle_t handle;
	ze_context_handle_t ctx;
	ze_device_handle_t dev[8];
	uint32_t ndev;
	struct ze_hooks hooks;
};

static inline void case_env(const char *name, const char *value)
{
	if (setenv(name, value, 1))
		HMR_FAIL("setenv %s", name);
}

/* zeInit through the loader, then driver `id` ('a' or 'b'): its index,
 * devices, a context and its hooks. */
struct ze_drv ze_open(char id);
/* The loader loaded and started (zeInit), nothing else: the hooks of
 * driver `id`, so a case can inject failures into hmr's own calls. */
struct ze_hooks ze_loader_start(char id);
/* How many drivers the loader reports. */
uint32_t ze_driver_count(void);
void ze_close(struct ze_drv *d);

void *ze_dev_alloc(struct ze_drv *d, uint32_t dev, size_t size);
void *ze_host_alloc(struct ze_drv *d, size_t size);
/* Shared memory bound to device `dev`, or to none (dev < 0). */
void *ze_shared_alloc(struct ze_drv *d, int dev, size_t size);
void ze_free(struct ze_drv *d, void *p);
/* The driver's own answer for p: its allocation id. */
uint64_t ze_alloc_id(struct ze_drv *d, const void *p);

/* Open fds of this process. */

/* A software domain with FI_HMEM, and a registration with iface/device. */
struct fid_domain *hmem_domain(void);
int reg_ze(struct fid_domain *d, void *p, size_t len, int device,
           uint64_t flags, struct fid_mr **mr);

/* ze absent, with `reason` in hmr's why; host memory still classifies. */
void expect_ze_absent(const char *reason);

#endif /* HMR_TESTS_ZE_UTIL_H */
