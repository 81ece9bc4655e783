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
};

int main(int argc, char **argv)
{
	size_t i, n = sizeof(benches) / sizeof(benches[0]);
	int ret = 0, r;

	for (i = 0; i < n; i++) {
		if (argc > 1 && strcmp(argv[1], benches[i].name) != 0)
			continue;
		r = benches[i].run(argc - 1, argv + 1);
		if (r == 77)
			printf("%s: skipped (see above)\n", benches[i].name);
		else if (r)
			ret = 1;
	}
	if (argc > 1 && !strcmp(argv[1], "-h")) {
		for (i = 0; i < n; i++)
			printf("%-10s %s\n", benches[i].name, benches[i].what);
	}
	return ret;
}
