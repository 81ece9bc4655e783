/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cuda_dmabuf.c: dma-buf export details: PCIe, host memory. */
#include <cuda.h>
#include <string.h>
#include <sys/mman.h>

#include "cuda_util.h"

/* PCIe mapping: asked for only when the caller asks, and retried without
 * it when refused: one driver call, or two. */
static unsigned long exports_for(uint64_t flags)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 0, 1 << 20);
	unsigned long before = s.calls("cuMemGetHandleForAddressRange");
	uint64_t offset;
	int fd;

	ASSERT_OK(hmr_hmem_dmabuf_get((void *)(uintptr_t)p, 4096, flags, &fd,
	                              &offset));
	ASSERT_OK(hmr_hmem_dmabuf_put((void *)(uintptr_t)p, fd));
	s.free(p);
	return s.calls("cuMemGetHandleForAddressRange") - before;
}

HMR_TEST(cuda_dmabuf_without_pcie_flag_asks_once)
{
	ASSERT_EQ(exports_for(0), 1);
}

HMR_TEST(cuda_dmabuf_pcie_refused_is_retried_without_it)
{
	ASSERT_EQ(exports_for(HMR_DMABUF_PCIE), 2); /* Not offered here. */
}

HMR_TEST(cuda_dmabuf_pcie_offered_is_used_at_once)
{
	case_env("HMR_SIM_CUDA_PCIE_MAPPING", "1");
	ASSERT_EQ(exports_for(HMR_DMABUF_PCIE), 1); /* PCIE_MAPPING=1 */
}

/* Where attribute 146 says so (CUDA 13 on a device that supports it;
 * the H200 of lab/gpu.md does not). */
HMR_TEST(cuda_dmabuf_of_alloc_host_memory_where_the_device_allows_it)
{
	struct sim s;
	unsigned long long at;
	uint64_t offset;
	size_t size;
	char *h, *map;
	int fd;

	case_env("HMR_SIM_CUDA_HOST_DMABUF", "1");
	s = sim_open();
	ASSERT_EQ(s.alloc_host((void **)&h, 1 << 20), 0);
	memset(h + 7, 0x2e, 16);
	ASSERT_OK(hmr_hmem_dmabuf_get(h + 7, 16, 0, &fd, &offset));
	ASSERT_U64_EQ(offset, 7);
	s.last_export(&at, &size);
	ASSERT_U64_EQ(at, (uintptr_t)h);
	ASSERT_EQ(size, 4096);
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(map[offset], 0x2e);
	munmap(map, 4096);
	ASSERT_OK(hmr_hmem_dmabuf_put(h, fd));
	s.free_host(h);
}

HMR_TEST(cuda_dmabuf_of_alloc_host_memory_refused_where_attribute_146_is_0)
{
	struct sim s = sim_open();
	uint64_t offset;
	int fd = -1;
	char *h;

	ASSERT_EQ(s.alloc_host((void **)&h, 1 << 20), 0);
	ASSERT_EQ(hmr_hmem_dmabuf_get(h, 4096, 0, &fd, &offset),
	          -FI_EOPNOTSUPP);
	ASSERT_EQ(fd, -1);
	s.free_host(h);
}

HMR_TEST(cuda_host_register_then_unregister_reclassifies)
{
	struct hmr_hmem_info info;
	char *buf = aligned_alloc(4096, 1 << 16);

	sim_open();
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM); /* Now cached as host. */
	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_CUDA, buf, 1 << 16));
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_CUDA);
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_CUDA, buf, 1 << 16));
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	ASSERT_EQ(hmr_hmem_host_register(FI_HMEM_SYSTEM, buf, 4096),
	          -FI_EINVAL);
	free(buf);
}

HMR_TEST_MAIN()
