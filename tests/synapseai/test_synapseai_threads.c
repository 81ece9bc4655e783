/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_synapseai_threads.c: the backend's shared state under threads. */
#include <pthread.h>

#include "synapseai_util.h"

/*
 * Workers copy their own slice of device memory to and from the device
 * (sharing hmr's one stream and staging buffer), export and release
 * dma-bufs, and classify, while a churner keeps mapping and unmapping a
 * host buffer (hmr's mapping table).  Every answer must be right and no
 * fd may be left; under TSan (CI) the backend's lock must also be
 * race-free.
 */
enum { WORKERS = 4, ROUNDS = 300, CHURNS = 500, SLICE = 64 * 1024 };

static uint64_t dev;
static unsigned char *churn;
static int errors;

static void *worker(void *arg)
{
	unsigned idx = (unsigned)(uintptr_t)arg;
	uint64_t mine = dev + idx * (uint64_t)SLICE, offset;
	unsigned char *src = malloc(SLICE), *back = malloc(SLICE);
	struct hmr_hmem_info info;
	int i, fd, bad = 0;

	for (i = 0; i < ROUNDS; i++) {
		pattern(src, SLICE, idx * 1000 + (unsigned)i);
		if (hmr_hmem_copy_to((void *)(uintptr_t)mine, src, SLICE) ||
		    hmr_hmem_copy_from(back, (void *)(uintptr_t)mine, SLICE) ||
		    memcmp(src, back, SLICE))
			bad++;
		if (hmr_hmem_dmabuf_get((void *)(uintptr_t)(mine + 8), 64, 0,
		                        &fd, &offset) ||
		    offset != mine + 8 - app.info.globalHbmBaseAddress ||
		    hmr_hmem_dmabuf_put((void *)(uintptr_t)mine, fd))
			bad++;
		if (hmr_hmem_query((void *)(uintptr_t)mine, SLICE, &info) ||
		    info.iface != FI_HMEM_SYNAPSEAI)
			bad++;
	}
	free(src);
	free(back);
	__atomic_add_fetch(&errors, bad, __ATOMIC_RELAXED);
	return NULL;
}

static void *churner(void *arg)
{
	struct hmr_hmem_info info;
	int i, bad = 0;

	(void)arg;
	for (i = 0; i < CHURNS; i++) {
		if (hmr_hmem_host_register(FI_HMEM_SYNAPSEAI, churn, 8192) ||
		    hmr_hmem_query(churn, 64, &info) ||
		    info.iface != FI_HMEM_SYNAPSEAI ||
		    hmr_hmem_host_unregister(FI_HMEM_SYNAPSEAI, churn, 8192) ||
		    hmr_hmem_query(churn, 64, &info) ||
		    info.iface != FI_HMEM_SYSTEM)
			bad++;
	}
	__atomic_add_fetch(&errors, bad, __ATOMIC_RELAXED);
	return NULL;
}

HMR_TEST(synapseai_concurrent_copies_exports_and_mappings)
{
	pthread_t t[WORKERS + 1];
	int i, before;

	app_start();
	dev = app_malloc(WORKERS * SLICE);
	churn = aligned_alloc(4096, 8192);
	ASSERT_OK(hmr_hmem_status(FI_HMEM_SYNAPSEAI, NULL, 0));
	before = hmr_test_open_fds();
	for (i = 0; i < WORKERS; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, worker,
		                         (void *)(uintptr_t)i),
		          0);
	ASSERT_EQ(pthread_create(&t[WORKERS], NULL, churner, NULL), 0);
	for (i = 0; i <= WORKERS; i++)
		ASSERT_EQ(pthread_join(t[i], NULL), 0);
	ASSERT_EQ(errors, 0);
	ASSERT_EQ(hmr_test_open_fds(), before);
	free(churn);
}

HMR_TEST_MAIN()
