/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cuda_dmabuf.c: dma-buf export details: VMM segments, PCIe, host. */
#include <cuda.h>
#include <string.h>
#include <sys/mman.h>

#include "cuda_util.h"

#define SEG (2u << 20) /* The simulator's VMM granularity. */

/* Two physical segments mapped back to back in one reserved range. */
static unsigned long long map_two_segments(struct sim *s)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc access;
	unsigned long long va, h[2];
	int i;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	ASSERT_EQ(s->reserve(&va, 2 * SEG, 0, 0, 0), 0);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(s->create(&h[i], SEG, &prop, 0), 0);
		ASSERT_EQ(s->map(va + (unsigned long long)i * SEG, SEG, 0, h[i],
		                 0),
		          0);
	}
	memset(&access, 0, sizeof(access));
	access.location = prop.location;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	ASSERT_EQ(s->set_access(va, 2 * SEG, &access, 1), 0);
	return va;
}

HMR_TEST(cuda_dmabuf_vmm_second_segment_offset_is_segment_relative)
{
	struct sim s = sim_open();
	unsigned long long va = map_two_segments(&s);
	char pattern[32], *map;
	uint64_t offset;
	int fd;

	memset(pattern, 0x71, sizeof(pattern));
	ASSERT_EQ(s.htod(va + SEG + 8192, pattern, sizeof(pattern)), 0);
	ASSERT_OK(hmr_hmem_dmabuf_get((void *)(uintptr_t)(va + SEG + 8192),
	                              4096, 0, &fd, &offset));
	/* The fd covers the second segment: offset counts from its start. */
	ASSERT_U64_EQ(offset, 8192);
	map = mmap(NULL, SEG, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map + offset, pattern, sizeof(pattern)), 0);
	munmap(map, SEG);
	ASSERT_OK(hmr_hmem_dmabuf_put((void *)(uintptr_t)va, fd));
}

HMR_TEST(cuda_dmabuf_vmm_range_across_segments_is_refused)
{
	struct sim s = sim_open();
	unsigned long long va = map_two_segments(&s);
	uint64_t offset;
	int fd = -1;

	/* One fd cannot cover two segments: refused, never a wrong offset. */
	ASSERT_EQ(hmr_hmem_dmabuf_get((void *)(uintptr_t)(va + SEG - 4096),
	                              8192, 0, &fd, &offset),
	          -FI_EINVAL);
	ASSERT_EQ(fd, -1);
}

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

HMR_TEST(cuda_dmabuf_of_alloc_host_memory)
{
	struct sim s = sim_open(); /* Driver 13000: host dma-buf allowed. */
	uint64_t offset;
	char *h, *map;
	int fd;

	ASSERT_EQ(s.alloc_host((void **)&h, 1 << 20), 0);
	memset(h + 4096 + 7, 0x2e, 16);
	ASSERT_OK(hmr_hmem_dmabuf_get(h + 4096 + 7, 16, 0, &fd, &offset));
	ASSERT_U64_EQ(offset, 4096 + 7);
	map = mmap(NULL, 1 << 20, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(map[offset], 0x2e);
	munmap(map, 1 << 20);
	ASSERT_OK(hmr_hmem_dmabuf_put(h, fd));
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
