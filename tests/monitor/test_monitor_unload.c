/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_monitor_unload.c: dlclose of the library that installed hooks. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/* The hooks live in the library; another thread's munmap jumps into
 * them.  dlclose must leave them mapped (libfabric issue 10943: its
 * teardown crashed other threads). */

static atomic_bool stop;
static atomic_long unmaps;

static void *unmapper(void *arg)
{
	void *p;

	(void)arg;
	while (!atomic_load(&stop)) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_TRUE(p != MAP_FAILED);
		ASSERT_EQ(munmap(p, 4096), 0);
		atomic_fetch_add(&unmaps, 1);
	}
	return NULL;
}

static void pause_ms(long ms)
{
	struct timespec t = {0, ms * 1000000};

	nanosleep(&t, NULL);
}

HMR_TEST(monitor_unload_safe)
{
	int (*start)(void), (*events)(void);
	pthread_t t;
	long before;
	void *h;

	ASSERT_EQ(pthread_create(&t, NULL, unmapper, NULL), 0);
	h = dlopen(HMR_DL_MONITOR, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		HMR_FAIL("dlopen %s: %s", HMR_DL_MONITOR, dlerror());
	*(void **)&start = dlsym(h, "dl_monitor_start");
	*(void **)&events = dlsym(h, "dl_monitor_events");
	ASSERT_TRUE(start && events);
	ASSERT_EQ(start(), 0);
	pause_ms(50);
	ASSERT_GT(events(), 0);
	ASSERT_EQ(dlclose(h), 0);
	/* Still loaded: the hooks' code is still there. */
	ASSERT_TRUE(dlopen(HMR_DL_MONITOR, RTLD_NOW | RTLD_NOLOAD) != NULL);
	before = atomic_load(&unmaps);
	pause_ms(200);
	ASSERT_GT(atomic_load(&unmaps) - before, 100);
	atomic_store(&stop, true);
	pthread_join(t, NULL);
}

HMR_TEST_MAIN()
