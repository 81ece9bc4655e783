/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* synapseai_load.c: loading libSynapse and libhl-thunk; the one device. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <hmr/fi_mr.h>

#include "base/config.h"
#include "base/dl.h"
#include "base/log.h"
#include "base/range.h"
#include "synapseai/synapseai_api.h"

HMR_CONFIG_VAR(HMR_SYNAPSEAI_LIBRARY, NULL,
               "the SynapseAI runtime to load instead of libSynapse.so");
HMR_CONFIG_VAR(HMR_HLTHUNK_LIBRARY, NULL,
               "the hl-thunk library to load instead of libhl-thunk.so "
               "(optional: without it, dma-bufs come from "
               "hcclLookupDMABuff)");

/*
 * Start-up: synInitialize, then synDeviceGetCount (0: absent, with the
 * reason).  The device itself is never acquired here: synapseai_device.c
 * says why, and notices when the application holds it.
 *
 * Synapse is one instance per process, shared with the application:
 * - A second synInitialize is a no-op returning synSuccess [S1]: hmr
 *   calls it whether or not the application did.
 * - synDestroy is never called (it is not even loaded).  It tears down
 *   the process's one runtime, under the application's feet, and it can
 *   hang on a host without a Gaudi, which is why libfabric never calls
 *   it either.  With no device hmr stops after synDeviceGetCount, so
 *   nothing it calls can wait for hardware.
 * - libSynapse is never dlclosed once synInitialize ran: it starts
 *   threads and registers exit handlers.
 */

struct hmr_synapseai hmr__synapseai;
static void *syn_handle;
static void *thunk_handle;

#define REQ false
#define OPT true
#define SYM_ROW(name, req, ret, params)                                        \
	{#name, (void **)&hmr__synapseai.name, req},
static const struct hmr_dl_sym syn_syms[] = {HMR_SYN_CALLS(SYM_ROW)};
static const struct hmr_dl_sym thunk_syms[] = {HMR_HLTHUNK_CALLS(SYM_ROW)};
#undef SYM_ROW
#undef REQ
#undef OPT

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
	hmr_synStatus status;
	const char *name;
	int code;
} statuses[] = {
#define STATUS_ROW(n, value, code) {value, #n, code},
        HMR_SYN_STATUSES(STATUS_ROW)
#undef STATUS_ROW
};

/* [H1] hccl_types.h, hcclResult_t from hcclSuccess (0) on. */
static const char *const hccl_names[] = {
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

/* The -FI_E* code of a status: HMR_SYN_STATUSES, else -FI_EIO. */
static int status_code(hmr_synStatus st)
{
	size_t i;

	for (i = 0; i < COUNT(statuses); i++)
		if (statuses[i].status == st)
			return statuses[i].code;
	return -FI_EIO;
}

/* "synMappingNotFound (34)", plus the runtime's own description. */
static const char *status_text(hmr_synStatus st, char *buf, size_t len)
{
	char desc[64] = "";
	const char *name = "synStatus";
	size_t i;

	for (i = 0; i < COUNT(statuses); i++)
		if (statuses[i].status == st)
			name = statuses[i].name;
	if (hmr__synapseai.synStatusGetBriefDescription &&
	    hmr__synapseai.synStatusGetBriefDescription(
	            st, desc, sizeof(desc)) != HMR_synSuccess)
		desc[0] = '\0';
	desc[sizeof(desc) - 1] = '\0';
	snprintf(buf, len, "%s (%d)%s%s", name, st, *desc ? ": " : "", desc);
	return buf;
}

int hmr__synapseai_check(const char *call, hmr_synStatus st)
{
	char text[128];

	if (st == HMR_synSuccess)
		return 0;
	hmr_warn("%s: %s", call, status_text(st, text, sizeof(text)));
	return status_code(st);
}

int hmr__hccl_check(const char *call, int result)
{
	const char *name = result >= 0 && (size_t)result < COUNT(hccl_names)
	                           ? hccl_names[result]
	                           : "hcclResult_t";

	if (result == HMR_HCCL_SUCCESS)
		return 0;
	hmr_warn("%s: %s (%d)", call, name, result);
	switch (result) {
	case HMR_HCCL_NO_DEVICE_FOUND:
		return -FI_ENODEV;
	case HMR_HCCL_UNSUPPORTED:
		return -FI_EOPNOTSUPP;
	case HMR_HCCL_OUT_OF_MEMORY:
		return -FI_ENOMEM;
	case HMR_HCCL_INVALID_ARGUMENT:
		return -FI_EINVAL;
	default:
		return -FI_EIO;
	}
}

int hmr__hlthunk_check(const char *call, int result)
{
	if (result >= 0)
		return 0;
	hmr_warn("%s: %s (%d)", call, strerror(-result), result);
	switch (-result) {
	case FI_EPERM:
	case FI_EACCES:
	case FI_EBADF:
	case FI_EFAULT:
	case FI_EBUSY:
	case FI_ENODEV:
	case FI_EINVAL:
	case FI_ENOMEM:
	case FI_EMFILE:
	case FI_ENOSPC:
	case FI_EOPNOTSUPP:
		return result;
	case ENOTTY: /* the ioctl is unknown to this driver */
		return -FI_EOPNOTSUPP;
	default:
		return -FI_EIO;
	}
}

/* libhl-thunk is optional: without it, only the hccl route exports. */
static void load_hlthunk(void)
{
	static const char *const names[] = {"libhl-thunk.so"};
	char why[192];

	if (hmr__dl_open("HMR_HLTHUNK_LIBRARY", names, COUNT(names),
	                 &thunk_handle, why, sizeof(why)))
		goto absent;
	if (hmr__dl_resolve(thunk_handle, thunk_syms, COUNT(thunk_syms), why,
	                    sizeof(why)))
		goto err_close;
	hmr__synapseai.hlthunk = true;
	return;

err_close:
	dlclose(thunk_handle); /* nothing of it ran */
	thunk_handle = NULL;
absent:
	hmr_info("synapseai: no hl-thunk dma-buf export (%s): "
	         "hcclLookupDMABuff only",
	         why);
	hmr__synapseai.hlthunk_device_mapped_memory_export_dmabuf_fd = NULL;
}

static int start(char *why, size_t why_len)
{
	struct hmr_synapseai *s = &hmr__synapseai;
	char text[128];
	hmr_synStatus st = s->synInitialize();

	if (st != HMR_synSuccess) {
		snprintf(why, why_len, "synInitialize: %s",
		         status_text(st, text, sizeof(text)));
		return st == HMR_synNoDeviceFound ? -FI_ENOSYS : -FI_EIO;
	}
	st = s->synDeviceGetCount(&s->device_count);
	if (st != HMR_synSuccess) {
		snprintf(why, why_len, "synDeviceGetCount: %s",
		         status_text(st, text, sizeof(text)));
		return -FI_EIO;
	}
	if (s->device_count == 0) {
		snprintf(why, why_len,
		         "no Gaudi device (synDeviceGetCount says 0)");
		return -FI_ENOSYS;
	}
	/* Never acquired here (synapseai_device.c): only noticed. */
	if (!hmr__synapseai_held())
		hmr_info("synapseai: %u Gaudi on the host; this process holds "
		         "none yet: its memory classifies as Gaudi memory once "
		         "the application acquires one",
		         s->device_count);
	return 0;
}

int hmr__synapseai_load(char *why, size_t why_len)
{
	static const char *const names[] = {"libSynapse.so"};
	int ret;

	memset(&hmr__synapseai, 0, sizeof(hmr__synapseai));
	ret = hmr__dl_open("HMR_SYNAPSEAI_LIBRARY", names, COUNT(names),
	                   &syn_handle, why, why_len);
	if (ret)
		return ret;
	ret = hmr__dl_resolve(syn_handle, syn_syms, COUNT(syn_syms), why,
	                      why_len);
	if (ret) {
		/* Nothing of it ran yet: unloading is safe. */
		dlclose(syn_handle);
		syn_handle = NULL;
		return ret;
	}
	hmr__dl_path(syn_handle, hmr__synapseai.library,
	             sizeof(hmr__synapseai.library));
	load_hlthunk();
	/* From here on libSynapse stays loaded, started or not. */
	return start(why, why_len);
}

void hmr__synapseai_unload(void)
{
	/* At exit the application may have released the device or ended
	 * the runtime already: failures there are no news. */
	hmr__synapseai_device_fini();
}
