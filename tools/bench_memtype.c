/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* bench_memtype.c: classifying a host pointer: hmr vs UCX's memtype cache. */
#include <pthread.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <hmr/hmr.h>
#include <ucs/memory/memtype_cache.h>

#include "bench.h"
#include "bench_util.h"

/*
 * Both sides know the same device allocations (from the simulated CUDA
 * driver) and are asked about one host buffer, again and again, as a
 * registration path asks about the same buffers: hmr through
 * hmr_hmem_query (its memtype cache, after the first query), UCX through
 * ucs_memtype_cache_lookup.  Reported: the median ns per lookup over the
 * runs, and hmr / UCX.
 */
typedef int (*cu_alloc_fn)(unsigned long long *, size_t);
typedef int (*cu_retain_fn)(void **, int);
typedef int (*cu_set_fn)(void *);

enum {
	DEVICE_BUFFERS = 64,
	HOST_BUFFERS = 16,
	HOST_LEN = 1 << 16,
	LOOKUPS = 1000000,
	RUNS = 15
};

static volatile int sink;

/* Lookups cycle over `nbuf` host buffers (1: the same one each time). */
static double time_hmr(char *const *bufs, int nbuf, size_t len)
{
	struct hmr_hmem_info info;
	uint64_t t0 = bench_now_ns();
	int i;

	for (i = 0; i < LOOKUPS; i++) {
		hmr_hmem_query(bufs[i % nbuf], len, &info);
		sink += info.iface;
	}
	return (double)(bench_now_ns() - t0) / LOOKUPS;
}

static double time_ucx(char *const *bufs, int nbuf, size_t len)
{
	ucs_memory_info_t info;
	uint64_t t0 = bench_now_ns();
	int i;

	for (i = 0; i < LOOKUPS; i++)
		sink += ucs_memtype_cache_lookup(bufs[i % nbuf], len, &info);
	return (double)(bench_now_ns() - t0) / LOOKUPS;
}

static void compare(char *const *bufs, int nbuf, const char *what)
{
	double hmr[RUNS], ucx[RUNS], mh, mu;
	int i;

	for (i = 0; i < RUNS; i++) {
		hmr[i] = time_hmr(bufs, nbuf, HOST_LEN);
		ucx[i] = time_ucx(bufs, nbuf, HOST_LEN);
	}
	mh = bench_median(hmr, RUNS);
	mu = bench_median(ucx, RUNS);
	printf("  %-28s hmr %6.2f ns  ucx %6.2f ns  hmr/ucx %5.2f\n", what, mh,
	       mu, mh / mu);
}

int bench_memtype(int argc, char **argv)
{
	const char *lib = getenv("HMR_CUDA_LIBRARY");
	unsigned long long dev[DEVICE_BUFFERS];
	struct hmr_hmem_info info;
	char why[192], *host[HOST_BUFFERS];
	cu_alloc_fn cu_alloc;
	cu_retain_fn retain;
	cu_set_fn set;
	void *cuda, *ctx;
	int i;

	(void)argc, (void)argv;
	/* hmr keeps host answers only while a memory monitor reports unmaps
	 * (hmem/memtype.c).  Unless told otherwise, the import monitor: this
	 * program unmaps nothing while it measures, so it has nothing to
	 * report, and the lookups cost the same under any monitor. */
	setenv("FI_MR_CACHE_MONITOR", "import", 0);
	if (hmr_hmem_status(FI_HMEM_CUDA, why, sizeof(why))) {
		fprintf(stderr,
		        "memtype: CUDA absent (%s); set HMR_CUDA_LIBRARY"
		        " to the simulator\n",
		        why);
		return 77;
	}
	cuda = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	cu_alloc = cuda ? (cu_alloc_fn)dlsym(cuda, "cuMemAlloc_v2") : NULL;
	retain = cuda ? (cu_retain_fn)dlsym(cuda, "cuDevicePrimaryCtxRetain")
	              : NULL;
	set = cuda ? (cu_set_fn)dlsym(cuda, "cuCtxSetCurrent") : NULL;
	if (!cu_alloc || !retain || !set || retain(&ctx, 0) || set(ctx)) {
		fprintf(stderr, "memtype: no CUDA context from %s\n", lib);
		return 1;
	}
	if (!ucs_memtype_cache_global_instance)
		ucs_memtype_cache_global_init();
	for (i = 0; i < DEVICE_BUFFERS; i++) {
		if (cu_alloc(&dev[i], 1 << 20))
			return fprintf(stderr, "cuMemAlloc failed\n"), 1;
		/* hmr learns it by classifying it; UCX by an update (what its
		 * allocation hooks would do). */
		hmr_hmem_query((void *)(uintptr_t)dev[i], 4096, &info);
		ucs_memtype_cache_update((void *)(uintptr_t)dev[i], 1 << 20,
		                         UCS_MEMORY_TYPE_CUDA, 0);
	}
	for (i = 0; i < HOST_BUFFERS; i++) {
		host[i] = malloc(HOST_LEN);
		hmr_hmem_query(host[i], HOST_LEN,
		               &info); /* The vendor query. */
		if (info.iface != FI_HMEM_SYSTEM)
			return fprintf(stderr, "host buffer misclassified\n"),
			       1;
	}
	printf("memtype: classify host memory, %d device buffers known, "
	       "median of %d runs x %d lookups, monitor %s (goal: hmr/ucx "
	       "<= 0.25)\n",
	       DEVICE_BUFFERS, RUNS, LOOKUPS, getenv("FI_MR_CACHE_MONITOR"));
	compare(host, 1, "the same host buffer");
	compare(host, HOST_BUFFERS, "16 host buffers in turn");
	for (i = 0; i < HOST_BUFFERS; i++)
		free(host[i]);
	return 0;
}
