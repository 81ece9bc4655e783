/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* log.h: hmr's log lines: level from HMR_LOG_LEVEL, errno preserved. */
#ifndef HMR_BASE_LOG_H
#define HMR_BASE_LOG_H

#include <stdatomic.h>

enum hmr_log_level {
	HMR_LOG_NONE = 0,
	HMR_LOG_WARN = 1,
	HMR_LOG_INFO = 2,
	HMR_LOG_DEBUG = 3,
};

/*
 * The most verbose level that prints.  Until HMR_LOG_LEVEL has been read
 * it is above every level, so the first log call of any level takes the
 * slow path (hmr__log_enabled) that reads it.  After that a disabled
 * hmr_dbg on a hot path costs one load and one branch, not a call and a
 * pthread_once.  Written once (relaxed: every writer stores the same
 * value), read by every log macro.
 */
extern _Atomic int hmr__log_threshold;

/* Reads HMR_LOG_LEVEL once (thread-safe); true when `level` prints. */
int hmr__log_enabled(enum hmr_log_level level);

/* Print one line to stderr, "hmr <level> <func>:<line>: <message>". */
void hmr__log(enum hmr_log_level level, const char *func, int line,
              const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define hmr__log_at(level, ...)                                                \
	do {                                                                   \
		if ((int)(level) <=                                            \
		            atomic_load_explicit(&hmr__log_threshold,          \
		                                 memory_order_relaxed) &&      \
		    hmr__log_enabled(level))                                   \
			hmr__log(level, __func__, __LINE__, __VA_ARGS__);      \
	} while (0)

#define hmr_warn(...) hmr__log_at(HMR_LOG_WARN, __VA_ARGS__)
#define hmr_info(...) hmr__log_at(HMR_LOG_INFO, __VA_ARGS__)
#define hmr_dbg(...)  hmr__log_at(HMR_LOG_DEBUG, __VA_ARGS__)

#endif /* HMR_BASE_LOG_H */
