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
struct hmr__monitor_func;
size_t hmr__monitor_hooks_describe(struct hmr__monitor_func *out, size_t max);
int hmr__monitor_uffd_start(char *why, size_t why_len);
int hmr__monitor_uffd_watch(uintptr_t start, size_t len);
void hmr__monitor_uffd_unwatch(uintptr_t start, size_t len);
int hmr__monitor_kdreg2_start(char *why, size_t why_len);

/* Keep this library mapped for the life of the process (hooks and the
 * userfaultfd threads run its code on other threads' behalf). */
void hmr__monitor_pin_library(void);

/* For tests: how userfaultfd registers ranges, before it starts.
 * HMR_UFFD_AUTO: write-protect mode where the kernel supports it on
 * anonymous memory, else missing mode; the others force one. */
enum hmr_uffd_mode { HMR_UFFD_AUTO, HMR_UFFD_WP, HMR_UFFD_MISSING };
void hmr__monitor_uffd_test_mode(enum hmr_uffd_mode mode);

#endif /* HMR_MONITOR_MONITOR_IMPL_H */
