/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* bench_monitor.c: what a monitor adds to munmap of a 4 KiB page. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "monitor/monitor.h"

/*
 * Usage: bench_monitor none|memhooks|memhooks-sub|memhooks-event|
 *                      uffd|uffd-event [munmaps per run]
 * Prints the median nanoseconds of one munmap over 7 runs (min and max
 * of the run medians).  none: no monitor.  memhooks: hooks, no
 * subscriber.  memhooks-sub: one subscriber that checks the range
 * against a registration elsewhere (an unwatched range).
 * memhooks-event: the subscriber's registration is the page.  uffd:
 * userfaultfd with one other page watched; the unmapped page is not.
 * uffd-event: each page is watched before (not timed) its munmap, which
 * waits in the kernel until the monitor's thread reads the event.
 * A mode with "-hole" appended unmaps a range where nothing is mapped:
 * the kernel does almost nothing, so what the hooks add shows.
 */

static uintptr_t watched;
static atomic_long hits;

static void check(struct hmr_monitor_sub *sub, uintptr_t start, size_t len,
                  bool nested)
{
	(void)sub;
	(void)nested;
	if (watched >= start && watched - start < len)
		atomic_fetch_add_explicit(&hits, 1, memory_order_relaxed);
}

static struct hmr_monitor_sub sub = {.unmapped = check};

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";
	int n = argc > 2 ? atoi(argv[2]) : 20000, run, i;
	bool uffd = !strncmp(mode, "uffd", 4), event = strstr(mode, "event");
	bool hole = strstr(mode, "hole");
	double *t = calloc((size_t)n, sizeof(*t)), med[7];
	char why[256];
	void *p, *other;

	other = mmap(NULL, 4096 * 32, PROT_READ | PROT_WRITE,
	             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap((char *)other + 4096, 4096 * 31);
	if (strncmp(mode, "none", 4)) {
		setenv("FI_MR_CACHE_MONITOR", uffd ? "userfaultfd" : "memhooks",
		       1);
		if (hmr__monitor_start(why, sizeof(why))) {
			fprintf(stderr, "%s\n", why);
			return 1;
		}
		if (uffd || strstr(mode, "sub") || event)
			hmr__monitor_subscribe(&sub);
		watched = (uintptr_t)other;
		if (uffd && hmr__monitor_watch(watched, 4096))
			return 1;
	}
	for (run = 0; run < 7; run++) {
		for (i = 0; i < n; i++) {
			p = hole ? (char *)other + 4096 * 16
			         : mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (!hole)
				*(volatile char *)p = 1;
			if (event)
				watched = (uintptr_t)p;
			if (event && uffd &&
			    hmr__monitor_watch((uintptr_t)p, 4096))
				return 1;
			t[i] = now_ns();
			munmap(p, 4096);
			t[i] = now_ns() - t[i];
			if (event && uffd)
				hmr__monitor_unwatch((uintptr_t)p, 4096);
		}
		qsort(t, (size_t)n, sizeof(*t), cmp);
		med[run] = t[n / 2];
	}
	qsort(med, 7, sizeof(med[0]), cmp);
	printf("%-15s munmap 4 KiB: median %.0f ns (run medians %.0f-%.0f), "
	       "%ld events on the subscriber's range\n",
	       mode, med[3], med[0], med[6], atomic_load(&hits));
	free(t);
	return 0;
}
