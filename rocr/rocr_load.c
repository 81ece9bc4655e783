/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rocr_load.c: loading libhsa-runtime64: dlopen, hsa_init, the agents. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hmr/fi_mr.h>

#include "base/config.h"
#include "base/dl.h"
#include "base/log.h"
#include "rocr/rocr_api.h"

HMR_CONFIG_VAR(HMR_ROCR_LIBRARY, NULL,
               "the ROCr runtime to load instead of libhsa-runtime64.so.1");

struct hmr_rocr hmr__rocr;
static void *handle;
static bool started; /* hsa_init succeeded: hsa_shut_down owed. */

#define REQ false
#define OPT true
#define SYM_ROW(name, header, req, params)                                     \
	{#name, (void **)&hmr__rocr.name, req},
static const struct hmr_dl_sym syms[] = {HMR_ROCR_CALLS(SYM_ROW)};
#undef SYM_ROW
#undef REQ
#undef OPT

const char *hmr__rocr_status_text(hmr_hsa_status_t s, char *buf, size_t len)
{
	const char *text = NULL;

	/* ROCr answers this one before hsa_init too (hsa.h notwithstanding):
	 * a failed hsa_init is reported with it. */
	if (!hmr__rocr.hsa_status_string ||
	    hmr__rocr.hsa_status_string(s, &text) != HMR_HSA_STATUS_SUCCESS)
		text = NULL;
	snprintf(buf, len, "%s (%#x)", text ? text : "HSA status", (unsigned)s);
	return buf;
}

const char *hmr__rocr_status_name(hmr_hsa_status_t s, char *buf, size_t len)
{
	const char *text = NULL;
	size_t n;

	if (!hmr__rocr.hsa_status_string ||
	    hmr__rocr.hsa_status_string(s, &text) != HMR_HSA_STATUS_SUCCESS ||
	    !text)
		text = "HSA status";
	/* ROCr's texts start with the status's name, then ": ". */
	n = strcspn(text, ":");
	snprintf(buf, len, "%.*s (%#x)", (int)n, text, (unsigned)s);
	return buf;
}

static int to_errno(hmr_hsa_status_t s)
{
	switch (s) {
	case HMR_HSA_STATUS_SUCCESS:
		return 0;
	case HMR_HSA_STATUS_ERROR_INVALID_ARGUMENT:
	case HMR_HSA_STATUS_ERROR_INVALID_ALLOCATION:
	case HMR_HSA_STATUS_ERROR_INVALID_AGENT:
	case HMR_HSA_STATUS_ERROR_INVALID_MEMORY_POOL:
	case HMR_HSA_STATUS_ERROR_INVALID_INDEX:
	case HMR_HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS:
		return -FI_EINVAL;
	case HMR_HSA_STATUS_ERROR_OUT_OF_RESOURCES:
		return -FI_ENOMEM;
	case HMR_HSA_STATUS_ERROR_RESOURCE_FREE:
		return -FI_EBADF;
	default:
		return -FI_EIO;
	}
}

int hmr__rocr_check(const char *call, hmr_hsa_status_t s)
{
	char text[256];

	if (s == HMR_HSA_STATUS_SUCCESS)
		return 0;
	hmr_warn("%s: %s", call, hmr__rocr_status_text(s, text, sizeof(text)));
	return to_errno(s);
}

struct walk {
	hmr_hsa_status_t failed; /* hsa_agent_get_info's status, if any */
	int gpus_seen;
};

/* Agents in hsa_iterate_agents order: GPU i is the i-th GPU listed. */
static hmr_hsa_status_t add_agent(hmr_hsa_agent_t agent, void *data)
{
	struct walk *w = data;
	struct hmr_rocr *r = &hmr__rocr;
	uint32_t type = 0; /* hsa_device_type_t: an enum, 4 bytes */
	hmr_hsa_status_t s;

	s = r->hsa_agent_get_info(agent, HMR_HSA_AGENT_INFO_DEVICE, &type);
	if (s != HMR_HSA_STATUS_SUCCESS) {
		w->failed = s;
		return s; /* Stops the walk: a GPU skipped would renumber. */
	}
	if (type == HMR_HSA_DEVICE_TYPE_GPU && w->gpus_seen++ < HMR_MAX_DEVICES)
		r->gpu[r->gpu_count++] = agent;
	else if (type == HMR_HSA_DEVICE_TYPE_CPU &&
	         r->cpu_count < HMR_MAX_DEVICES)
		r->cpu[r->cpu_count++] = agent;
	return HMR_HSA_STATUS_SUCCESS;
}

static int find_agents(char *why, size_t why_len)
{
	struct walk w = {HMR_HSA_STATUS_SUCCESS, 0};
	char text[256];
	hmr_hsa_status_t s;

	s = hmr__rocr.hsa_iterate_agents(add_agent, &w);
	if (s != HMR_HSA_STATUS_SUCCESS) {
		snprintf(why, why_len, "%s: %s",
		         w.failed ? "hsa_agent_get_info" : "hsa_iterate_agents",
		         hmr__rocr_status_name(s, text, sizeof(text)));
		return to_errno(s) == -FI_ENOMEM ? -FI_ENOMEM : -FI_EIO;
	}
	if (w.gpus_seen > HMR_MAX_DEVICES)
		hmr_warn("%d ROCr GPU agents: hmr uses the first %d",
		         w.gpus_seen, HMR_MAX_DEVICES);
	if (!hmr__rocr.gpu_count) {
		snprintf(why, why_len, "ROCr lists no GPU agent");
		return -FI_ENOSYS;
	}
	return 0;
}

/* hsa_init; OUT_OF_RESOURCES is ROCr's answer on a machine without a
 * usable GPU (no /dev/kfd, or no GPU the KFD supports): absent. */
static int start_runtime(char *why, size_t why_len)
{
	char text[256];
	hmr_hsa_status_t s = hmr__rocr.hsa_init();

	if (s == HMR_HSA_STATUS_SUCCESS) {
		started = true;
		return 0;
	}
	hmr_info("rocr: hsa_init: %s",
	         hmr__rocr_status_text(s, text, sizeof(text)));
	hmr__rocr_status_name(s, text, sizeof(text));
	if (s == HMR_HSA_STATUS_ERROR_OUT_OF_RESOURCES) {
		snprintf(why, why_len, "hsa_init: %s: no usable GPU%s", text,
		         access("/dev/kfd", F_OK) ? " (/dev/kfd is absent)"
		                                  : "");
		return -FI_ENOSYS;
	}
	snprintf(why, why_len, "hsa_init: %s", text);
	return -FI_EIO;
}

static void log_runtime(void)
{
	const char *build = NULL;

	if (hmr__rocr.hsa_system_get_info(HMR_HSA_SYSTEM_INFO_BUILD_VERSION,
	                                  &build) != HMR_HSA_STATUS_SUCCESS)
		build = NULL;
	hmr_info("rocr: runtime %s, %d GPU agent(s); dma-buf %s: %s",
	         build ? build : "(build unknown)", hmr__rocr.gpu_count,
	         hmr__rocr.dmabuf == HMR_ROCR_DMABUF_YES       ? "yes"
	         : hmr__rocr.dmabuf == HMR_ROCR_DMABUF_UNKNOWN ? "unknown"
	                                                       : "no",
	         hmr__rocr.dmabuf_why);
}

int hmr__rocr_load(char *why, size_t why_len)
{
	static const char *const names[] = {"libhsa-runtime64.so.1",
	                                    "libhsa-runtime64.so"};
	int ret;

	ret = hmr__dl_open("HMR_ROCR_LIBRARY", names, 2, &handle, why, why_len);
	if (ret)
		return ret;
	ret = hmr__dl_resolve(handle, syms, sizeof(syms) / sizeof(syms[0]), why,
	                      why_len);
	if (ret)
		goto err_close;
	ret = start_runtime(why, why_len);
	if (ret)
		goto err_keep;
	ret = find_agents(why, why_len);
	if (ret)
		goto err_shut_down;
	hmr__rocr_dmabuf_detect();
	hmr__dl_path(handle, hmr__rocr.library, sizeof(hmr__rocr.library));
	log_runtime();
	return 0;

err_shut_down:
	hmr__rocr_unload();
	return ret;
err_keep:
	/* hsa_init ran: ROCr may have threads and atexit handlers of its
	 * own, so a runtime it touched is never dlclosed. */
	handle = NULL;
	return ret;
err_close:
	dlclose(handle);
	handle = NULL;
	return ret;
}

void hmr__rocr_unload(void)
{
	hmr__rocr_untrack_all();
	if (started)
		HMR_HSA(hsa_shut_down);
	started = false;
	hmr__rocr.gpu_count = hmr__rocr.cpu_count = 0;
	handle = NULL; /* Never dlclosed once started (see above). */
}
