/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rocr_dmabuf.c: can ROCr's dma-bufs work here? Runtime first, then kernel. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "base/config.h"
#include "base/dl.h"
#include "base/log.h"
#include "rocr/rocr_api.h"

HMR_CONFIG_VAR(HMR_ROCR_KERNEL_CONFIG, NULL,
               "the kernel configuration the ROCr backend reads to decide "
               "dma-buf support, instead of /proc/config.gz or "
               "/boot/config-$(uname -r)");

/*
 * Three answers, never a wrong "yes" (libfabric's check returns an error
 * code through a bool, which reads as true):
 *  - no: the runtime lacks the export calls (ROCm before 5.6, as Debian's
 *    5.2.3), or cannot answer HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED, or
 *    answers false (a KFD older than 1.12), or the running kernel's
 *    configuration lacks an option amdgpu needs to hand VRAM to a NIC;
 *  - yes: the runtime says yes and the kernel's configuration has both;
 *  - unknown: the runtime says yes and no configuration can be read.  The
 *    export is then tried at registration, and the NIC's answer decides
 *    (the verbs registrar demotes a device on its first refusal).
 *
 * The kernel options are those libfabric checks: without
 * CONFIG_DMABUF_MOVE_NOTIFY amdgpu pins an exported buffer by moving it
 * to system memory, and without CONFIG_PCI_P2PDMA a NIC cannot reach
 * VRAM over PCIe.  The configuration is /proc/config.gz (the running
 * kernel's own), else /boot/config-$(uname -r); HMR_ROCR_KERNEL_CONFIG
 * names another file to read instead (a container without /boot).
 */
static const char *const options[] = {"CONFIG_DMABUF_MOVE_NOTIFY",
                                      "CONFIG_PCI_P2PDMA"};
#define OPTIONS (sizeof(options) / sizeof(options[0]))

/* zlib, loaded for the one read: gzgets also reads a plain file. */
struct zlib {
	void *(*gzopen)(const char *, const char *);
	char *(*gzgets)(void *, char *, int);
	int (*gzclose)(void *);
};

static void *load_zlib(struct zlib *z)
{
	static const char *const names[] = {"libz.so.1"};
	const struct hmr_dl_sym syms[] = {
	        {"gzopen", (void **)&z->gzopen, false},
	        {"gzgets", (void **)&z->gzgets, false},
	        {"gzclose", (void **)&z->gzclose, false},
	};
	char why[128];
	void *h;

	if (hmr__dl_open(NULL, names, 1, &h, why, sizeof(why)))
		return NULL;
	if (hmr__dl_resolve(h, syms, 3, why, sizeof(why))) {
		dlclose(h);
		return NULL;
	}
	return h;
}

/* Reads `path` (gzip or plain) and marks the options set to y; false
 * when the file cannot be read. */
static bool read_config(const char *path, bool set[OPTIONS])
{
	size_t n = strlen(path), i, len;
	struct zlib z;
	char line[256];
	void *zh = load_zlib(&z), *gz = NULL;
	FILE *f = NULL;

	if (zh)
		gz = z.gzopen(path, "rb");
	else if (n < 3 || strcmp(path + n - 3, ".gz") != 0)
		f = fopen(path, "re");
	while (gz || f) {
		if (!(gz ? z.gzgets(gz, line, sizeof(line))
		         : fgets(line, sizeof(line), f)))
			break;
		for (i = 0; i < OPTIONS; i++) {
			len = strlen(options[i]);
			if (!strncmp(line, options[i], len) &&
			    !strncmp(line + len, "=y", 2) &&
			    (line[len + 2] == '\n' || !line[len + 2]))
				set[i] = true;
		}
	}
	n = gz || f;
	if (gz)
		z.gzclose(gz);
	if (f)
		fclose(f);
	if (zh)
		dlclose(zh);
	return n;
}

/* 1: every option is y; 0: one is not (named in why); -1: unreadable. */
static int kernel_config(char *why, size_t why_len)
{
	const char *env = hmr__config_get("HMR_ROCR_KERNEL_CONFIG", NULL);
	const char *path = NULL;
	bool set[OPTIONS] = {false};
	char boot[128] = "/boot/config-(uname failed)";
	struct utsname u;
	size_t i;

	if (uname(&u) == 0)
		snprintf(boot, sizeof(boot), "/boot/config-%s", u.release);
	if (env && *env)
		path = read_config(env, set) ? env : NULL;
	else if (read_config("/proc/config.gz", set))
		path = "/proc/config.gz";
	else if (read_config(boot, set))
		path = boot;
	if (!path) {
		snprintf(why, why_len,
		         "the runtime says yes; the kernel's configuration is "
		         "unknown (%s%s unreadable): the NIC decides",
		         env && *env ? env : "/proc/config.gz and ",
		         env && *env ? "" : boot);
		return -1;
	}
	for (i = 0; i < OPTIONS; i++) {
		if (!set[i]) {
			snprintf(why, why_len,
			         "the running kernel lacks %s=y (%s)",
			         options[i], path);
			return 0;
		}
	}
	snprintf(why, why_len, "the runtime and the kernel (%s) say yes", path);
	return 1;
}

void hmr__rocr_dmabuf_detect(void)
{
	struct hmr_rocr *r = &hmr__rocr;
	char text[256];
	bool yes = false;
	hmr_hsa_status_t s;
	int k;

	r->dmabuf = HMR_ROCR_DMABUF_NO;
	if (!r->hsa_amd_portable_export_dmabuf ||
	    !r->hsa_amd_portable_close_dmabuf) {
		snprintf(r->dmabuf_why, sizeof(r->dmabuf_why),
		         "this ROCr lacks hsa_amd_portable_export_dmabuf and "
		         "_close_dmabuf (ROCm 5.6 and later have them)");
		return;
	}
	/* Asked directly: a runtime that cannot answer is a "no", not an
	 * error worth a warning. */
	s = r->hsa_system_get_info(HMR_HSA_SYSTEM_INFO_DMABUF_SUPPORTED, &yes);
	if (s != HMR_HSA_STATUS_SUCCESS) {
		snprintf(r->dmabuf_why, sizeof(r->dmabuf_why),
		         "hsa_system_get_info(DMABUF_SUPPORTED): %s",
		         hmr__rocr_status_name(s, text, sizeof(text)));
		return;
	}
	if (!yes) {
		snprintf(r->dmabuf_why, sizeof(r->dmabuf_why),
		         "the runtime says no (HSA_AMD_SYSTEM_INFO_DMABUF_"
		         "SUPPORTED is false: the KFD is older than 1.12)");
		return;
	}
	k = kernel_config(r->dmabuf_why, sizeof(r->dmabuf_why));
	r->dmabuf = k > 0    ? HMR_ROCR_DMABUF_YES
	            : k == 0 ? HMR_ROCR_DMABUF_NO
	                     : HMR_ROCR_DMABUF_UNKNOWN;
}
