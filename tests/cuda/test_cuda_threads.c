/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cuda_threads.c: the memtype cache under concurrent use. */
#include <pthread.h>
#include <string.h>

#include "cuda_util.h"

/*
 * Readers classify their own host buffers and a device buffer over and
 * over while a writer keeps page-locking and unlocking another buffer
 * (each of which rewrites the cache).  Every answer must be right; under
 * TSan (CI) the cache's sequence lock must also be race-free.
 */
enum { READERS = 4, ROUNDS = 20000, WRITES = 2000 };

static struct sim s;
static unsigned long long dev;
static char *churn;
static int errors;

static void *reader(void *arg)
{
	char *mine = malloc(8192);
	struct hmr_hmem_info info;
	int i, bad = 0;

	(void)arg;
	for (i = 0; i < ROUNDS; i++) {
		if (hmr_hmem_query(mine + (i % 2) * 4096, 64, &info) ||
		    info.iface != FI_HMEM_SYSTEM)
			bad++;
		if (i % 16 == 0 &&
		    (hmr_hmem_query((void *)(uintptr_t)(dev + 64), 64, &info) ||
		     info.iface != FI_HMEM_CUDA || info.device != 0))
			bad++;
	}
	free(mine);
	__atomic_add_fetch(&errors, bad, __ATOMIC_RELAXED);
	return NULL;
}

static void *writer(void *arg)
{
	struct hmr_hmem_info info;
	int i, bad = 0;

	(void)arg;
	for (i = 0; i < WRITES; i++) {
		if (hmr_hmem_host_register(FI_HMEM_CUDA, churn, 4096) ||
		    hmr_hmem_query(churn, 64, &info) ||
		    info.iface != FI_HMEM_CUDA ||
		    hmr_hmem_host_unregister(FI_HMEM_CUDA, churn, 4096) ||
		    hmr_hmem_query(churn, 64, &info) ||
		    info.iface != FI_HMEM_SYSTEM)
			bad++;
	}
	__atomic_add_fetch(&errors, bad, __ATOMIC_RELAXED);
	return NULL;
}

HMR_TEST(cuda_memtype_concurrent_queries_and_updates_stay_right)
{
	pthread_t t[READERS + 1];
	int i;

	s = sim_open();
	dev = sim_alloc_on(&s, 0, 1 << 20);
	churn = aligned_alloc(4096, 4096);
	for (i = 0; i < READERS; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, reader, NULL), 0);
	ASSERT_EQ(pthread_create(&t[READERS], NULL, writer, NULL), 0);
	for (i = 0; i <= READERS; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(errors, 0);
	free(churn);
	s.free(dev);
}

HMR_TEST_MAIN()
