/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* status.c: names and descriptions of synStatus, hcclResult_t and errno. */
#include "sim_syn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Compiled into both libraries (hidden, so each has its own copy): the
 * runtime needs the descriptions for synStatusGetBriefDescription, the
 * driver needs the names to parse HMR_SIM_SYNAPSEAI_FAIL.
 */

struct sim_status {
	const char *name;
	const char *text; /* synStatusGetBriefDescription; NULL: none */
};

/*
 * Descriptions as Synapse's statusToString has them (Intel_Gaudi3_Software
 * synapse/src/runtime/common/syn_singleton.cpp); that version describes
 * no status after synNullPtr, so synStatusGetBriefDescription fails there.
 */
static const struct sim_status sim_syn_status[] = {
        [synSuccess] = {"synSuccess", "Success"},
        [synInvalidArgument] = {"synInvalidArgument", "Invalid argument"},
        [synCbFull] = {"synCbFull", "Command-Buffer is full (OOM)"},
        [synOutOfHostMemory] = {"synOutOfHostMemory",
                                "Out of HOST memory (OOM)"},
        [synOutOfDeviceMemory] = {"synOutOfDeviceMemory",
                                  "Out of Device memory (OOM)"},
        [synObjectAlreadyInitialized] = {"synObjectAlreadyInitialized",
                                         "Unexpected module "
                                         "re-initialization"},
        [synObjectNotInitialized] = {"synObjectNotInitialized",
                                     "Unexpected module not initialized"},
        [synCommandSubmissionFailure] = {"synCommandSubmissionFailure",
                                         "Failed to submit "
                                         "Command-Submission"},
        [synNoDeviceFound] = {"synNoDeviceFound", "Device not found"},
        [synDeviceTypeMismatch] = {"synDeviceTypeMismatch",
                                   "Device-type mismatch"},
        [synFailedToInitializeCb] = {"synFailedToInitializeCb",
                                     "Failed to initialize Command-Buffer"},
        [synFailedToFreeCb] = {"synFailedToFreeCb",
                               "Failed to free Command-Buffer"},
        [synFailedToMapCb] = {"synFailedToMapCb",
                              "Failed to map Command-Buffer"},
        [synFailedToUnmapCb] = {"synFailedToUnmapCb",
                                "Failed to unmap Command-Buffer"},
        [synFailedToAllocateDeviceMemory] = {"synFailedToAllocateDevice"
                                             "Memory",
                                             "Failed to allocate Device "
                                             "memory"},
        [synFailedToFreeDeviceMemory] = {"synFailedToFreeDeviceMemory",
                                         "Failed to free Device memory"},
        [synFailedNotEnoughDevicesFound] = {"synFailedNotEnoughDevicesFound",
                                            "Not enough devices found"},
        [synDeviceReset] = {"synDeviceReset", "Device in reset"},
        [synUnsupported] = {"synUnsupported", "Unsupported operation"},
        [synWrongParamsFile] = {"synWrongParamsFile", "Invalid Recipe file"},
        [synDeviceAlreadyAcquired] = {"synDeviceAlreadyAcquired",
                                      "Device already acquired"},
        [synNameIsAlreadyUsed] = {"synNameIsAlreadyUsed",
                                  "Re-usage of the same name"},
        [synBusy] = {"synBusy", "Device is busy - operation not yet completed"},
        [synAllResourcesTaken] = {"synAllResourcesTaken",
                                  "All resources are taken"},
        [synUnavailable] = {"synUnavailable",
                            "Unavailable resource (was not found)"},
        [synInvalidTensorDimensions] = {"synInvalidTensorDimensions",
                                        "Invalid tensor's dimensions"},
        [synFail] = {"synFail", "Generic failure"},
        [synOutOfResources] = {"synOutOfResources", "Out-Of-Resources"},
        [synUninitialized] = {"synUninitialized",
                              "Synapse was not initialized"},
        [synAlreadyInitialized] = {"synAlreadyInitialized",
                                   "Synapse was re-initialized"},
        [synFailedSectionValidation] = {"synFailedSectionValidation",
                                        "Sections' validation failure"},
        [synSynapseTerminated] = {"synSynapseTerminated",
                                  "Synapse is being terminated due to "
                                  "fatality"},
        [synAssertAsync] = {"synAssertAsync",
                            "Assert-Async event had been recognized"},
        [synInvalidEventHandle] = {"synInvalidEventHandle",
                                   "Invalid event-handle"},
        [synMappingNotFound] = {"synMappingNotFound",
                                "MMU Mapping for given address is missing"},
        [synFailedDynamicPatching] = {"synFailedDynamicPatching",
                                      "Dynamic patching had failed"},
        [synFailedStaticPatching] = {"synFailedStaticPatching",
                                     "Static patching had failed"},
        [synFailedToSubmitWorkload] = {"synFailedToSubmitWorkload",
                                       "Workload submission had failed"},
        [synInvalidSectionsDefinition] = {"synInvalidSectionsDefinition",
                                          "Invalid Tensors' addresses or "
                                          "missing Sections' Address"},
        [synInvalidTensorProperties] = {"synInvalidTensorProperties",
                                        "Invalid Tensor properties"},
        [synFailHccl] = {"synFailHccl", "Got failure from HCCL"},
        [synFailedToCollectTime] = {"synFailedToCollectTime",
                                    "Failed to collect time"},
        [synTimeout] = {"synTimeout", "Got timeout notification from Driver"},
        [synResourceBadUsage] = {"synResourceBadUsage",
                                 "Resource was not properly used"},
        [synNullPtr] = {"synNullPtr", NULL},
        [synFailFuser] = {"synFailFuser", NULL},
        [synFailComplexGuid] = {"synFailComplexGuid", NULL},
        [synFailTpcKernels] = {"synFailTpcKernels", NULL},
};

#define SIM_NSTATUS (sizeof(sim_syn_status) / sizeof(sim_syn_status[0]))

/* hcclResult_t names, from hcclSuccess (0) on; hcclUninitialized is -1. */
static const char *const sim_hccl_names[] = {
        "hcclSuccess",
        "hcclNoDeviceFound",
        "hcclUnsupported",
        "hcclOutOfMemory",
        "hcclUnhandledSynapseError",
        "hcclSystemError",
        "hcclInternalError",
        "hcclInvalidArgument",
        "hcclInvalidUsage",
        "hcclSocketError",
        "hcclLibfabricError",
        "hcclTryAgainError",
        "hcclBusy",
        "hcclNumResults",
        "hcclStreamError",
        "hcclSynapseTerminated",
        "hcclPortDown",
};

/* The errno values hl-thunk entry points return negated. */
static const struct {
	const char *name;
	int value;
} sim_errnos[] = {
        {"EPERM", EPERM},   {"ENOENT", ENOENT},         {"EIO", EIO},
        {"EBADF", EBADF},   {"EAGAIN", EAGAIN},         {"ENOMEM", ENOMEM},
        {"EFAULT", EFAULT}, {"EBUSY", EBUSY},           {"ENODEV", ENODEV},
        {"EINVAL", EINVAL}, {"EMFILE", EMFILE},         {"ENOTTY", ENOTTY},
        {"ENOSPC", ENOSPC}, {"EOPNOTSUPP", EOPNOTSUPP},
};

const char *sim_syn_status_name(long status)
{
	if (status >= 0 && (unsigned long)status < SIM_NSTATUS)
		return sim_syn_status[status].name;
	return "unknown synStatus";
}

const char *sim_syn_status_text(long status)
{
	if (status >= 0 && (unsigned long)status < SIM_NSTATUS)
		return sim_syn_status[status].text;
	return NULL;
}

/*
 * A number ("26", "-22", "0x1a"), a synStatus or hcclResult_t name, or an
 * errno name, which stands for its negation ("EINVAL" is -22) because
 * that is how hl-thunk reports errors.
 */
int sim_syn_status_parse(const char *word, long *out)
{
	char *end;
	size_t i;

	if (!word || !*word)
		return -1;
	*out = strtol(word, &end, 0);
	if (*end == '\0')
		return 0;
	for (i = 0; i < SIM_NSTATUS; i++) {
		if (strcmp(word, sim_syn_status[i].name) == 0) {
			*out = (long)i;
			return 0;
		}
	}
	if (strcmp(word, "hcclUninitialized") == 0) {
		*out = hcclUninitialized;
		return 0;
	}
	for (i = 0; i < sizeof(sim_hccl_names) / sizeof(sim_hccl_names[0]);
	     i++) {
		if (strcmp(word, sim_hccl_names[i]) == 0) {
			*out = (long)i;
			return 0;
		}
	}
	for (i = 0; i < sizeof(sim_errnos) / sizeof(sim_errnos[0]); i++) {
		if (strcmp(word, sim_errnos[i].name) == 0) {
			*out = -sim_errnos[i].value;
			return 0;
		}
	}
	return -1;
}
