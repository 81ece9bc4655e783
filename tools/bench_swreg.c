/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* bench_swreg.c: the software domain's hot paths against libfabric's. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hmr/hmr.h>

#include "bench.h"
#include "bench_util.h"

/*
 * The same loop on every side, through the same inline fi_mr_reg and
 * fi_close (libfabric's domains have hmr's layout): 4 KiB buffers, access
 * READ|WRITE|REMOTE_READ|REMOTE_WRITE|SEND|RECV, requested keys.  Each
 * measure is the median of RUNS runs; the ratio column is hmr's median
 * over the peer's.  Usage: hmr_bench swreg [pairs per run].
 * Two measures are also timed in the thread's CPU time: on a machine
 * shared with other jobs, two threads need both cores free at once, and
 * a short loop loses whole time slices; CPU time shows what hmr costs
 * whether or not the scheduler gave it the cores.  The machine's own
 * ceiling is measured beside them: two threads of a loop that touches
 * nothing shared (no hmr), against one; where that ratio is above 1, a
 * third runnable task (the host's, another job's) took a core from one
 * of the two, and hmr's two-thread wall ratio cannot be below it.
 */
#define RUNS 7
#define LIVE 16384
#define ACC                                                                    \
	(FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_SEND |     \
	 FI_RECV)
#define NSIDES 3

static char *arena; /* (LIVE * 2 + 2) 4 KiB buffers. */
static long pairs = 200000;

static uint64_t cpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static char *buf_at(long i)
{
	return arena + (size_t)i * 4096;
}

static void must(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "swreg: %s: %d (%s)\n", what, ret,
		        hmr_strerror(ret));
		exit(1);
	}
}

/* ns per fi_mr_reg + fi_close of one 4 KiB buffer. */
static double pair_ns(struct fid_domain *d, uint64_t key0)
{
	struct fid_mr *mr;
	uint64_t t0 = bench_now_ns();
	long i;

	for (i = 0; i < pairs; i++) {
		must(fi_mr_reg(d, buf_at(0), 4096, ACC, 0, key0, 0, &mr, NULL),
		     "fi_mr_reg");
		must(fi_close(&mr->fid), "fi_close");
	}
	return (double)(bench_now_ns() - t0) / (double)pairs;
}

/* With LIVE MRs registered: ns per fi_mr_reg and per fi_close of LIVE
 * more, each on its own buffer and key. */
static void live_ns(struct fid_domain *d, double *reg, double *close)
{
	static struct fid_mr *base[LIVE], *more[LIVE];
	uint64_t t0, t1, t2;
	long i;

	for (i = 0; i < LIVE; i++)
		must(fi_mr_reg(d, buf_at(i), 4096, ACC, 0, (uint64_t)i + 1, 0,
		               &base[i], NULL),
		     "fi_mr_reg (live)");
	t0 = bench_now_ns();
	for (i = 0; i < LIVE; i++)
		must(fi_mr_reg(d, buf_at(LIVE + i), 4096, ACC, 0,
		               (uint64_t)(LIVE + i) + 1, 0, &more[i], NULL),
		     "fi_mr_reg (more)");
	t1 = bench_now_ns();
	for (i = 0; i < LIVE; i++)
		must(fi_close(&more[i]->fid), "fi_close (more)");
	t2 = bench_now_ns();
	for (i = 0; i < LIVE; i++)
		must(fi_close(&base[i]->fid), "fi_close (live)");
	*reg = (double)(t1 - t0) / LIVE;
	*close = (double)(t2 - t1) / LIVE;
}

struct thread_arg {
	struct fid_domain *d;
	uint64_t key0;
	int index; /* pinned to the index-th CPU of the process's */
	double ns, cpu;
};

/* Whether every thread of the last threads_ns got a CPU of its own. */
static int pinned = 1;

/* ns per `pairs` steps of a loop of the thread's own (about a pair's
 * time each): what a thread gets of a core with nothing shared. */
static double plain_ns(uint64_t x)
{
	volatile uint64_t sink;
	uint64_t t0 = bench_now_ns();
	long i, k;

	for (i = 0; i < pairs; i++) {
		for (k = 0; k < 64; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		sink = x;
	}
	(void)sink;
	return (double)(bench_now_ns() - t0) / (double)pairs;
}

static void *pair_thread(void *p)
{
	struct thread_arg *a = p;
	uint64_t c0;

	if (bench_pin_thread(a->index) < 0)
		pinned = 0;
	c0 = cpu_now_ns();

	a->ns = a->d ? pair_ns(a->d, a->key0) : plain_ns(a->key0 | 1);
	a->cpu = (double)(cpu_now_ns() - c0) / (double)pairs;
	return NULL;
}

/* Per-thread ns per pair with n threads on one domain (d NULL: the
 * plain loop instead), own keys each:
 * apart in their low bits, or (high) with the thread number in bits 48
 * and up, as applications that give each thread a key range number them;
 * *cpu: the same in the threads' CPU time. */
static double threads_ns(struct fid_domain *d, int n, int high, double *cpu)
{
	struct thread_arg a[8];
	pthread_t t[8];
	double sum = 0;
	int i;

	*cpu = 0;
	for (i = 0; i < n; i++) {
		a[i].d = d;
		a[i].index = i;
		a[i].key0 = high ? ((uint64_t)i << 48) + 7
		                 : 1000000 + (uint64_t)i * 7919;
		if (pthread_create(&t[i], NULL, pair_thread, &a[i]))
			exit(1);
	}
	for (i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		sum += a[i].ns;
		*cpu += a[i].cpu / n;
	}
	return sum / n;
}

/* hmr_mr_access on a registered key (the target side of each RMA);
 * *cpu: the same in the thread's CPU time. */
static double access_ns(struct fid_domain *d, double *cpu)
{
	struct fid_mr *mr;
	void *p;
	long i, n = pairs * 10;
	uint64_t t0, c0;

	must(fi_mr_reg(d, buf_at(0), 4096, ACC, 0, 5, 0, &mr, NULL), "reg");
	t0 = bench_now_ns();
	c0 = cpu_now_ns();
	for (i = 0; i < n; i++)
		must(hmr_mr_access(d, 5, (uint64_t)(i & 511) * 8, 8,
		                   FI_REMOTE_WRITE, &p),
		     "hmr_mr_access");
	c0 = cpu_now_ns() - c0;
	t0 = bench_now_ns() - t0;
	*cpu = (double)c0 / (double)n;
	must(fi_close(&mr->fid), "close");
	return (double)t0 / (double)n;
}

/* fi_mr_map_raw + hmr_mr_access + fi_mr_unmap_key of a peer's raw key. */
static double raw_ns(struct fid_domain *d)
{
	struct fid_mr *mr;
	uint8_t raw[64];
	size_t size = sizeof(raw);
	uint64_t base, key, t0;
	void *p;
	long i;

	must(fi_mr_reg(d, buf_at(0), 4096, ACC, 0, 6, 0, &mr, NULL), "reg");
	must(fi_mr_raw_attr(mr, &base, raw, &size, 0), "raw_attr");
	t0 = bench_now_ns();
	for (i = 0; i < pairs; i++) {
		must(fi_mr_map_raw(d, base, raw, size, &key, 0), "map_raw");
		must(hmr_mr_access(d, key, 64, 8, FI_REMOTE_READ, &p),
		     "access");
		must(fi_mr_unmap_key(d, key), "unmap_key");
	}
	t0 = bench_now_ns() - t0;
	must(fi_close(&mr->fid), "close");
	return (double)t0 / (double)pairs;
}

static struct fid_domain *hmr_domain(uint64_t mr_mode)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *d;

	attr.mr_mode = mr_mode;
	attr.flags = HMR_DOMAIN_EMULATE_MR_MODE;
	must(hmr_domain_open(&attr, &d), "hmr_domain_open");
	return d;
}

static void row(const char *what, double *h, double (*peer)[RUNS], int npeers)
{
	double mh = bench_median(h, RUNS);
	int i;

	printf("| %-40s | %7.1f ns |", what, mh);
	for (i = 0; i < npeers; i++) {
		double mp = bench_median(peer[i], RUNS);

		printf(" %7.1f ns (%.2fx) |", mp, mh / mp);
	}
	printf("\n");
}

int bench_swreg(int argc, char **argv)
{
	static const char *const provs[] = {"shm", "tcp"};
	void *lf[2], *fab[2];
	struct fid_domain *d[NSIDES], *alloc = hmr_domain(FI_MR_ALLOCATED);
	double p1[RUNS], p2[RUNS], pc1[RUNS], pc2[RUNS];
	double pair[NSIDES][RUNS], lreg[NSIDES][RUNS], lclose[NSIDES][RUNS];
	double t1[RUNS], t2[RUNS], acc[RUNS], raw[RUNS], al[RUNS];
	double c1[RUNS], c2[RUNS], cacc[RUNS], th[RUNS], ch[RUNS];
	char why[256];
	int s, r;

	if (argc > 1)
		pairs = atol(argv[1]);
	arena = aligned_alloc(4096, (size_t)(LIVE * 2 + 2) * 4096);
	if (!arena || pairs <= 0)
		return 1;
	memset(arena, 0, (size_t)(LIVE * 2 + 2) * 4096);
	d[0] = hmr_domain(0);
	for (s = 0; s < 2; s++) {
		if (bench_lf_open_prov(provs[s], &lf[s], &fab[s], why,
		                       sizeof(why))) {
			printf("swreg: %s\n", why);
			return 77;
		}
		d[s + 1] = lf[s];
	}
	/* Interleaved: each run measures every side once, in turn, so that
	 * a noisy moment hits all of them. */
	for (r = 0; r < RUNS; r++) {
		for (s = 0; s < NSIDES; s++) {
			pair[s][r] = pair_ns(d[s], 7);
			live_ns(d[s], &lreg[s][r], &lclose[s][r]);
		}
		al[r] = pair_ns(alloc, 7);
		t1[r] = threads_ns(d[0], 1, 0, &c1[r]);
		t2[r] = threads_ns(d[0], 2, 0, &c2[r]);
		th[r] = threads_ns(d[0], 2, 1, &ch[r]);
		p1[r] = threads_ns(NULL, 1, 0, &pc1[r]);
		p2[r] = threads_ns(NULL, 2, 0, &pc2[r]);
		acc[r] = access_ns(d[0], &cacc[r]);
		raw[r] = raw_ns(d[0]);
	}
	printf("swreg: medians of %d runs of %ld pairs; %s, peers %s "
	       "shm and tcp (ratio: hmr / peer)\n",
	       RUNS, pairs, hmr_version_string(), bench_lf_version());
	printf("| %-40s | %10s | %-19s | %-19s |\n", "measure", "hmr", "shm",
	       "tcp");
	row("fi_mr_reg + fi_close, 4 KiB", pair[0], &pair[1], 2);
	row("fi_mr_reg with 16,384 MRs live", lreg[0], &lreg[1], 2);
	row("fi_close with 16,384 MRs live", lclose[0], &lclose[1], 2);
	row("reg + close under FI_MR_ALLOCATED", al, &pair[0], 1);
	row("reg + close, 2 threads, per thread", t2, &t1, 1);
	row("the same, threads' CPU time", c2, &c1, 1);
	row("2 threads, keys apart in bits 48+", th, &t1, 1);
	row("the same, threads' CPU time", ch, &c1, 1);
	row("2 threads of a plain loop (the machine)", p2, &p1, 1);
	row("the same, threads' CPU time", pc2, &pc1, 1);
	printf("| %-40s | %7.1f ns |\n", "hmr_mr_access on a hit",
	       bench_median(acc, RUNS));
	printf("| %-40s | %7.1f ns |\n", "the same, thread's CPU time",
	       bench_median(cacc, RUNS));
	printf("| %-40s | %7.1f ns |\n", "raw key: map_raw + access + unmap",
	       bench_median(raw, RUNS));
	printf("(ALLOCATED's ratio is against hmr's plain pair; 2 threads' "
	       "against 1 thread on the same domain, each thread %s; the "
	       "plain loop's against its 1 thread: no hmr, the ceiling this "
	       "machine sets)\n",
	       pinned ? "pinned to a CPU of its own"
	              : "NOT pinned (fewer than 2 CPUs allowed)");
	for (s = 0; s < 2; s++)
		bench_lf_close(lf[s], fab[s]);
	fi_close(&d[0]->fid);
	fi_close(&alloc->fid);
	free(arena);
	return 0;
}
