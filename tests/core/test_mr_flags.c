/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_flags.c: SINGLE_USE, RMA_PMEM, HMEM flags and FI_MR_DMABUF. */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dmabuf_util.h"

static char buf[4096];

static int reg_flags(struct fid_domain *domain, uint64_t flags)
{
	struct fid_mr *mr = NULL;
	int ret = fi_mr_reg(domain, buf, 64, REMOTE_RW, 0, 1, flags, &mr, NULL);

	if (ret == 0)
		close_ok(&mr->fid);
	else
		ASSERT_PTR_EQ(mr, NULL);
	return ret;
}

/* fi_mr: F110 */
HMR_TEST(mr_single_use_key_works_once)
{
	struct fixture f = FIXTURE(.buf = buf, .access = REMOTE_RW,
	                           .flags = FI_MR_SINGLE_USE);
	void *ptr = NULL;

	ASSERT_OK(hmr_mr_access(f.domain, 1, 0, 8, FI_REMOTE_WRITE, &ptr));
	ASSERT_EQ(hmr_mr_access(f.domain, 1, 0, 8, FI_REMOTE_WRITE, &ptr),
	          -FI_ENOKEY);
	ASSERT_EQ(hmr_mr_access(f.domain, 1, 0, 8, FI_REMOTE_READ, &ptr),
	          -FI_ENOKEY);
	fixture_close(&f);
}

/* fi_mr: F110 */
HMR_TEST(mr_single_use_refused_access_does_not_use_it_up)
{
	struct fixture f = FIXTURE(.buf = buf, .access = FI_REMOTE_READ,
	                           .flags = FI_MR_SINGLE_USE);
	void *ptr = NULL;

	ASSERT_EQ(hmr_mr_access(f.domain, 1, 0, 8, FI_REMOTE_WRITE, &ptr),
	          -FI_EACCES);
	ASSERT_EQ(hmr_mr_access(f.domain, 1, 60, 8, FI_REMOTE_READ, &ptr),
	          -FI_EFAULT);
	ASSERT_EQ(hmr_mr_access(f.domain, 1, 0, 0, FI_REMOTE_READ, &ptr),
	          -FI_EINVAL);
	ASSERT_OK(hmr_mr_access(f.domain, 1, 0, 8, FI_REMOTE_READ, &ptr));
	ASSERT_PTR_EQ(ptr, buf);
	ASSERT_EQ(hmr_mr_access(f.domain, 1, 0, 8, FI_REMOTE_READ, &ptr),
	          -FI_ENOKEY);
	fixture_close(&f);
}

HMR_TEST(mr_single_use_other_keys_unaffected)
{
	struct fixture f = FIXTURE(.buf = buf, .access = REMOTE_RW,
	                           .flags = FI_MR_SINGLE_USE);
	void *ptr = NULL;
	int i;

	f.extra[0] = reg_ok(f.domain, buf, 64, REMOTE_RW, 2, 0);
	ASSERT_OK(hmr_mr_access(f.domain, 1, 0, 8, FI_REMOTE_WRITE, &ptr));
	for (i = 0; i < 3; i++)
		ASSERT_OK(hmr_mr_access(f.domain, 2, 0, 8, FI_REMOTE_WRITE,
		                        &ptr));
	fixture_close(&f);
}

/* fi_mr: F107 */
HMR_TEST(mr_rma_pmem_needs_cap)
{
	struct fixture plain = FIXTURE(.caps = 0);
	struct fixture pmem = FIXTURE(.caps = FI_RMA_PMEM);

	ASSERT_EQ(reg_flags(plain.domain, FI_RMA_PMEM), -FI_EBADFLAGS);
	ASSERT_OK(reg_flags(pmem.domain, FI_RMA_PMEM));
	fixture_close(&pmem);
	fixture_close(&plain);
}

/* fi_mr: F73 F108 F109 */
HMR_TEST(mr_hmem_flags_need_hmem_cap)
{
	struct fixture f = FIXTURE(.caps = 0);
	struct fi_mr_dmabuf dmabuf;
	struct fi_mr_attr attr;
	struct fid_mr *mr = NULL;

	f.fd = make_memfd();
	ASSERT_EQ(reg_flags(f.domain, FI_HMEM_DEVICE_ONLY), -FI_EBADFLAGS);
	ASSERT_EQ(reg_flags(f.domain, FI_HMEM_HOST_ALLOC), -FI_EBADFLAGS);
	dmabuf_attr(&attr, &dmabuf, f.fd, 0, 4096, NULL, 1);
	ASSERT_EQ(fi_mr_regattr(f.domain, &attr, FI_MR_DMABUF, &mr),
	          -FI_EBADFLAGS);
	ASSERT_PTR_EQ(mr, NULL);
	fixture_close(&f);
}

/* fi_mr: F72 */
HMR_TEST(mr_dmabuf_writes_land_in_memfd)
{
	struct fixture f = FIXTURE(.caps = FI_HMEM);
	struct fi_mr_dmabuf dmabuf;
	struct fi_mr_attr attr;
	char got[8] = {0};
	void *ptr = NULL;

	f.fd = make_memfd();
	ASSERT_EQ(pwrite(f.fd, "before", 7, 4096 + 100), 7);
	dmabuf_attr(&attr, &dmabuf, f.fd, 4096, 2 * 4096, NULL, 1);
	f.mr = regattr_ok(f.domain, &attr, FI_MR_DMABUF);
	/* 0-based: offset 0 is byte dmabuf.offset of the buffer. */
	ASSERT_OK(hmr_mr_access(f.domain, 1, 100, 7, FI_REMOTE_READ, &ptr));
	ASSERT_EQ(memcmp(ptr, "before", 7), 0);
	ASSERT_OK(hmr_mr_access(f.domain, 1, 200, 6, FI_REMOTE_WRITE, &ptr));
	memcpy(ptr, "after", 6);
	ASSERT_EQ(pread(f.fd, got, 6, 4096 + 200), 6);
	ASSERT_EQ(strcmp(got, "after"), 0);
	ASSERT_EQ(hmr_mr_access(f.domain, 1, 2 * 4096, 1, FI_REMOTE_READ, &ptr),
	          -FI_EFAULT);
	fixture_close(&f);
}

/* fi_mr: F72 */
HMR_TEST(mr_dmabuf_fd_may_be_closed_after_registering)
{
	struct fixture f = FIXTURE(.caps = FI_HMEM);
	struct fi_mr_dmabuf dmabuf;
	struct fi_mr_attr attr;
	char *view;
	void *ptr = NULL;
	int fd = make_memfd();

	view = mmap(NULL, DMABUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	            0);
	ASSERT_TRUE(view != MAP_FAILED);
	dmabuf_attr(&attr, &dmabuf, fd, 0, DMABUF_SIZE, NULL, 1);
	f.mr = regattr_ok(f.domain, &attr, FI_MR_DMABUF);
	ASSERT_OK(close(fd));
	ASSERT_OK(hmr_mr_access(f.domain, 1, 16, 4, FI_REMOTE_WRITE, &ptr));
	memcpy(ptr, "fd!", 4);
	ASSERT_EQ(strcmp(view + 16, "fd!"), 0);
	fixture_close_one(&f, &f.mr->fid);
	ASSERT_OK(munmap(view, DMABUF_SIZE));
	fixture_close(&f);
}

/* fi_mr: F36 */
HMR_TEST(mr_dmabuf_virt_addr_starts_at_base_plus_offset)
{
	struct fixture f = FIXTURE(.mr_mode = FI_MR_VIRT_ADDR, .caps = FI_HMEM);
	struct fi_mr_dmabuf dmabuf;
	struct fi_mr_attr attr;
	uint8_t raw[256];
	size_t size = sizeof(raw);
	uint64_t base = 0, va;
	char *view;
	void *ptr = NULL;

	f.fd = make_memfd();
	view = mmap(NULL, DMABUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, f.fd,
	            0);
	ASSERT_TRUE(view != MAP_FAILED);
	dmabuf_attr(&attr, &dmabuf, f.fd, 4096, 4096, view, 1);
	f.mr = regattr_ok(f.domain, &attr, FI_MR_DMABUF);
	va = (uintptr_t)view + 4096;
	ASSERT_OK(fi_mr_raw_attr(f.mr, &base, raw, &size, 0));
	ASSERT_U64_EQ(base, va);
	ASSERT_OK(hmr_mr_access(f.domain, 1, va + 8, 5, FI_REMOTE_WRITE, &ptr));
	memcpy(ptr, "virt", 5);
	ASSERT_EQ(strcmp(view + 4096 + 8, "virt"), 0);
	ASSERT_EQ(hmr_mr_access(f.domain, 1, (uintptr_t)view, 8,
	                        FI_REMOTE_WRITE, &ptr),
	          -FI_EFAULT);
	ASSERT_EQ(hmr_mr_access(f.domain, 1, 8, 8, FI_REMOTE_WRITE, &ptr),
	          -FI_EFAULT);
	fixture_close_one(&f, &f.mr->fid);
	ASSERT_OK(munmap(view, DMABUF_SIZE));
	fixture_close(&f);
}

/* fi_mr: F73 */
HMR_TEST(mr_dmabuf_rejects_null_dmabuf_or_zero_len)
{
	struct fixture f = FIXTURE(.caps = FI_HMEM);
	struct fi_mr_dmabuf dmabuf;
	struct fi_mr_attr attr;
	struct fid_mr *mr = NULL;

	f.fd = make_memfd();
	dmabuf_attr(&attr, &dmabuf, f.fd, 0, 4096, NULL, 1);
	attr.dmabuf = NULL;
	ASSERT_EQ(fi_mr_regattr(f.domain, &attr, FI_MR_DMABUF, &mr),
	          -FI_EINVAL);
	ASSERT_PTR_EQ(mr, NULL);
	dmabuf_attr(&attr, &dmabuf, f.fd, 0, 0, NULL, 1);
	ASSERT_EQ(fi_mr_regattr(f.domain, &attr, FI_MR_DMABUF, &mr),
	          -FI_EINVAL);
	ASSERT_PTR_EQ(mr, NULL);
	fixture_close(&f);
}

/* fi_mr: F73 */
HMR_TEST(mr_dmabuf_bad_fd_is_ebadf)
{
	struct fixture f = FIXTURE(.caps = FI_HMEM);
	struct fi_mr_dmabuf dmabuf;
	struct fi_mr_attr attr;
	struct fid_mr *mr = NULL;
	int fd = make_memfd();

	ASSERT_OK(close(fd)); /* now a number with no file behind it */
	dmabuf_attr(&attr, &dmabuf, -1, 0, 4096, NULL, 1);
	ASSERT_EQ(fi_mr_regattr(f.domain, &attr, FI_MR_DMABUF, &mr), -FI_EBADF);
	ASSERT_PTR_EQ(mr, NULL);
	dmabuf_attr(&attr, &dmabuf, fd, 0, 4096, NULL, 1);
	ASSERT_EQ(fi_mr_regattr(f.domain, &attr, FI_MR_DMABUF, &mr), -FI_EBADF);
	ASSERT_PTR_EQ(mr, NULL);
	fixture_close(&f);
}

/* fi_mr: F72 */
HMR_TEST(mr_dmabuf_does_not_leak_fds)
{
	struct fixture f = FIXTURE(.caps = FI_HMEM);
	struct fi_mr_dmabuf dmabuf;
	struct fi_mr_attr attr;
	struct fid_mr *mr = NULL;
	int before, i;

	f.fd = make_memfd();
	before = hmr_test_open_fds();
	for (i = 0; i < 20; i++) {
		dmabuf_attr(&attr, &dmabuf, f.fd, 0, DMABUF_SIZE, NULL, 1);
		mr = regattr_ok(f.domain, &attr, FI_MR_DMABUF);
		close_ok(&mr->fid);
		/* Failed registrations release what they took, too. */
		dmabuf_attr(&attr, &dmabuf, f.fd, 0, 0, NULL, 1);
		ASSERT_EQ(fi_mr_regattr(f.domain, &attr, FI_MR_DMABUF, &mr),
		          -FI_EINVAL);
		dmabuf_attr(&attr, &dmabuf, -1, 0, 4096, NULL, 1);
		ASSERT_EQ(fi_mr_regattr(f.domain, &attr, FI_MR_DMABUF, &mr),
		          -FI_EBADF);
	}
	ASSERT_EQ(hmr_test_open_fds(), before);
	fixture_close(&f);
}

HMR_TEST(mr_dmabuf_many_live_mrs_release_fds_on_close)
{
	struct fixture f = FIXTURE(.caps = FI_HMEM);
	struct fi_mr_dmabuf dmabuf;
	struct fi_mr_attr attr;
	struct fid_mr *mr[4];
	int before, i;

	f.fd = make_memfd();
	before = hmr_test_open_fds();
	for (i = 0; i < 4; i++) {
		dmabuf_attr(&attr, &dmabuf, f.fd, 0, 4096, NULL,
		            (uint64_t)i + 1);
		mr[i] = regattr_ok(f.domain, &attr, FI_MR_DMABUF);
	}
	for (i = 0; i < 4; i++)
		close_ok(&mr[i]->fid);
	ASSERT_EQ(hmr_test_open_fds(), before);
	fixture_close(&f);
}

/* fi_mr: F85 */
HMR_TEST(mr_hmem_cap_host_memory_with_system_iface)
{
	struct fixture f = FIXTURE(.caps = FI_HMEM);
	struct fi_mr_attr attr;
	struct iovec iov;
	void *ptr = NULL;

	attr_init(&attr, &iov, buf, 64, REMOTE_RW, 1);
	attr.iface = FI_HMEM_SYSTEM;
	attr.device.reserved = 42; /* ignored for FI_HMEM_SYSTEM */
	f.mr = regattr_ok(f.domain, &attr, 0);
	ASSERT_OK(hmr_mr_access(f.domain, 1, 0, 8, FI_REMOTE_WRITE, &ptr));
	ASSERT_PTR_EQ(ptr, buf);
	fixture_close(&f);
}

/* A spent single-use key names no region: -FI_ENOKEY, whatever the access
 * would otherwise have been refused for. */
HMR_TEST(mr_single_use_spent_key_is_enokey_for_any_access)
{
	struct fixture f = FIXTURE(.buf = buf, .access = FI_REMOTE_READ,
	                           .flags = FI_MR_SINGLE_USE);
	void *ptr = NULL;

	ASSERT_OK(hmr_mr_access(f.domain, 1, 0, 8, FI_REMOTE_READ, &ptr));
	ASSERT_EQ(hmr_mr_access(f.domain, 1, 0, 8, FI_REMOTE_WRITE, &ptr),
	          -FI_ENOKEY);
	ASSERT_EQ(hmr_mr_access(f.domain, 1, 60, 8, FI_REMOTE_READ, &ptr),
	          -FI_ENOKEY);
	fixture_close(&f);
}

/* offset + len past 2^64 (wrapping, or ending exactly there) is refused
 * as fi_mr(3) says, before the buffer is mapped. */
HMR_TEST(mr_dmabuf_range_past_2_64_is_einval)
{
	struct fixture f = FIXTURE(.caps = FI_HMEM);
	static const uint64_t probes[][2] = {
	        {UINT64_MAX - 4095, 8192}, /* wraps to 4096 */
	        {1ULL << 62, 3ULL << 62},  /* ends at 2^64 */
	        {UINT64_MAX - 4095, 4096}, /* ends at 2^64 */
	        {UINT64_MAX, 1},           /* ends at 2^64 */
	};
	struct fi_mr_dmabuf dmabuf;
	struct fi_mr_attr attr;
	struct fid_mr *mr = NULL;
	size_t i;

	f.fd = make_memfd();
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		dmabuf_attr(&attr, &dmabuf, f.fd, probes[i][0],
		            (size_t)probes[i][1], NULL, 1);
		ASSERT_EQ(fi_mr_regattr(f.domain, &attr, FI_MR_DMABUF, &mr),
		          -FI_EINVAL);
		ASSERT_PTR_EQ(mr, NULL);
	}
	fixture_close(&f);
}

HMR_TEST_MAIN()
