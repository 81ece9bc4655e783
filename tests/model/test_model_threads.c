/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_model_threads.c: the promises fi_mr(3) makes across threads. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h"
#include "harness.h"

/*
 * Several threads on one software domain, each for a bounded time:
 *  - a single-use key is granted exactly once, however many threads race
 *    for it, and counters bound to it count exactly that one access;
 *  - once fi_close of an MR has returned, no access through its key is
 *    granted, in any thread;
 *  - each thread's own calls answer as the model says while the other
 *    threads register, access and close their own MRs.
 * HMR_MODEL_SECONDS (default 1.5) bounds each case.
 */

#define THREADS 8

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double budget(void)
{
	const char *v = getenv("HMR_MODEL_SECONDS");

	return v && *v ? strtod(v, NULL) : 1.5;
}

static uint64_t splitmix(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static struct fid_domain *open_domain(uint64_t mr_mode, uint64_t caps)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain = NULL;

	attr.mr_mode = mr_mode;
	attr.caps = caps;
	attr.flags = HMR_DOMAIN_EMULATE_MR_MODE;
	ASSERT_OK(hmr_domain_open(&attr, &domain));
	return domain;
}

static void run_threads(void *(*fn)(void *), void *args, size_t arg_size)
{
	pthread_t tid[THREADS];
	int i;

	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(pthread_create(&tid[i], NULL, fn,
		                         (char *)args + i * arg_size),
		          0);
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(pthread_join(tid[i], NULL), 0);
}

/* Single use: NKEYS single-use MRs per round, every thread tries each. */
#define NKEYS 32

struct su_round {
	struct fid_domain *domain;
	pthread_barrier_t gate;
	uint64_t key[NKEYS];
	uint64_t addr[NKEYS];
	atomic_int grants[NKEYS];
	atomic_int wrong_ptr;
};

struct su_arg {
	struct su_round *round;
	uint64_t seed;
};

static void *su_worker(void *p)
{
	struct su_arg *a = p;
	struct su_round *r = a->round;
	int order[NKEYS], i;

	for (i = 0; i < NKEYS; i++)
		order[i] = i;
	for (i = NKEYS - 1; i > 0; i--) {
		int j = (int)(splitmix(&a->seed) % (uint64_t)(i + 1)), t;

		t = order[i], order[i] = order[j], order[j] = t;
	}
	pthread_barrier_wait(&r->gate);
	for (i = 0; i < NKEYS; i++) {
		int k = order[i];
		void *ptr = NULL;

		if (hmr_mr_access(r->domain, r->key[k], r->addr[k] + 8, 8,
		                  FI_REMOTE_WRITE, &ptr) == 0) {
			atomic_fetch_add(&r->grants[k], 1);
			if ((uint64_t)(uintptr_t)ptr != r->addr[k] + 8)
				atomic_fetch_add(&r->wrong_ptr, 1);
		}
	}
	return NULL;
}

HMR_TEST(model_threads_single_use_key_granted_once)
{
	struct fid_domain *domain =
	        open_domain(FI_MR_VIRT_ADDR | FI_MR_PROV_KEY, FI_RMA_EVENT);
	struct su_round *r = calloc(1, sizeof(*r));
	struct su_arg args[THREADS];
	struct fid_mr *mr[NKEYS];
	struct fid_cntr *cntr;
	uint64_t base, len, hole;
	double start = now();
	unsigned rounds = 0;
	int i;

	ASSERT_TRUE(r != NULL);
	drv_arena(&base, &len, &hole);
	r->domain = domain;
	while (now() - start < budget() || rounds < 10) {
		ASSERT_OK(hmr_cntr_open(domain, &cntr));
		ASSERT_EQ(pthread_barrier_init(&r->gate, NULL, THREADS), 0);
		for (i = 0; i < NKEYS; i++) {
			r->addr[i] = base + (uint64_t)i * 64;
			atomic_store(&r->grants[i], 0);
			ASSERT_OK(fi_mr_reg(domain,
			                    (void *)(uintptr_t)r->addr[i], 64,
			                    FI_REMOTE_WRITE, 0, 0,
			                    FI_MR_SINGLE_USE, &mr[i], NULL));
			ASSERT_OK(
			        fi_mr_bind(mr[i], &cntr->fid, FI_REMOTE_WRITE));
			r->key[i] = fi_mr_key(mr[i]);
		}
		for (i = 0; i < THREADS; i++) {
			args[i].round = r;
			args[i].seed = rounds * THREADS + (uint64_t)i;
		}
		run_threads(su_worker, args, sizeof(args[0]));
		for (i = 0; i < NKEYS; i++)
			ASSERT_EQ(atomic_load(&r->grants[i]), 1);
		ASSERT_EQ(atomic_load(&r->wrong_ptr), 0);
		/* The counter saw each key's one access, no more. */
		ASSERT_U64_EQ(hmr_cntr_read(cntr), NKEYS);
		ASSERT_OK(fi_close(&cntr->fid));
		for (i = 0; i < NKEYS; i++)
			ASSERT_OK(fi_close(&mr[i]->fid));
		ASSERT_EQ(pthread_barrier_destroy(&r->gate), 0);
		rounds++;
	}
	printf("%u rounds of %d single-use keys raced by %d threads\n", rounds,
	       NKEYS, THREADS);
	ASSERT_OK(fi_close(&domain->fid));
	free(r);
}

/*
 * No grant after close: two threads register MRs (some of them sub-MRs)
 * and close them; each close is published only after fi_close returned.
 * The others access published keys; an access that began after the close
 * was published must be refused.  Provider keys are never reissued while
 * the key space lasts, so a grant through an old key is always a bug.
 */
#define CLOSERS  2
#define RECORDS  (1 << 18)
#define LIVE_MRS 8

struct record {
	uint64_t key, addr;
	atomic_bool ready, closed;
};

struct nc_shared {
	struct fid_domain *domain;
	struct record *rec;
	atomic_size_t nrec;
	atomic_bool stop;
	atomic_ulong grants, late_grants, wrong_ptr, refused_after;
	double end;
};

struct nc_arg {
	struct nc_shared *sh;
	int id;
	uint64_t seed;
};

/* Register one MR (a sub-MR of a kept base every fourth time). */
static struct fid_mr *nc_register(struct nc_shared *sh, struct fid_mr *base,
                                  uint64_t addr, uint64_t *seed)
{
	struct fi_mr_attr attr;
	struct iovec iov = {(void *)(uintptr_t)addr, 64};
	struct fid_mr *mr = NULL;

	memset(&attr, 0, sizeof(attr));
	attr.mr_iov = &iov;
	attr.iov_count = 1;
	attr.access = FI_REMOTE_READ | FI_REMOTE_WRITE;
	attr.base_mr = splitmix(seed) % 4 ? NULL : base;
	ASSERT_OK(fi_mr_regattr(sh->domain, &attr, 0, &mr));
	return mr;
}

static void *nc_closer(void *p)
{
	struct nc_arg *a = p;
	struct nc_shared *sh = a->sh;
	struct fid_mr *live[LIVE_MRS] = {NULL}, *base;
	size_t idx[LIVE_MRS] = {0};
	uint64_t abase, len, hole;
	unsigned n = 0;

	drv_arena(&abase, &len, &hole);
	abase += (uint64_t)a->id * 4096;
	ASSERT_OK(fi_mr_reg(sh->domain, (void *)(uintptr_t)abase, 4096,
	                    FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &base,
	                    NULL));
	while (now() < sh->end) {
		unsigned slot = n++ % LIVE_MRS;
		uint64_t addr = abase + 64 * (splitmix(&a->seed) % 63);
		size_t i;

		if (live[slot]) {
			ASSERT_OK(fi_close(&live[slot]->fid));
			/* Published only now: fi_close has returned. */
			atomic_store(&sh->rec[idx[slot]].closed, true);
			live[slot] = NULL;
		}
		i = atomic_fetch_add(&sh->nrec, 1);
		if (i >= RECORDS)
			break;
		live[slot] = nc_register(sh, base, addr, &a->seed);
		sh->rec[i].key = fi_mr_key(live[slot]);
		sh->rec[i].addr = addr;
		atomic_store(&sh->rec[i].ready, true);
		idx[slot] = i;
	}
	for (n = 0; n < LIVE_MRS; n++)
		if (live[n])
			ASSERT_OK(fi_close(&live[n]->fid));
	ASSERT_OK(fi_close(&base->fid));
	return NULL;
}

static void *nc_accessor(void *p)
{
	struct nc_arg *a = p;
	struct nc_shared *sh = a->sh;

	while (now() < sh->end) {
		size_t n = atomic_load(&sh->nrec), i;
		struct record *r;
		bool closed;
		void *ptr = NULL;
		int rc;

		if (n > RECORDS)
			n = RECORDS;
		if (!n)
			continue;
		/* Mostly the newest records: those are the live ones. */
		i = splitmix(&a->seed) % 2 ? n - 1 - splitmix(&a->seed) % 16
		                           : splitmix(&a->seed) % n;
		if (i >= n)
			continue;
		r = &sh->rec[i];
		if (!atomic_load(&r->ready))
			continue;
		closed = atomic_load(&r->closed);
		rc = hmr_mr_access(sh->domain, r->key, r->addr + 8, 8,
		                   FI_REMOTE_READ, &ptr);
		if (rc == 0) {
			atomic_fetch_add(&sh->grants, 1);
			if (closed)
				atomic_fetch_add(&sh->late_grants, 1);
			if ((uint64_t)(uintptr_t)ptr != r->addr + 8)
				atomic_fetch_add(&sh->wrong_ptr, 1);
		} else if (closed) {
			atomic_fetch_add(&sh->refused_after, 1);
		}
	}
	return NULL;
}

static void *nc_worker(void *p)
{
	struct nc_arg *a = p;

	return a->id < CLOSERS ? nc_closer(p) : nc_accessor(p);
}

HMR_TEST(model_threads_no_grant_after_close)
{
	struct nc_shared sh;
	struct nc_arg args[THREADS];
	int i;

	memset(&sh, 0, sizeof(sh));
	sh.domain = open_domain(FI_MR_VIRT_ADDR | FI_MR_PROV_KEY, 0);
	sh.rec = calloc(RECORDS, sizeof(*sh.rec));
	ASSERT_TRUE(sh.rec != NULL);
	sh.end = now() + budget();
	for (i = 0; i < THREADS; i++) {
		args[i].sh = &sh;
		args[i].id = i;
		args[i].seed = (uint64_t)i + 1;
	}
	run_threads(nc_worker, args, sizeof(args[0]));
	printf("%zu MRs, %lu grants, %lu refusals after close, %lu grants "
	       "after close, %lu wrong pointers\n",
	       atomic_load(&sh.nrec), atomic_load(&sh.grants),
	       atomic_load(&sh.refused_after), atomic_load(&sh.late_grants),
	       atomic_load(&sh.wrong_ptr));
	ASSERT_EQ(atomic_load(&sh.late_grants), 0);
	ASSERT_EQ(atomic_load(&sh.wrong_ptr), 0);
	ASSERT_GT(atomic_load(&sh.grants), 100);
	ASSERT_GT(atomic_load(&sh.refused_after), 100);
	ASSERT_OK(fi_close(&sh.domain->fid));
	free(sh.rec);
}

/*
 * Each thread runs the driver and its own model on one shared domain:
 * its own registrations, sub-MRs, single-use keys, binds, enables,
 * refreshes, raw keys mapped and unmapped, and closes must answer as the model
 * says whatever the other threads do.  Two domain modes, one after the other.
 */
struct sh_arg {
	struct fid_domain *domain;
	const struct hmr_domain_attr *attr;
	uint64_t seed;
	double end;
	struct drv_stats stats;
};

static void sh_report(const char *text, void *arg)
{
	const struct sh_arg *a = arg;

	fprintf(stderr, "%s\nthread seed %llu\n", text,
	        (unsigned long long)a->seed);
	exit(1);
}

static void *sh_worker(void *p)
{
	struct sh_arg *a = p;
	struct drv_opts opts = {
	        .checks = DRV_CHECK_ALL,
	        .profile = &drv_profile_shared,
	        .fail = sh_report,
	        .fail_arg = a,
	        .domain = a->domain,
	        .domain_attr = a->attr,
	};
	struct drv *d = calloc(1, sizeof(*d));
	struct drv_src src;

	ASSERT_TRUE(d != NULL);
	drv_init(d, &opts);
	drv_src_seed(&src, a->seed);
	while (now() < a->end)
		drv_episode(d, &src, 50 + (long)drv_pick(&src, 500));
	a->stats = d->stats;
	free(d);
	return NULL;
}

HMR_TEST(model_threads_grants_match_model)
{
	static const uint64_t modes[] = {
	        FI_MR_PROV_KEY | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
	                FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT,
	        FI_MR_PROV_KEY | FI_MR_RAW | FI_MR_ENDPOINT,
	};
	struct sh_arg args[THREADS];
	unsigned long grants = 0, regs = 0, maps = 0;
	size_t m;
	int i;

	setenv("HMR_LOG_LEVEL", "none", 0);
	for (m = 0; m < 2; m++) {
		struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
		struct fid_domain *domain = NULL;

		attr.mr_mode = modes[m];
		attr.caps = FI_RMA_EVENT;
		attr.flags = HMR_DOMAIN_EMULATE_MR_MODE;
		ASSERT_OK(hmr_domain_open(&attr, &domain));
		for (i = 0; i < THREADS; i++) {
			memset(&args[i], 0, sizeof(args[i]));
			args[i].domain = domain;
			args[i].attr = &attr;
			args[i].seed = 100 * m + (uint64_t)i;
			args[i].end = now() + budget() / 2;
		}
		run_threads(sh_worker, args, sizeof(args[0]));
		for (i = 0; i < THREADS; i++) {
			grants += args[i].stats.grants;
			regs += args[i].stats.regs;
			maps += args[i].stats.raw_maps;
		}
		ASSERT_OK(fi_close(&domain->fid));
	}
	printf("%d threads: %lu registrations, %lu grants, %lu raw keys "
	       "mapped\n",
	       THREADS, regs, grants, maps);
	ASSERT_GT(grants, 100);
	ASSERT_GT(maps, 10); /* The FI_MR_RAW mode mapped raw keys. */
}

HMR_TEST_MAIN()
