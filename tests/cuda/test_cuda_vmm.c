/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cuda_vmm.c: VMM memory and expandable segments, as the driver has
 * them: chunks, page-aligned dma-bufs, identities over several chunks. */
#include <cuda.h>
#include <string.h>

#include "cuda_util.h"

/*
 * lab/gpu.md: for VMM memory RANGE_START_ADDR/RANGE_SIZE are the whole
 * reservation, BUFFER_ID and cuMemGetAddressRange the mapped chunk; the
 * driver exports any page-aligned range without an unmapped part.  The
 * simulator follows it (tests/sim/cuda/test_sim_cuda_driver.c).
 */

#define SEG   (2ull << 20)  /* The simulator's VMM granularity. */
#define CHUNK (20ull << 20) /* An expandable segment's chunk. */
#define PAGE  4096ull

/* A reservation of n granules, chunk i mapped where map[i] is set. */
static unsigned long long vmm_layout(struct sim *s, const int *map, int n)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc access;
	unsigned long long va, h;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	memset(&access, 0, sizeof(access));
	access.location = prop.location;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	ASSERT_EQ(s->reserve(&va, (size_t)n * SEG, 0, 0, 0), 0);
	for (int i = 0; i < n; i++) {
		if (!map[i])
			continue;
		ASSERT_EQ(s->create(&h, SEG, &prop, 0), 0);
		ASSERT_EQ(
		        s->map(va + (unsigned long long)i * SEG, SEG, 0, h, 0),
		        0);
		ASSERT_EQ(s->release(h), 0); /* The mapping keeps it. */
		ASSERT_EQ(s->set_access(va + (unsigned long long)i * SEG, SEG,
		                        &access, 1),
		          0);
	}
	return va;
}

/* Chunk i of va replaced by new physical memory (a new buffer id). */
static void replace_chunk(struct sim *s, unsigned long long va, int i)
{
	CUmemAllocationProp prop;
	unsigned long long h, at = va + (unsigned long long)i * SEG;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	ASSERT_EQ(s->unmap(at, SEG), 0);
	ASSERT_EQ(s->create(&h, SEG, &prop, 0), 0);
	ASSERT_EQ(s->map(at, SEG, 0, h, 0), 0);
	ASSERT_EQ(s->release(h), 0);
}

static struct hmr_hmem_info query(unsigned long long p, size_t len)
{
	struct hmr_hmem_info info;

	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, len, &info));
	return info;
}

/* hmr exports [ptr, +len): the simulator exported [at, +size) and the
 * offset of ptr in the fd is `offset`; the fd released. */
static void check_export(struct sim *s, unsigned long long ptr, size_t len,
                         unsigned long long at, size_t size, uint64_t offset)
{
	unsigned long long got_at;
	uint64_t got_offset;
	size_t got_size;
	int fd;

	ASSERT_OK(hmr_hmem_dmabuf_get((void *)(uintptr_t)ptr, len, 0, &fd,
	                              &got_offset));
	s->last_export(&got_at, &got_size);
	ASSERT_U64_EQ(got_at, at);
	ASSERT_EQ(got_size, size);
	ASSERT_U64_EQ(got_offset, offset);
	ASSERT_OK(hmr_hmem_dmabuf_put((void *)(uintptr_t)ptr, fd));
}

HMR_TEST(cuda_query_of_vmm_memory_gives_its_chunk_not_the_reservation)
{
	struct sim s = sim_open();
	int map[8] = {1, 1, 1};
	unsigned long long va = vmm_layout(&s, map, 8);
	struct hmr_hmem_info info = query(va + SEG + 100, 64);

	ASSERT_EQ(info.iface, FI_HMEM_CUDA);
	ASSERT_U64_EQ(info.base, va + SEG);
	ASSERT_U64_EQ(info.size, SEG);
	ASSERT_TRUE(info.flags & HMR_HMEM_DEVICE_ONLY);
}

HMR_TEST(cuda_query_of_an_expandable_segment_tensor_gives_its_chunk)
{
	struct sim s;
	unsigned long long t1, t2;
	struct hmr_hmem_info a, b;

	case_env("HMR_SIM_CUDA_EXPANDABLE", "1");
	s = sim_open();
	ASSERT_EQ(s.alloc(&t1, 4096), 0);
	ASSERT_EQ(s.alloc(&t2, 1 << 20), 0);
	a = query(t1, 4096);
	b = query(t2 + 512, 1024);
	ASSERT_U64_EQ(a.base, t1); /* The reservation's first chunk. */
	ASSERT_U64_EQ(a.size, CHUNK);
	ASSERT_U64_EQ(b.base, a.base);
	ASSERT_U64_EQ(b.buffer_id, a.buffer_id);
	s.free(t1);
	s.free(t2);
}

HMR_TEST(cuda_query_of_cumemalloc_memory_asks_one_call)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 0, 1 << 20);
	unsigned long before = s.calls("cuMemGetAddressRange");
	unsigned long q = s.calls("cuPointerGetAttributes");
	struct hmr_hmem_info info = query(p + 100, 100);

	ASSERT_U64_EQ(info.base, p);
	ASSERT_EQ(s.calls("cuMemGetAddressRange"), before);
	ASSERT_EQ(s.calls("cuPointerGetAttributes"), q + 1);
	s.free(p);
}

HMR_TEST(cuda_dmabuf_of_an_expandable_segment_tensor_exports_its_pages)
{
	struct sim s;
	unsigned long long t1, t2;

	case_env("HMR_SIM_CUDA_EXPANDABLE", "1");
	s = sim_open();
	ASSERT_EQ(s.alloc(&t1, 100), 0);
	ASSERT_EQ(s.alloc(&t2, 6 * PAGE), 0); /* at t1 + 512 */
	check_export(&s, t2, 6 * PAGE, t1, 7 * PAGE, t2 - t1);
	s.free(t1);
	s.free(t2);
}

HMR_TEST(cuda_dmabuf_of_a_tensor_over_two_chunks_exports_both)
{
	struct sim s;
	unsigned long long t1, t2;

	case_env("HMR_SIM_CUDA_EXPANDABLE", "1");
	s = sim_open();
	ASSERT_EQ(s.alloc(&t1, CHUNK - PAGE), 0);
	ASSERT_EQ(s.alloc(&t2, 2 * PAGE), 0); /* last page of chunk 1 */
	check_export(&s, t2, 2 * PAGE, t1 + CHUNK - PAGE, 2 * PAGE, 0);
	s.free(t1);
	s.free(t2);
}

HMR_TEST(cuda_dmabuf_over_two_adjacent_allocations_exports_both)
{
	struct sim s = sim_open();
	unsigned long long a = sim_alloc_on(&s, 0, 4 * PAGE);
	unsigned long long b = sim_alloc_on(&s, 0, 4 * PAGE);

	ASSERT_U64_EQ(b, a + 4 * PAGE);
	check_export(&s, a + 3 * PAGE + 9, 2 * PAGE, a + 3 * PAGE, 3 * PAGE, 9);
	s.free(a);
	s.free(b);
}

HMR_TEST(cuda_dmabuf_with_an_unmapped_part_is_einval)
{
	struct sim s = sim_open();
	int map[3] = {1, 0, 1};
	unsigned long long va = vmm_layout(&s, map, 3);
	uint64_t offset;
	int fd = -1;

	ASSERT_EQ(hmr_hmem_dmabuf_get((void *)(uintptr_t)(va + SEG - PAGE),
	                              2 * PAGE, 0, &fd, &offset),
	          -FI_EINVAL);
	ASSERT_EQ(fd, -1);
}

/*
 * The offset rule at every page boundary of an allocation: an fd from the
 * page holding ptr through the page holding its last byte, offset = ptr -
 * that first page, for pointers at, just after and just before each
 * boundary, and lengths that end at, before and past one.
 */
HMR_TEST(cuda_dmabuf_offsets_at_every_page_boundary)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 0, 16 * PAGE);
	unsigned long long deltas[] = {0, 1, PAGE - 1};

	for (unsigned long long k = 0; k < 15; k++) {
		for (int d = 0; d < 3; d++) {
			unsigned long long ptr = p + k * PAGE + deltas[d];
			size_t lens[] = {1, PAGE - deltas[d],
			                 PAGE - deltas[d] + 1};

			for (int l = 0; l < 3; l++) {
				/* Through the page holding the last byte. */
				unsigned long long end =
				        ((ptr + lens[l] - 1) / PAGE + 1) * PAGE;

				check_export(&s, ptr, lens[l], p + k * PAGE,
				             end - (p + k * PAGE), deltas[d]);
			}
		}
	}
	s.free(p);
}

HMR_TEST(cuda_dmabuf_covers_only_the_pages_asked_for)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 0, 64 << 20);

	/* Not the 64 MiB allocation. */
	check_export(&s, p + (32 << 20), PAGE, p + (32 << 20), PAGE, 0);
	s.free(p);
}

/* The cache keys a registration by hmr_hmem_query's buffer id over the
 * registered range (verbs/verbs_cache.c): over several chunks it must
 * change when any of them is replaced (doc/hmem-cuda.md). */
HMR_TEST(cuda_query_id_over_two_chunks_changes_when_the_second_is_replaced)
{
	struct sim s = sim_open();
	int map[2] = {1, 1};
	unsigned long long va = vmm_layout(&s, map, 2);
	uint64_t before = query(va + SEG - PAGE, 2 * PAGE).buffer_id;

	ASSERT_NE(before, 0);
	ASSERT_U64_EQ(query(va + SEG - PAGE, 2 * PAGE).buffer_id, before);
	replace_chunk(&s, va, 1);
	ASSERT_NE(query(va + SEG - PAGE, 2 * PAGE).buffer_id, before);
}

HMR_TEST(cuda_query_id_over_two_chunks_changes_when_the_first_is_replaced)
{
	struct sim s = sim_open();
	int map[2] = {1, 1};
	unsigned long long va = vmm_layout(&s, map, 2);
	uint64_t before = query(va, 2 * SEG).buffer_id;

	replace_chunk(&s, va, 0);
	ASSERT_NE(query(va, 2 * SEG).buffer_id, before);
}

HMR_TEST(cuda_query_id_over_one_chunk_is_the_chunk_id)
{
	struct sim s = sim_open();
	int map[2] = {1, 1};
	unsigned long long va = vmm_layout(&s, map, 2);
	uint64_t one = query(va + SEG, 1).buffer_id;

	ASSERT_U64_EQ(query(va + SEG, SEG).buffer_id, one);
	ASSERT_NE(query(va + SEG - 1, 2).buffer_id, one);
}

HMR_TEST(cuda_query_id_over_a_hole_is_0_so_never_cached)
{
	struct sim s = sim_open();
	int map[3] = {1, 0, 1};
	unsigned long long va = vmm_layout(&s, map, 3);

	ASSERT_NE(query(va, SEG).buffer_id, 0);
	ASSERT_U64_EQ(query(va, 3 * SEG).buffer_id, 0);
}

HMR_TEST_MAIN()
