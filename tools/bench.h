/* bench.h: the benchmarks hmr_bench runs, one function each. */
#ifndef HMR_BENCH_H
#define HMR_BENCH_H

/* Each returns 0, 77 when it cannot run here (with the reason printed),
 * or 1 on failure. */
int bench_memtype(int argc, char **argv);
int bench_verbs(int argc, char **argv);

#endif /* HMR_BENCH_H */
