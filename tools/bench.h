/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* bench.h: the benchmarks hmr_bench runs, one function each. */
#ifndef HMR_BENCH_H
#define HMR_BENCH_H

/* bench_machine.c: one line: CPU model, cores, RTM (as hmr uses it:
 * HMR_RTM=off forces it off), load average at the start. */
void bench_print_machine(void);

/* Each returns 0, 77 when it cannot run here (with the reason printed),
 * or 1 on failure. */
int bench_memtype(int argc, char **argv);
/* bench_cudaquery.c: hmr_hmem_query of device memory vs the driver. */
int bench_cudaquery(int argc, char **argv);
int bench_verbs(int argc, char **argv);
/* bench_cache.c: the registration cache against UCX's rcache. */
int bench_cache(int argc, char **argv);

#include <stddef.h>
/* bench_libfabric.c: libfabric's verbs domain on `nic` (MR cache off),
 * or a negative code and why. */
int bench_lf_open(const char *nic, void **domain, void **fabric, char *why,
                  size_t why_len);
/* libfabric's `prov` ("shm", "tcp") domain taking requested keys. */
int bench_lf_open_prov(const char *prov, void **domain, void **fabric,
                       char *why, size_t why_len);
const char *bench_lf_version(void);
void bench_lf_close(void *domain, void *fabric);

/* bench_swreg.c: the software domain against libfabric shm and tcp. */
int bench_swreg(int argc, char **argv);

#endif /* HMR_BENCH_H */
