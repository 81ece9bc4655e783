/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* kdreg2.c: the kdreg2 monitor: says why it cannot run. */
#include <stdio.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "monitor/monitor_impl.h"

/*
 * kdreg2 is an out-of-tree kernel module (HPE's) that reports unmaps of
 * registered ranges through /dev/kdreg2.  hmr has no client for it yet:
 * where the device exists the start still fails, naming what is missing,
 * and monitor.c falls back to memhooks.
 */
int hmr__monitor_kdreg2_start(char *why, size_t why_len)
{
	if (access("/dev/kdreg2", F_OK)) {
		snprintf(why, why_len,
		         "kdreg2: not available, because /dev/kdreg2 is absent "
		         "(the out-of-tree kdreg2 module is not loaded)");
		return -FI_ENOSYS;
	}
	snprintf(why, why_len,
	         "kdreg2: /dev/kdreg2 exists, but this build of hmr has no "
	         "kdreg2 client");
	return -FI_ENOSYS;
}
