/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* uffd.h: what uffd_watch.c needs of the userfaultfd monitor. */
#ifndef HMR_MONITOR_UFFD_H
#define HMR_MONITOR_UFFD_H

#include <stdint.h>

/* The userfaultfd (-1 before it starts) and the UFFDIO_REGISTER mode
 * every range is registered with. */
int hmr__uffd_fd(void);
uint64_t hmr__uffd_mode(void);

#endif /* HMR_MONITOR_UFFD_H */
