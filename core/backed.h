/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* backed.h: FI_MR_ALLOCATED's proof of backing, remembered while the memory
 * monitor vouches that nothing was unmapped since. */
#ifndef HMR_CORE_BACKED_H
#define HMR_CORE_BACKED_H

#include <stddef.h>
#include <sys/uio.h>

/*
 * Every iov mapped: 0, or what hmr__host_range_mapped answers (-FI_EFAULT,
 * -FI_EINVAL).  Without a CPU that proves it by a transaction (no RTM:
 * AMD, most Intel since 2021), that proof is an msync, one system call
 * per registration, five times the cost of the rest of a registration.
 * So a range this thread proved stays proven until the memory monitor
 * reports any unmap, remap or MAP_FIXED (any at all, not only over the
 * range: one counter, no lookup), as the memtype cache keeps host answers,
 * and only where the monitor reports before the kernel acts (memhooks,
 * import).  A fork forgets every proof (MADV_DONTFORK pages are gone in
 * the child without an event); so does a damaged hook.  fi_mr_refresh
 * does not use it: a refresh says the pages changed.
 */
int hmr__backed(const struct iovec *iov, size_t count);

#endif /* HMR_CORE_BACKED_H */
