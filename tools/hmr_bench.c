/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* hmr_bench.c: hmr side by side with its peers, printed as ratios. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *what;
} benches[] = {
        {"memtype", bench_memtype,
         "classify a host pointer: hmr_hmem_query vs UCX memtype cache"},
        {"cudaquery", bench_cudaquery,
         "what a device pointer is: hmr_hmem_query vs the driver's "
         "cuPointerGetAttributes"},
        {"cache", bench_cache,
         "registration cache hits, misses, eviction, unmap, threads vs "
         "UCX rcache"},
#ifdef HMR_BENCH_LIBFABRIC
        {"swreg", bench_swreg,
         "software-domain fi_mr_reg/fi_close and access checks vs "
         "libfabric shm and tcp"},
#endif
#ifdef HMR_BENCH_VERBS
        {"verbs", bench_verbs,
         "register+deregister on an RDMA NIC: hmr vs raw ibv_reg_mr"},
#endif
};

#define NBENCH (sizeof(benches) / sizeof(benches[0]))

/* hmr_bench [name [args]]: every benchmark, or the one named.  Exit 0 when
 * all that ran succeeded (a skip prints why), 1 otherwise, 2 on usage. */
int main(int argc, char **argv)
{
	int ret = 0, r, ran = 0;
	size_t i;

	for (i = 0; i < NBENCH; i++) {
		if (argc > 1 && strcmp(argv[1], benches[i].name) != 0)
			continue;
		if (!ran)
			bench_print_machine();
		ran++;
		r = benches[i].run(argc - 1, argv + 1);
		if (r == 77)
			printf("%s: skipped (reason above)\n", benches[i].name);
		else if (r)
			ret = 1;
	}
	if (!ran) {
		fprintf(stderr, "usage: hmr_bench [name]; names:\n");
		for (i = 0; i < NBENCH; i++)
			fprintf(stderr, "  %-10s %s\n", benches[i].name,
			        benches[i].what);
		return 2;
	}
	return ret;
}
