/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dl_monitor.c: the monitor in a library a test loads and unloads. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "monitor/monitor.h"

#define DL_EXPORT __attribute__((visibility("default")))

static atomic_int events;

static void count(struct hmr_monitor_sub *sub, uintptr_t start, size_t len,
                  bool nested)
{
	(void)sub;
	(void)start;
	(void)len;
	(void)nested;
	atomic_fetch_add(&events, 1);
}

static struct hmr_monitor_sub sub = {.unmapped = count};

DL_EXPORT int dl_monitor_start(void)
{
	char why[256];
	int rc;

	setenv("FI_MR_CACHE_MONITOR", "memhooks", 1);
	rc = hmr__monitor_start(why, sizeof(why));
	if (!rc)
		hmr__monitor_subscribe(&sub);
	return rc;
}

DL_EXPORT int dl_monitor_events(void)
{
	return atomic_load(&events);
}
