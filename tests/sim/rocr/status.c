/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* status.c: hsa_status_string over the hsa_status_t values of the headers. */
#include "sim_rocr.h"

#include <string.h>

struct sim_status {
	hsa_status_t code;
	const char *name;
	const char *text; /* "NAME: what it means", as ROCr formats it */
};

#define S(n, what)                                                             \
	{                                                                      \
		(hsa_status_t)(n), #n, #n ": " what                            \
	}

/* Every hsa_status_t of Debian's hsa.h and hsa_ext_amd.h (ROCm 5.2.3). */
static const struct sim_status sim_statuses[] = {
        S(HSA_STATUS_SUCCESS, "the call succeeded"),
        S(HSA_STATUS_INFO_BREAK, "a callback stopped an iteration early"),
        S(HSA_STATUS_ERROR, "generic error"),
        S(HSA_STATUS_ERROR_INVALID_ARGUMENT,
          "an argument breaks the call's preconditions"),
        S(HSA_STATUS_ERROR_INVALID_QUEUE_CREATION, "invalid queue creation"),
        S(HSA_STATUS_ERROR_INVALID_ALLOCATION, "invalid allocation"),
        S(HSA_STATUS_ERROR_INVALID_AGENT, "invalid agent"),
        S(HSA_STATUS_ERROR_INVALID_REGION, "invalid memory region"),
        S(HSA_STATUS_ERROR_INVALID_SIGNAL, "invalid signal"),
        S(HSA_STATUS_ERROR_INVALID_QUEUE, "invalid queue"),
        S(HSA_STATUS_ERROR_OUT_OF_RESOURCES,
          "the runtime could not get the resources it needs"),
        S(HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, "invalid packet format"),
        S(HSA_STATUS_ERROR_RESOURCE_FREE, "a resource could not be released"),
        S(HSA_STATUS_ERROR_NOT_INITIALIZED,
          "the runtime is not initialized (hsa_init)"),
        S(HSA_STATUS_ERROR_REFCOUNT_OVERFLOW,
          "the runtime reference count overflowed"),
        S(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS,
          "the arguments are incompatible"),
        S(HSA_STATUS_ERROR_INVALID_INDEX, "invalid index"),
        S(HSA_STATUS_ERROR_INVALID_ISA, "invalid instruction set"),
        S(HSA_STATUS_ERROR_INVALID_ISA_NAME, "invalid instruction set name"),
        S(HSA_STATUS_ERROR_INVALID_CODE_OBJECT, "invalid code object"),
        S(HSA_STATUS_ERROR_INVALID_EXECUTABLE, "invalid executable"),
        S(HSA_STATUS_ERROR_FROZEN_EXECUTABLE, "the executable is frozen"),
        S(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME, "no symbol of that name"),
        S(HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED,
          "the variable is already defined"),
        S(HSA_STATUS_ERROR_VARIABLE_UNDEFINED, "the variable is undefined"),
        S(HSA_STATUS_ERROR_EXCEPTION, "an HSAIL exception was raised"),
        S(HSA_STATUS_ERROR_INVALID_CODE_SYMBOL, "invalid code symbol"),
        S(HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL,
          "invalid executable symbol"),
        S(HSA_STATUS_ERROR_INVALID_FILE, "invalid file descriptor"),
        S(HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER,
          "invalid code object reader"),
        S(HSA_STATUS_ERROR_INVALID_CACHE, "invalid cache"),
        S(HSA_STATUS_ERROR_INVALID_WAVEFRONT, "invalid wavefront"),
        S(HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP, "invalid signal group"),
        S(HSA_STATUS_ERROR_INVALID_RUNTIME_STATE,
          "the runtime is not in the configuration state"),
        S(HSA_STATUS_ERROR_FATAL, "a queue hit a fatal error"),
        S(HSA_STATUS_ERROR_INVALID_MEMORY_POOL, "invalid memory pool"),
        S(HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
          "an agent accessed memory outside its aperture"),
        S(HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION,
          "an agent executed an illegal instruction"),
        S(HSA_STATUS_ERROR_MEMORY_FAULT, "an agent hit a memory fault"),
        S(HSA_STATUS_CU_MASK_REDUCED,
          "the compute unit mask was reduced to the usable units"),
};

#undef S

#define SIM_NSTATUSES (sizeof(sim_statuses) / sizeof(sim_statuses[0]))

/* HMR_SIM_ROCR_FAIL statuses may be given by name. */
int sim_status_by_name(const char *name, hsa_status_t *out)
{
	for (size_t i = 0; i < SIM_NSTATUSES; i++) {
		if (strcmp(sim_statuses[i].name, name) == 0) {
			*out = sim_statuses[i].code;
			return 0;
		}
	}
	return -1;
}

/*
 * hsa.h lists HSA_STATUS_ERROR_NOT_INITIALIZED among its returns, but
 * ROCr's hsa_status_string (core/runtime/hsa.cpp) never checks, so it
 * answers before hsa_init and after a failed one, which is when backends
 * (libfabric's hmem_rocr.c) print why hsa_init failed.  The simulator
 * does what ROCr does.
 */
SIM_API hsa_status_t HSA_API hsa_status_string(hsa_status_t status,
                                               const char **status_string)
{
	SIM_ENTER_NOINIT("hsa_status_string");
	if (!status_string)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	for (size_t i = 0; i < SIM_NSTATUSES; i++) {
		if (sim_statuses[i].code == status) {
			*status_string = sim_statuses[i].text;
			return HSA_STATUS_SUCCESS;
		}
	}
	return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}
