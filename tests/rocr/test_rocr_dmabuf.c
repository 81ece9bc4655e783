/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_rocr_dmabuf.c: dma-buf export: offsets, fds, and when it is refused. */
#include <sys/mman.h>

#include "rocr_util.h"

#define MIB (1 << 20)

/* The bytes at (fd, offset) are those at p (written through the runtime). */
static void expect_bytes(struct app *a, char *p, size_t span, uint64_t off,
                         int fd)
{
	char pattern[64], *map;

	memset(pattern, 0x9d, sizeof(pattern));
	ASSERT_EQ(a->memory_copy(p, pattern, sizeof(pattern)),
	          HSA_STATUS_SUCCESS);
	map = mmap(NULL, span, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map + off, pattern, sizeof(pattern)), 0);
	munmap(map, span);
}

HMR_TEST(rocr_dmabuf_of_allocation_base_has_offset_zero)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 1, 4 * MIB);
	uint64_t offset = 99;
	int fd;

	ASSERT_OK(hmr_hmem_dmabuf_get(p, 4 * MIB, 0, &fd, &offset));
	ASSERT_U64_EQ(offset, 0);
	expect_bytes(&a, p, 4 * MIB, offset, fd);
	ASSERT_OK(hmr_hmem_dmabuf_put(p, fd));
	app_free(&a, p);
}

/* ROCr exports the whole buffer and reports the pointer's offset in it;
 * hmr hands that offset on. */
HMR_TEST(rocr_dmabuf_interior_pointer_gets_the_runtime_offset)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 0, 4 * MIB);
	uint64_t offset;
	int fd;

	ASSERT_OK(hmr_hmem_dmabuf_get(p + 12345, 64, 0, &fd, &offset));
	ASSERT_U64_EQ(offset, 12345);
	expect_bytes(&a, p + 12345, 4 * MIB, offset, fd);
	ASSERT_OK(hmr_hmem_dmabuf_put(p, fd));
	ASSERT_OK(hmr_hmem_dmabuf_get(p + 3 * MIB, MIB, 0, &fd, &offset));
	ASSERT_U64_EQ(offset, 3 * MIB);
	expect_bytes(&a, p + 3 * MIB, 4 * MIB, offset, fd);
	ASSERT_OK(hmr_hmem_dmabuf_put(p, fd));
	app_free(&a, p);
}

HMR_TEST(rocr_dmabuf_10000_export_release_cycles_leak_no_fd)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 0, MIB);
	uint64_t offset;
	int fd, i, before;

	before = hmr_test_open_fds();
	for (i = 0; i < 10000; i++) {
		ASSERT_OK(hmr_hmem_dmabuf_get(p + 4096, 4096, 0, &fd, &offset));
		ASSERT_OK(hmr_hmem_dmabuf_put(p + 4096, fd));
	}
	ASSERT_EQ(hmr_test_open_fds(), before);
	ASSERT_EQ(a.calls("hsa_amd_portable_close_dmabuf"), 10000);
	app_free(&a, p);
}

HMR_TEST(rocr_dmabuf_range_past_the_allocation_is_einval)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 0, MIB);
	uint64_t offset;
	int fd = -1;

	ASSERT_EQ(hmr_hmem_dmabuf_get(p + MIB - 4096, 8192, 0, &fd, &offset),
	          -FI_EINVAL);
	ASSERT_EQ(fd, -1);
	ASSERT_EQ(a.calls("hsa_amd_portable_export_dmabuf"), 0);
	app_free(&a, p);
}

/* ROCr exports GPU memory only (INVALID_AGENT for CPU pools): refused
 * before the runtime is asked. */
HMR_TEST(rocr_dmabuf_of_cpu_pool_memory_is_eopnotsupp)
{
	struct app a = app_open();
	char *h = cpu_alloc(&a, MIB);
	uint64_t offset;
	int fd;

	ASSERT_EQ(hmr_hmem_dmabuf_get(h, 4096, 0, &fd, &offset),
	          -FI_EOPNOTSUPP);
	app_free(&a, h);
}

HMR_TEST(rocr_dmabuf_export_failure_is_reported)
{
	struct app a;
	char *p;
	uint64_t offset;
	int fd, before;

	case_env("HMR_SIM_ROCR_FAIL",
	         "hsa_amd_portable_export_dmabuf=HSA_STATUS_ERROR_OUT_OF_"
	         "RESOURCES:1,hsa_amd_portable_export_dmabuf=HSA_STATUS_"
	         "ERROR:1,hsa_amd_portable_export_dmabuf=HSA_STATUS_ERROR_"
	         "INVALID_ALLOCATION:1");
	a = app_open();
	p = gpu_alloc(&a, 0, MIB);
	before = hmr_test_open_fds();
	ASSERT_EQ(hmr_hmem_dmabuf_get(p, 4096, 0, &fd, &offset), -FI_ENOMEM);
	ASSERT_EQ(hmr_hmem_dmabuf_get(p, 4096, 0, &fd, &offset), -FI_EIO);
	ASSERT_EQ(hmr_hmem_dmabuf_get(p, 4096, 0, &fd, &offset), -FI_EINVAL);
	ASSERT_EQ(hmr_test_open_fds(), before);
	ASSERT_OK(hmr_hmem_dmabuf_get(p, 4096, 0, &fd, &offset));
	ASSERT_OK(hmr_hmem_dmabuf_put(p, fd));
	app_free(&a, p);
}

/* The refusals: each says why, and the export is never tried. */
static void expect_no_dmabuf(const char *reason)
{
	struct hmr_hmem_info info;
	struct app a;
	char *p;
	uint64_t offset;
	int fd;

	capture_log();
	a = app_open();
	p = gpu_alloc(&a, 0, MIB);
	/* The backend is there; only dma-buf is not. */
	ASSERT_OK(hmr_hmem_status(FI_HMEM_ROCR, NULL, 0));
	ASSERT_OK(hmr_hmem_query(p, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ROCR);
	ASSERT_EQ(hmr_hmem_dmabuf_get(p, 4096, 0, &fd, &offset),
	          -FI_EOPNOTSUPP);
	ASSERT_EQ(a.calls("hsa_amd_portable_export_dmabuf"), 0);
	ASSERT_TRUE(log_has("dma-buf no: "));
	ASSERT_TRUE(log_has(reason));
	app_free(&a, p);
}

HMR_TEST(rocr52_backend_present_without_dmabuf_says_why)
{
	case_runtime("HMR_TEST_SIM_ROCM52");
	expect_no_dmabuf("lacks hsa_amd_portable_export_dmabuf");
}

HMR_TEST(rocr_dmabuf_refused_when_the_runtime_says_no)
{
	case_env("HMR_SIM_ROCR_DMABUF", "0");
	expect_no_dmabuf("the runtime says no");
}

HMR_TEST(rocr_dmabuf_refused_when_the_kernel_lacks_p2pdma)
{
	case_env("HMR_ROCR_KERNEL_CONFIG", getenv("HMR_TEST_KCONFIG_NO_P2P"));
	expect_no_dmabuf("lacks CONFIG_PCI_P2PDMA=y");
}

/* What a program learns before registering: the same three answers. */
static void expect_device_dmabuf(int answer, const char *why)
{
	struct hmr_hmem_backend_info b = HMR_HMEM_BACKEND_INFO_INIT;
	struct hmr_hmem_device_info d = HMR_HMEM_DEVICE_INFO_INIT;

	ASSERT_OK(hmr_hmem_backend_info(FI_HMEM_ROCR, &b));
	ASSERT_EQ(b.devices, 2);
	ASSERT_TRUE(strstr(b.peermem, "amdgpu_peermem") != NULL);
	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_ROCR, 1, &d));
	ASSERT_EQ(d.device, 1);
	ASSERT_EQ(d.dmabuf, answer);
	ASSERT_TRUE(strstr(d.dmabuf_why, why) != NULL);
	ASSERT_EQ(hmr_hmem_device_info(FI_HMEM_ROCR, 2, &d), -FI_ENOENT);
}

HMR_TEST(rocr_device_info_dmabuf_yes_no_unknown_with_reason)
{
	case_env("HMR_ROCR_KERNEL_CONFIG", getenv("HMR_TEST_KCONFIG_YES_GZ"));
	expect_device_dmabuf(1, "say yes");
}

HMR_TEST(rocr52_device_info_says_no_dmabuf_and_why)
{
	case_runtime("HMR_TEST_SIM_ROCM52");
	expect_device_dmabuf(0, "lacks hsa_amd_portable_export_dmabuf");
}

HMR_TEST(rocr_device_info_unknown_kernel_config_is_unknown)
{
	case_env("HMR_ROCR_KERNEL_CONFIG", "/nonexistent/config");
	expect_device_dmabuf(-1, "/nonexistent/config");
}

/* No configuration to read: "unknown", so the export is tried. */
HMR_TEST(rocr_dmabuf_unknown_kernel_config_still_exports)
{
	struct app a;
	char *p;
	uint64_t offset;
	int fd;

	case_env("HMR_ROCR_KERNEL_CONFIG", "/nonexistent/config");
	capture_log();
	a = app_open();
	p = gpu_alloc(&a, 0, MIB);
	ASSERT_OK(hmr_hmem_dmabuf_get(p, 4096, 0, &fd, &offset));
	ASSERT_OK(hmr_hmem_dmabuf_put(p, fd));
	ASSERT_TRUE(log_has("dma-buf unknown: "));
	app_free(&a, p);
}

/* The configuration is read through zlib, as /proc/config.gz is. */
HMR_TEST(rocr_dmabuf_gzip_kernel_config_is_read)
{
	case_env("HMR_ROCR_KERNEL_CONFIG", getenv("HMR_TEST_KCONFIG_YES_GZ"));
	capture_log();
	ASSERT_OK(hmr_hmem_status(FI_HMEM_ROCR, NULL, 0));
	ASSERT_TRUE(log_has("dma-buf yes: the runtime and the kernel"));
	ASSERT_TRUE(log_has(".gz) say yes"));
}

/* Host memory has no dma-buf: a wrong argument, said in the log. */
HMR_TEST(rocr_dmabuf_of_host_memory_is_not_rocr)
{
	char *buf = malloc(8192);
	uint64_t offset;
	int fd;

	app_open();
	capture_log();
	ASSERT_EQ(hmr_hmem_dmabuf_get(buf, 4096, 0, &fd, &offset), -FI_EINVAL);
	ASSERT_TRUE(log_has("is host memory: only device memory"));
	free(buf);
}

HMR_TEST_MAIN()
