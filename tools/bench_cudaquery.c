/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* bench_cudaquery.c: what a device pointer is: hmr vs the driver's own call. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <hmr/hmr.h>

#include "bench.h"
#include "bench_util.h"

/*
 * The goal (issue 22): hmr_hmem_query of device memory costs at most
 * 1.05x one cuPointerGetAttributes of the attributes a caller needs to
 * know what the memory is (type, ordinal, buffer id, managed, range,
 * mapped), the call every CUDA-aware library makes itself.  Both ask
 * about the same 64 bytes inside a 1 MiB cuMemAlloc buffer, interleaved
 * run by run.  The driver is HMR_CUDA_LIBRARY (the simulator here, where
 * the ratio says only what hmr adds around the call) or libcuda.so.1 on
 * a GPU machine, where the goal is judged.
 */
typedef int (*attrs_fn)(unsigned, int *, void **, unsigned long long);
typedef int (*alloc_fn)(unsigned long long *, size_t);
typedef int (*retain_fn)(void **, int);
typedef int (*set_fn)(void *);

enum { QUERIES = 200000, RUNS = 15 };

/* CUpointer_attribute values of the driver API (cuda.h). */
static int attrs[] = {2, 9, 7, 8, 11, 12, 13};
static volatile unsigned long long sink;

static double time_driver(attrs_fn get, unsigned long long p)
{
	unsigned memtype, ordinal, managed, mapped;
	unsigned long long id, start, size;
	void *data[] = {&memtype, &ordinal, &id,    &managed,
	                &start,   &size,    &mapped};
	uint64_t t0 = bench_now_ns();
	int i;

	for (i = 0; i < QUERIES; i++) {
		get(7, attrs, data, p);
		sink += id;
	}
	return (double)(bench_now_ns() - t0) / QUERIES;
}

static double time_hmr(unsigned long long p)
{
	struct hmr_hmem_info info;
	uint64_t t0 = bench_now_ns();
	int i;

	for (i = 0; i < QUERIES; i++) {
		hmr_hmem_query((void *)(uintptr_t)p, 64, &info);
		sink += info.buffer_id;
	}
	return (double)(bench_now_ns() - t0) / QUERIES;
}

int bench_cudaquery(int argc, char **argv)
{
	const char *lib = getenv("HMR_CUDA_LIBRARY");
	double h[RUNS], d[RUNS], mh, md;
	struct hmr_hmem_info info;
	unsigned long long dev;
	char why[192];
	attrs_fn get;
	alloc_fn alloc;
	retain_fn retain;
	set_fn set;
	void *cuda, *ctx;
	int i;

	(void)argc, (void)argv;
	if (hmr_hmem_status(FI_HMEM_CUDA, why, sizeof(why))) {
		fprintf(stderr, "cudaquery: CUDA absent (%s)\n", why);
		return 77;
	}
	cuda = dlopen(lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	get = cuda ? (attrs_fn)dlsym(cuda, "cuPointerGetAttributes") : NULL;
	alloc = cuda ? (alloc_fn)dlsym(cuda, "cuMemAlloc_v2") : NULL;
	retain = cuda ? (retain_fn)dlsym(cuda, "cuDevicePrimaryCtxRetain")
	              : NULL;
	set = cuda ? (set_fn)dlsym(cuda, "cuCtxSetCurrent") : NULL;
	if (!get || !alloc || !retain || !set || retain(&ctx, 0) || set(ctx) ||
	    alloc(&dev, 1 << 20)) {
		fprintf(stderr, "cudaquery: no device memory from %s\n",
		        lib ? lib : "libcuda.so.1");
		return 1;
	}
	if (hmr_hmem_query((void *)(uintptr_t)(dev + 4096), 64, &info) ||
	    info.iface != FI_HMEM_CUDA) {
		fprintf(stderr, "cudaquery: hmr does not see cuda memory\n");
		return 1;
	}
	for (i = 0; i < RUNS; i++) {
		h[i] = time_hmr(dev + 4096);
		d[i] = time_driver(get, dev + 4096);
	}
	mh = bench_median(h, RUNS);
	md = bench_median(d, RUNS);
	printf("cudaquery: a device pointer, median of %d runs x %d queries, "
	       "driver %s (goal on a real driver: hmr/driver <= 1.05)\n",
	       RUNS, QUERIES, lib ? lib : "libcuda.so.1");
	printf("  hmr_hmem_query %6.1f ns  cuPointerGetAttributes (7) %6.1f "
	       "ns  hmr/driver %5.2f\n",
	       mh, md, mh / md);
	return 0;
}
