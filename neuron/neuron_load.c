/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* neuron_load.c: loading libnrt: dlopen, symbols, cores; the error wrapper. */
#include <dlfcn.h>
#include <stdio.h>

#include <hmr/fi_mr.h>

#include "base/config.h"
#include "base/dl.h"
#include "base/log.h"
#include "neuron/neuron_api.h"

HMR_CONFIG_VAR(HMR_NEURON_LIBRARY, NULL,
               "the Neuron runtime library to load instead of libnrt.so.1");

struct hmr_neuron hmr__neuron;

#define REQ false
#define OPT true
#define SYM_ROW(name, req, ret, params, hdr)                                   \
	{#name, (void **)&hmr__neuron.name, req},
static const struct hmr_dl_sym syms[] = {HMR_NEURON_CALLS(SYM_ROW)};
#undef SYM_ROW
#undef OPT
#undef REQ

/* The names of the statuses hmr tells apart, for a runtime whose
 * nrt_get_status_as_str is missing (it is public only since 2026). */
static const char *own_name(hmr_NRT_STATUS s)
{
	switch (s) {
	case HMR_NRT_SUCCESS:
		return "NRT_SUCCESS";
	case HMR_NRT_FAILURE:
		return "NRT_FAILURE";
	case HMR_NRT_INVALID:
		return "NRT_INVALID";
	case HMR_NRT_INVALID_HANDLE:
		return "NRT_INVALID_HANDLE";
	case HMR_NRT_RESOURCE:
		return "NRT_RESOURCE";
	case HMR_NRT_TIMEOUT:
		return "NRT_TIMEOUT";
	case HMR_NRT_HW_ERROR:
		return "NRT_HW_ERROR";
	case HMR_NRT_UNINITIALIZED:
		return "NRT_UNINITIALIZED";
	case HMR_NRT_CLOSED:
		return "NRT_CLOSED";
	default:
		return "NRT status";
	}
}

const char *hmr__neuron_status_name(hmr_NRT_STATUS s, char *buf, size_t len)
{
	const char *name = NULL;

	if (hmr__neuron.nrt_get_status_as_str)
		name = hmr__neuron.nrt_get_status_as_str(s);
	snprintf(buf, len, "%s (%d)", name && *name ? name : own_name(s),
	         (int)s);
	return buf;
}

static int to_errno(hmr_NRT_STATUS s)
{
	switch (s) {
	case HMR_NRT_SUCCESS:
		return 0;
	case HMR_NRT_INVALID:
	case HMR_NRT_INVALID_HANDLE:
		return -FI_EINVAL;
	case HMR_NRT_RESOURCE:
		return -FI_ENOMEM;
	case HMR_NRT_FAILURE:
		return -FI_EOPNOTSUPP;
	case HMR_NRT_UNINITIALIZED:
	case HMR_NRT_CLOSED:
		return -FI_ENODEV;
	case HMR_NRT_TIMEOUT:
		return -FI_ETIMEDOUT;
	default:
		return -FI_EIO;
	}
}

int hmr__neuron_check(const char *call, hmr_NRT_STATUS s)
{
	char name[64];

	if (s == HMR_NRT_SUCCESS)
		return 0;
	hmr_warn("%s: %s", call,
	         hmr__neuron_status_name(s, name, sizeof(name)));
	return to_errno(s);
}

/* Only the core count, which "can be called before nrt_init()": the
 * runtime itself is the application's to start (neuron_api.h). */
static int count_cores(char *why, size_t why_len)
{
	hmr_NRT_STATUS s;
	char name[64];

	s = hmr__neuron.nrt_get_total_nc_count(&hmr__neuron.cores);
	if (s != HMR_NRT_SUCCESS) {
		snprintf(why, why_len, "nrt_get_total_nc_count: %s",
		         hmr__neuron_status_name(s, name, sizeof(name)));
		return -FI_ENOSYS;
	}
	if (hmr__neuron.cores == 0) {
		snprintf(why, why_len,
		         "no NeuronCore (nrt_get_total_nc_count says 0)");
		return -FI_ENOSYS;
	}
	return 0;
}

int hmr__neuron_load(char *why, size_t why_len)
{
	static const char *const names[] = {"libnrt.so.1"};
	void *handle;
	int ret;

	ret = hmr__dl_open("HMR_NEURON_LIBRARY", names, 1, &handle, why,
	                   why_len);
	if (ret)
		return ret;
	ret = hmr__dl_resolve(handle, syms, sizeof(syms) / sizeof(syms[0]), why,
	                      why_len);
	if (!ret)
		ret = count_cores(why, why_len);
	if (ret) {
		/* hmr started nothing in it: the reference can go.  A
		 * loaded runtime is never closed (it may be the
		 * application's too, with exit handlers). */
		dlclose(handle);
		hmr__neuron = (struct hmr_neuron){0};
		return ret;
	}
	hmr__dl_path(handle, hmr__neuron.library, sizeof(hmr__neuron.library));
	hmr_info("neuron: %u NeuronCores; dma-buf export %s; address query "
	         "%s; copy to device %s",
	         hmr__neuron.cores,
	         hmr__neuron.nrt_get_dmabuf_fd_v2 ? "v2 (any address)"
	         : hmr__neuron.nrt_get_dmabuf_fd  ? "v1 (allocation starts)"
	                                          : "none",
	         hmr__neuron.nrt_get_attached_efa_bdf ? "yes" : "no",
	         hmr__neuron.nrt_memcpy_to_device ? "runtime" : "memcpy");
	return 0;
}
