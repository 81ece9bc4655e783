/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_threads.c: concurrent register, access, raw map and close. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core_util.h"

#define THREADS 4
#define ITERS   2000
#define LIVE    8   /* MRs each thread keeps open at once */
#define SLOT    64  /* bytes per registration */
#define ROUNDS  300 /* single-use races */

struct worker {
	struct fid_domain *domain;
	int id;
	int raw; /* FI_MR_RAW: every key goes through map_raw */
	long successes;
	char mem[LIVE * SLOT] __attribute__((aligned(64)));
};

static struct worker workers[THREADS];

static pthread_barrier_t start_gate;
static void *(*start_fn)(void *);

/* Every thread waits at the gate so that all of them run at once. */
static void *gated(void *arg)
{
	pthread_barrier_wait(&start_gate);
	return start_fn(arg);
}

static void run_threads(void *(*fn)(void *))
{
	pthread_t tid[THREADS];
	int i;

	start_fn = fn;
	ASSERT_EQ(pthread_barrier_init(&start_gate, NULL, THREADS), 0);
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(pthread_create(&tid[i], NULL, gated, &workers[i]), 0);
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(pthread_join(tid[i], NULL), 0);
	ASSERT_EQ(pthread_barrier_destroy(&start_gate), 0);
}

static void init_workers(struct fid_domain *domain, int raw)
{
	int i;

	for (i = 0; i < THREADS; i++) {
		memset(&workers[i], 0, sizeof(workers[i]));
		workers[i].domain = domain;
		workers[i].id = i;
		workers[i].raw = raw;
	}
}

/* Map a raw key of `mr` (own domain), check it reaches `want`, unmap. */
static void check_raw_map(struct worker *w, struct fid_mr *mr, char *want)
{
	uint64_t key = map_own_key(w->domain, mr);
	void *ptr = NULL;

	ASSERT_OK(hmr_mr_access(w->domain, key, (uintptr_t)want, SLOT,
	                        FI_REMOTE_READ, &ptr));
	ASSERT_PTR_EQ(ptr, want);
	ASSERT_OK(fi_mr_unmap_key(w->domain, key));
}

/* Close slot s; under FI_MR_RAW its mapped key is unmapped first. */
static void retire(struct worker *w, struct fid_mr **mr, uint64_t key)
{
	if (w->raw)
		ASSERT_OK(fi_mr_unmap_key(w->domain, key));
	close_ok(&(*mr)->fid);
	*mr = NULL;
}

/*
 * Each thread keeps LIVE MRs over its own slots, replacing the oldest
 * each round.  A key that another thread's MR also had would make the
 * access below land outside this thread's memory, so each thread checking
 * its own pointers also checks that keys are unique across threads.
 */
static void *churn(void *arg)
{
	struct worker *w = arg;
	struct fid_mr *mr[LIVE] = {NULL};
	uint64_t key[LIVE] = {0};
	void *ptr;
	int i;

	for (i = 0; i < ITERS; i++) {
		int s = i % LIVE;
		char *slot = w->mem + s * SLOT;

		if (mr[s]) {
			retire(w, &mr[s], key[s]);
			ptr = NULL;
			/* Provider keys are not handed out again. */
			ASSERT_EQ(hmr_mr_access(w->domain, key[s],
			                        (uintptr_t)slot, 8,
			                        FI_REMOTE_READ, &ptr),
			          -FI_ENOKEY);
		}
		mr[s] = reg_ok(w->domain, slot, SLOT, REMOTE_RW, 0, 0);
		if (w->raw) {
			ASSERT_U64_EQ(fi_mr_key(mr[s]), FI_KEY_NOTAVAIL);
			key[s] = map_own_key(w->domain, mr[s]);
		} else {
			key[s] = fi_mr_key(mr[s]);
			check_raw_map(w, mr[s], slot);
		}
		ptr = NULL;
		ASSERT_OK(hmr_mr_access(w->domain, key[s], (uintptr_t)slot + 8,
		                        8, FI_REMOTE_WRITE, &ptr));
		ASSERT_PTR_EQ(ptr, slot + 8);
		memcpy(ptr, &i, sizeof(i));
		ASSERT_EQ(memcmp(slot + 8, &i, sizeof(i)), 0);
	}
	for (i = 0; i < LIVE; i++)
		if (mr[i])
			retire(w, &mr[i], key[i]);
	return NULL;
}

HMR_TEST(mr_threads_register_access_close_prov_keys)
{
	struct fid_domain *domain =
	        open_domain(FI_MR_PROV_KEY | FI_MR_VIRT_ADDR, 0);

	init_workers(domain, 0);
	run_threads(churn);
	close_ok(&domain->fid);
}

HMR_TEST(mr_threads_register_access_close_raw_keys)
{
	struct fid_domain *domain =
	        open_domain(FI_MR_RAW | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR, 0);

	init_workers(domain, 1);
	run_threads(churn);
	close_ok(&domain->fid);
}

/* Keys the writers publish, per writer and slot; 0: none yet. */
static _Atomic uint64_t published[THREADS][LIVE];

/*
 * Even threads register and close over their slots and publish each new
 * key; odd threads look the published keys up while they are being
 * closed.  A lookup must find the writer's own slot or nothing: provider
 * keys are never handed out again, so a stale key cannot reach another
 * region.
 */
static void *write_or_lookup(void *arg)
{
	struct worker *w = arg;
	struct fid_mr *mr[LIVE] = {NULL};
	int i;

	for (i = 0; i < ITERS; i++) {
		int s = i % LIVE;

		if (w->id % 2 == 0) {
			if (mr[s])
				close_ok(&mr[s]->fid);
			mr[s] = reg_ok(w->domain, w->mem + s * SLOT, SLOT,
			               FI_REMOTE_READ, 0, 0);
			atomic_store(&published[w->id][s], fi_mr_key(mr[s]));
		} else {
			struct worker *peer = &workers[w->id - 1];
			char *slot = peer->mem + s * SLOT;
			uint64_t key = atomic_load(&published[peer->id][s]);
			void *ptr = NULL;
			int ret;

			if (!key)
				continue;
			ret = hmr_mr_access(w->domain, key, (uintptr_t)slot, 8,
			                    FI_REMOTE_READ, &ptr);
			if (ret == 0) {
				ASSERT_PTR_EQ(ptr, slot);
				w->successes++;
			} else {
				ASSERT_EQ(ret, -FI_ENOKEY);
			}
		}
	}
	for (i = 0; i < LIVE; i++)
		if (mr[i])
			close_ok(&mr[i]->fid);
	return NULL;
}

HMR_TEST(mr_threads_lookup_racing_close_finds_own_region_or_nothing)
{
	struct fid_domain *domain =
	        open_domain(FI_MR_PROV_KEY | FI_MR_VIRT_ADDR, 0);

	init_workers(domain, 0);
	run_threads(write_or_lookup);
	close_ok(&domain->fid);
}

#define SHARED_KEYS 8

/* All threads compete for a few requested keys: whoever holds one must
 * find its own memory behind it. */
static void *contend(void *arg)
{
	struct worker *w = arg;
	int i;

	for (i = 0; i < ITERS; i++) {
		uint64_t key = 1000 + (uint64_t)((i + w->id) % SHARED_KEYS);
		struct fid_mr *mr = NULL;
		void *ptr = NULL;
		int ret;

		ret = fi_mr_reg(w->domain, w->mem, SLOT, REMOTE_RW, 0, key, 0,
		                &mr, NULL);
		if (ret == -FI_ENOKEY)
			continue;
		ASSERT_OK(ret);
		ASSERT_U64_EQ(fi_mr_key(mr), key);
		ASSERT_OK(hmr_mr_access(w->domain, key, 4, 4, FI_REMOTE_WRITE,
		                        &ptr));
		ASSERT_PTR_EQ(ptr, w->mem + 4);
		memcpy(ptr, &w->id, sizeof(w->id));
		ASSERT_EQ(memcmp(w->mem + 4, &w->id, sizeof(w->id)), 0);
		close_ok(&mr->fid);
		w->successes++;
	}
	return NULL;
}

HMR_TEST(mr_threads_requested_key_held_by_one_at_a_time)
{
	struct fid_domain *domain = open_domain(0, 0);
	int i;

	init_workers(domain, 0);
	run_threads(contend);
	for (i = 0; i < THREADS; i++)
		ASSERT_GT(workers[i].successes, 0);
	close_ok(&domain->fid);
}

static atomic_long total_writes;
static uint64_t counted_key;

static void *hammer(void *arg)
{
	struct worker *w = arg;
	int i;

	for (i = 0; i < ITERS; i++) {
		void *ptr = NULL;

		ASSERT_OK(hmr_mr_access(w->domain, counted_key, 0, 8,
		                        FI_REMOTE_WRITE, &ptr));
		atomic_fetch_add(&total_writes, 1);
		/* Refused accesses in between are not counted. */
		ASSERT_EQ(hmr_mr_access(w->domain, counted_key, 0, 8,
		                        FI_REMOTE_READ, &ptr),
		          -FI_EACCES);
	}
	return NULL;
}

/* fi_mr: F61 */
HMR_TEST(mr_threads_counter_counts_every_access)
{
	struct fid_domain *domain = open_domain(0, FI_RMA_EVENT);
	static char target[64];
	struct fid_mr *mr =
	        reg_ok(domain, target, sizeof(target), FI_REMOTE_WRITE, 77, 0);
	struct fid_cntr *cntr = NULL;

	ASSERT_OK(hmr_cntr_open(domain, &cntr));
	ASSERT_OK(fi_mr_bind(mr, &cntr->fid, REMOTE_RW));
	counted_key = 77;
	init_workers(domain, 0);
	run_threads(hammer);
	ASSERT_EQ(atomic_load(&total_writes), THREADS * ITERS);
	ASSERT_U64_EQ(hmr_cntr_read(cntr), (uint64_t)THREADS * ITERS);
	close_ok(&cntr->fid);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

static pthread_barrier_t barrier;
static struct fid_mr *round_mr;
static atomic_int round_wins;
static char once_mem[64];

/* Thread 0 registers a single-use MR each round; all threads race to use
 * it once; exactly one may win. */
static void *race_single_use(void *arg)
{
	struct worker *w = arg;
	int r, ret;

	for (r = 0; r < ROUNDS; r++) {
		void *ptr = NULL;

		if (w->id == 0) {
			round_mr = reg_ok(w->domain, once_mem, sizeof(once_mem),
			                  REMOTE_RW, 5000 + (uint64_t)r,
			                  FI_MR_SINGLE_USE);
			atomic_store(&round_wins, 0);
		}
		pthread_barrier_wait(&barrier);
		ret = hmr_mr_access(w->domain, 5000 + (uint64_t)r, 0, 8,
		                    FI_REMOTE_WRITE, &ptr);
		if (ret == 0) {
			ASSERT_PTR_EQ(ptr, once_mem);
			atomic_fetch_add(&round_wins, 1);
		} else {
			ASSERT_EQ(ret, -FI_ENOKEY);
		}
		pthread_barrier_wait(&barrier);
		if (w->id == 0) {
			ASSERT_EQ(atomic_load(&round_wins), 1);
			close_ok(&round_mr->fid);
		}
		pthread_barrier_wait(&barrier);
	}
	return NULL;
}

/* fi_mr: F110 */
HMR_TEST(mr_threads_single_use_key_admits_exactly_one)
{
	struct fid_domain *domain = open_domain(0, 0);

	ASSERT_EQ(pthread_barrier_init(&barrier, NULL, THREADS), 0);
	init_workers(domain, 0);
	run_threads(race_single_use);
	ASSERT_EQ(pthread_barrier_destroy(&barrier), 0);
	close_ok(&domain->fid);
}

/*
 * hmr_mr_access reads an MR without the lock and keeps what it read only
 * if no writer ran meanwhile.  Thread 0 swaps key 9 between two MRs that
 * differ in every field an access reads (A: read-only, 4 KiB, at
 * swap_mem; B: write-only, 64 bytes, elsewhere); the others probe the key
 * throughout.  An answer mixing A and B (A's rights with B's address, A's
 * rights with B's length) is none of the answers allowed below.
 */
#define SWAPS 20000
static char swap_a[4096], swap_b[64];
static atomic_int swapping;

static void probe_swapped_key(struct fid_domain *d)
{
	void *ptr = NULL;
	int ret;

	ret = hmr_mr_access(d, 9, 1000, 8, FI_REMOTE_READ, &ptr);
	if (ret == 0)
		ASSERT_PTR_EQ(ptr, swap_a + 1000);
	else if (ret != -FI_ENOKEY)
		ASSERT_EQ(ret, -FI_EACCES); /* B: write-only. */
	ptr = NULL;
	ret = hmr_mr_access(d, 9, 8, 8, FI_REMOTE_WRITE, &ptr);
	if (ret == 0)
		ASSERT_PTR_EQ(ptr, swap_b + 8);
	else if (ret != -FI_ENOKEY)
		ASSERT_EQ(ret, -FI_EACCES); /* A: read-only. */
}

static void *swap_or_probe(void *arg)
{
	struct worker *w = arg;
	int i;

	if (w->id != 0) {
		while (atomic_load(&swapping))
			probe_swapped_key(w->domain);
		return NULL;
	}
	for (i = 0; i < SWAPS; i++) {
		struct fid_mr *mr =
		        i % 2 ? reg_ok(w->domain, swap_b, sizeof(swap_b),
		                       FI_REMOTE_WRITE, 9, 0)
		              : reg_ok(w->domain, swap_a, sizeof(swap_a),
		                       FI_REMOTE_READ, 9, 0);

		close_ok(&mr->fid);
	}
	atomic_store(&swapping, 0);
	return NULL;
}

HMR_TEST(mr_threads_unlocked_access_never_mixes_two_mrs_of_one_key)
{
	/* Offset addressing: both MRs answer offset 8 and 1000 alike. */
	struct fid_domain *domain = open_domain(0, 0);

	atomic_store(&swapping, 1);
	init_workers(domain, 0);
	run_threads(swap_or_probe);
	close_ok(&domain->fid);
}

HMR_TEST_MAIN()
