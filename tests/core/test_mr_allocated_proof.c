/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_allocated_proof.c: FI_MR_ALLOCATED's proof of backing, remembered
 * only while the memory monitor vouches for it (core/backed.h). */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pages_util.h"

/*
 * This program's msync stands in front of libc's (libhmr's calls resolve
 * to it) and counts: without RTM (HMR_RTM=off, set by every case) each
 * proof of backing is one msync.
 */
static atomic_long msyncs;

__attribute__((visibility("default"))) int msync(void *addr, size_t len,
                                                 int flags)
{
	static int (*real)(void *, size_t, int);

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "msync");
	atomic_fetch_add(&msyncs, 1);
	return real(addr, len, flags);
}

static void case_env(const char *name, const char *value)
{
	if (setenv(name, value, 1))
		HMR_FAIL("setenv %s", name);
}

static int try_reg(struct fid_domain *domain, void *addr, size_t len)
{
	struct fid_mr *mr = NULL;
	int ret = fi_mr_reg(domain, addr, len, REMOTE_RW, 0, 1, 0, &mr, NULL);

	if (ret == 0)
		close_ok(&mr->fid);
	return ret;
}

/* msync calls made by n registrations of [p, +len). */
static long proofs_of(struct fid_domain *d, char *p, size_t len, int n)
{
	long before = atomic_load(&msyncs);
	int i;

	for (i = 0; i < n; i++)
		ASSERT_OK(try_reg(d, p, len));
	return atomic_load(&msyncs) - before;
}

/* Whether the monitor in force reports an unmap before the kernel acts
 * (memhooks; not under valgrind, whose own manager refuses the hooks). */
static int monitor_vouches(void)
{
	struct hmr_monitor_info info = HMR_MONITOR_INFO_INIT;

	ASSERT_OK(hmr_monitor_info(&info));
	printf("monitor %s, before_unmap %d\n", info.kind, info.before_unmap);
	return info.before_unmap;
}

static struct fid_domain *allocated_domain(void)
{
	case_env("HMR_RTM", "off");
	return open_domain(FI_MR_ALLOCATED, 0);
}

/*
 * A range proven mapped is not proven again until the monitor reports an
 * unmap, anywhere (here: a page the registrations never saw), and the
 * sub-range of a proven range is proven with it.  Where the monitor cannot
 * vouch, every registration proves anew.
 */
/* fi_mr: F37 */
HMR_TEST(mr_allocated_proof_is_remembered_until_any_unmap)
{
	struct fid_domain *d = allocated_domain();
	char *p = map_pages_filled(4, 1), *other = map_pages_filled(1, 1);
	size_t ps = page_size();

	ASSERT_EQ(proofs_of(d, p, 4 * ps, 1), 1);
	if (!monitor_vouches()) {
		ASSERT_EQ(proofs_of(d, p, 4 * ps, 100), 100);
		goto out;
	}
	ASSERT_EQ(proofs_of(d, p, 4 * ps, 100), 0);
	ASSERT_EQ(proofs_of(d, p + ps, 8, 100), 0);
	ASSERT_OK(munmap(other, ps));
	ASSERT_EQ(proofs_of(d, p, 4 * ps, 100), 1);
out:
	ASSERT_OK(munmap(p, 4 * ps));
	close_ok(&d->fid);
}

/* The proof made, then the range's last page unmapped: refused, by this
 * thread and by another, for the range and for a byte of that page. */
/* fi_mr: F37 */
HMR_TEST(mr_allocated_proven_range_unmapped_is_efault)
{
	struct fid_domain *d = allocated_domain();
	char *p = map_pages_filled(3, 1);
	size_t ps = page_size();

	ASSERT_EQ(proofs_of(d, p, 3 * ps, 3), monitor_vouches() ? 1 : 3);
	ASSERT_OK(munmap(p + 2 * ps, ps));
	ASSERT_EQ(try_reg(d, p, 3 * ps), -FI_EFAULT);
	ASSERT_EQ(try_reg(d, p + 2 * ps + 5, 1), -FI_EFAULT);
	ASSERT_OK(try_reg(d, p, 2 * ps));
	ASSERT_OK(munmap(p, 2 * ps));
	close_ok(&d->fid);
}

struct unmapper {
	char *p;
	size_t len;
};

static void *unmap_it(void *arg)
{
	struct unmapper *u = arg;

	ASSERT_OK(munmap(u->p, u->len));
	return NULL;
}

/* Another thread's unmap voids this thread's proof. */
HMR_TEST(mr_allocated_range_unmapped_by_another_thread_is_efault)
{
	struct fid_domain *d = allocated_domain();
	struct unmapper u = {map_pages_filled(2, 1), 2 * page_size()};
	pthread_t t;

	ASSERT_OK(try_reg(d, u.p, u.len));
	ASSERT_OK(try_reg(d, u.p, u.len));
	ASSERT_OK(pthread_create(&t, NULL, unmap_it, &u));
	ASSERT_OK(pthread_join(t, NULL));
	ASSERT_EQ(try_reg(d, u.p, u.len), -FI_EFAULT);
	close_ok(&d->fid);
}

/* mremap that moves the pages away leaves the old range unmapped. */
HMR_TEST(mr_allocated_range_moved_by_mremap_is_efault)
{
	struct fid_domain *d = allocated_domain();
	size_t ps = page_size();
	char *p = map_pages_filled(2, 1), *q;

	ASSERT_OK(try_reg(d, p, 2 * ps));
	q = mremap(p, 2 * ps, 4 * ps, MREMAP_MAYMOVE);
	ASSERT_TRUE(q != MAP_FAILED);
	if (q != p)
		ASSERT_EQ(try_reg(d, p, 2 * ps), -FI_EFAULT);
	ASSERT_OK(try_reg(d, q, 4 * ps));
	ASSERT_OK(munmap(q, 4 * ps));
	close_ok(&d->fid);
}

/* A child does not have the parent's MADV_DONTFORK pages, and no monitor
 * event says so: the fork itself voids every proof. */
HMR_TEST(mr_allocated_dontfork_range_in_a_child_is_efault)
{
	struct fid_domain *d = allocated_domain();
	size_t ps = page_size();
	char *p = map_pages_filled(2, 1);
	int status;
	pid_t pid;

	ASSERT_OK(madvise(p, 2 * ps, MADV_DONTFORK));
	ASSERT_OK(try_reg(d, p, 2 * ps));
	ASSERT_OK(try_reg(d, p, 2 * ps));
	fflush(NULL);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		/* Closed here too: valgrind checks the child for leaks. */
		int ok = try_reg(d, p, 2 * ps) == -FI_EFAULT;

		close_ok(&d->fid);
		_exit(ok ? 0 : 1);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_OK(try_reg(d, p, 2 * ps));
	ASSERT_OK(munmap(p, 2 * ps));
	close_ok(&d->fid);
}

/* With the monitor switched off nothing vouches: every registration
 * proves its backing. */
HMR_TEST(mr_allocated_without_a_monitor_proves_every_registration)
{
	struct fid_domain *d;
	char *p;

	case_env("FI_MR_CACHE_MONITOR", "disabled");
	d = allocated_domain();
	p = map_pages_filled(1, 1);
	ASSERT_EQ(proofs_of(d, p, page_size(), 50), 50);
	ASSERT_OK(munmap(p, page_size()));
	close_ok(&d->fid);
}

HMR_TEST_MAIN()
