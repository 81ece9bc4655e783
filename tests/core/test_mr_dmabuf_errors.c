/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_dmabuf_errors.c: a dma-buf mmap refuses: a -FI_E* code, not errno. */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dmabuf_util.h"

/*
 * The software domain maps an FI_MR_DMABUF buffer so hmr_mr_access can
 * reach it.  NVIDIA's dma-buf fds refuse mmap with the kernel's ENOTSUPP
 * (524, no name in user space: ../shared/lab/gpu.md), and hmr passed that
 * on as -524.  This program's mmap stands in front of libc's (libhmr's
 * calls resolve to it) and fails for one fd with the errno a case picks.
 */
static int fail_fd = -1, fail_errno;

__attribute__((visibility("default"))) void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);

	if (fd >= 0 && fd == fail_fd) {
		errno = fail_errno;
		return MAP_FAILED;
	}
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "mmap");
	return real(addr, len, prot, flags, fd, off);
}

static int reg_failing(int err)
{
	struct fixture f = FIXTURE(.caps = FI_HMEM);
	struct fi_mr_dmabuf dmabuf;
	struct fi_mr_attr attr;
	struct fid_mr *mr = NULL;
	int ret;

	f.fd = make_memfd();
	fail_fd = f.fd;
	fail_errno = err;
	dmabuf_attr(&attr, &dmabuf, f.fd, 0, 4096, NULL, 1);
	ret = fi_mr_regattr(f.domain, &attr, FI_MR_DMABUF, &mr);
	fail_fd = -1;
	ASSERT_PTR_EQ(mr, NULL);
	fixture_close(&f);
	return ret;
}

HMR_TEST(mr_dmabuf_enotsupp_from_mmap_is_eopnotsupp)
{
	ASSERT_EQ(reg_failing(524), -FI_EOPNOTSUPP);
}

HMR_TEST(mr_dmabuf_enodev_from_mmap_is_eopnotsupp)
{
	ASSERT_EQ(reg_failing(ENODEV), -FI_EOPNOTSUPP);
}

HMR_TEST(mr_dmabuf_named_errno_from_mmap_passes)
{
	ASSERT_EQ(reg_failing(ENOMEM), -FI_ENOMEM);
	ASSERT_EQ(reg_failing(EACCES), -FI_EACCES);
}

/* An errno fi_mr(3) has no name for is -FI_EOTHER, never itself. */
HMR_TEST(mr_dmabuf_unnamed_errno_from_mmap_is_eother)
{
	ASSERT_EQ(reg_failing(EXDEV), -FI_EOTHER);
	ASSERT_EQ(reg_failing(ENXIO), -FI_EOTHER);
}

HMR_TEST_MAIN()
