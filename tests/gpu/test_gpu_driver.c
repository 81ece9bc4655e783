/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_gpu_driver.c: the real driver still does what lab/gpu.md says. */
#include <unistd.h>

#include "gpu_util.h"

/*
 * The simulator (tests/sim/cuda/test_sim_cuda_driver.c) and hmr's CUDA
 * backend follow these facts; a driver that changes one fails here first.
 */

struct attrs {
	unsigned int type;
	int ordinal, managed, mapped, ipc;
	unsigned long long id;
	CUdeviceptr start;
	size_t size;
};

static CUresult get_attrs(struct gpu *g, CUdeviceptr p, struct attrs *a)
{
	CUpointer_attribute list[] = {
	        CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
	        CU_POINTER_ATTRIBUTE_BUFFER_ID,
	        CU_POINTER_ATTRIBUTE_IS_MANAGED,
	        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
	        CU_POINTER_ATTRIBUTE_RANGE_SIZE,
	        CU_POINTER_ATTRIBUTE_MAPPED,
	        CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
	};
	void *data[] = {&a->type,  &a->ordinal, &a->id,     &a->managed,
	                &a->start, &a->size,    &a->mapped, &a->ipc};

	memset(a, 0, sizeof(*a));
	return g->attrs(8, list, data, p);
}

HMR_TEST(gpu_driver_unknown_memory_is_type_0_ordinal_minus_2)
{
	struct gpu g = gpu_open();
	struct attrs a;
	char host[64];

	CU_OK(get_attrs(&g, (CUdeviceptr)(uintptr_t)host, &a));
	ASSERT_EQ(a.type, 0);
	ASSERT_EQ(a.ordinal, -2);
	ASSERT_U64_EQ(a.id, 0);
	ASSERT_EQ(a.size, 0);
}

/* hmr narrows VMM memory to its chunk only where the driver says the
 * memory is not legacy-IPC capable (cuda/cuda_query.c). */
HMR_TEST(gpu_driver_cumemalloc_is_legacy_ipc_capable_and_vmm_is_not)
{
	struct gpu g = gpu_open();
	int map[1] = {1};
	CUdeviceptr p, va;
	struct attrs a;

	CU_OK(g.alloc(&p, 4097));
	CU_OK(get_attrs(&g, p + 4096, &a));
	ASSERT_EQ(a.type, CU_MEMORYTYPE_DEVICE);
	ASSERT_EQ(a.ipc, 1);
	ASSERT_U64_EQ(a.start, p);
	ASSERT_EQ(a.size, 4097);
	va = gpu_vmm(&g, map, 1);
	CU_OK(get_attrs(&g, va, &a));
	ASSERT_EQ(a.type, CU_MEMORYTYPE_DEVICE);
	ASSERT_EQ(a.ipc, 0);
	CU_OK(g.free(p));
}

HMR_TEST(gpu_driver_vmm_range_is_the_reservation_and_ids_per_chunk)
{
	struct gpu g = gpu_open();
	int map[4] = {1, 1, 0, 1};
	CUdeviceptr va = gpu_vmm(&g, map, 4), base;
	unsigned long long id1;
	struct attrs a, b;
	size_t size;

	CU_OK(get_attrs(&g, va + 10, &a));
	CU_OK(get_attrs(&g, va + g.gran + 10, &b));
	ASSERT_U64_EQ(a.start, va);
	ASSERT_EQ(a.size, 4 * g.gran);
	ASSERT_U64_EQ(b.start, va);
	ASSERT_NE(a.id, b.id);
	CU_OK(g.range(&base, &size, va + g.gran + 10));
	ASSERT_U64_EQ(base, va + g.gran);
	ASSERT_EQ(size, g.gran);
	/* The hole: BUFFER_ID fails. */
	ASSERT_EQ(g.ptr_attr(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID,
	                     va + 2 * g.gran),
	          CUDA_ERROR_INVALID_VALUE);
	/* Replacing chunk 1 changes its id and no other. */
	id1 = b.id;
	gpu_replace(&g, va, 1);
	CU_OK(get_attrs(&g, va + g.gran, &b));
	ASSERT_NE(b.id, id1);
	CU_OK(get_attrs(&g, va + 10, &b));
	ASSERT_U64_EQ(b.id, a.id);
}

static CUresult export(struct gpu *g, CUdeviceptr p, size_t len)
{
	int fd = -1;
	CUresult r =
	        g->export(&fd, p, len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);

	if (r == CUDA_SUCCESS)
		close(fd);
	return r;
}

HMR_TEST(gpu_driver_exports_aligned_ranges_without_holes)
{
	struct gpu g = gpu_open();
	int map[4] = {1, 1, 0, 1}, v = 0;
	CUdeviceptr va, a, b;
	size_t pg = 4096;

	CU_OK(g.attr(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0));
	ASSERT_EQ(v, 1); /* every GPU lab/gpu.md names */
	va = gpu_vmm(&g, map, 4);
	CU_OK(export(&g, va + g.gran - pg, 2 * pg)); /* two chunks */
	CU_OK(export(&g, va + pg, pg));
	ASSERT_EQ(export(&g, va + 256, pg), CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(export(&g, va, pg + 1), CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(export(&g, va + 2 * g.gran - pg, 2 * pg),
	          CUDA_ERROR_INVALID_VALUE); /* into the hole */
	ASSERT_EQ(export(&g, va, 4 * g.gran), CUDA_ERROR_INVALID_VALUE);
	CU_OK(g.alloc(&a, 2 << 20));
	CU_OK(g.alloc(&b, 2 << 20));
	if (b == a + (2 << 20)) /* adjacent: one range over both */
		CU_OK(export(&g, a + (2 << 20) - pg, 2 * pg));
	CU_OK(g.free(a));
	CU_OK(g.free(b));
}

struct noctx {
	struct gpu *g;
	CUdeviceptr p;
	CUresult rc[6];
};

static void *noctx_calls(void *arg)
{
	struct noctx *n = arg;
	struct attrs a;
	CUipcMemHandle h;
	CUdeviceptr base;
	unsigned char b = 0;
	size_t size;

	n->rc[0] = get_attrs(n->g, n->p, &a);
	n->rc[1] = export(n->g, n->p, 4096);
	n->rc[2] = n->g->range(&base, &size, n->p);
	n->rc[3] = n->g->ipc_get(&h, n->p);
	n->rc[4] = n->g->htod(n->p, &b, 1);
	n->rc[5] = n->g->alloc(&base, 4096);
	return NULL;
}

HMR_TEST(gpu_driver_calls_needing_a_context_fail_201_without_one)
{
	struct gpu g = gpu_open();
	struct noctx n = {&g, 0, {0}};

	CU_OK(g.alloc(&n.p, 1 << 20));
	gpu_contextless(noctx_calls, &n);
	ASSERT_EQ(n.rc[0], CUDA_SUCCESS);
	for (int i = 1; i < 6; i++)
		ASSERT_EQ(n.rc[i], CUDA_ERROR_INVALID_CONTEXT);
	CU_OK(g.free(n.p));
}

HMR_TEST(gpu_driver_small_allocations_share_a_page)
{
	struct gpu g = gpu_open();
	CUdeviceptr a, b;

	CU_OK(g.alloc(&a, 1));
	CU_OK(g.alloc(&b, 1));
	ASSERT_U64_EQ(a / 4096, b / 4096);
	CU_OK(g.free(a));
	CU_OK(g.free(b));
}

HMR_TEST_MAIN()
