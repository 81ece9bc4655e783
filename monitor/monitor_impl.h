/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* monitor_impl.h: what each monitor kind provides to monitor.c. */
#ifndef HMR_MONITOR_MONITOR_IMPL_H
#define HMR_MONITOR_MONITOR_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Each returns 0 when the kind runs, else a negative code and why. */
int hmr__monitor_hooks_start(char *why, size_t why_len);
bool hmr__monitor_hooks_intact(void);
int hmr__monitor_uffd_start(char *why, size_t why_len);
int hmr__monitor_uffd_watch(uintptr_t start, size_t len);
void hmr__monitor_uffd_unwatch(uintptr_t start, size_t len);
int hmr__monitor_kdreg2_start(char *why, size_t why_len);

#endif /* HMR_MONITOR_MONITOR_IMPL_H */
