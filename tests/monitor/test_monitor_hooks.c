/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_monitor_hooks.c: memhooks reports each unmapping call before it. */
#include <pthread.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>

#include "monitor/monitor_impl.h"
#include "libc_malloc.h"
#include "recorder.h"

static void start_hooks(void)
{
	char why[256] = "";

	ASSERT_OK(rec_start("memhooks", why, sizeof(why)));
	ASSERT_EQ(hmr__monitor_kind(), HMR_MONITOR_MEMHOOKS);
	ASSERT_TRUE(hmr__monitor_intact());
	rec_subscribe();
}

static unsigned char *map(size_t pages, int flags)
{
	void *p = mmap(NULL, pages * rec_page(), PROT_READ | PROT_WRITE,
	               flags | MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(p != MAP_FAILED);
	memset(p, 0x5a, pages * rec_page());
	return p;
}

HMR_TEST(monitor_munmap_event_before_unmap)
{
	unsigned char *p;

	start_hooks();
	p = map(4, MAP_PRIVATE);
	rec.probe = p + rec_page();
	ASSERT_EQ(munmap(p, 4 * rec_page()), 0);
	ASSERT_TRUE(rec_saw(p, 4 * rec_page()));
	/* The callback read the page: it was still mapped. */
	ASSERT_EQ(atomic_load(&rec.probe_value), 0x5a);
}

HMR_TEST(monitor_mremap_old_range)
{
	size_t pg = rec_page();
	unsigned char *p, *q, *r;

	start_hooks();
	p = map(4, MAP_PRIVATE);
	q = mremap(p, 4 * pg, 64 * pg, MREMAP_MAYMOVE);
	ASSERT_TRUE(q != MAP_FAILED);
	ASSERT_TRUE(rec_saw(p, 4 * pg));
	/* MREMAP_FIXED also replaces what was at the new address. */
	r = map(2, MAP_PRIVATE);
	ASSERT_TRUE(mremap(q, 2 * pg, 2 * pg, MREMAP_MAYMOVE | MREMAP_FIXED,
	                   r) == r);
	ASSERT_TRUE(rec_saw(q, 2 * pg));
	ASSERT_TRUE(rec_saw(r, 2 * pg));
}

static void madvise_case(int advice, int flags, bool expect)
{
	size_t pg = rec_page();
	unsigned char *p;

	start_hooks();
	p = map(8, flags);
	ASSERT_EQ(madvise(p + 2 * pg, 3 * pg, advice), 0);
	ASSERT_EQ(rec_saw(p + 2 * pg, 3 * pg), expect);
	ASSERT_TRUE(!rec_touched(p, 2 * pg));
	/* Advice that keeps the pages reports nothing. */
	ASSERT_EQ(madvise(p + 6 * pg, pg, MADV_WILLNEED), 0);
	ASSERT_TRUE(!rec_touched(p + 6 * pg, pg));
}

HMR_TEST(monitor_madvise_dontneed)
{
	madvise_case(MADV_DONTNEED, MAP_PRIVATE, true);
}

HMR_TEST(monitor_madvise_free)
{
	madvise_case(MADV_FREE, MAP_PRIVATE, true);
}

HMR_TEST(monitor_madvise_remove)
{
	/* MADV_REMOVE frees the backing of shared memory. */
	madvise_case(MADV_REMOVE, MAP_SHARED, true);
}

HMR_TEST(monitor_brk_shrink)
{
	size_t grow = 64 * rec_page();
	char *cur;

	start_hooks();
	cur = sbrk(0);
	ASSERT_EQ(brk(cur + grow), 0);
	memset(cur, 1, grow);
	ASSERT_EQ(brk(cur), 0);
	ASSERT_TRUE(rec_saw(cur + rec_page(), grow - rec_page()));
}

HMR_TEST(monitor_sbrk_shrink)
{
	intptr_t grow = 64 * (intptr_t)rec_page();
	char *cur;

	start_hooks();
	cur = sbrk(grow);
	ASSERT_TRUE(cur != (void *)-1);
	memset(cur, 1, (size_t)grow);
	ASSERT_TRUE(sbrk(-grow) != (void *)-1);
	ASSERT_TRUE(rec_saw(cur + rec_page(), (size_t)grow - rec_page()));
}

HMR_TEST(monitor_shmdt)
{
	size_t len = 5 * rec_page();
	int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
	char *p;

	ASSERT_GE(id, 0);
	start_hooks();
	p = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	ASSERT_TRUE(p != (void *)-1);
	memset(p, 1, len);
	ASSERT_EQ(shmdt(p), 0);
	/* The segment's whole range, found from the kernel's map. */
	ASSERT_TRUE(rec_saw(p, len));
}

HMR_TEST(monitor_mmap_fixed_replaces)
{
	size_t pg = rec_page();
	unsigned char *p, *q;

	start_hooks();
	p = map(4, MAP_PRIVATE);
	q = mmap(p + pg, 2 * pg, PROT_READ,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_PTR_EQ(q, p + pg);
	ASSERT_TRUE(rec_saw(p + pg, 2 * pg));
	ASSERT_TRUE(!rec_touched(p, pg));
	/* A mapping that replaces nothing reports nothing. */
	ASSERT_EQ(munmap(p + 3 * pg, pg), 0);
	atomic_store(&rec.n, 0);
	q = mmap(p + 3 * pg, pg, PROT_READ,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_PTR_EQ(q, p + 3 * pg);
	ASSERT_TRUE(!rec_touched(p + 3 * pg, pg));
}

HMR_TEST(monitor_free_of_large_malloc)
{
	size_t len = 16 << 20;
	char *p;
	volatile uintptr_t addr; /* Not a pointer once freed. */

	start_hooks();
	/* glibc's malloc serves this with mmap; free unmaps it through
	 * libc's internal __munmap, which interposition never sees. */
	p = big_malloc(len);
	ASSERT_TRUE(p != NULL);
	memset(p, 1, len);
	/* Keep the stores the compiler would drop before a free. */
	__asm__ volatile("" : : "r"(p) : "memory");
	rec.probe = (unsigned char *)p + len / 2;
	addr = (uintptr_t)p;
	big_free(p);
	ASSERT_TRUE(rec_saw((void *)addr, len));
	ASSERT_EQ(atomic_load(&rec.probe_value), 1);
}

/* Nested events: a drain that unmaps sees its event nested, marked, and
 * drained in a second round, all before the outer unmap proceeds. */
static struct {
	struct hmr_monitor_sub sub;
	unsigned char *outer, *inner;
	int drains, marked, outer_byte;
} nest;

static void nest_unmapped(struct hmr_monitor_sub *sub, uintptr_t start,
                          size_t len, bool nested)
{
	(void)sub;
	if (nested && (uintptr_t)nest.inner >= start &&
	    (uintptr_t)nest.inner - start < len)
		nest.marked++;
}

static bool nest_drain(struct hmr_monitor_sub *sub)
{
	(void)sub;
	nest.drains++;
	if (nest.drains == 1 && nest.inner) {
		nest.outer_byte = nest.outer[0];
		ASSERT_EQ(munmap(nest.inner, rec_page()), 0);
		return true;
	}
	return nest.marked && nest.drains == 2;
}

HMR_TEST(monitor_nested_event_drains)
{
	start_hooks();
	nest.outer = map(1, MAP_PRIVATE);
	nest.inner = map(1, MAP_PRIVATE);
	nest.sub.unmapped = nest_unmapped;
	nest.sub.drain = nest_drain;
	hmr__monitor_subscribe(&nest.sub);
	ASSERT_EQ(munmap(nest.outer, rec_page()), 0);
	ASSERT_EQ(nest.marked, 1);
	ASSERT_EQ(nest.outer_byte, 0x5a);
	/* Round 1 unmapped, round 2 drained the mark, round 3 found no
	 * more work. */
	ASSERT_EQ(nest.drains, 3);
	ASSERT_TRUE(rec_saw(nest.inner, rec_page()));
	hmr__monitor_unsubscribe(&nest.sub);
}

static atomic_bool stop, patched;
static atomic_long unmaps_after;

static void *unmapper(void *arg)
{
	void *p;

	(void)arg;
	while (!atomic_load(&stop)) {
		p = mmap(NULL, rec_page(), PROT_READ | PROT_WRITE,
		         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_TRUE(p != MAP_FAILED);
		bool after = atomic_load(&patched);

		ASSERT_EQ(munmap(p, rec_page()), 0);
		if (after)
			atomic_fetch_add(&unmaps_after, 1);
	}
	return NULL;
}

HMR_TEST(monitor_threads_munmap_while_patching)
{
	struct timespec t = {0, 200 * 1000000};
	char why[256] = "";
	pthread_t th[3];
	int i, n;

	rec.sub.unmapped = rec_unmapped;
	hmr__monitor_subscribe(&rec.sub);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, unmapper, NULL), 0);
	nanosleep(&t, NULL);
	/* Patching while three threads map and unmap. */
	ASSERT_OK(rec_start("memhooks", why, sizeof(why)));
	n = atomic_load(&rec.n);
	atomic_store(&patched, true);
	nanosleep(&t, NULL);
	atomic_store(&stop, true);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	ASSERT_GT(atomic_load(&unmaps_after), 100);
	/* Every munmap that began after patching was reported. */
	ASSERT_GE(atomic_load(&rec.n) - n, atomic_load(&unmaps_after));
}

/* fi_mr: F118 */
HMR_TEST(monitor_kdreg2_absent_says_why)
{
	char why[512] = "";
	unsigned char *p;

	ASSERT_OK(rec_start("kdreg2", why, sizeof(why)));
	if (access("/dev/kdreg2", F_OK)) {
		ASSERT_TRUE(strstr(why, "kdreg2: not available, because "
		                        "/dev/kdreg2 is absent (the "
		                        "out-of-tree kdreg2 module is not "
		                        "loaded)") != NULL);
	} else {
		ASSERT_TRUE(strstr(why, "no kdreg2 client") != NULL);
	}
	ASSERT_TRUE(strstr(why, "memhooks used instead") != NULL);
	ASSERT_EQ(hmr__monitor_kind(), HMR_MONITOR_MEMHOOKS);
	rec_subscribe();
	p = map(1, MAP_PRIVATE);
	ASSERT_EQ(munmap(p, rec_page()), 0);
	ASSERT_TRUE(rec_saw(p, rec_page()));
}

HMR_TEST(monitor_import_only_notify)
{
	char why[256] = "";
	unsigned char *p;

	ASSERT_OK(rec_start("import", why, sizeof(why)));
	ASSERT_EQ(hmr__monitor_kind(), HMR_MONITOR_IMPORT);
	rec_subscribe();
	p = map(2, MAP_PRIVATE);
	ASSERT_EQ(munmap(p, rec_page()), 0);
	ASSERT_TRUE(!rec_touched(p, rec_page()));
	/* What hmr_mr_cache_invalidate lands in. */
	hmr__monitor_notify((uintptr_t)p + rec_page(), 100);
	ASSERT_TRUE(rec_saw(p + rec_page(), 100));
	ASSERT_EQ(hmr__monitor_watch((uintptr_t)p, 100), 0);
}

/* fi_mr: F118 */
HMR_TEST(monitor_disabled_reports_nothing)
{
	char why[256] = "";
	unsigned char *p;

	ASSERT_EQ(rec_start("disabled", why, sizeof(why)), -FI_ENOSYS);
	ASSERT_EQ(hmr__monitor_kind(), HMR_MONITOR_DISABLED);
	rec_subscribe();
	p = map(2, MAP_PRIVATE);
	ASSERT_EQ(munmap(p, 2 * rec_page()), 0);
	ASSERT_EQ(madvise(map(1, MAP_PRIVATE), rec_page(), MADV_DONTNEED), 0);
	ASSERT_EQ(atomic_load(&rec.n), 0);
}

HMR_TEST(monitor_fork_child_flag)
{
	int status;
	pid_t pid;

	start_hooks();
	ASSERT_TRUE(!hmr__monitor_forked());
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(hmr__monitor_forked() ? 0 : 1);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	ASSERT_TRUE(!hmr__monitor_forked());
}

/* fork with the hooks in place: the child's unmaps are seen in the child
 * (the patched code is the child's too), and the parent's monitor goes on
 * seeing its own, unaffected by what the child did. */
/* A subscriber subscribed twice is heard once, not walked forever. */
HMR_TEST(monitor_subscribe_twice_is_ignored)
{
	unsigned char *p;

	start_hooks();
	rec_subscribe();
	p = map(1, MAP_PRIVATE);
	ASSERT_EQ(munmap(p, rec_page()), 0);
	ASSERT_EQ(atomic_load(&rec.n), 1);
}

HMR_TEST(monitor_fork_child_works_parent_unaffected)
{
	unsigned char *p, *q;
	int status, before;
	pid_t pid;

	start_hooks();
	p = map(2, MAP_PRIVATE);
	q = map(2, MAP_PRIVATE);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		before = atomic_load(&rec.n);
		if (munmap(p, 2 * rec_page()) || !rec_saw(p, 2 * rec_page()) ||
		    atomic_load(&rec.n) == before || !hmr__monitor_intact())
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	/* The child's unmap was the child's: the parent saw none of it. */
	ASSERT_TRUE(!rec_saw(p, 2 * rec_page()));
	ASSERT_EQ(p[0], 0x5a); /* Still the parent's mapping. */
	ASSERT_EQ(munmap(q, 2 * rec_page()), 0);
	ASSERT_TRUE(rec_saw(q, 2 * rec_page()));
	ASSERT_TRUE(hmr__monitor_intact());
	ASSERT_EQ(munmap(p, 2 * rec_page()), 0);
}

HMR_TEST_MAIN()
