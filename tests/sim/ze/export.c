/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* export.c: dma-buf fds of allocations, and who owns them. */
#include "sim_ze.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * HMR_SIM_ZE_FD_MODE selects who owns an exported fd:
 *
 * "driver" (default), as Intel's compute-runtime: the first export of an
 *   allocation (zeMemGetAllocProperties with ze_external_memory_export_
 *   fd_t, or zeMemGetIpcHandle) creates one fd, later exports return the
 *   same number, and zeMemFree closes it.  The caller must NOT close it:
 *   if it does, the next export of that allocation (and every later one)
 *   fails with ZE_RESULT_ERROR_UNKNOWN, and hmr_sim_ze_fd_errors() counts
 *   it; zeMemFree notices too, and then leaves the number alone (it may
 *   belong to someone else by now).
 *
 * "caller": every export returns a new fd that the caller must close.
 *   IPC handles still carry the driver-owned fd (Level Zero 1.4 has no
 *   call to release one).
 *
 * Every fd is a dup of the allocation's memfd (so they share one open
 * file description); the driver-owned fd is recognised as still its own
 * by kcmp(KCMP_FILE) against the memfd, or by inode where kcmp is
 * unavailable.  With HMR_SIM_DMABUF=udmabuf (the test VM's importing
 * rxe) every fd is a udmabuf of the whole allocation instead
 * (sim_dmabuf_fd), a file of its own: the driver keeps a private dup of
 * its fd (drv_ref, closed at zeMemFree) and compares against that.  IPC
 * handles carry the driver-owned fd, so in that mode they import only
 * where the importer accepts a dma-buf (this simulator's import wants a
 * memfd: not in that mode).  All functions expect sim.lock to be held.
 */

/* fd still refers to the memfd's open file description. */
static int sim_same_file(int fd, int memfd)
{
	pid_t pid = getpid();
	struct stat a, b;
	long r = syscall(SYS_kcmp, pid, pid, KCMP_FILE, fd, memfd);

	if (r >= 0)
		return r == 0;
	if (errno == EBADF)
		return 0;
	/* No kcmp (seccomp, old kernel): the same file at least. */
	return fstat(fd, &a) == 0 && fstat(memfd, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void sim_close_driver_ref(struct sim_alloc *a)
{
	if (a->drv_ref >= 0)
		close(a->drv_ref);
	a->drv_ref = -1;
}

/* The open file a's driver-owned fd must still be. */
static int sim_driver_file(const struct sim_alloc *a)
{
	return a->drv_ref >= 0 ? a->drv_ref : a->mem.fd;
}

/* A new export fd of all of a: a memfd dup, or a udmabuf. */
static int sim_new_export(const struct sim_alloc *a)
{
	return sim_dmabuf_fd(a->mem.fd, 0, a->mem.size);
}

/* The driver-owned fd of a, created at the first call. */
ze_result_t sim_driver_fd(struct sim_alloc *a, int *fd)
{
	if (a->drv_fd_broken)
		return ZE_RESULT_ERROR_UNKNOWN;
	if (a->drv_fd >= 0 && !sim_same_file(a->drv_fd, sim_driver_file(a))) {
		sim_log("allocation %llu: the caller closed the driver-owned "
		        "dma-buf fd %d",
		        (unsigned long long)a->id, a->drv_fd);
		a->drv_fd_broken = 1;
		a->drv_fd = -1;
		sim_close_driver_ref(a);
		sim.drv_fds--;
		sim.fd_errors++;
		return ZE_RESULT_ERROR_UNKNOWN;
	}
	if (a->drv_fd < 0) {
		a->drv_fd = sim_new_export(a);
		if (a->drv_fd < 0)
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		if (sim_dmabuf_real()) {
			a->drv_ref = fcntl(a->drv_fd, F_DUPFD_CLOEXEC, 0);
			if (a->drv_ref < 0) {
				close(a->drv_fd);
				a->drv_fd = -1;
				return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
			}
		}
		sim.drv_fds++;
	}
	*fd = a->drv_fd;
	return ZE_RESULT_SUCCESS;
}

/* What a dma-buf export hands out, in the configured mode. */
ze_result_t sim_export_fd(struct sim_alloc *a, int *fd)
{
	int nfd;

	if (!sim_cfg.fd_caller)
		return sim_driver_fd(a, fd);
	nfd = sim_new_export(a);
	if (nfd < 0)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	*fd = nfd;
	return ZE_RESULT_SUCCESS;
}

/* At free: closes the driver-owned fd if it is still the driver's. */
void sim_release_driver_fd(struct sim_alloc *a)
{
	if (a->drv_fd < 0)
		return;
	if (sim_same_file(a->drv_fd, sim_driver_file(a))) {
		close(a->drv_fd);
	} else {
		sim_log("allocation %llu freed: the caller had closed the "
		        "driver-owned dma-buf fd %d",
		        (unsigned long long)a->id, a->drv_fd);
		sim.fd_errors++;
	}
	a->drv_fd = -1;
	sim_close_driver_ref(a);
	sim.drv_fds--;
}

/* Test hook: driver-owned dma-buf fds currently open. */
SIM_API unsigned long hmr_sim_ze_open_fds(void)
{
	unsigned long n;

	pthread_mutex_lock(&sim.lock);
	n = sim.drv_fds;
	pthread_mutex_unlock(&sim.lock);
	return n;
}

/* Test hook: driver-owned fds found closed (or replaced) by the caller. */
SIM_API unsigned long hmr_sim_ze_fd_errors(void)
{
	unsigned long n;

	pthread_mutex_lock(&sim.lock);
	n = sim.fd_errors;
	pthread_mutex_unlock(&sim.lock);
	return n;
}
