/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* unavailable.c: the monitor kinds not written yet say so. */
#include <stdio.h>

#include <hmr/hmr.h>

#include "monitor/monitor_impl.h"

int hmr__monitor_hooks_start(char *why, size_t why_len)
{
	snprintf(why, why_len, "memhooks: not built yet");
	return -FI_ENOSYS;
}

bool hmr__monitor_hooks_intact(void)
{
	return false;
}

int hmr__monitor_uffd_start(char *why, size_t why_len)
{
	snprintf(why, why_len, "userfaultfd: not built yet");
	return -FI_ENOSYS;
}

int hmr__monitor_uffd_watch(uintptr_t start, size_t len)
{
	(void)start;
	(void)len;
	return -FI_ENOSYS;
}

void hmr__monitor_uffd_unwatch(uintptr_t start, size_t len)
{
	(void)start;
	(void)len;
}

int hmr__monitor_kdreg2_start(char *why, size_t why_len)
{
	snprintf(why, why_len, "kdreg2: not built yet");
	return -FI_ENOSYS;
}
