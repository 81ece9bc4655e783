/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_peermem.c: is a peer-memory kernel module loaded for an iface? */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "base/config.h"
#include "hmem/hmem.h"
#include "verbs/verbs.h"

/*
 * Peer-memory modules let ibv_reg_mr pin device memory; each backend
 * names its own.  Their presence is read from <sysfs>/module/<name>;
 * HMR_SYSFS_ROOT replaces /sys (tests point it at a directory of theirs).
 */
HMR_CONFIG_VAR(HMR_SYSFS_ROOT, "/sys",
               "where sysfs is read (tests point it at a tree of theirs)");

bool hmr__verbs_peermem(enum fi_hmem_iface iface, char *which, size_t len)
{
	const struct hmr_backend_ops *b = hmr__hmem_backend(iface);
	const char *root = hmr__config_get("HMR_SYSFS_ROOT", NULL);
	const char *const *name;
	char path[512];
	struct stat st;

	if (!b || !b->peermem_modules)
		return false;
	for (name = b->peermem_modules; *name; name++) {
		snprintf(path, sizeof(path), "%s/module/%s",
		         root && *root ? root : "/sys", *name);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(which, len, "%s", *name);
			return true;
		}
	}
	return false;
}
