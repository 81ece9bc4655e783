/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* recorder.h: a test subscriber that records the monitor's events. */
#ifndef HMR_TESTS_MONITOR_RECORDER_H
#define HMR_TESTS_MONITOR_RECORDER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "harness.h"
#include "monitor/monitor.h"

enum { REC_MAX = 1 << 16 };

/* len is stored last (release): an entry with len 0 is not there yet. */
struct rec_event {
	atomic_uintptr_t start;
	atomic_size_t len;
	atomic_bool nested;
};

/* Events go into a fixed array: a subscriber must not allocate. */
static struct {
	struct hmr_monitor_sub sub;
	atomic_int n;
	struct rec_event ev[REC_MAX];
	/* A byte to read inside the callback when an event covers it. */
	volatile unsigned char *probe;
	atomic_int probe_value;
} rec;

static void rec_unmapped(struct hmr_monitor_sub *sub, uintptr_t start,
                         size_t len, bool nested)
{
	int i = atomic_fetch_add(&rec.n, 1);
	uintptr_t p = (uintptr_t)rec.probe;

	(void)sub;
	if (i < REC_MAX) {
		atomic_store(&rec.ev[i].start, start);
		atomic_store(&rec.ev[i].nested, nested);
		atomic_store(&rec.ev[i].len, len);
	}
	if (p && p >= start && p - start < len)
		atomic_store(&rec.probe_value, *rec.probe);
}

static inline void rec_subscribe(void)
{
	rec.sub.unmapped = rec_unmapped;
	hmr__monitor_subscribe(&rec.sub);
}

/* Some event covered all of [start, start + len). */
static inline bool rec_saw(const void *start, size_t len)
{
	uintptr_t s = (uintptr_t)start;
	int i, n = atomic_load(&rec.n);

	for (i = 0; i < n && i < REC_MAX; i++)
		if (rec.ev[i].start <= s &&
		    s - rec.ev[i].start <= rec.ev[i].len &&
		    rec.ev[i].len - (s - rec.ev[i].start) >= len)
			return true;
	return false;
}

/* Some event touched [start, start + len). */
static inline bool rec_touched(const void *start, size_t len)
{
	uintptr_t s = (uintptr_t)start;
	int i, n = atomic_load(&rec.n);

	for (i = 0; i < n && i < REC_MAX; i++)
		if (rec.ev[i].start < s + len &&
		    s < rec.ev[i].start + rec.ev[i].len)
			return true;
	return false;
}

/* userfaultfd delivers after the fact: wait up to 5 s for the event. */
static inline bool rec_wait(const void *start, size_t len)
{
	struct timespec ms = {0, 1000000};
	int i;

	for (i = 0; i < 5000; i++) {
		if (rec_saw(start, len))
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

/* Start the process's monitor with FI_MR_CACHE_MONITOR=kind. */
static inline int rec_start(const char *kind, char *why, size_t why_len)
{
	int rc;

	setenv("FI_MR_CACHE_MONITOR", kind, 1);
	rc = hmr__monitor_start(why, why_len);
	printf("start %s: %d, %s, why: %s\n", kind, rc,
	       hmr__monitor_kind_name(hmr__monitor_kind()), why);
	return rc;
}

static inline size_t rec_page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

#endif /* HMR_TESTS_MONITOR_RECORDER_H */
