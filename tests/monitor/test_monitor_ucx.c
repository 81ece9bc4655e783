/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_monitor_ucx.c: memhooks and UCX's hooks in one process. */
#include <dlfcn.h>
#include <sys/mman.h>
#include <ucm/api/ucm.h>

#include "monitor/monitor_impl.h"
#include "libc_malloc.h"
#include "recorder.h"

/*
 * UCX's libucm patches libc's munmap, madvise, mmap, mremap, brk, sbrk
 * and shmdt when it loads (its default hook mode on x86-64 writes a jump
 * at each entry).  Loaded before hmr: hmr chains to UCX's hooks.  Loaded
 * after: UCX overwrites hmr's patches without chaining; hmr notices
 * (hmr__monitor_intact turns false for good, so caches stop trusting
 * what they hold) and chains to UCX's hooks from then on.  Either way
 * both see every event afterwards.
 */

enum { UCX_MAX = 4096 };
static struct {
	atomic_int n;
	uintptr_t start[UCX_MAX];
	size_t len[UCX_MAX];
} ucx;

static void ucx_event(ucm_event_type_t type, ucm_event_t *ev, void *arg)
{
	int i = atomic_fetch_add(&ucx.n, 1);

	(void)type;
	(void)arg;
	if (i < UCX_MAX) {
		ucx.start[i] = (uintptr_t)ev->vm_unmapped.address;
		ucx.len[i] = ev->vm_unmapped.size;
	}
}

static bool ucx_saw(uintptr_t s, size_t len)
{
	int i, n = atomic_load(&ucx.n);

	for (i = 0; i < n && i < UCX_MAX; i++)
		if (ucx.start[i] <= s && s - ucx.start[i] < ucx.len[i] &&
		    ucx.len[i] - (s - ucx.start[i]) >= len)
			return true;
	return false;
}

static void load_ucx(void)
{
	ucs_status_t (*set)(int, int, ucm_event_callback_t, void *);
	void *ucm;

	/* libucm needs libucs's symbols loaded globally first. */
	ASSERT_TRUE(dlopen("libucs.so.0", RTLD_NOW | RTLD_GLOBAL) != NULL);
	ucm = dlopen("libucm.so.0", RTLD_NOW | RTLD_GLOBAL);
	if (!ucm)
		HMR_FAIL("dlopen libucm.so.0: %s", dlerror());
	*(void **)&set = dlsym(ucm, "ucm_set_event_handler");
	ASSERT_TRUE(set != NULL);
	ASSERT_EQ(set(UCM_EVENT_VM_UNMAPPED, 0, ucx_event, NULL), UCS_OK);
}

static void start_hooks(void)
{
	char why[256] = "";

	ASSERT_OK(rec_start("memhooks", why, sizeof(why)));
	ASSERT_EQ(hmr__monitor_kind(), HMR_MONITOR_MEMHOOKS);
	rec_subscribe();
}

/* munmap, madvise and free of a big malloc: both sides see each. */
static void both_see_everything(void)
{
	size_t pg = rec_page(), len = 16 << 20;
	unsigned char *p;
	volatile uintptr_t a;

	p = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(p != MAP_FAILED);
	memset(p, 1, 4 * pg);
	ASSERT_EQ(madvise(p, 2 * pg, MADV_DONTNEED), 0);
	ASSERT_TRUE(rec_saw(p, 2 * pg));
	ASSERT_TRUE(ucx_saw((uintptr_t)p, 2 * pg));
	ASSERT_EQ(munmap(p, 4 * pg), 0);
	ASSERT_TRUE(rec_saw(p, 4 * pg));
	ASSERT_TRUE(ucx_saw((uintptr_t)p, 4 * pg));
	p = big_malloc(len);
	ASSERT_TRUE(p != NULL);
	a = (uintptr_t)p;
	big_free(p);
	ASSERT_TRUE(rec_saw((void *)a, len));
	ASSERT_TRUE(ucx_saw(a, len));
}

HMR_TEST(monitor_coexists_with_ucx_hooks_before)
{
	load_ucx();
	start_hooks();
	ASSERT_TRUE(hmr__monitor_intact());
	both_see_everything();
	ASSERT_TRUE(hmr__monitor_intact());
}

HMR_TEST(monitor_coexists_with_ucx_hooks_after)
{
	start_hooks();
	ASSERT_TRUE(hmr__monitor_intact());
	load_ucx();
	/* UCX wrote over hmr's patches, so events may have been missed:
	 * the check puts hmr's hook back in front of UCX's and reports the
	 * whole address space unmapped (every cache drops what it held). */
	atomic_store(&rec.n, 0);
	ASSERT_TRUE(hmr__monitor_intact());
	ASSERT_TRUE(rec_saw((void *)rec_page(), UINTPTR_MAX - 2 * rec_page()));
	both_see_everything();
	ASSERT_TRUE(hmr__monitor_intact());
}

HMR_TEST_MAIN()
