/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_monitor_valgrind.c: memhooks under valgrind says why it cannot run. */
#include <sys/mman.h>

#include "recorder.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

/* CI's valgrind step runs this (label unit): valgrind executes its own
 * translation of libc, so patched entries never run; memhooks must
 * refuse with the reason and leave the caches without a monitor.
 * Everywhere else the same case checks that memhooks runs. */
HMR_TEST(monitor_memhooks_under_valgrind_says_why)
{
	char why[512] = "";
	void *p;
	int rc = rec_start("memhooks", why, sizeof(why));

	if (RUNNING_ON_VALGRIND) {
		ASSERT_EQ(rc, -FI_ENOSYS);
		ASSERT_EQ(hmr__monitor_kind(), HMR_MONITOR_DISABLED);
		ASSERT_TRUE(strstr(why, "running under valgrind") != NULL);
		return;
	}
	ASSERT_OK(rc);
	ASSERT_EQ(hmr__monitor_kind(), HMR_MONITOR_MEMHOOKS);
	rec_subscribe();
	p = mmap(NULL, rec_page(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1,
	         0);
	ASSERT_TRUE(p != MAP_FAILED);
	ASSERT_EQ(munmap(p, rec_page()), 0);
	ASSERT_TRUE(rec_saw(p, rec_page()));
}

HMR_TEST_MAIN()
