/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_ze_threads.c: copies, queries and exports from many threads. */
#include <pthread.h>
#include <string.h>

#include "ze_util.h"

#define THREADS 8
#define ROUNDS  200
#define SLICE   4096

static struct ze_drv drv;
static char *dev[2];
static pthread_barrier_t go;

/* Each thread owns a slice of each device's buffer; all start at once,
 * so the lazy list creation races. */
static void *copier(void *arg)
{
	size_t t = (size_t)(uintptr_t)arg;
	unsigned char in[SLICE], out[SLICE];
	int r, i, bad = 0;

	pthread_barrier_wait(&go);
	for (r = 0; r < ROUNDS && !bad; r++) {
		for (i = 0; i < 2; i++) {
			char *p = dev[i] + t * SLICE;

			fill(in, sizeof(in), (unsigned)(t * 7 + r + i));
			bad |= hmr_hmem_copy_to(p, in, sizeof(in)) != 0;
			bad |= hmr_hmem_copy_from(out, p, sizeof(out)) != 0;
			bad |= memcmp(in, out, sizeof(in)) != 0;
		}
	}
	return (void *)(uintptr_t)bad;
}

HMR_TEST(ze_threads_copy_on_one_list_per_device_created_once)
{
	pthread_t th[THREADS];
	void *bad;
	size_t t;

	drv = ze_open('a');
	dev[0] = ze_dev_alloc(&drv, 0, THREADS * SLICE);
	dev[1] = ze_dev_alloc(&drv, 1, THREADS * SLICE);
	ASSERT_EQ(pthread_barrier_init(&go, NULL, THREADS), 0);
	for (t = 0; t < THREADS; t++)
		ASSERT_EQ(pthread_create(&th[t], NULL, copier,
		                         (void *)(uintptr_t)t),
		          0);
	for (t = 0; t < THREADS; t++) {
		ASSERT_EQ(pthread_join(th[t], &bad), 0);
		ASSERT_PTR_EQ(bad, NULL);
	}
	ASSERT_EQ(drv.hooks.calls("zeCommandListCreateImmediate"), 2);
	pthread_barrier_destroy(&go);
	ze_free(&drv, dev[0]);
	ze_free(&drv, dev[1]);
	ze_close(&drv);
}

static void *exporter(void *arg)
{
	size_t t = (size_t)(uintptr_t)arg;
	struct hmr_hmem_info info;
	uint64_t offset;
	int r, fd, bad = 0;

	pthread_barrier_wait(&go);
	for (r = 0; r < ROUNDS && !bad; r++) {
		char *p = dev[r % 2] + t * SLICE;

		bad |= hmr_hmem_query(p, SLICE, &info) != 0;
		bad |= info.iface != FI_HMEM_ZE;
		bad |= hmr_hmem_dmabuf_get(p, SLICE, 0, &fd, &offset) != 0;
		bad |= offset != t * SLICE;
		bad |= hmr_hmem_dmabuf_put(p, fd) != 0;
	}
	return (void *)(uintptr_t)bad;
}

static void exports(const char *fd_mode)
{
	pthread_t th[THREADS];
	void *bad;
	size_t t;
	int fds;

	case_env("HMR_SIM_ZE_FD_MODE", fd_mode);
	drv = ze_open('a');
	dev[0] = ze_dev_alloc(&drv, 0, THREADS * SLICE);
	dev[1] = ze_dev_alloc(&drv, 1, THREADS * SLICE);
	ASSERT_OK(hmr_hmem_status(FI_HMEM_ZE, NULL, 0));
	fds = hmr_test_open_fds();
	ASSERT_EQ(pthread_barrier_init(&go, NULL, THREADS), 0);
	for (t = 0; t < THREADS; t++)
		ASSERT_EQ(pthread_create(&th[t], NULL, exporter,
		                         (void *)(uintptr_t)t),
		          0);
	for (t = 0; t < THREADS; t++) {
		ASSERT_EQ(pthread_join(th[t], &bad), 0);
		ASSERT_PTR_EQ(bad, NULL);
	}
	/* Driver mode: the driver's one fd per allocation. */
	ASSERT_EQ(hmr_test_open_fds(), fds + (fd_mode[0] == 'd' ? 2 : 0));
	ASSERT_EQ(drv.hooks.fd_errors(), 0);
	pthread_barrier_destroy(&go);
	ze_free(&drv, dev[0]);
	ze_free(&drv, dev[1]);
	ze_close(&drv);
}

HMR_TEST(ze_threads_export_driver_owned_fds_concurrently)
{
	exports("driver");
}

HMR_TEST(ze_threads_export_caller_owned_fds_concurrently)
{
	exports("caller");
}

HMR_TEST_MAIN()
