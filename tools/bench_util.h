/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* bench_util.h: timing helpers for hmr_bench: medians, not single times. */
#ifndef HMR_BENCH_UTIL_H
#define HMR_BENCH_UTIL_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static inline double bench_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * Pin the calling thread to the i-th CPU the process may run on; that
 * CPU, or -1 (fewer CPUs, or the call refused: the thread stays where the
 * scheduler puts it).  Why: per-thread wall time of two threads on a
 * 2-CPU machine swung from 1.0x to 1.5x one thread from run to run while
 * their CPU time stayed at 1.05x: the scheduler now and then put both
 * threads on one CPU for milliseconds of a 13 ms run.  Pinned to two
 * CPUs, wall time equals CPU time; so the two-thread rows measure hmr,
 * as UCX's and OSU's benchmarks do by pinning.
 */
static inline int bench_pin_thread(int i)
{
	cpu_set_t all, one;
	int cpu, seen = 0;

	if (sched_getaffinity(0, sizeof(all), &all))
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &all) || seen++ != i)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		return pthread_setaffinity_np(pthread_self(), sizeof(one), &one)
		               ? -1
		               : cpu;
	}
	return -1;
}

#endif /* HMR_BENCH_UTIL_H */
