/* verbs_peermem.c: which peer-memory kernel modules are loaded. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "verbs.h"

/*
 * Peer-memory modules let ibv_reg_mr pin GPU memory.  Their presence is
 * read from <sysfs>/module/<name>; HMR_SYSFS_ROOT replaces /sys (tests
 * point it at a directory of their own).
 */
bool hmr__verbs_peermem(enum fi_hmem_iface iface, char *which, size_t len)
{
	static const char *const cuda[] = {"nvidia_peermem", "nv_peer_mem"};
	static const char *const rocr[] = {"amdgpu"};
	const char *root = getenv("HMR_SYSFS_ROOT");
	const char *const *names;
	char path[512];
	struct stat st;
	size_t n, i;

	switch (iface) {
	case FI_HMEM_CUDA:
		names = cuda, n = 2;
		break;
	case FI_HMEM_ROCR:
		names = rocr, n = 1;
		break;
	default:
		return false;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/module/%s",
		         root && *root ? root : "/sys", names[i]);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(which, len, "%s", names[i]);
			return true;
		}
	}
	return false;
}
