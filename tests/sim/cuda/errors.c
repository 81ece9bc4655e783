/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* errors.c: cuGetErrorName and cuGetErrorString over cuda.h's CUresults. */
#include "sim_cuda.h"

#include <ctype.h>
#include <string.h>

struct sim_err {
	CUresult code;
	const char *name;
	const char *text; /* NULL: derived from the name at first use */
	char derived[64];
};

#define SIM_ERRS(n, s)                                                         \
	{                                                                      \
		n, #n, s, ""                                                   \
	}
#define SIM_ERR(n)                                                             \
	{                                                                      \
		n, #n, NULL, ""                                                \
	}

/* Every value of cuda.h 13's CUresult; the common texts are the driver's. */
static struct sim_err sim_errs[] = {
        SIM_ERRS(CUDA_SUCCESS, "no error"),
        SIM_ERRS(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
        SIM_ERRS(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
        SIM_ERRS(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
        SIM_ERRS(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
        SIM_ERR(CUDA_ERROR_PROFILER_DISABLED),
        SIM_ERR(CUDA_ERROR_PROFILER_NOT_INITIALIZED),
        SIM_ERR(CUDA_ERROR_PROFILER_ALREADY_STARTED),
        SIM_ERR(CUDA_ERROR_PROFILER_ALREADY_STOPPED),
        SIM_ERRS(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library"),
        SIM_ERRS(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER,
                 "CUDA driver is too old for this call"),
        SIM_ERRS(CUDA_ERROR_DEVICE_UNAVAILABLE,
                 "CUDA-capable device(s) is/are busy or unavailable"),
        SIM_ERRS(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
        SIM_ERRS(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
        SIM_ERR(CUDA_ERROR_DEVICE_NOT_LICENSED),
        SIM_ERRS(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
        SIM_ERRS(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
        SIM_ERRS(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current"),
        SIM_ERRS(CUDA_ERROR_MAP_FAILED, "mapping of buffer object failed"),
        SIM_ERRS(CUDA_ERROR_UNMAP_FAILED, "unmapping of buffer object failed"),
        SIM_ERR(CUDA_ERROR_ARRAY_IS_MAPPED),
        SIM_ERRS(CUDA_ERROR_ALREADY_MAPPED, "resource already mapped"),
        SIM_ERRS(CUDA_ERROR_NO_BINARY_FOR_GPU,
                 "no kernel image is available for execution on the device"),
        SIM_ERR(CUDA_ERROR_ALREADY_ACQUIRED),
        SIM_ERRS(CUDA_ERROR_NOT_MAPPED, "resource not mapped"),
        SIM_ERR(CUDA_ERROR_NOT_MAPPED_AS_ARRAY),
        SIM_ERR(CUDA_ERROR_NOT_MAPPED_AS_POINTER),
        SIM_ERRS(CUDA_ERROR_ECC_UNCORRECTABLE,
                 "uncorrectable ECC error encountered"),
        SIM_ERR(CUDA_ERROR_UNSUPPORTED_LIMIT),
        SIM_ERR(CUDA_ERROR_CONTEXT_ALREADY_IN_USE),
        SIM_ERR(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED),
        SIM_ERR(CUDA_ERROR_INVALID_PTX),
        SIM_ERR(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT),
        SIM_ERR(CUDA_ERROR_NVLINK_UNCORRECTABLE),
        SIM_ERR(CUDA_ERROR_JIT_COMPILER_NOT_FOUND),
        SIM_ERR(CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
        SIM_ERR(CUDA_ERROR_JIT_COMPILATION_DISABLED),
        SIM_ERR(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY),
        SIM_ERR(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC),
        SIM_ERR(CUDA_ERROR_CONTAINED),
        SIM_ERR(CUDA_ERROR_INVALID_SOURCE),
        SIM_ERRS(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
        SIM_ERR(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND),
        SIM_ERR(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED),
        SIM_ERRS(CUDA_ERROR_OPERATING_SYSTEM,
                 "OS call failed or operation not supported on this OS"),
        SIM_ERRS(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
        SIM_ERRS(CUDA_ERROR_ILLEGAL_STATE,
                 "the operation cannot be performed in the present state"),
        SIM_ERR(CUDA_ERROR_LOSSY_QUERY),
        SIM_ERRS(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
        SIM_ERRS(CUDA_ERROR_NOT_READY, "device not ready"),
        SIM_ERRS(CUDA_ERROR_ILLEGAL_ADDRESS,
                 "an illegal memory access was encountered"),
        SIM_ERR(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES),
        SIM_ERR(CUDA_ERROR_LAUNCH_TIMEOUT),
        SIM_ERR(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING),
        SIM_ERRS(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
                 "peer access is already enabled"),
        SIM_ERRS(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED,
                 "peer access has not been enabled"),
        SIM_ERRS(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE,
                 "cannot set while device is active in this process"),
        SIM_ERRS(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"),
        SIM_ERRS(CUDA_ERROR_ASSERT, "device-side assert triggered"),
        SIM_ERRS(CUDA_ERROR_TOO_MANY_PEERS, "peer mapping resources exhausted"),
        SIM_ERRS(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                 "part or all of the requested memory range is already mapped"),
        SIM_ERRS(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
                 "pointer does not correspond to a registered memory region"),
        SIM_ERR(CUDA_ERROR_HARDWARE_STACK_ERROR),
        SIM_ERR(CUDA_ERROR_ILLEGAL_INSTRUCTION),
        SIM_ERRS(CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address"),
        SIM_ERR(CUDA_ERROR_INVALID_ADDRESS_SPACE),
        SIM_ERR(CUDA_ERROR_INVALID_PC),
        SIM_ERRS(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
        SIM_ERR(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE),
        SIM_ERR(CUDA_ERROR_TENSOR_MEMORY_LEAK),
        SIM_ERRS(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
        SIM_ERRS(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
        SIM_ERRS(CUDA_ERROR_SYSTEM_NOT_READY, "system not yet initialized"),
        SIM_ERR(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH),
        SIM_ERR(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE),
        SIM_ERR(CUDA_ERROR_MPS_CONNECTION_FAILED),
        SIM_ERR(CUDA_ERROR_MPS_RPC_FAILURE),
        SIM_ERR(CUDA_ERROR_MPS_SERVER_NOT_READY),
        SIM_ERR(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED),
        SIM_ERR(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED),
        SIM_ERR(CUDA_ERROR_MPS_CLIENT_TERMINATED),
        SIM_ERR(CUDA_ERROR_CDP_NOT_SUPPORTED),
        SIM_ERR(CUDA_ERROR_CDP_VERSION_MISMATCH),
        SIM_ERR(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED),
        SIM_ERR(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
        SIM_ERR(CUDA_ERROR_STREAM_CAPTURE_MERGE),
        SIM_ERR(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED),
        SIM_ERR(CUDA_ERROR_STREAM_CAPTURE_UNJOINED),
        SIM_ERR(CUDA_ERROR_STREAM_CAPTURE_ISOLATION),
        SIM_ERR(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT),
        SIM_ERR(CUDA_ERROR_CAPTURED_EVENT),
        SIM_ERR(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD),
        SIM_ERRS(CUDA_ERROR_TIMEOUT, "timeout occurred"),
        SIM_ERR(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE),
        SIM_ERR(CUDA_ERROR_EXTERNAL_DEVICE),
        SIM_ERR(CUDA_ERROR_INVALID_CLUSTER_SIZE),
        SIM_ERR(CUDA_ERROR_FUNCTION_NOT_LOADED),
        SIM_ERR(CUDA_ERROR_INVALID_RESOURCE_TYPE),
        SIM_ERR(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION),
        SIM_ERR(CUDA_ERROR_KEY_ROTATION),
        SIM_ERRS(CUDA_ERROR_UNKNOWN, "unknown error"),
};

#define SIM_NERRS (sizeof(sim_errs) / sizeof(sim_errs[0]))

static pthread_once_t sim_err_once = PTHREAD_ONCE_INIT;

/* "CUDA_ERROR_STREAM_CAPTURE_MERGE" -> "stream capture merge" */
static void sim_err_derive(void)
{
	for (size_t i = 0; i < SIM_NERRS; i++) {
		struct sim_err *e = &sim_errs[i];
		const char *s = e->name + strlen("CUDA_ERROR_");
		size_t j;

		if (e->text)
			continue;
		for (j = 0; s[j] && j + 1 < sizeof(e->derived); j++)
			e->derived[j] =
			        s[j] == '_'
			                ? ' '
			                : (char)tolower((unsigned char)s[j]);
		e->derived[j] = '\0';
		e->text = e->derived;
	}
}

static const struct sim_err *sim_err_lookup(CUresult error)
{
	pthread_once(&sim_err_once, sim_err_derive);
	for (size_t i = 0; i < SIM_NERRS; i++)
		if (sim_errs[i].code == error)
			return &sim_errs[i];
	return NULL;
}

/* HMR_SIM_CUDA_FAIL codes may be given by name. */
int sim_error_by_name(const char *name, CUresult *out)
{
	for (size_t i = 0; i < SIM_NERRS; i++) {
		if (strcmp(sim_errs[i].name, name) == 0) {
			*out = sim_errs[i].code;
			return 0;
		}
	}
	return -1;
}

/* Both work before cuInit, as with the driver. */
SIM_API CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
	const struct sim_err *e;

	SIM_ENTER_NOINIT("cuGetErrorName");
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	e = sim_err_lookup(error);
	*pStr = e ? e->name : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SIM_API CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
	const struct sim_err *e;

	SIM_ENTER_NOINIT("cuGetErrorString");
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	e = sim_err_lookup(error);
	*pStr = e ? e->text : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
