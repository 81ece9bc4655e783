/* log.h: hmr's log lines: level from HMR_LOG_LEVEL, errno preserved. */
#ifndef HMR_CORE_LOG_H
#define HMR_CORE_LOG_H

enum hmr_log_level {
	HMR_LOG_NONE = 0,
	HMR_LOG_WARN = 1,
	HMR_LOG_INFO = 2,
	HMR_LOG_DEBUG = 3,
};

/* Print one line to stderr, "hmr <level> <func>:<line>: <message>", when
 * HMR_LOG_LEVEL (none, warn, info, debug; default warn) allows it. */
void hmr__log(enum hmr_log_level level, const char *func, int line,
              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int hmr__log_enabled(enum hmr_log_level level);

#define hmr_warn(...) hmr__log(HMR_LOG_WARN, __func__, __LINE__, __VA_ARGS__)
#define hmr_info(...) hmr__log(HMR_LOG_INFO, __func__, __LINE__, __VA_ARGS__)
#define hmr_dbg(...)  hmr__log(HMR_LOG_DEBUG, __func__, __LINE__, __VA_ARGS__)

#endif /* HMR_CORE_LOG_H */
