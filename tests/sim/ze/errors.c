/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* errors.c: ze_result_t names for HMR_SIM_ZE_FAIL, and default failures. */
#include "sim_ze.h"

#include <string.h>

#define SIM_RESULT(n)                                                          \
	{                                                                      \
		n, #n                                                          \
	}

/* Every ze_result_t of ze_api.h v1.4. */
static const struct {
	ze_result_t code;
	const char *name;
} sim_results[] = {
        SIM_RESULT(ZE_RESULT_SUCCESS),
        SIM_RESULT(ZE_RESULT_NOT_READY),
        SIM_RESULT(ZE_RESULT_ERROR_DEVICE_LOST),
        SIM_RESULT(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY),
        SIM_RESULT(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY),
        SIM_RESULT(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE),
        SIM_RESULT(ZE_RESULT_ERROR_MODULE_LINK_FAILURE),
        SIM_RESULT(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET),
        SIM_RESULT(ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE),
        SIM_RESULT(ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX),
        SIM_RESULT(ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE),
        SIM_RESULT(ZE_RESULT_EXP_ERROR_REMOTE_DEVICE),
        SIM_RESULT(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS),
        SIM_RESULT(ZE_RESULT_ERROR_NOT_AVAILABLE),
        SIM_RESULT(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE),
        SIM_RESULT(ZE_RESULT_WARNING_DROPPED_DATA),
        SIM_RESULT(ZE_RESULT_ERROR_UNINITIALIZED),
        SIM_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_VERSION),
        SIM_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE),
        SIM_RESULT(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_SIZE),
        SIM_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_SIZE),
        SIM_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION),
        SIM_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        SIM_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_NAME),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED),
        SIM_RESULT(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE),
        SIM_RESULT(ZE_RESULT_ERROR_OVERLAPPING_REGIONS),
        SIM_RESULT(ZE_RESULT_WARNING_ACTION_REQUIRED),
        SIM_RESULT(ZE_RESULT_ERROR_UNKNOWN),
};

#define SIM_NRESULTS (sizeof(sim_results) / sizeof(sim_results[0]))

int sim_result_by_name(const char *name, ze_result_t *out)
{
	for (size_t i = 0; i < SIM_NRESULTS; i++) {
		if (strcmp(sim_results[i].name, name) == 0) {
			*out = sim_results[i].code;
			return 0;
		}
	}
	return -1;
}

/*
 * What an injected failure returns when HMR_SIM_ZE_FAIL names no status:
 * what the real driver says when it runs out of the resource the call
 * needs, else ZE_RESULT_ERROR_DEVICE_LOST (the GPU went away).
 */
ze_result_t sim_default_failure(const char *name)
{
	if (strcmp(name, "zeInit") == 0)
		return ZE_RESULT_ERROR_UNINITIALIZED;
	if (strcmp(name, "zeMemAllocDevice") == 0 ||
	    strcmp(name, "zeMemAllocShared") == 0 ||
	    strcmp(name, "zeMemOpenIpcHandle") == 0)
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	if (strncmp(name, "ze", 2) == 0 && strstr(name, "Create") != NULL)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	if (strcmp(name, "zeMemAllocHost") == 0)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	return ZE_RESULT_ERROR_DEVICE_LOST;
}
