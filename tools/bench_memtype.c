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

enum { DEVICE_BUFFERS = 64, LOOKUPS = 1000000, RUNS = 15 };

static volatile int sink;

static double time_hmr(const void *p, size_t len)
{
	struct hmr_hmem_info info;
	uint64_t t0 = bench_now_ns();
	int i;

	for (i = 0; i < LOOKUPS; i++) {
		hmr_hmem_query(p, len, &info);
		sink += info.iface;
	}
	return (double)(bench_now_ns() - t0) / LOOKUPS;
}

static double time_ucx(const void *p, size_t len)
{
	ucs_memory_info_t info;
	uint64_t t0 = bench_now_ns();
	int i;

	for (i = 0; i < LOOKUPS; i++)
		sink += ucs_memtype_cache_lookup(p, len, &info);
	return (double)(bench_now_ns() - t0) / LOOKUPS;
}

int bench_memtype(int argc, char **argv)
{
	const char *lib = getenv("HMR_CUDA_LIBRARY");
	double hmr[RUNS], ucx[RUNS], mh, mu;
	unsigned long long dev[DEVICE_BUFFERS];
	struct hmr_hmem_info info;
	char why[192], *host;
	cu_alloc_fn cu_alloc;
	void *cuda;
	int i;

	(void)argc, (void)argv;
	if (hmr_hmem_status(FI_HMEM_CUDA, why, sizeof(why))) {
		fprintf(stderr,
		        "memtype: CUDA absent (%s); set HMR_CUDA_LIBRARY"
		        " to the simulator\n",
		        why);
		return 77;
	}
	cuda = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	cu_alloc = cuda ? (cu_alloc_fn)dlsym(cuda, "cuMemAlloc_v2") : NULL;
	if (!cu_alloc) {
		fprintf(stderr, "memtype: no cuMemAlloc_v2 in %s\n", lib);
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
	host = malloc(1 << 16);
	hmr_hmem_query(host, 1 << 16, &info); /* The one vendor query. */
	if (info.iface != FI_HMEM_SYSTEM)
		return fprintf(stderr, "host buffer misclassified\n"), 1;
	for (i = 0; i < RUNS; i++) {
		hmr[i] = time_hmr(host, 1 << 16);
		ucx[i] = time_ucx(host, 1 << 16);
	}
	mh = bench_median(hmr, RUNS);
	mu = bench_median(ucx, RUNS);
	printf("memtype: host pointer, %d device buffers known, median of %d "
	       "runs x %d lookups\n",
	       DEVICE_BUFFERS, RUNS, LOOKUPS);
	printf("  hmr_hmem_query            %7.2f ns\n", mh);
	printf("  ucs_memtype_cache_lookup  %7.2f ns\n", mu);
	printf("  ratio hmr/ucx             %7.2f  (goal <= 1.00)\n", mh / mu);
	free(host);
	return 0;
}
