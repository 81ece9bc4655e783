/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* host.h: facts about host memory that registration checks need. */
#ifndef HMR_HMEM_HOST_H
#define HMR_HMEM_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

/* Whether the CPU has usable x86 restricted transactional memory (RTM;
 * not AMD's, nor most Intel's since 2021). */
bool hmr__host_cpu_rtm(void);
/* Whether hmr uses it: the CPU has it and the setting HMR_RTM is not
 * "off", which forces what a CPU without RTM runs, so that an Intel
 * machine measures and tests what an AMD one runs. */
bool hmr__host_rtm(void);

/* 0 when every page of every iov is mapped in this process; -FI_EFAULT
 * (with a log line naming the first unmapped page) otherwise. */
int hmr__host_range_mapped(const struct iovec *iov, size_t count);

/* True for 0 (the provider chooses), the base page size, and every huge
 * page size the kernel lists under /sys/kernel/mm/hugepages. */
bool hmr__host_page_size_valid(size_t page_size);

size_t hmr__host_page_size(void);

#endif /* HMR_HMEM_HOST_H */
