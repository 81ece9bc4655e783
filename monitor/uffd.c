/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* uffd.c: the userfaultfd monitor: the file descriptor and its threads. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "base/log.h"
#include "monitor/monitor.h"
#include "monitor/monitor_impl.h"
#include "monitor/uffd.h"

/*
 * The kernel reports UNMAP (munmap, mremap shrinking, MAP_FIXED over a
 * range), REMOVE (madvise DONTNEED/FREE/REMOVE) and REMAP (mremap moving)
 * for registered ranges only.  The thread that unmaps WAITS in the kernel
 * until an event is read, but the read is all it waits for: the pages are
 * gone (or going) when hmr__monitor_notify runs.  So this monitor
 * delivers events AFTER the fact: between the unmap and the delivery, a
 * cache may still hand out a registration of memory that is gone.  That
 * is the limit that keeps it a fallback (memhooks reports before).
 *
 * Two threads, so that neither ever waits for something an unmapping
 * thread may hold:
 * - the reader only reads events (and, in missing mode, resolves faults)
 *   and queues them in a fixed ring; it takes no lock, allocates nothing
 *   and never waits for the deliverer.  A full ring sets `overflow`,
 *   delivered as one event covering the whole address space.
 * - the deliverer calls hmr__monitor_notify.  Subscribers may unmap
 *   registered memory from there (a drain frees): the kernel then makes
 *   the deliverer wait for the reader, which is free to read.  With one
 *   thread doing both, that unmap would wait for itself forever.
 */

enum { RING = 1024 };

static int uffd = -1;     /* Written once at start (monitor.c's lock). */
static uint64_t reg_mode; /* UFFDIO_REGISTER_MODE_WP or _MISSING. */
static enum hmr_uffd_mode want_mode;
static uintptr_t page_mask;
static struct {
	uintptr_t start;
	size_t len;
} ring[RING];                    /* Reader writes, deliverer reads. */
static atomic_size_t head, tail; /* Reader owns head, deliverer tail. */
static atomic_bool overflow;
static sem_t ready; /* One post per queued event. */

void hmr__monitor_uffd_test_mode(enum hmr_uffd_mode mode)
{
	want_mode = mode;
}

int hmr__uffd_fd(void)
{
	return uffd;
}

uint64_t hmr__uffd_mode(void)
{
	return reg_mode;
}

static void push(uintptr_t start, size_t len)
{
	size_t h = atomic_load_explicit(&head, memory_order_relaxed);

	if (h - atomic_load_explicit(&tail, memory_order_acquire) >= RING) {
		atomic_store(&overflow, true);
	} else {
		ring[h % RING].start = start;
		ring[h % RING].len = len;
		atomic_store_explicit(&head, h + 1, memory_order_release);
	}
	sem_post(&ready);
}

/* Missing mode: a first touch of a registered page waits for us.  Give
 * it the zero page, as the kernel would have (or wake it when another
 * thread's fault already filled the page).  Where the zero page is
 * refused (hugetlbfs), the page leaves the registration. */
static void resolve_fault(uint64_t address)
{
	struct uffdio_zeropage zp = {
	        .range = {.start = address & ~(uint64_t)page_mask,
	                  .len = page_mask + 1}};
	struct uffdio_range r = zp.range;

	if (!ioctl(uffd, UFFDIO_ZEROPAGE, &zp))
		return;
	if (errno != EEXIST) {
		hmr_warn("userfaultfd: no zero page at 0x%llx (%s); "
		         "unregistered",
		         (unsigned long long)r.start, strerror(errno));
		ioctl(uffd, UFFDIO_UNREGISTER, &r);
	}
	ioctl(uffd, UFFDIO_WAKE, &r);
}

static void *reader(void *arg)
{
	struct uffd_msg msg[16];
	ssize_t n, i;

	(void)arg;
	for (;;) {
		n = read(uffd, msg, sizeof(msg));
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			hmr_warn("userfaultfd: read: %s; no more events",
			         strerror(errno));
			atomic_store(&overflow, true);
			sem_post(&ready);
			return NULL;
		}
		for (i = 0; i < n / (ssize_t)sizeof(msg[0]); i++) {
			switch (msg[i].event) {
			case UFFD_EVENT_UNMAP:
			case UFFD_EVENT_REMOVE:
				push(msg[i].arg.remove.start,
				     msg[i].arg.remove.end -
				             msg[i].arg.remove.start);
				break;
			case UFFD_EVENT_REMAP:
				push(msg[i].arg.remap.from,
				     msg[i].arg.remap.len);
				break;
			case UFFD_EVENT_PAGEFAULT:
				resolve_fault(msg[i].arg.pagefault.address);
				break;
			}
		}
	}
	return NULL;
}

static void *deliverer(void *arg)
{
	size_t t, h;
	uintptr_t start;
	size_t len;

	(void)arg;
	for (;;) {
		while (sem_wait(&ready) && errno == EINTR)
			;
		if (atomic_exchange(&overflow, false))
			hmr__monitor_notify(0, SIZE_MAX);
		t = atomic_load_explicit(&tail, memory_order_relaxed);
		h = atomic_load_explicit(&head, memory_order_acquire);
		for (; t != h; t++) {
			start = ring[t % RING].start;
			len = ring[t % RING].len;
			atomic_store_explicit(&tail, t + 1,
			                      memory_order_release);
			hmr__monitor_notify(start, len);
		}
	}
	return NULL;
}

/* A userfaultfd with the API handshake done; its features in *have. */
static int open_uffd(uint64_t features, uint64_t *have)
{
	struct uffdio_api api = {.api = UFFD_API, .features = features};
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api)) {
		err = errno;
		close(fd);
		return -err;
	}
	*have = api.features;
	return fd;
}

static int refused(int err, char *why, size_t why_len)
{
	char knob[8] = "?";
	int fd = open("/proc/sys/vm/unprivileged_userfaultfd",
	              O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd >= 0) {
		n = read(fd, knob, sizeof(knob) - 1);
		knob[n > 0 ? n : 0] = '\0';
		knob[strcspn(knob, "\n")] = '\0';
		close(fd);
	}
	if (err == EPERM)
		snprintf(why, why_len,
		         "userfaultfd: EPERM (vm.unprivileged_userfaultfd is "
		         "%s and the process lacks CAP_SYS_PTRACE, or a "
		         "seccomp filter refuses the system call)",
		         knob);
	else if (err == ENOSYS)
		snprintf(why, why_len,
		         "userfaultfd: ENOSYS (the kernel has no userfaultfd)");
	else
		snprintf(why, why_len, "userfaultfd: %s", strerror(err));
	return err == ENOSYS ? -FI_ENOSYS : -FI_EPERM;
}

static int start_threads(char *why, size_t why_len)
{
	pthread_t t;
	sigset_t all, old;
	int rc;

	/* Our threads take no signal meant for the application. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, NULL, deliverer, NULL);
	if (!rc) {
		pthread_detach(t);
		rc = pthread_create(&t, NULL, reader, NULL);
		if (!rc)
			pthread_detach(t);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		snprintf(why, why_len, "userfaultfd: pthread_create: %s",
		         strerror(rc));
	return rc ? -FI_EAGAIN : 0;
}

int hmr__monitor_uffd_start(char *why, size_t why_len)
{
	const uint64_t events = UFFD_FEATURE_EVENT_UNMAP |
	                        UFFD_FEATURE_EVENT_REMOVE |
	                        UFFD_FEATURE_EVENT_REMAP;
	uint64_t have = 0, want;
	int fd;

	page_mask = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;
	fd = open_uffd(0, &have);
	if (fd < 0)
		return refused(-fd, why, why_len);
	close(fd);
	if ((have & events) != events) {
		snprintf(why, why_len,
		         "userfaultfd: the kernel lacks the unmap, remove or "
		         "remap events");
		return -FI_ENOSYS;
	}
	/* Write-protect mode without ever write-protecting: no fault ever
	 * waits for us.  Missing mode makes each first touch of a
	 * registered page wait for the reader (a page nobody resolves
	 * blocks forever), so it is the fallback for kernels without
	 * write-protection of anonymous memory (before 5.7). */
	want = events;
	if (want_mode != HMR_UFFD_MISSING &&
	    (have & UFFD_FEATURE_PAGEFAULT_FLAG_WP)) {
		reg_mode = UFFDIO_REGISTER_MODE_WP;
		want |= have & UFFD_FEATURE_WP_HUGETLBFS_SHMEM;
	} else if (want_mode == HMR_UFFD_WP) {
		snprintf(why, why_len,
		         "userfaultfd: no write-protect mode in this kernel");
		return -FI_ENOSYS;
	} else {
		reg_mode = UFFDIO_REGISTER_MODE_MISSING;
		want |= have & (UFFD_FEATURE_MISSING_SHMEM |
		                UFFD_FEATURE_MISSING_HUGETLBFS);
	}
	fd = open_uffd(want, &have);
	if (fd < 0)
		return refused(-fd, why, why_len);
	uffd = fd;
	if (sem_init(&ready, 0, 0) || start_threads(why, why_len)) {
		close(fd);
		uffd = -1;
		return -FI_EAGAIN;
	}
	hmr__monitor_pin_library();
	return 0;
}
