/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* host.c: mapped-range and page-size checks for host memory. */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hmr/fi_mr.h>

#include "base/config.h"
#include "base/range.h"
#include "base/host.h"
#include "base/log.h"

HMR_CONFIG_VAR(HMR_RTM, "auto",
               "auto: prove host memory mapped with x86 transactional "
               "memory (RTM) where the CPU has it; off: never (what a CPU "
               "without RTM runs: AMD, most Intel since 2021)");

bool hmr__host_rtm(void)
{
	const char *v = hmr__config_get("HMR_RTM", NULL);

	if (v && !strcmp(v, "off"))
		return false;
	if (v && strcmp(v, "auto"))
		hmr_warn("HMR_RTM=%s: neither auto nor off; auto is used", v);
	return hmr__host_cpu_rtm();
}

size_t hmr__host_page_size(void)
{
	/* Every thread that fills it writes the same value. */
	static atomic_size_t page;
	size_t p = atomic_load_explicit(&page, memory_order_relaxed);

	if (!p) {
		p = (size_t)sysconf(_SC_PAGESIZE);
		atomic_store_explicit(&page, p, memory_order_relaxed);
	}
	return p;
}

/*
 * A proof of backing without a system call, where the CPU has restricted
 * transactional memory (x86 RTM): inside a transaction, read one byte of
 * each page.  A page that is unmapped, protected or not present makes the
 * read fault, and a fault inside a transaction aborts it without a signal;
 * so a transaction that commits proves every page mapped at that moment.
 * An abort proves nothing (an interrupt, a page never touched yet): msync
 * below decides.  The software domain reads registered memory anyway
 * (hmr_mr_access hands out pointers into it); this reads one byte a page.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>

/* Longer ranges go to msync, whose cost does not grow with the length. */
#define RTM_MAX_PAGES 64
/* Aborts on ranges msync then found mapped, in a row, after which a
 * thread tries only one range in RTM_RETRY (a CPU whose transactions
 * always abort; memory registered before it was ever touched). */
#define RTM_MAX_WASTED 1000
#define RTM_RETRY      256

static atomic_int rtm_state; /* 0 not yet asked, 1 use, -1 do not. */
static atomic_uint rtm_wasted;

/* Whether the CPU has usable RTM (CPUID.7.0: EBX bit 11 RTM; EDX bit 11
 * RTM_ALWAYS_ABORT), and HMR_RTM leaves it to be used. */
static bool rtm_usable(void)
{
	int s = atomic_load_explicit(&rtm_state, memory_order_relaxed);

	if (s)
		return s > 0;
	s = hmr__host_rtm() ? 1 : -1;
	atomic_store_explicit(&rtm_state, s, memory_order_relaxed);
	return s > 0;
}

bool hmr__host_cpu_rtm(void)
{
	unsigned a, b, c, d;

	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 11)) &&
	       !(d & (1u << 11));
}

/* No sanitizer may look: the bytes are the caller's, and an unmapped one
 * is the point. */
__attribute__((target("rtm"), no_sanitize("address", "thread"),
               noinline)) static bool
rtm_pages_readable(uintptr_t first, uintptr_t last, size_t page)
{
	uintptr_t p;

	if (_xbegin() != _XBEGIN_STARTED)
		return false; /* Aborted: no proof either way. */
	for (p = first;; p += page) {
		(void)*(volatile const char *)p;
		if (p == last)
			break;
	}
	_xend();
	return true;
}

/* 1: mapped (proven); 0: aborted; -1: not tried.  msync decides all but
 * the first. */
static int rtm_mapped(uintptr_t first, uintptr_t last, size_t page)
{
	static __thread unsigned skip
	        __attribute__((tls_model("initial-exec")));

	if ((last - first) / page >= RTM_MAX_PAGES || !rtm_usable())
		return -1;
	if (atomic_load_explicit(&rtm_wasted, memory_order_relaxed) >=
	            RTM_MAX_WASTED &&
	    ++skip % RTM_RETRY)
		return -1;
	if (rtm_pages_readable(first, last, page)) {
		if (atomic_load_explicit(&rtm_wasted, memory_order_relaxed))
			atomic_store_explicit(&rtm_wasted, 0,
			                      memory_order_relaxed);
		return 1;
	}
	return 0;
}

/* An abort msync overruled. */
static void rtm_wasted_one(void)
{
	if (atomic_fetch_add_explicit(&rtm_wasted, 1, memory_order_relaxed) +
	            1 ==
	    RTM_MAX_WASTED)
		hmr_info("RTM proofs of backing keep aborting: msync mostly");
}
#else
bool hmr__host_cpu_rtm(void)
{
	return false;
}

static int rtm_mapped(uintptr_t first, uintptr_t last, size_t page)
{
	(void)first, (void)last, (void)page;
	return -1;
}

static void rtm_wasted_one(void)
{
}
#endif

/*
 * msync(MS_ASYNC) walks the mappings, not the pages: it fails with ENOMEM
 * when any page of the range is unmapped and otherwise does nothing (no
 * write-back since Linux 2.6.19).  So the proof of backing costs one
 * system call whatever the length: a range of terabytes (a fuzzer found
 * one inside ASan's shadow) is answered as fast as one page, where a
 * mincore walk took seconds.  Any failure (ENOMEM, or EINVAL above the
 * user address space) means "not mapped".
 */
static int range_mapped(uintptr_t start, size_t len)
{
	size_t page = hmr__host_page_size();
	uintptr_t addr = start & ~(uintptr_t)(page - 1);
	uint64_t end;
	int rtm;

	if (!hmr__range_end(start, len, &end)) {
		hmr_info("range [%#lx, +%zu) wraps", (unsigned long)start, len);
		return -FI_EINVAL;
	}
	/* An empty range has no last page: msync alone. */
	rtm = len ? rtm_mapped(addr, (uintptr_t)(end - 1) & ~(page - 1), page)
	          : -1;
	if (rtm == 1)
		return 0;
	if (msync((void *)addr, (size_t)(end - addr), MS_ASYNC) != 0) {
		hmr_info("range [%#lx, +%zu) has an unmapped page (%s)",
		         (unsigned long)start, len, strerror(errno));
		return -FI_EFAULT;
	}
	if (rtm == 0)
		rtm_wasted_one();
	return 0;
}

int hmr__host_range_mapped(const struct iovec *iov, size_t count)
{
	size_t i;
	int ret;

	for (i = 0; i < count; i++) {
		ret = range_mapped((uintptr_t)iov[i].iov_base, iov[i].iov_len);
		if (ret)
			return ret;
	}
	return 0;
}

bool hmr__host_page_size_valid(size_t page_size)
{
	char name[64];
	struct dirent *e;
	unsigned long kb;
	bool found = false;
	DIR *dir;

	if (page_size == 0 || page_size == hmr__host_page_size())
		return true;
	dir = opendir("/sys/kernel/mm/hugepages");
	if (!dir)
		return false;
	while (!found && (e = readdir(dir))) {
		if (sscanf(e->d_name, "hugepages-%lukB%63s", &kb, name) >= 1 &&
		    kb * 1024 == page_size)
			found = true;
	}
	closedir(dir);
	return found;
}
