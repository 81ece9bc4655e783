/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ze_shim.c: the real loader, but device handles that name no device. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>

#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>

/*
 * Loaded as HMR_ZE_LIBRARY: it links the real loader, so dlsym on it
 * finds every loader call there, but for zeMemGetAllocProperties, whose
 * answer gets a device handle that is none of zeDeviceGet's (as a
 * sub-device's handle would be).  hmr must refuse it, never guess.
 */
__attribute__((visibility("default"))) ze_result_t
zeMemGetAllocProperties(ze_context_handle_t ctx, const void *ptr,
                        ze_memory_allocation_properties_t *props,
                        ze_device_handle_t *dev)
{
	ze_pfnMemGetAllocProperties_t real;
	ze_result_t r;

	*(void **)&real = dlsym(RTLD_NEXT, "zeMemGetAllocProperties");
	if (!real)
		return ZE_RESULT_ERROR_UNINITIALIZED;
	r = real(ctx, ptr, props, dev);
	if (r == ZE_RESULT_SUCCESS && dev && *dev)
		*dev = (ze_device_handle_t)(uintptr_t)0x5eed0;
	return r;
}
