/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_memtype.c: the memtype cache on its own: ranges, edges, staleness. */
#include <stdint.h>
#include <stdlib.h>
#include <dlfcn.h>
#include <sys/mman.h>

#include "harness.h"
#include "hmem/hmem.h"
#include "monitor/monitor.h"

#define KIB 1024ULL

static struct hmr_hmem_info info_of(enum fi_hmem_iface iface, uint64_t dev)
{
	struct hmr_hmem_info i;

	memset(&i, 0, sizeof(i));
	i.iface = iface;
	i.device = dev;
	return i;
}

static int lookup(uintptr_t a, size_t len, struct hmr_hmem_info *out)
{
	return hmr__memtype_lookup(a, len, out);
}

HMR_TEST(memtype_empty_knows_nothing)
{
	struct hmr_hmem_info i;

	ASSERT_EQ(lookup(0x10000, 1, &i), 0);
	ASSERT_EQ(lookup(0, 1, &i), 0);
	ASSERT_EQ(lookup(UINT64_MAX, 1, &i), 0);
}

HMR_TEST(memtype_lookup_at_each_edge_of_a_range)
{
	struct hmr_hmem_info dev = info_of(FI_HMEM_CUDA, 3), i;
	uintptr_t s = 0x7f0000000000, e = s + 64 * KIB;

	hmr__memtype_insert(s, e, &dev);
	ASSERT_EQ(lookup(s, 64 * KIB, &i), 1);
	ASSERT_EQ(i.iface, FI_HMEM_CUDA);
	ASSERT_EQ(i.device, 3);
	ASSERT_EQ(lookup(e - 1, 1, &i), 1);
	ASSERT_EQ(lookup(s, 64 * KIB + 1, &i), 0);
	ASSERT_EQ(lookup(e, 1, &i), 0);
	ASSERT_EQ(lookup(s - 1, 1, &i), 0);
	ASSERT_EQ(lookup(s - 1, 2, &i), 0);
	/* A range whose end wraps is never found. */
	ASSERT_EQ(lookup(s, UINT64_MAX, &i), 0);
}

HMR_TEST(memtype_range_at_top_of_address_space)
{
	struct hmr_hmem_info host = info_of(FI_HMEM_SYSTEM, 0), i;
	uintptr_t s = UINTPTR_MAX - 4 * KIB + 1; /* [s, 2^64 - 1]: no end. */

	hmr__memtype_insert(s - 4 * KIB, s, &host);
	ASSERT_EQ(lookup(s - 1, 1, &i), 1);
	ASSERT_EQ(lookup(s - 1, 2, &i), 0);
	ASSERT_EQ(lookup(UINTPTR_MAX, 1, &i), 0);
}

/* A partial change drops the whole old entry: an answer for the part
 * that did not change is asked again, never served stale. */
HMR_TEST(memtype_partial_remove_forgets_the_whole_range)
{
	struct hmr_hmem_info host = info_of(FI_HMEM_SYSTEM, 0), i;
	uintptr_t s = 0x7f1000000000;

	hmr__memtype_insert(s, s + 64 * KIB, &host);
	ASSERT_EQ(lookup(s, 4 * KIB, &i), 1);
	hmr__memtype_remove(s + 8 * KIB, s + 16 * KIB);
	ASSERT_EQ(lookup(s, 4 * KIB, &i), 0);
	ASSERT_EQ(lookup(s + 32 * KIB, 4 * KIB, &i), 0);
}

HMR_TEST(memtype_insert_over_part_of_a_range_replaces_it)
{
	struct hmr_hmem_info host = info_of(FI_HMEM_SYSTEM, 0);
	struct hmr_hmem_info dev = info_of(FI_HMEM_CUDA, 1), i;
	uintptr_t s = 0x7f2000000000;

	hmr__memtype_insert(s, s + 64 * KIB, &host);
	hmr__memtype_insert(s + 8 * KIB, s + 16 * KIB, &dev);
	ASSERT_EQ(lookup(s + 8 * KIB, 8 * KIB, &i), 1);
	ASSERT_EQ(i.iface, FI_HMEM_CUDA);
	ASSERT_EQ(lookup(s, 1, &i), 0); /* The host entry is gone. */
}

/* The per-thread last hit and the host slot never outlive a change. */
HMR_TEST(memtype_fast_paths_see_every_removal)
{
	struct hmr_hmem_info host = info_of(FI_HMEM_SYSTEM, 0), i;
	uintptr_t s = 0x7f3000000000;

	hmr__memtype_insert(s, s + 8 * KIB, &host);
	ASSERT_EQ(lookup(s, 8 * KIB, &i), 1);       /* Host slot. */
	ASSERT_EQ(lookup(s + KIB, KIB, &i), 1);     /* Search, then last. */
	ASSERT_EQ(lookup(s + 2 * KIB, KIB, &i), 1); /* Last hit. */
	hmr__memtype_remove(s + 4 * KIB, s + 5 * KIB);
	ASSERT_EQ(lookup(s, 8 * KIB, &i), 0);
	ASSERT_EQ(lookup(s + 2 * KIB, KIB, &i), 0);
}

/* When full, host ranges go first: device answers are kept. */
HMR_TEST(memtype_full_table_drops_host_ranges_first)
{
	struct hmr_hmem_info host = info_of(FI_HMEM_SYSTEM, 0);
	struct hmr_hmem_info dev = info_of(FI_HMEM_CUDA, 0), i;
	uintptr_t base = 0x7f4000000000;
	int k;

	hmr__memtype_insert(base, base + 4 * KIB, &dev);
	for (k = 1; k <= 5000; k++)
		hmr__memtype_insert(base + (uintptr_t)k * 8 * KIB,
		                    base + (uintptr_t)k * 8 * KIB + 4 * KIB,
		                    &host);
	ASSERT_EQ(lookup(base, 4 * KIB, &i), 1);
	ASSERT_EQ(i.iface, FI_HMEM_CUDA);
	/* The newest host range is known. */
	ASSERT_EQ(lookup(base + 5000 * 8 * KIB, KIB, &i), 1);
}

/* Many ranges: each is found from its first to its last byte (the search,
 * not only the shortcuts for a single range), and the gaps are not. */
HMR_TEST(memtype_lookup_at_each_edge_of_many_ranges)
{
	uintptr_t s = 0x7e0000000000, a;
	struct hmr_hmem_info i;
	uint64_t k;

	for (k = 0; k < 37; k++) {
		struct hmr_hmem_info dev = info_of(FI_HMEM_CUDA, k);

		a = s + k * 128 * KIB;
		hmr__memtype_insert(a, a + 64 * KIB, &dev);
	}
	for (k = 0; k < 37; k++) {
		a = s + k * 128 * KIB;
		ASSERT_EQ(lookup(a, 1, &i), 1);
		ASSERT_EQ(i.device, k);
		ASSERT_EQ(lookup(a + 64 * KIB - 1, 1, &i), 1);
		ASSERT_EQ(i.device, k);
		ASSERT_EQ(lookup(a + 64 * KIB, 1, &i), 0);
		ASSERT_EQ(lookup(a - 1, 1, &i), 0);
	}
}

/* Removing or inserting a range leaves the ranges that touch it. */
HMR_TEST(memtype_remove_keeps_adjacent_ranges)
{
	struct hmr_hmem_info host = info_of(FI_HMEM_SYSTEM, 0);
	struct hmr_hmem_info dev = info_of(FI_HMEM_CUDA, 2), i;
	uintptr_t s = 0x7d0000000000;

	hmr__memtype_insert(s, s + 64 * KIB, &host);
	hmr__memtype_insert(s + 64 * KIB, s + 128 * KIB, &dev);
	hmr__memtype_insert(s + 128 * KIB, s + 192 * KIB, &host);
	ASSERT_EQ(lookup(s, 64 * KIB, &i), 1);
	ASSERT_EQ(lookup(s + 128 * KIB, 64 * KIB, &i), 1);
	hmr__memtype_remove(s + 64 * KIB, s + 128 * KIB);
	ASSERT_EQ(lookup(s + 64 * KIB, 1, &i), 0);
	ASSERT_EQ(lookup(s, 64 * KIB, &i), 1);
	ASSERT_EQ(i.iface, FI_HMEM_SYSTEM);
	ASSERT_EQ(lookup(s + 128 * KIB, 64 * KIB, &i), 1);
	ASSERT_EQ(i.iface, FI_HMEM_SYSTEM);
}

/*
 * Host answers through classification, with a device backend present
 * (CTest points HMR_CUDA_LIBRARY at the simulated driver): the monitor
 * kind is chosen first thing, before anything starts it.
 */
static void with_devices(const char *monitor)
{
	char why[192];

	if (setenv("FI_MR_CACHE_MONITOR", monitor, 1))
		HMR_FAIL("setenv");
	if (hmr_hmem_status(FI_HMEM_CUDA, why, sizeof(why)))
		HMR_FAIL("the simulated CUDA driver is absent: %s", why);
}

static char *map_rw(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(p != MAP_FAILED);
	return p;
}

/* Host, as hmr_hmem_query answers; 1 when the cache then remembers it. */
static int classify_host(const void *p, size_t len)
{
	struct hmr_hmem_info i;

	ASSERT_OK(hmr_hmem_query(p, len, &i));
	ASSERT_EQ(i.iface, FI_HMEM_SYSTEM);
	return lookup((uintptr_t)p, len, &i);
}

/* A freed device address is unmapped or in a PROT_NONE reservation: host
 * now, device maybe at the runtime's next allocation, so not kept. */
HMR_TEST(memtype_unmapped_host_answer_not_cached)
{
	char *p = map_rw(64 * KIB);

	with_devices("import");
	ASSERT_EQ(mprotect(p + 16 * KIB, 16 * KIB, PROT_NONE), 0);
	ASSERT_EQ(munmap(p + 32 * KIB, 32 * KIB), 0);
	ASSERT_EQ(classify_host(p, 16 * KIB), 1); /* The control. */
	ASSERT_EQ(classify_host(p + 16 * KIB, 4 * KIB), 0);
	ASSERT_EQ(classify_host(p + 32 * KIB, 4 * KIB), 0);
	ASSERT_EQ(classify_host(p + 32 * KIB, 4 * KIB), 0);
	/* Partly readable is not readable. */
	ASSERT_EQ(classify_host(p + 12 * KIB, 8 * KIB), 0);
	munmap(p, 32 * KIB);
}

HMR_TEST(memtype_monitor_event_drops_host_entry)
{
	char *p = map_rw(64 * KIB), *q = map_rw(4 * KIB);
	struct hmr_hmem_info i;

	with_devices("import");
	ASSERT_EQ(classify_host(p, 64 * KIB), 1);
	ASSERT_EQ(classify_host(q, 4 * KIB), 1);
	/* An event elsewhere leaves the entry; one page of it drops it
	 * whole, whatever the lookup's path (host slot, last hit, search). */
	hmr__monitor_notify((uintptr_t)p + 64 * KIB, 4 * KIB);
	ASSERT_EQ(lookup((uintptr_t)p, 64 * KIB, &i), 1);
	ASSERT_EQ(lookup((uintptr_t)p + KIB, KIB, &i), 1);
	hmr__monitor_notify((uintptr_t)p + 60 * KIB, 4 * KIB);
	ASSERT_EQ(lookup((uintptr_t)p, 64 * KIB, &i), 0);
	ASSERT_EQ(lookup((uintptr_t)p + KIB, KIB, &i), 0);
	ASSERT_EQ(lookup((uintptr_t)q, 4 * KIB, &i), 1);
	munmap(p, 64 * KIB);
	munmap(q, 4 * KIB);
}

/* An event between the backends' answer and the insert: the range may
 * be device memory by now, so the answer is not kept. */
HMR_TEST(memtype_event_during_classification_voids_host_answer)
{
	char *p = map_rw(4 * KIB);
	struct hmr_hmem_info i;
	uint64_t ticket;

	with_devices("import");
	ticket = hmr__memtype_host_ticket();
	ASSERT_NE(ticket, HMR_MEMTYPE_NO_TICKET);
	hmr__monitor_notify((uintptr_t)p, 4 * KIB);
	hmr__memtype_insert_host((uintptr_t)p, (uintptr_t)p + 4 * KIB, ticket);
	ASSERT_EQ(lookup((uintptr_t)p, 4 * KIB, &i), 0);
	ticket = hmr__memtype_host_ticket();
	hmr__memtype_insert_host((uintptr_t)p, (uintptr_t)p + 4 * KIB, ticket);
	ASSERT_EQ(lookup((uintptr_t)p, 4 * KIB, &i), 1);
	munmap(p, 4 * KIB);
}

/* The simulated driver's count of cuPointerGetAttributes calls. */
static unsigned long vendor_calls(void)
{
	unsigned long (*calls)(const char *);
	void *h = dlopen(getenv("HMR_CUDA_LIBRARY"), RTLD_LAZY | RTLD_NOLOAD);

	ASSERT_TRUE(h != NULL);
	*(void **)&calls = dlsym(h, "hmr_sim_cuda_calls");
	ASSERT_TRUE(calls != NULL);
	dlclose(h);
	return calls("cuPointerGetAttributes") + calls("cuPointerGetAttribute");
}

/* The default monitor, on whatever C library runs this (the libc step
 * runs it on Ubuntu's, with CET): a known host range is answered without
 * asking the driver, until memory of it is unmapped. */
HMR_TEST(memtype_host_answer_under_memhooks_makes_no_vendor_call)
{
	char *p = map_rw(64 * KIB);
	struct hmr_hmem_info i;
	unsigned long before;
	int k;

	with_devices("memhooks");
	ASSERT_EQ(classify_host(p, 64 * KIB), 1);
	ASSERT_EQ(hmr__monitor_kind(), HMR_MONITOR_MEMHOOKS);
	before = vendor_calls();
	for (k = 0; k < 100; k++) {
		ASSERT_OK(hmr_hmem_query(p + k * 64, 64, &i));
		ASSERT_EQ(i.iface, FI_HMEM_SYSTEM);
	}
	ASSERT_EQ(vendor_calls(), before);
	/* An unmap of part of it: the next answer asks again. */
	ASSERT_EQ(munmap(p + 32 * KIB, 32 * KIB), 0);
	ASSERT_EQ(lookup((uintptr_t)p, 4 * KIB, &i), 0);
	ASSERT_OK(hmr_hmem_query(p, 4 * KIB, &i));
	ASSERT_GT(vendor_calls(), before);
	munmap(p, 32 * KIB);
}

/* No monitor: nothing would say when a host range ends, so with a device
 * backend loaded every host answer is asked afresh. */
HMR_TEST(memtype_no_monitor_no_host_caching_with_devices)
{
	char *p = map_rw(64 * KIB);

	with_devices("disabled");
	ASSERT_EQ(classify_host(p, 64 * KIB), 0);
	ASSERT_EQ(classify_host(p, 64 * KIB), 0);
	ASSERT_EQ(hmr__memtype_host_ticket(), HMR_MEMTYPE_NO_TICKET);
	munmap(p, 64 * KIB);
}

HMR_TEST_MAIN()
