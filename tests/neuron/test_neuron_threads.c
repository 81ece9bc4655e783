/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_neuron_threads.c: classification and export from several threads. */
#include <pthread.h>

#include "neuron_util.h"

#define THREADS 4
#define ROUNDS  500
#define LEN     (1u << 20)

static struct app a;
static char *va[THREADS];

/* Each thread asks about its own tensor and a host buffer, and exports
 * and releases a dma-buf, while the others do the same. */
static void *worker(void *arg)
{
	long i = (long)arg;
	char *host = malloc(4096);
	struct hmr_hmem_info info;
	uint64_t offset;
	int r, fd, bad = 0;
	size_t at;

	for (r = 0; r < ROUNDS && !bad; r++) {
		bad |= hmr_hmem_query(va[i] + r, 8, &info) ||
		       info.iface != FI_HMEM_NEURON || info.device != 0;
		bad |= hmr_hmem_query(host, 4096, &info) ||
		       info.iface != FI_HMEM_SYSTEM;
		at = 4096 * (size_t)(r % 200);
		bad |= hmr_hmem_dmabuf_get(va[i] + at, 64, 0, &fd, &offset) ||
		       offset != at || hmr_hmem_dmabuf_put(va[i], fd);
	}
	free(host);
	return (void *)(long)bad;
}

HMR_TEST(neuron_query_and_export_from_threads)
{
	nrt_tensor_t *t[THREADS];
	pthread_t th[THREADS];
	void *bad;
	long i;

	a = app_open();
	for (i = 0; i < THREADS; i++) {
		t[i] = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, (int)i % 2,
		                 LEN);
		va[i] = app_va(&a, t[i]);
	}
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, worker, (void *)i), 0);
	for (i = 0; i < THREADS; i++) {
		ASSERT_EQ(pthread_join(th[i], &bad), 0);
		ASSERT_TRUE(bad == NULL);
	}
	for (i = 0; i < THREADS; i++)
		a.free(&t[i]);
}

HMR_TEST_MAIN()
