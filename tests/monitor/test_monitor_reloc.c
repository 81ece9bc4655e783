/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_monitor_reloc.c: relocation hooks reach objects loaded later. */
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"

/*
 * The monitor runs in its own library (libhmr_monitor_dl, as an
 * application's libhmr would), started with HMR_MEMHOOKS_MODE=reloc.
 * Its dlopen hook must give objects loaded later our GOT entries, and
 * must not change what dlopen finds: a bare name is searched in the
 * RUNPATH of the object that called dlopen (this program's, which alone
 * holds the module's folder), not in the hook's library's.
 */

static int (*events)(void);

static void start_reloc(void)
{
	int (*start)(void);
	void *h;

	setenv("HMR_MEMHOOKS_MODE", "reloc", 1);
	h = dlopen(HMR_DL_MONITOR, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		HMR_FAIL("dlopen %s: %s", HMR_DL_MONITOR, dlerror());
	*(void **)&start = dlsym(h, "dl_monitor_start");
	*(void **)&events = dlsym(h, "dl_monitor_events");
	ASSERT_TRUE(start && events);
	ASSERT_EQ(start(), 0);
}

HMR_TEST(monitor_reloc_hooks_object_loaded_later)
{
	int (*unmap)(void *, size_t);
	long pg = sysconf(_SC_PAGESIZE);
	void *m, *h;
	int before;

	start_reloc();
	/* Found through this program's RUNPATH only. */
	h = dlopen("libhmr_reloc_dl.so", RTLD_NOW);
	if (!h)
		HMR_FAIL("dlopen by bare name through the caller's RUNPATH: "
		         "%s",
		         dlerror());
	*(void **)&unmap = dlsym(h, "reloc_dl_unmap");
	ASSERT_TRUE(unmap != NULL);
	m = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(m != MAP_FAILED);
	before = events();
	ASSERT_EQ(unmap(m, (size_t)pg), 0);
	/* The module's own GOT entry of munmap leads to the hook. */
	ASSERT_GT(events(), before);
}

HMR_TEST(monitor_reloc_dlopen_failure_unchanged)
{
	start_reloc();
	ASSERT_TRUE(dlopen("libhmr-no-such-module.so", RTLD_NOW) == NULL);
	ASSERT_TRUE(dlerror() != NULL);
}

HMR_TEST_MAIN()
