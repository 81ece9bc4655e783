/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_rocr_ids.c: buffer ids and the free event, against the simulator. */
#include <pthread.h>
#include <sys/mman.h>

#include "rocr_util.h"

#include "hmem/hmem.h"

/*
 * Linked with hmr's objects (INTERNAL): the free event's effect on the
 * memtype cache is read with hmr__memtype_lookup, without a query that
 * would refresh it.  The simulator's hmr_sim_rocr_buffer_id hook is the
 * truth hmr's ids are held against: ROCr itself has none.
 */
#define MIB (1 << 20)

static uint64_t id_of(const void *p)
{
	struct hmr_hmem_info info;

	ASSERT_OK(hmr_hmem_query(p, 1, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ROCR);
	return info.buffer_id;
}

/* hmr's id changes exactly when the allocation (the simulator's id) does. */
HMR_TEST(rocr_buffer_id_follows_the_allocation)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 0, MIB), *q, *r;
	unsigned long long sim_p = a.buffer_id(p), sim_q;
	uint64_t id_p = id_of(p);

	ASSERT_NE(id_p, 0);
	ASSERT_EQ(id_of(p + 4096), id_p); /* Same allocation, same id. */
	r = gpu_alloc(&a, 0, MIB);
	ASSERT_NE(id_of(r), id_p);
	app_free(&a, p);
	q = gpu_alloc(&a, 0, MIB);
	sim_q = a.buffer_id(q);
	ASSERT_PTR_EQ(q, p);     /* The simulator reuses the address... */
	ASSERT_NE(sim_q, sim_p); /* ...for a new allocation. */
	ASSERT_NE(id_of(q), id_p);
	ASSERT_EQ(id_of(q), id_of(q + 100));
	app_free(&a, q);
	app_free(&a, r);
}

/* One callback per allocation, however often it is classified. */
HMR_TEST(rocr_free_event_registered_once_per_allocation)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 1, MIB);
	const char *reg = "hsa_amd_register_deallocation_callback";
	int i;

	for (i = 0; i < 10; i++)
		id_of(p + i * 4096);
	ASSERT_EQ(a.calls(reg), 1);
	app_free(&a, p);
}

/* The free event alone drops the range: no query refreshes it here. */
HMR_TEST(rocr_free_event_drops_the_range_from_memtype)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 0, MIB), *h = cpu_alloc(&a, MIB);
	struct hmr_hmem_info info;

	id_of(p);
	id_of(h);
	ASSERT_EQ(hmr__memtype_lookup((uintptr_t)p + 64, 64, &info), 1);
	ASSERT_EQ(hmr__memtype_lookup((uintptr_t)h, 64, &info), 1);
	app_free(&a, p);
	ASSERT_EQ(hmr__memtype_lookup((uintptr_t)p + 64, 64, &info), 0);
	app_free(&a, h);
	ASSERT_EQ(hmr__memtype_lookup((uintptr_t)h, 64, &info), 0);
}

/* A freed GPU address allocated again (another size) is answered as the
 * new allocation, never the old one. */
HMR_TEST(rocr_freed_then_reallocated_device_address_is_answered_fresh)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 0, MIB), *q;
	struct hmr_hmem_info info;
	uint64_t old;

	ASSERT_OK(hmr_hmem_query(p, 64, &info));
	ASSERT_U64_EQ(info.size, MIB);
	old = info.buffer_id;
	app_free(&a, p);
	q = gpu_alloc(&a, 0, 4 * MIB);
	ASSERT_PTR_EQ(q, p);
	ASSERT_OK(hmr_hmem_query(q + 2 * MIB, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ROCR);
	ASSERT_U64_EQ(info.size, 4 * MIB);
	ASSERT_NE(info.buffer_id, old);
	app_free(&a, q);
}

/* A freed CPU pool range mapped again as plain memory is host memory. */
HMR_TEST(rocr_freed_cpu_pool_range_reused_by_host_is_system)
{
	struct app a = app_open();
	char *h = cpu_alloc(&a, MIB);
	struct hmr_hmem_info info;
	void *m;

	ASSERT_OK(hmr_hmem_query(h, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ROCR);
	app_free(&a, h);
	m = mmap(h, MIB, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_PTR_EQ(m, h);
	ASSERT_OK(hmr_hmem_query(h, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	munmap(m, MIB);
}

/* Threads classify and free their own allocations while others do the
 * same: ids stay distinct and stable (TSan checks the locking). */
static struct app app;

static void *churn(void *arg)
{
	uint64_t ids[50];
	int i, gpu = (int)(uintptr_t)arg % 2;

	for (i = 0; i < 50; i++) {
		char *p = gpu_alloc(&app, gpu, 4096 * (1 + i % 3));

		ids[i] = id_of(p);
		ASSERT_EQ(id_of(p + 100), ids[i]);
		ASSERT_TRUE(i == 0 || ids[i] != ids[i - 1]);
		app_free(&app, p);
	}
	return NULL;
}

HMR_TEST(rocr_concurrent_classify_and_free_keep_ids_apart)
{
	pthread_t t[4];
	int i;

	app = app_open();
	for (i = 0; i < 4; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, churn,
		                         (void *)(uintptr_t)i),
		          0);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(pthread_join(t[i], NULL), 0);
}

HMR_TEST_MAIN()
