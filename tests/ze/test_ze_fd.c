/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_ze_fd.c: dma-buf fds in both ownership modes: none closed, none lost. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ze_util.h"

#define CYCLES 10000

/*
 * HMR_SIM_ZE_FD_MODE=driver: the driver owns one fd per allocation and
 * counts every time a caller closes it (hmr_sim_ze_fd_errors); caller: a
 * new fd per export, which the caller must close.  hmr must neither close
 * the driver's nor leak its own: the process's fd count after 10,000
 * export/release cycles is where it was.
 */
static void cycles(const char *mode)
{
	struct ze_drv d;
	char *dev, *host;
	uint64_t offset;
	int start, fds, fd, i, kept;

	case_env("HMR_SIM_ZE_FD_MODE", mode);
	d = ze_open('a');
	ASSERT_OK(hmr_hmem_status(FI_HMEM_ZE, NULL, 0));
	start = hmr_test_open_fds();
	dev = ze_dev_alloc(&d, 1, 1 << 20);
	host = ze_host_alloc(&d, 1 << 16);
	fds = hmr_test_open_fds();
	for (i = 0; i < CYCLES; i++) {
		char *p = i % 2 ? dev + 4096 * (i % 200) : host + (i % 4096);

		ASSERT_OK(hmr_hmem_dmabuf_get(p, 64, 0, &fd, &offset));
		ASSERT_U64_EQ(offset, p - (i % 2 ? dev : host));
		/* hmr hands out its own fd: never the driver's, which the
		 * driver would close under the caller. */
		ASSERT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
		ASSERT_OK(hmr_hmem_dmabuf_put(p, fd));
	}
	/* Driver mode: the driver keeps one fd per allocation exported,
	 * until it is freed; nothing else is left open. */
	kept = mode[0] == 'd' ? 2 : 0;
	ASSERT_EQ(d.hooks.open_fds(), kept);
	ASSERT_EQ(hmr_test_open_fds(), fds + kept);
	ASSERT_EQ(d.hooks.fd_errors(), 0);
	ze_free(&d, dev);
	ze_free(&d, host);
	ASSERT_EQ(d.hooks.open_fds(), 0);
	ASSERT_EQ(d.hooks.fd_errors(), 0);
	ASSERT_EQ(hmr_test_open_fds(), start);
	ze_close(&d);
}

HMR_TEST(ze_fd_driver_owned_10000_exports_close_nothing_of_the_driver)
{
	cycles("driver");
}

HMR_TEST(ze_fd_caller_owned_10000_exports_leak_nothing)
{
	cycles("caller");
}

/* The fd hmr hands out maps the bytes even after the driver's own fd is
 * gone (driver mode closes it in zeMemFree): it is a dup, not a loan. */
HMR_TEST(ze_fd_handed_out_outlives_the_drivers_fd)
{
	struct ze_drv d = ze_open('a');
	char *p = ze_dev_alloc(&d, 0, 1 << 16);
	unsigned char in[64], *map;
	uint64_t offset;
	int fd;

	fill(in, sizeof(in), 1);
	ASSERT_OK(hmr_hmem_copy_to(p, in, sizeof(in)));
	ASSERT_OK(hmr_hmem_dmabuf_get(p, sizeof(in), 0, &fd, &offset));
	ze_free(&d, p);
	ASSERT_EQ(d.hooks.open_fds(), 0);
	map = mmap(NULL, 1 << 16, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map, in, sizeof(in)), 0);
	munmap(map, 1 << 16);
	ASSERT_EQ(close(fd), 0);
	ASSERT_EQ(d.hooks.fd_errors(), 0);
	ze_close(&d);
}

HMR_TEST(ze_fd_put_of_a_closed_fd_is_ebadf)
{
	struct ze_drv d = ze_open('a');
	char *p = ze_dev_alloc(&d, 0, 4096);
	uint64_t offset;
	int fd;

	ASSERT_OK(hmr_hmem_dmabuf_get(p, 4096, 0, &fd, &offset));
	ASSERT_OK(hmr_hmem_dmabuf_put(p, fd));
	ASSERT_EQ(hmr_hmem_dmabuf_put(p, fd), -FI_EBADF);
	ASSERT_EQ(d.hooks.fd_errors(), 0);
	ze_free(&d, p);
	ze_close(&d);
}

HMR_TEST_MAIN()
