/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_synapseai_dmabuf.c: both dma-buf routes: offsets and fd ownership. */
#include "synapseai_util.h"

/*
 * Route 1 (the default): hlthunk_device_mapped_memory_export_dmabuf_fd,
 * an fd the caller owns.  Route 2 (HMR_HLTHUNK_LIBRARY pointing nowhere):
 * hcclLookupDMABuff, HCL's one fd, which hmr dup's.  Byte 0 of either fd
 * is the HBM base, on hardware and in the simulator: a buffer at p is at
 * offset p - globalHbmBaseAddress, never libfabric's 0.
 */
#define MIB    ((size_t)1 << 20)
#define CYCLES 10000

static void hccl_route(void)
{
	case_env("HMR_HLTHUNK_LIBRARY", "/nonexistent/libhl-thunk.so");
}

/* An interior pointer of a buffer that is not the pool's first. */
static void interior_offset(const char *export_call, const char *other)
{
	size_t len = 5 * page() + 300, off = page() + 17, n = 2 * page();
	unsigned char *data = malloc(len);
	uint64_t p, want, offset;
	int fd;

	app_start();
	app_malloc(MIB);
	p = app_malloc(len);
	pattern(data, len, 11);
	app_write(p, data, len);
	ASSERT_OK(hmr_hmem_dmabuf_get((void *)(uintptr_t)(p + off), n, 0, &fd,
	                              &offset));
	want = p + off - app.info.globalHbmBaseAddress;
	ASSERT_U64_EQ(offset, want);
	ASSERT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	expect_fd_bytes(fd, offset, data + off, n);
	/* The buffer's start, at the same base. */
	expect_fd_bytes(fd, offset - off, data, off + n);
	ASSERT_OK(hmr_hmem_dmabuf_put((void *)(uintptr_t)p, fd));
	ASSERT_EQ(fcntl(fd, F_GETFD), -1);
	ASSERT_EQ(app.calls(export_call), 1);
	ASSERT_EQ(app.calls(other), 0);
	free(data);
}

HMR_TEST(synapseai_hlthunk_dmabuf_offset_of_interior_pointer)
{
	interior_offset("hlthunk_device_mapped_memory_export_dmabuf_fd",
	                "hcclLookupDMABuff");
}

HMR_TEST(synapseai_hccl_dmabuf_offset_of_interior_pointer)
{
	hccl_route();
	interior_offset("hcclLookupDMABuff",
	                "hlthunk_device_mapped_memory_export_dmabuf_fd");
}

/* A buffer ending at the last byte of HBM: the page-rounded export
 * reaches exactly the end. */
HMR_TEST(synapseai_hlthunk_dmabuf_at_end_of_hbm)
{
	unsigned char data[100];
	uint64_t p, end, offset;
	int fd;

	case_env("HMR_SIM_SYNAPSEAI_HBM_MIB", "16");
	app_start();
	/* 2 MiB of the runtime's own, then one buffer filling the rest. */
	end = app.info.globalHbmBaseAddress + app.info.dramSize;
	p = app_malloc(14 * MIB);
	ASSERT_U64_EQ(p + 14 * MIB, end);
	pattern(data, sizeof(data), 2);
	app_write(end - sizeof(data), data, sizeof(data));
	ASSERT_OK(hmr_hmem_dmabuf_get((void *)(uintptr_t)(end - sizeof(data)),
	                              sizeof(data), 0, &fd, &offset));
	ASSERT_U64_EQ(offset, app.info.dramSize - sizeof(data));
	expect_fd_bytes(fd, offset, data, sizeof(data));
	ASSERT_OK(hmr_hmem_dmabuf_put((void *)(uintptr_t)p, fd));
}

/* Every fd hmr hands out is released by dmabuf_put: the count is flat. */
static void cycles(void)
{
	uint64_t p, offset;
	int fd, before, i;

	p = app_malloc(MIB);
	before = hmr_test_open_fds();
	for (i = 0; i < CYCLES; i++) {
		ASSERT_OK(hmr_hmem_dmabuf_get(
		        (void *)(uintptr_t)(p + (uint64_t)(i % 256) * 4096),
		        4096, 0, &fd, &offset));
		ASSERT_OK(hmr_hmem_dmabuf_put((void *)(uintptr_t)p, fd));
		if (i == 0)
			before = hmr_test_open_fds(); /* after hmr's one-time
			                                 set-up */
	}
	ASSERT_EQ(hmr_test_open_fds(), before);
}

HMR_TEST(synapseai_hlthunk_dmabuf_fds_released_over_10000_cycles)
{
	app_start();
	cycles();
	ASSERT_EQ(app.calls("hlthunk_device_mapped_memory_export_dmabuf_fd"),
	          CYCLES);
}

/* HCL's own fd: never closed by hmr, the same fd before and after. */
HMR_TEST(synapseai_hccl_dmabuf_fds_released_over_10000_cycles)
{
	unsigned char data[64];
	int hcl = -1, again = -1;
	uint64_t p;

	hccl_route();
	app_start();
	p = app_malloc(MIB);
	pattern(data, sizeof(data), 4);
	app_write(p, data, sizeof(data));
	ASSERT_EQ(app.hcclLookupDMABuff(p, 64, &hcl), hcclSuccess);
	ASSERT_GE(hcl, 0);
	cycles();
	ASSERT_EQ(app.calls("hcclLookupDMABuff"), CYCLES + 1);
	ASSERT_GE(fcntl(hcl, F_GETFD), 0);
	ASSERT_EQ(app.hcclLookupDMABuff(p, 64, &again), hcclSuccess);
	ASSERT_EQ(again, hcl);
	expect_fd_bytes(hcl, p - app.info.globalHbmBaseAddress, data,
	                sizeof(data));
}

/* dmabuf_put closes the dup, not HCL's fd, though both are open. */
HMR_TEST(synapseai_hccl_dmabuf_is_a_dup_of_hcl_fd)
{
	uint64_t p, offset;
	int hcl = -1, fd;

	hccl_route();
	app_start();
	p = app_malloc(MIB);
	ASSERT_OK(hmr_hmem_dmabuf_get((void *)(uintptr_t)p, 4096, 0, &fd,
	                              &offset));
	ASSERT_EQ(app.hcclLookupDMABuff(p, 4096, &hcl), hcclSuccess);
	ASSERT_NE(fd, hcl);
	ASSERT_OK(hmr_hmem_dmabuf_put((void *)(uintptr_t)p, fd));
	ASSERT_GE(fcntl(hcl, F_GETFD), 0);
}

/* The driver's dma-buf export switched off: refused, no fd left. */
static void switched_off(void)
{
	uint64_t p, offset;
	int fd = -1, before;

	case_env("HMR_SIM_SYNAPSEAI_DMABUF", "0");
	app_start();
	p = app_malloc(MIB);
	before = hmr_test_open_fds();
	ASSERT_EQ(hmr_hmem_dmabuf_get((void *)(uintptr_t)p, 4096, 0, &fd,
	                              &offset),
	          -FI_EOPNOTSUPP);
	ASSERT_EQ(fd, -1);
	ASSERT_EQ(hmr_test_open_fds(), before);
}

HMR_TEST(synapseai_hlthunk_dmabuf_switched_off_is_eopnotsupp)
{
	switched_off();
}

HMR_TEST(synapseai_hccl_without_gaudi_direct_fd_is_eopnotsupp)
{
	hccl_route();
	switched_off();
}

/* Host memory hmr mapped for the device is a host allocation: no
 * dma-buf of it (the NIC registers it as host memory). */
HMR_TEST(synapseai_dmabuf_of_mapped_host_memory_is_refused)
{
	char *buf = aligned_alloc(4096, 8192);
	uint64_t offset;
	int fd;

	app_start();
	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_SYNAPSEAI, buf, 8192));
	ASSERT_EQ(hmr_hmem_dmabuf_get(buf, 4096, 0, &fd, &offset),
	          -FI_EOPNOTSUPP);
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_SYNAPSEAI, buf, 8192));
	free(buf);
}

HMR_TEST_MAIN()
