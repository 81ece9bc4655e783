/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* driver.c: the driver object, its properties and Intel's zex extensions. */
#include "sim_ze.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* driverVersion: distinct per copy of the driver. */
#define SIM_DRIVER_VERSION (0x01040000u + SIM_ZE_INDEX)

int sim_driver_ok(ze_driver_handle_t h)
{
	return h == &sim.driver && h->magic == SIM_DRV_MAGIC;
}

static ze_result_t sim_driver_get(uint32_t *pCount, ze_driver_handle_t *ph)
{
	SIM_ENTER("zeDriverGet");
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*pCount == 0 || !ph) {
		*pCount = 1;
		return ZE_RESULT_SUCCESS;
	}
	*pCount = 1;
	ph[0] = &sim.driver;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_driver_api_version(ze_driver_handle_t hDriver,
                                          ze_api_version_t *version)
{
	SIM_ENTER("zeDriverGetApiVersion");
	if (!sim_driver_ok(hDriver))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!version)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	*version = ZE_API_VERSION_1_4;
	return ZE_RESULT_SUCCESS;
}

/* "hmrsimze-drv-" + copy id + index: distinct per copy. */
static void sim_driver_uuid(uint8_t id[ZE_MAX_DRIVER_UUID_SIZE])
{
	static const char tag[] = "hmrsimze-drv-";

	memset(id, 0, ZE_MAX_DRIVER_UUID_SIZE);
	memcpy(id, tag, sizeof(tag) - 1);
	id[13] = (uint8_t)SIM_ZE_ID[0];
	id[15] = (uint8_t)SIM_ZE_INDEX;
}

static ze_result_t sim_driver_properties(ze_driver_handle_t hDriver,
                                         ze_driver_properties_t *props)
{
	SIM_ENTER("zeDriverGetProperties");
	if (!sim_driver_ok(hDriver))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!props)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	sim_driver_uuid(props->uuid.id);
	props->driverVersion = SIM_DRIVER_VERSION;
	for (ze_base_properties_t *ext = props->pNext; ext; ext = ext->pNext) {
		if (ext->stype ==
		    ZE_STRUCTURE_TYPE_DRIVER_MEMORY_FREE_EXT_PROPERTIES)
			((ze_driver_memory_free_ext_properties_t *)ext)
			        ->freePolicies =
			        ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE |
			        ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_DEFER_FREE;
	}
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_driver_ipc_properties(ze_driver_handle_t hDriver,
                                             ze_driver_ipc_properties_t *props)
{
	SIM_ENTER("zeDriverGetIpcProperties");
	if (!sim_driver_ok(hDriver))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!props)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	props->flags = ZE_IPC_PROPERTY_FLAG_MEMORY;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t
sim_driver_extensions(ze_driver_handle_t hDriver, uint32_t *pCount,
                      ze_driver_extension_properties_t *props)
{
	SIM_ENTER("zeDriverGetExtensionProperties");
	if (!sim_driver_ok(hDriver))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*pCount == 0 || !props) {
		*pCount = 1;
		return ZE_RESULT_SUCCESS;
	}
	*pCount = 1;
	snprintf(props[0].name, sizeof(props[0].name), "%s",
	         ZE_MEMORY_FREE_POLICIES_EXT_NAME);
	props[0].version = ZE_MEMORY_FREE_POLICIES_EXT_VERSION_1_0;
	return ZE_RESULT_SUCCESS;
}

/*
 * Intel's host-pointer import (compute-runtime, level_zero/api/
 * driver_experimental/public/zex_driver.h):
 *   ze_result_t zexDriverImportExternalPointer(ze_driver_handle_t hDriver,
 *                                              void *ptr, size_t size);
 *   ze_result_t zexDriverReleaseImportedPointer(ze_driver_handle_t hDriver,
 *                                               void *ptr);
 *   ze_result_t zexDriverGetHostPointerBaseAddress(
 *           ze_driver_handle_t hDriver, void *ptr, void **baseAddress);
 * The application calls them directly, so the loader never unwraps the
 * driver handle: with wrapped handles (two drivers, or
 * ZE_ENABLE_LOADER_INTERCEPT=1) they receive the loader's handle, which
 * the real driver would misread; the simulator refuses it.
 */
static int sim_zex_handle_ok(ze_driver_handle_t hDriver, const char *name)
{
	if (sim_driver_ok(hDriver))
		return 1;
	sim_log("%s: %p is not this driver's handle (a loader handle?)", name,
	        (void *)hDriver);
	return 0;
}

/* Every page of [p, p + len) is mapped in this process. */
static int sim_host_mapped(uintptr_t p, size_t len)
{
	uintptr_t lo = p / sim.page * sim.page;
	uintptr_t hi = sim_round_up(p + len, sim.page);
	unsigned char vec[256];

	while (lo < hi) {
		size_t n = (hi - lo) / sim.page;

		if (n > sizeof(vec))
			n = sizeof(vec);
		if (mincore((void *)lo, n * sim.page, vec) && errno == ENOMEM)
			return 0;
		lo += n * sim.page;
	}
	return 1;
}

static ze_result_t sim_zex_import(ze_driver_handle_t hDriver, void *ptr,
                                  size_t size)
{
	uintptr_t p = (uintptr_t)ptr;
	struct sim_alloc *a;
	ze_result_t rc = ZE_RESULT_ERROR_INVALID_ARGUMENT;

	SIM_ENTER("zexDriverImportExternalPointer");
	if (!sim_zex_handle_ok(hDriver, "zexDriverImportExternalPointer"))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!ptr || size == 0 || p + size < p)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim.lock);
	if (!sim_in_window(p) && !sim_in_window(p + size - 1) &&
	    sim_host_mapped(p, size) && !sim_table_overlap(&sim.tab, p, size)) {
		a = sim_alloc_new(SIM_KIND_IMPORT, NULL);
		rc = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		if (a) {
			a->base = p;
			a->size = a->span = size;
			if (sim_table_insert(&sim.tab, a) == 0)
				rc = ZE_RESULT_SUCCESS;
			else
				sim_free_alloc(a);
		}
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

static ze_result_t sim_zex_release(ze_driver_handle_t hDriver, void *ptr)
{
	struct sim_alloc *a;
	ze_result_t rc = ZE_RESULT_ERROR_INVALID_ARGUMENT;

	SIM_ENTER("zexDriverReleaseImportedPointer");
	if (!sim_zex_handle_ok(hDriver, "zexDriverReleaseImportedPointer"))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&sim.lock);
	a = sim_find((uintptr_t)ptr);
	if (a && a->kind == SIM_KIND_IMPORT && a->base == (uintptr_t)ptr) {
		sim_free_alloc(a);
		rc = ZE_RESULT_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

static ze_result_t sim_zex_base(ze_driver_handle_t hDriver, void *ptr,
                                void **baseAddress)
{
	struct sim_alloc *a;
	ze_result_t rc = ZE_RESULT_ERROR_INVALID_ARGUMENT;

	SIM_ENTER("zexDriverGetHostPointerBaseAddress");
	if (!sim_zex_handle_ok(hDriver, "zexDriverGetHostPointerBaseAddress"))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&sim.lock);
	a = sim_find((uintptr_t)ptr);
	if (a && a->kind == SIM_KIND_IMPORT) {
		if (baseAddress)
			*baseAddress = (void *)a->base;
		rc = ZE_RESULT_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

static ze_result_t sim_driver_ext_function(ze_driver_handle_t hDriver,
                                           const char *name, void **ppFn)
{
	SIM_ENTER("zeDriverGetExtensionFunctionAddress");
	if (!sim_driver_ok(hDriver))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!name || !ppFn)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (strcmp(name, "zexDriverImportExternalPointer") == 0)
		*ppFn = (void *)sim_zex_import;
	else if (strcmp(name, "zexDriverReleaseImportedPointer") == 0)
		*ppFn = (void *)sim_zex_release;
	else if (strcmp(name, "zexDriverGetHostPointerBaseAddress") == 0)
		*ppFn = (void *)sim_zex_base;
	else
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return ZE_RESULT_SUCCESS;
}

void sim_fill_driver(ze_driver_dditable_t *t)
{
	t->pfnGet = sim_driver_get;
	t->pfnGetApiVersion = sim_driver_api_version;
	t->pfnGetProperties = sim_driver_properties;
	t->pfnGetIpcProperties = sim_driver_ipc_properties;
	t->pfnGetExtensionProperties = sim_driver_extensions;
	t->pfnGetExtensionFunctionAddress = sim_driver_ext_function;
}
