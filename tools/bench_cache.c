/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* bench_cache.c: the registration cache: hmr's against UCX's rcache. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <ucm/api/ucm.h>
#include <ucs/memory/rcache.h>

#include "cache/cache.h"
#include "monitor/monitor.h"

#include "bench.h"
#include "bench_util.h"

/*
 * Both caches register 4 KiB regions of one reserved arena with trivial
 * callbacks (no NIC), so what is measured is the cache itself.  Regions
 * are 8 KiB apart (neither cache merges them).  Hits pick regions at
 * random (xorshift, the same sequence for both).  Each figure is the
 * median over RUNS runs, hmr and UCX alternating; ns per get + put of the
 * thread's CPU time (the machine is shared: time spent waiting for a core
 * is not the cache's).
 */
enum {
	REGION = 4096,
	STRIDE = 8192,
	MAX_REGIONS = 65536,
	RUNS = 7,
	HIT_OPS = 1 << 20,
	MISS_OPS = 16384,
	EVICT_KEEP = 1024,
	UNMAP_OPS = 4096,
	THREAD_REGIONS = 1024,
	MAX_THREADS = 2
};

static char *arena;

static int hmr_reg(void *ctx, struct hmr_cache_entry *e)
{
	e->handle = ctx;
	return 0;
}

static void hmr_dereg(void *ctx, struct hmr_cache_entry *e)
{
	(void)ctx, (void)e;
}

static const struct hmr_cache_ops hmr_ops = {.reg = hmr_reg,
                                             .dereg = hmr_dereg};

static ucs_status_t ucx_reg(void *ctx, ucs_rcache_t *rc, void *arg,
                            ucs_rcache_region_t *r, uint16_t flags)
{
	(void)ctx, (void)rc, (void)arg, (void)r, (void)flags;
	return UCS_OK;
}

static void ucx_dereg(void *ctx, ucs_rcache_t *rc, ucs_rcache_region_t *r)
{
	(void)ctx, (void)rc, (void)r;
}

static void ucx_dump(void *ctx, ucs_rcache_t *rc, ucs_rcache_region_t *r,
                     char *buf, size_t max)
{
	(void)ctx, (void)rc, (void)r;
	snprintf(buf, max, "bench");
}

static const ucs_rcache_ops_t ucx_ops = {
        .mem_reg = ucx_reg, .mem_dereg = ucx_dereg, .dump_region = ucx_dump};

/* One cache of either kind.  id: the memory identity hmr's gets pass:
 * 0, what the verbs cache passes for host memory (these regions are
 * host memory), or another, what it passes for a device buffer (a hash
 * of its buffer id; hmr's hit then also compares it in the slab's array
 * of ids).  UCX's rcache has no identity: its get is the same either
 * way. */
struct side {
	bool ucx;
	uint64_t id;
	struct hmr_cache *h;
	ucs_rcache_t *u;
};

static int side_open(struct side *s, bool ucx, size_t max_count, int events)
{
	struct hmr_cache_attr ha = {.ops = &hmr_ops,
	                            .max_count = max_count,
	                            .monitored = true,
	                            .name = "bench"};
	ucs_rcache_params_t up = {
	        .region_struct_size = sizeof(ucs_rcache_region_t),
	        .alignment = UCS_PGT_ADDR_ALIGN,
	        .max_alignment = REGION,
	        .ucm_events = events,
	        .ucm_event_priority = 1000,
	        .ops = &ucx_ops,
	        .flags = UCS_RCACHE_FLAG_NO_PFN_CHECK,
	        .max_regions = max_count,
	        .max_size = SIZE_MAX,
	        .max_unreleased = SIZE_MAX,
	};

	s->ucx = ucx;
	s->id = 0;
	if (ucx)
		return ucs_rcache_create(&up, "bench", NULL, &s->u) != UCS_OK;
	return hmr__cache_open(&ha, &s->h) != 0;
}

static void side_close(struct side *s)
{
	if (s->ucx)
		ucs_rcache_destroy(s->u);
	else if (hmr__cache_close(s->h))
		fprintf(stderr, "cache: hmr__cache_close failed\n");
}

/* Inlined with `ucx` known per loop: one predictable branch each. */
static inline __attribute__((always_inline)) void *side_get(struct side *s,
                                                            void *addr)
{
	struct hmr_cache_entry *e;
	ucs_rcache_region_t *r;

	if (s->ucx)
		return ucs_rcache_get(s->u, addr, REGION,
		                      PROT_READ | PROT_WRITE, NULL,
		                      &r) == UCS_OK
		               ? (void *)r
		               : NULL;
	return hmr__cache_get(s->h, (uintptr_t)addr, REGION, 3, s->id, &e)
	               ? NULL
	               : e;
}

static inline __attribute__((always_inline)) void side_put(struct side *s,
                                                           void *r)
{
	if (s->ucx)
		ucs_rcache_region_put(s->u, r);
	else
		hmr__cache_put(s->h, r);
}

static void *region(size_t i)
{
	return arena + i * STRIDE;
}

static int fill(struct side *s, size_t first, size_t n)
{
	void *r;
	size_t i;

	for (i = first; i < first + n; i++) {
		r = side_get(s, region(i));
		if (!r)
			return -1;
		side_put(s, r);
	}
	return 0;
}

static inline uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ns per get + put of random regions among [first, first + n), n a power
 * of two; -1 on a failed get. */
static double hits(struct side *s, size_t first, size_t n, long ops)
{
	uint64_t x = 88172645463325252ULL, t0 = thread_cpu_ns();
	void *r;
	long k;

	for (k = 0; k < ops; k++) {
		r = side_get(s, region(first + (xorshift(&x) & (n - 1))));
		if (!r)
			return -1;
		side_put(s, r);
	}
	return (double)(thread_cpu_ns() - t0) / (double)ops;
}

static void report(const char *what, double h, double u, const char *goal)
{
	printf("  %-36s hmr %7.1f ns  ucx %7.1f ns  hmr/ucx %5.2f%s%s\n", what,
	       h, u, h / u, goal ? "  goal " : "", goal ? goal : "");
}

static int bench_hits(size_t n, bool device, const char *goal)
{
	double t[2][RUNS];
	struct side s[2];
	char what[64];
	int i, k;

	for (k = 0; k < 2; k++) {
		if (side_open(&s[k], k, 1 << 20, 0))
			return -1;
		s[k].id = device ? 0x5eed0001 : 0;
		if (fill(&s[k], 0, n))
			return -1;
	}
	for (i = 0; i < RUNS; i++)
		for (k = 0; k < 2; k++)
			t[k][i] = hits(&s[k], 0, n, HIT_OPS);
	for (k = 0; k < 2; k++)
		side_close(&s[k]);
	snprintf(what, sizeof(what), "hit, %zu regions%s", n,
	         device ? ", device id" : "");
	report(what, bench_median(t[0], RUNS), bench_median(t[1], RUNS), goal);
	return 0;
}

/* Misses on fresh regions; `keep` > 0: a cache of that many, full, so
 * each miss also evicts one. */
static double misses(bool ucx, size_t keep)
{
	struct side s;
	uint64_t t0;
	size_t i;
	void *r;

	if (side_open(&s, ucx, keep ? keep : 1 << 20, 0) || fill(&s, 0, keep))
		return -1;
	t0 = thread_cpu_ns();
	for (i = keep; i < keep + MISS_OPS; i++) {
		r = side_get(&s, region(i));
		if (!r)
			return -1;
		side_put(&s, r);
	}
	t0 = thread_cpu_ns() - t0;
	side_close(&s);
	return (double)t0 / MISS_OPS;
}

static int bench_misses(size_t keep, const char *what, const char *goal)
{
	double t[2][RUNS];
	int i, k;

	for (i = 0; i < RUNS; i++)
		for (k = 0; k < 2; k++)
			if ((t[k][i] = misses(k, keep)) < 0)
				return -1;
	report(what, bench_median(t[0], RUNS), bench_median(t[1], RUNS), goal);
	return 0;
}

/*
 * What unmapping a registered (idle) 4 KiB range adds to the munmap: the
 * monitor's event and the invalidation it runs (before the unmap
 * proceeds), per page.  Both sides' events are delivered by their own
 * calls, so that the figure is not lost in the munmap's own 1-2 us and
 * its run-to-run swings on this VM: hmr__monitor_notify (what hmr's
 * munmap hook calls) and ucm_vm_munmap (what UCX's calls: its handlers
 * without the unmap).  UCX finishes queued invalidations at its next
 * get, which is counted.  The pages are unmapped afterwards, untimed.
 */
static double unmap_events(struct side *s)
{
	static void *p[UNMAP_OPS];
	uint64_t t0, t;
	void *r;
	int i;

	for (i = 0; i < UNMAP_OPS; i++) {
		p[i] = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
		            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p[i] == MAP_FAILED || !(r = side_get(s, p[i])))
			return -1;
		side_put(s, r);
	}
	t0 = thread_cpu_ns();
	for (i = 0; i < UNMAP_OPS; i++) {
		if (s->ucx)
			ucm_vm_munmap(p[i], REGION);
		else
			hmr__monitor_notify((uintptr_t)p[i], REGION);
	}
	if (s->ucx)
		side_put(s, side_get(s, region(0)));
	t = thread_cpu_ns() - t0;
	for (i = 0; i < UNMAP_OPS; i++)
		munmap(p[i], REGION);
	return (double)t / UNMAP_OPS;
}

/* A plain munmap of 4 KiB, for scale (hmr's hooks in place, nothing
 * registered). */
static double plain_munmap(void)
{
	static void *p[UNMAP_OPS];
	uint64_t t0;
	int i;

	for (i = 0; i < UNMAP_OPS; i++) {
		p[i] = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
		            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p[i] == MAP_FAILED)
			return -1;
	}
	t0 = thread_cpu_ns();
	for (i = 0; i < UNMAP_OPS; i++)
		munmap(p[i], REGION);
	return (double)(thread_cpu_ns() - t0) / UNMAP_OPS;
}

static int bench_unmap(void)
{
	double plain[RUNS], t[2][RUNS];
	struct side s[2];
	int i, k;

	for (i = 0; i < RUNS; i++)
		plain[i] = plain_munmap();
	/* UCX last: its hooks stay in every munmap once installed. */
	for (k = 0; k < 2; k++) {
		if (side_open(&s[k], k, 1 << 20, k ? UCM_EVENT_VM_UNMAPPED : 0))
			return -1;
		for (i = 0; i < RUNS; i++)
			if ((t[k][i] = unmap_events(&s[k])) < 0)
				return -1;
		side_close(&s[k]);
	}
	printf("  (a plain munmap of 4 KiB: %.0f ns; hmr monitor: %s)\n",
	       bench_median(plain, RUNS),
	       hmr__monitor_kind_name(hmr__monitor_kind()));
	report("unmap event + invalidation, 4 KiB", bench_median(t[0], RUNS),
	       bench_median(t[1], RUNS), "<= 1.00");
	return 0;
}

struct worker {
	struct side *s;
	pthread_barrier_t *go;
	size_t first, n;
	double ns;
};

static void *run_worker(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(w->go);
	w->ns = hits(w->s, w->first, w->n, HIT_OPS);
	return NULL;
}

/* Per-thread ns of `threads` threads hitting, each its own
 * THREAD_REGIONS (disjoint) or all region 0 (same). */
static double threaded(struct side *s, int threads, bool same)
{
	struct worker w[MAX_THREADS];
	pthread_t t[MAX_THREADS];
	pthread_barrier_t go;
	double sum = 0;
	int i;

	pthread_barrier_init(&go, NULL, (unsigned)threads);
	for (i = 0; i < threads; i++) {
		w[i] = (struct worker){s, &go,
		                       same ? 0 : (size_t)i * THREAD_REGIONS,
		                       same ? 1 : THREAD_REGIONS, 0};
		pthread_create(&t[i], NULL, run_worker, &w[i]);
	}
	for (i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		sum += w[i].ns;
	}
	pthread_barrier_destroy(&go);
	return sum / threads;
}

static int bench_threads(void)
{
	static const struct {
		int threads;
		bool same;
		const char *what;
	} cases[] = {
	        {1, false, "1 thread, 1,024 regions"},
	        {2, false, "2 threads, disjoint 1,024 each"},
	        {1, true, "1 thread, one region"},
	        {2, true, "2 threads, the same region"},
	};
	double t[2][RUNS], m[4][2];
	struct side s[2];
	char goal[64];
	unsigned c;
	int i, k;

	for (k = 0; k < 2; k++)
		if (side_open(&s[k], k, 1 << 20, 0) ||
		    fill(&s[k], 0, MAX_THREADS * THREAD_REGIONS))
			return -1;
	for (c = 0; c < 4; c++) {
		for (i = 0; i < RUNS; i++)
			for (k = 0; k < 2; k++)
				t[k][i] = threaded(&s[k], cases[c].threads,
				                   cases[c].same);
		for (k = 0; k < 2; k++)
			m[c][k] = bench_median(t[k], RUNS);
		goal[0] = 0;
		if (c == 1)
			snprintf(goal, sizeof(goal),
			         "hmr <= 1.3 x its 1 thread: %.2f x",
			         m[1][0] / m[0][0]);
		report(cases[c].what, m[c][0], m[c][1], goal[0] ? goal : NULL);
	}
	for (k = 0; k < 2; k++)
		side_close(&s[k]);
	return 0;
}

/* hmr_bench cache [miss]: every case, or the misses alone (to profile). */
int bench_cache(int argc, char **argv)
{
	bool only_misses = argc > 1 && !strcmp(argv[1], "miss");

	/* The default monitor (memhooks: every hit checks its patch) unless
	 * the caller chose one; with import, events come by hand. */
	setenv("FI_MR_CACHE_MONITOR", "memhooks", 0);
	arena = mmap(NULL, (size_t)MAX_REGIONS * STRIDE, PROT_READ | PROT_WRITE,
	             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (arena == MAP_FAILED)
		return fprintf(stderr, "cache: no arena\n"), 1;
	printf("cache: get + put of 4 KiB regions, trivial registration, "
	       "median of %d runs; hmr vs UCX's ucs_rcache\n",
	       RUNS);
	if (only_misses) {
		if (bench_misses(0, "miss + insert", "<= 1.00") ||
		    bench_misses(EVICT_KEEP, "miss + evict (1,024 kept)", NULL))
			return fprintf(stderr, "cache: a get failed\n"), 1;
		munmap(arena, (size_t)MAX_REGIONS * STRIDE);
		return 0;
	}
	if (bench_hits(1, false, NULL) || bench_hits(1024, false, "<= 0.50") ||
	    bench_hits(16384, false, NULL) || bench_hits(32768, false, NULL) ||
	    bench_hits(65536, false, "<= 0.25") ||
	    bench_hits(1024, true, NULL) || bench_hits(65536, true, NULL) ||
	    bench_misses(0, "miss + insert", "<= 1.00") ||
	    bench_misses(EVICT_KEEP, "miss + evict (1,024 kept)", NULL) ||
	    bench_threads() || bench_unmap()) {
		fprintf(stderr, "cache: a get failed\n");
		return 1;
	}
	munmap(arena, (size_t)MAX_REGIONS * STRIDE);
	return 0;
}
