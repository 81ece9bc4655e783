/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_monitor_uffd.c: the userfaultfd monitor and its fallback. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "monitor/monitor_impl.h"
#include "recorder.h"

static void start_uffd(void)
{
	char why[256] = "";

	ASSERT_OK(rec_start("userfaultfd", why, sizeof(why)));
	ASSERT_EQ(hmr__monitor_kind(), HMR_MONITOR_USERFAULTFD);
	rec_subscribe();
}

static unsigned char *map(size_t pages, bool touch)
{
	void *p = mmap(NULL, pages * rec_page(), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(p != MAP_FAILED);
	if (touch)
		memset(p, 0x5a, pages * rec_page());
	return p;
}

/* No event for [p, p + len) within 200 ms. */
static bool quiet(const void *p, size_t len)
{
	struct timespec t = {0, 200 * 1000000};

	nanosleep(&t, NULL);
	return !rec_touched(p, len);
}

/* fi_mr: F118 */
HMR_TEST(monitor_uffd_unmap_remove_remap)
{
	size_t pg = rec_page();
	unsigned char *p, *q;

	start_uffd();
	p = map(8, true);
	ASSERT_OK(hmr__monitor_watch((uintptr_t)p, 8 * pg));
	ASSERT_EQ(munmap(p, 2 * pg), 0);
	ASSERT_TRUE(rec_wait(p, 2 * pg));
	ASSERT_EQ(madvise(p + 2 * pg, 2 * pg, MADV_DONTNEED), 0);
	ASSERT_TRUE(rec_wait(p + 2 * pg, 2 * pg));
	q = mremap(p + 4 * pg, 2 * pg, 64 * pg, MREMAP_MAYMOVE);
	ASSERT_TRUE(q != MAP_FAILED);
	ASSERT_TRUE(rec_wait(p + 4 * pg, 2 * pg));
	/* Nothing about the pages nobody touched. */
	ASSERT_TRUE(quiet(p + 6 * pg, 2 * pg));
}

static atomic_bool touched;

static void *toucher(void *arg)
{
	volatile unsigned char *p = arg;
	size_t pg = rec_page();
	unsigned char sum;

	sum = p[0];       /* read fault */
	p[pg] = 1;        /* write fault */
	sum += p[2 * pg]; /* read, then write the zero page */
	p[2 * pg] = sum;
	p[3 * pg + 100] = 2;
	atomic_store(&touched, true);
	return NULL;
}

static void untouched_case(void)
{
	unsigned char *p = map(4, false);
	pthread_t t;
	int i;

	ASSERT_OK(hmr__monitor_watch((uintptr_t)p, 4 * rec_page()));
	ASSERT_EQ(pthread_create(&t, NULL, toucher, p), 0);
	for (i = 0; i < 5000 && !atomic_load(&touched); i++)
		usleep(1000);
	/* A blocked thread would make this fail, not hang the test. */
	ASSERT_TRUE(atomic_load(&touched));
	pthread_join(t, NULL);
	ASSERT_EQ(p[1 * rec_page()], 1);
	ASSERT_EQ(p[3 * rec_page() + 100], 2);
}

HMR_TEST(monitor_uffd_never_blocks_untouched_page)
{
	start_uffd();
	untouched_case();
}

/* Kernels before 5.7 have no write-protect mode for anonymous memory;
 * missing mode is then used, its faults resolved with the zero page. */
HMR_TEST(monitor_uffd_missing_mode_resolves_faults)
{
	hmr__monitor_uffd_test_mode(HMR_UFFD_MISSING);
	start_uffd();
	untouched_case();
}

/* The VmFlags of the mapping holding p: "uw" (write-protect mode) or
 * "um" (missing mode) when registered.  Its range in *s, *e. */
static bool registered(const void *p, uintptr_t *s, uintptr_t *e)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	unsigned long lo = 0, hi = 0;
	bool in = false, reg = false;

	ASSERT_TRUE(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = lo <= (uintptr_t)p && (uintptr_t)p < hi;
			if (in) {
				*s = lo;
				*e = hi;
			}
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			reg = strstr(line, " uw") || strstr(line, " um");
			break;
		}
	}
	fclose(f);
	return reg;
}

HMR_TEST(monitor_uffd_never_widens)
{
	size_t pg = rec_page();
	unsigned char *p;
	uintptr_t s, e;

	start_uffd();
	p = map(3, true);
	/* 200 bytes inside the middle page: that page, not one more. */
	ASSERT_OK(hmr__monitor_watch((uintptr_t)p + pg + 100, 200));
	ASSERT_TRUE(registered(p + pg, &s, &e));
	ASSERT_EQ(s, (uintptr_t)p + pg);
	ASSERT_EQ(e, (uintptr_t)p + 2 * pg);
	ASSERT_TRUE(!registered(p, &s, &e));
	ASSERT_TRUE(!registered(p + 2 * pg, &s, &e));
	ASSERT_EQ(munmap(p, pg), 0);
	ASSERT_TRUE(quiet(p, pg));
	ASSERT_EQ(munmap(p + pg, pg), 0);
	ASSERT_TRUE(rec_wait(p + pg, pg));
}

HMR_TEST(monitor_uffd_overlapping_watchers_stay_covered)
{
	size_t pg = rec_page();
	unsigned char *p;

	start_uffd();
	p = map(6, true);
	ASSERT_OK(hmr__monitor_watch((uintptr_t)p, 4 * pg));
	ASSERT_OK(hmr__monitor_watch((uintptr_t)p + 2 * pg, 4 * pg));
	hmr__monitor_unwatch((uintptr_t)p, 4 * pg);
	/* Pages 2-3 are still the second watcher's. */
	ASSERT_EQ(munmap(p + 2 * pg, 2 * pg), 0);
	ASSERT_TRUE(rec_wait(p + 2 * pg, 2 * pg));
	ASSERT_EQ(munmap(p, 2 * pg), 0);
	ASSERT_TRUE(quiet(p, 2 * pg));
	hmr__monitor_unwatch((uintptr_t)p + 2 * pg, 4 * pg);
}

/* Every other page of one mapping: each watch splits it, so the
 * kernel's vm.max_map_count (65,530) runs out before 65,536 watches. */
HMR_TEST(monitor_uffd_65536_regions)
{
	const size_t n = 65536;
	size_t pg = rec_page(), i, ok = 0, refused = 0;
	unsigned char *p, *q;
	int rc;

	start_uffd();
	p = map(2 * n, false);
	for (i = 0; i < n; i++) {
		rc = hmr__monitor_watch((uintptr_t)p + 2 * i * pg, pg);
		if (!rc) {
			ok++;
		} else {
			ASSERT_EQ(rc, -FI_ENOMEM);
			refused++;
		}
	}
	printf("%zu watched, %zu refused\n", ok, refused);
	ASSERT_EQ(ok + refused, n);
	ASSERT_GT(refused, 0);
	ASSERT_GT(ok, 30000);
	for (i = 0; i < n; i++)
		hmr__monitor_unwatch((uintptr_t)p + 2 * i * pg, pg);
	/* The monitor still works, and nothing stayed registered. */
	q = map(1, true);
	ASSERT_OK(hmr__monitor_watch((uintptr_t)q, pg));
	ASSERT_EQ(munmap(q, pg), 0);
	ASSERT_TRUE(rec_wait(q, pg));
	ASSERT_EQ(munmap(p, 2 * n * pg), 0);
	ASSERT_TRUE(quiet(p, 2 * n * pg));
}

/* A seccomp filter refusing userfaultfd with EPERM, as container
 * runtimes' default profiles do. */
static void refuse_userfaultfd(void)
{
	struct sock_filter f[] = {
	        BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                 offsetof(struct seccomp_data, nr)),
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_userfaultfd, 0, 1),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};

	ASSERT_EQ(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	ASSERT_EQ(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0);
}

HMR_TEST(monitor_uffd_refused_falls_back)
{
	char why[512] = "";
	unsigned char *p;

	refuse_userfaultfd();
	ASSERT_OK(rec_start("userfaultfd", why, sizeof(why)));
	ASSERT_TRUE(strstr(why, "userfaultfd: EPERM") != NULL);
	ASSERT_TRUE(strstr(why, "memhooks used instead") != NULL);
	ASSERT_EQ(hmr__monitor_kind(), HMR_MONITOR_MEMHOOKS);
	rec_subscribe();
	p = map(1, true);
	ASSERT_EQ(munmap(p, rec_page()), 0);
	ASSERT_TRUE(rec_saw(p, rec_page()));
}

HMR_TEST_MAIN()
