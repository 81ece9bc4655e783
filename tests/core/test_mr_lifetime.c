/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_lifetime.c: fds and processes around registrations. */
#define _GNU_SOURCE
#include <dirent.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "core_util.h"

/* FI_MR_DMABUF maps the buffer; its close unmaps it and the caller's fd is
 * the caller's: nothing hmr took stays open. */
HMR_TEST(mr_dmabuf_100000_registrations_leave_fds_flat)
{
	struct fid_domain *d = open_domain(0, FI_HMEM);
	int fd = memfd_create("hmr-fd-count", MFD_CLOEXEC);
	struct fi_mr_dmabuf b = {.len = 4096};
	struct fi_mr_attr attr;
	struct fid_mr *mr;
	int before, i;

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(ftruncate(fd, 8192), 0);
	b.fd = fd;
	b.offset = 100;
	memset(&attr, 0, sizeof(attr));
	attr.dmabuf = &b;
	attr.iov_count = 1;
	attr.access = REMOTE_RW;
	before = hmr_test_open_fds();
	for (i = 0; i < 100000; i++) {
		attr.requested_key = (uint64_t)i;
		ASSERT_OK(fi_mr_regattr(d, &attr, FI_MR_DMABUF, &mr));
		close_ok(&mr->fid);
	}
	ASSERT_EQ(hmr_test_open_fds(), before);
	close(fd);
	close_ok(&d->fid);
}

/*
 * fork with live registrations: the child has a copy of the domain (as of
 * any malloc'd state) and can check and register in it; the parent's keys,
 * pointers and checks are unaffected by what the child does.
 */
HMR_TEST(mr_fork_child_works_and_parent_is_unaffected)
{
	struct fid_domain *d = open_domain(FI_MR_VIRT_ADDR, 0);
	static char buf[8192];
	struct fid_mr *mr = reg_ok(d, buf, 4096, REMOTE_RW, 9, 0), *other;
	void *p;
	pid_t pid;
	int status;

	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		/* Child: the parent's MR is there; new ones work; closing
		 * is the child's own business. */
		if (hmr_mr_access(d, 9, (uintptr_t)buf, 8, FI_REMOTE_WRITE,
		                  &p) ||
		    p != buf)
			_exit(2);
		if (fi_mr_reg(d, buf + 4096, 4096, REMOTE_RW, 0, 10, 0, &other,
		              NULL))
			_exit(3);
		if (fi_close(&mr->fid) || fi_close(&other->fid) ||
		    fi_close(&d->fid))
			_exit(4);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	/* The child's close and its key 10 are not the parent's. */
	ASSERT_OK(hmr_mr_access(d, 9, (uintptr_t)buf, 8, FI_REMOTE_WRITE, &p));
	ASSERT_PTR_EQ(p, buf);
	ASSERT_EQ(hmr_mr_access(d, 10, (uintptr_t)buf + 4096, 8,
	                        FI_REMOTE_WRITE, &p),
	          -FI_ENOKEY);
	other = reg_ok(d, buf + 4096, 4096, REMOTE_RW, 10, 0);
	close_ok(&other->fid);
	close_ok(&mr->fid);
	close_ok(&d->fid);
}

HMR_TEST_MAIN()
