/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* sim_ze_app.h: the application's helpers for the simulated ze drivers. */
#ifndef HMR_SIM_ZE_APP_H
#define HMR_SIM_ZE_APP_H

/*
 * Shared by the simulator's self-test (tests/sim/ze) and the backend's
 * tests (tests/ze), which both reach the drivers through the real loader
 * as an application does.  Header only, so that neither build needs the
 * other's sources.  HMR_SIM_ZE_DRIVER_A/_B name the drivers' paths.
 */

#include <dlfcn.h>
#include <stdlib.h>

#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>

#include "harness.h"

/* The hmr_sim_ze_* hooks of one copy of the driver. */
struct ze_hooks {
	unsigned long (*calls)(const char *name);
	int (*fail)(const char *spec);
	unsigned long (*open_fds)(void);
	unsigned long (*fd_errors)(void);
	unsigned long (*live_allocs)(void);
};

/* The loader at path, RTLD_LOCAL as a backend opens it. */
static inline void *ze_open_loader(const char *path)
{
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!dl)
		HMR_FAIL("dlopen %s: %s", path, dlerror());
	return dl;
}

/*
 * One entry of a file's X-macro list of loader calls: (tab).name is
 * ze<name>, from the loader (tab).dl.
 */
#define ZE_APP_LOAD(tab, name)                                                 \
	*(void **)&(tab).name = dlsym((tab).dl, "ze" #name);                   \
	if (!(tab).name)                                                       \
		HMR_FAIL("the loader lacks ze" #name);

/* Driver id's hooks ('a' or 'b'), once the loader has loaded it. */
static inline void ze_get_hooks(char id, struct ze_hooks *h)
{
	const char *var =
	        id == 'a' ? "HMR_SIM_ZE_DRIVER_A" : "HMR_SIM_ZE_DRIVER_B";
	const char *path = getenv(var);
	void *dl;

	if (!path)
		HMR_FAIL("%s is not set", var);
	/* Only the loader loads the driver: NOLOAD finds its copy. */
	dl = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (!dl)
		HMR_FAIL("driver %c is not loaded: %s", id, dlerror());
	*(void **)&h->calls = dlsym(dl, "hmr_sim_ze_calls");
	*(void **)&h->fail = dlsym(dl, "hmr_sim_ze_fail");
	*(void **)&h->open_fds = dlsym(dl, "hmr_sim_ze_open_fds");
	*(void **)&h->fd_errors = dlsym(dl, "hmr_sim_ze_fd_errors");
	*(void **)&h->live_allocs = dlsym(dl, "hmr_sim_ze_live_allocs");
	if (!h->calls || !h->fail || !h->open_fds || !h->fd_errors ||
	    !h->live_allocs)
		HMR_FAIL("driver %c lacks a hook", id);
	dlclose(dl);
}

/*
 * The loader's handle of driver id and its index in zeDriverGet's array:
 * the simulator's UUIDs carry the id at byte 13.
 */
static inline ze_driver_handle_t
ze_find_driver(ze_pfnDriverGet_t get, ze_pfnDriverGetProperties_t props,
               char id, uint32_t *index)
{
	ze_driver_handle_t drv[4];
	uint32_t n = 4;

	ASSERT_U64_EQ(get(&n, drv), ZE_RESULT_SUCCESS);
	for (uint32_t i = 0; i < n; i++) {
		ze_driver_properties_t p = {
		        .stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};

		ASSERT_U64_EQ(props(drv[i], &p), ZE_RESULT_SUCCESS);
		if (p.uuid.id[13] == (uint8_t)id) {
			*index = i;
			return drv[i];
		}
	}
	HMR_FAIL("no driver %c among %u", id, n);
	return NULL;
}

/* Device memory through the loader's zeMemAllocDevice. */
static inline void *ze_alloc_device(ze_pfnMemAllocDevice_t alloc,
                                    ze_context_handle_t ctx,
                                    ze_device_handle_t dev, size_t size)
{
	ze_device_mem_alloc_desc_t desc = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	void *p = NULL;

	ASSERT_U64_EQ(alloc(ctx, &desc, size, 0, dev, &p), ZE_RESULT_SUCCESS);
	return p;
}

/* Host memory through the loader's zeMemAllocHost. */
static inline void *ze_alloc_host(ze_pfnMemAllocHost_t alloc,
                                  ze_context_handle_t ctx, size_t size)
{
	ze_host_mem_alloc_desc_t desc = {
	        .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
	void *p = NULL;

	ASSERT_U64_EQ(alloc(ctx, &desc, size, 0, &p), ZE_RESULT_SUCCESS);
	return p;
}

static inline void fill(unsigned char *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 31 + seed);
}

#endif /* HMR_SIM_ZE_APP_H */
