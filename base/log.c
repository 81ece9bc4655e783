/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* log.c: the log sink and its level, read once from HMR_LOG_LEVEL. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/log.h"

_Atomic int hmr__log_threshold = INT_MAX; /* Unread: see log.h. */
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void log_init(void)
{
	static const char *const names[] = {"none", "warn", "info", "debug"};
	const char *env = hmr__config_get("HMR_LOG_LEVEL", NULL);
	int level = HMR_LOG_WARN;
	unsigned i;

	for (i = 0; env && i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(env, names[i]) == 0)
			level = (int)i;
	}
	atomic_store_explicit(&hmr__log_threshold, level, memory_order_relaxed);
}

int hmr__log_enabled(enum hmr_log_level level)
{
	pthread_once(&log_once, log_init);
	return (int)level <=
	       atomic_load_explicit(&hmr__log_threshold, memory_order_relaxed);
}

void hmr__log(enum hmr_log_level level, const char *func, int line,
              const char *fmt, ...)
{
	static const char *const tags[] = {"", "warn", "info", "debug"};
	int saved_errno = errno;
	char msg[512];
	va_list ap;

	if (!hmr__log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "hmr %s %s:%d: %s\n", tags[level], func, line, msg);
	errno = saved_errno;
}
