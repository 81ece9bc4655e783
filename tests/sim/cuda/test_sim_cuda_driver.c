/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_cuda_driver.c: the simulator does what lab/gpu.md measured. */
#include "test_sim_cuda.h"

#include <fcntl.h>
#include <sys/stat.h>

/*
 * One case per fact of ../shared/lab/gpu.md (a real H200, driver
 * 580.159.04), named after it.  Where the simulator and the driver
 * differ, the simulator is wrong.
 */

struct noctx {
	CUdeviceptr dev, host_dev;
	void *host;
	CUresult rc[10];
	CUcontext cur;
};

/* On a new thread: no current context. */
static void *noctx_calls(void *arg)
{
	struct noctx *n = arg;
	CUpointer_attribute attr[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE};
	unsigned int type = 0;
	void *data[] = {&type};
	CUipcMemHandle h;
	CUdeviceptr base, p;
	unsigned char b = 0;
	size_t size;
	int fd = -1;

	n->rc[0] = cu.PointerGetAttribute(
	        &type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, n->dev);
	n->rc[1] = cu.PointerGetAttributes(1, attr, data, n->dev);
	n->rc[2] = dmabuf(&fd, n->dev, page(), 0);
	n->rc[3] = cu.MemGetAddressRange(&base, &size, n->dev);
	n->rc[4] = cu.IpcGetMemHandle(&h, n->dev);
	n->rc[5] = cu.IpcCloseMemHandle(n->dev);
	n->rc[6] = cu.MemcpyHtoD(n->dev, &b, 1);
	n->rc[7] = cu.MemcpyDtoH(&b, n->dev, 1);
	n->rc[8] = cu.MemHostRegister(n->host, page(), 0);
	n->rc[9] = cu.MemAlloc(&p, page());
	return NULL;
}

HMR_TEST(sim_cuda_calls_needing_a_context_fail_201_without_one)
{
	struct noctx n = {0};
	pthread_t t;

	setup(0);
	CU_OK(cu.MemAlloc(&n.dev, 1 << 20));
	n.host = aligned_alloc(page(), page());
	ASSERT_EQ(pthread_create(&t, NULL, noctx_calls, &n), 0);
	ASSERT_EQ(pthread_join(t, NULL), 0);
	/* Answered: the pointer queries. */
	ASSERT_EQ(n.rc[0], CUDA_SUCCESS);
	ASSERT_EQ(n.rc[1], CUDA_SUCCESS);
	/* CUDA_ERROR_INVALID_CONTEXT: everything else lab/gpu.md lists. */
	for (int i = 2; i < 10; i++)
		ASSERT_EQ(n.rc[i], CUDA_ERROR_INVALID_CONTEXT);
	/* With the context, the same calls work (but for IPC close, which
	 * needs an opened handle). */
	CU_OK(cu.MemHostRegister(n.host, page(), 0));
	ASSERT_EQ(cu.MemHostUnregister(n.host), CUDA_SUCCESS);
	/* Unregistering what was not registered: 713. */
	ASSERT_EQ(cu.MemHostUnregister(n.host),
	          CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
	ASSERT_EQ(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, 713);
	free(n.host);
	CU_OK(cu.MemFree(n.dev));
}

/* The 7 attributes hmr asks, in one call. */
struct attrs {
	unsigned int type;
	int ordinal, managed, mapped;
	unsigned long long id;
	CUdeviceptr start;
	size_t size;
};

static CUresult get_attrs(CUdeviceptr p, struct attrs *a)
{
	CUpointer_attribute list[] = {
	        CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
	        CU_POINTER_ATTRIBUTE_BUFFER_ID,
	        CU_POINTER_ATTRIBUTE_IS_MANAGED,
	        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
	        CU_POINTER_ATTRIBUTE_RANGE_SIZE,
	        CU_POINTER_ATTRIBUTE_MAPPED,
	};
	void *data[] = {&a->type,  &a->ordinal, &a->id,    &a->managed,
	                &a->start, &a->size,    &a->mapped};

	memset(a, 0x55, sizeof(*a));
	return cu.PointerGetAttributes(7, list, data, p);
}

HMR_TEST(sim_cuda_unknown_memory_is_type_0_ordinal_minus_2)
{
	struct attrs a;
	char host[64];

	setup(0);
	CU_OK(get_attrs((CUdeviceptr)(uintptr_t)host, &a));
	ASSERT_EQ(a.type, 0);
	ASSERT_EQ(a.ordinal, -2);
	ASSERT_U64_EQ(a.id, 0);
	ASSERT_U64_EQ(a.start, 0);
	ASSERT_EQ(a.size, 0);
	ASSERT_EQ(a.mapped, 0);
}

HMR_TEST(sim_cuda_device_range_is_the_allocation_exactly)
{
	size_t sizes[] = {1, 4097, 3 << 20};
	struct attrs a;
	CUdeviceptr p;

	setup(0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		CU_OK(cu.MemAlloc(&p, sizes[i]));
		CU_OK(get_attrs(p + sizes[i] - 1, &a));
		ASSERT_EQ(a.type, CU_MEMORYTYPE_DEVICE);
		ASSERT_EQ(a.ordinal, 0);
		ASSERT_U64_EQ(a.start, p);
		ASSERT_EQ(a.size, sizes[i]);
		ASSERT_EQ(a.mapped, 1);
		CU_OK(cu.MemFree(p));
	}
}

HMR_TEST(sim_cuda_small_allocations_share_a_page)
{
	CUdeviceptr a, b, c;
	unsigned char v = 7, back = 0;

	setup(0);
	CU_OK(cu.MemAlloc(&a, 1));
	CU_OK(cu.MemAlloc(&b, 1));
	CU_OK(cu.MemAlloc(&c, page())); /* a page: a page of its own */
	ASSERT_U64_EQ(b, a + 512);
	ASSERT_U64_EQ(a / page(), b / page());
	ASSERT_EQ(c % page(), 0);
	ASSERT_NE(buffer_id(a), buffer_id(b));
	CU_OK(cu.MemcpyHtoD(b, &v, 1));
	CU_OK(cu.MemcpyDtoH(&back, b, 1));
	ASSERT_EQ(back, 7);
	/* Their page exports as a whole, both allocations in it. */
	{
		int fd;

		CU_OK(dmabuf(&fd, a & ~(CUdeviceptr)(page() - 1), page(), 0));
		close(fd);
	}
	CU_OK(cu.MemFree(a));
	CU_OK(cu.MemFree(b));
	CU_OK(cu.MemFree(c));
}

#define GRAN (2ULL << 20)

/* A reservation of n granules with chunks mapped where map[i] is set,
 * each chunk one granule of its own physical memory. */
static CUdeviceptr vmm_layout(const int *map, int n)
{
	CUmemAllocationProp prop = {0};
	CUmemAccessDesc access = {{CU_MEM_LOCATION_TYPE_DEVICE, 0},
	                          CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;

	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	CU_OK(cu.MemAddressReserve(&va, (size_t)n * GRAN, 0, 0, 0));
	for (int i = 0; i < n; i++) {
		if (!map[i])
			continue;
		CU_OK(cu.MemCreate(&h, GRAN, &prop, 0));
		CU_OK(cu.MemMap(va + i * GRAN, GRAN, 0, h, 0));
		CU_OK(cu.MemRelease(h)); /* the mapping keeps it */
		CU_OK(cu.MemSetAccess(va + i * GRAN, GRAN, &access, 1));
	}
	return va;
}

HMR_TEST(sim_cuda_vmm_range_is_the_whole_reservation)
{
	int map[8] = {1, 1, 0, 0, 0, 0, 0, 0};
	CUdeviceptr va, base;
	struct attrs a;
	size_t size;

	setup(0);
	va = vmm_layout(map, 8);

	for (int i = 0; i < 2; i++) {
		CU_OK(get_attrs(va + i * GRAN + 100, &a));
		ASSERT_EQ(a.type, CU_MEMORYTYPE_DEVICE);
		ASSERT_U64_EQ(a.start, va);
		ASSERT_EQ(a.size, 8 * GRAN); /* mostly unmapped */
		/* cuMemGetAddressRange: the mapped chunk. */
		CU_OK(cu.MemGetAddressRange(&base, &size, va + i * GRAN + 100));
		ASSERT_U64_EQ(base, va + i * GRAN);
		ASSERT_EQ(size, GRAN);
	}
}

HMR_TEST(sim_cuda_vmm_buffer_id_is_per_mapped_chunk)
{
	int map[3] = {1, 1, 1};
	CUdeviceptr va;
	struct attrs a, b;

	setup(0);
	va = vmm_layout(map, 3);
	CU_OK(get_attrs(va + 5, &a));
	CU_OK(get_attrs(va + GRAN - 1, &b));
	ASSERT_U64_EQ(a.id, b.id);
	CU_OK(get_attrs(va + GRAN, &b));
	ASSERT_NE(a.id, b.id);
	ASSERT_NE(buffer_id(va + 2 * GRAN), b.id);
}

HMR_TEST(sim_cuda_vmm_hole_fails_buffer_id_and_is_type_0)
{
	int map[3] = {1, 0, 1};
	CUdeviceptr va, base;
	unsigned long long id;
	unsigned int type = 9;
	struct attrs a;

	setup(0);
	va = vmm_layout(map, 3);
	ASSERT_EQ(get_attrs(va + GRAN + 10, &a), CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(cu.PointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
	                                 va + GRAN + 10),
	          CUDA_ERROR_INVALID_VALUE);
	CU_OK(cu.PointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	                             va + GRAN + 10));
	ASSERT_EQ(type, 0);
	ASSERT_EQ(cu.MemGetAddressRange(&base, NULL, va + GRAN),
	          CUDA_ERROR_NOT_FOUND);
}

HMR_TEST(sim_cuda_vmm_replacing_a_chunk_changes_only_its_id)
{
	int map[3] = {1, 1, 1};
	CUmemAllocationProp prop = {0};
	CUmemGenericAllocationHandle h;
	unsigned long long id[3];
	CUdeviceptr va;

	setup(0);
	va = vmm_layout(map, 3);
	for (int i = 0; i < 3; i++)
		id[i] = buffer_id(va + i * GRAN);
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	CU_OK(cu.MemUnmap(va + GRAN, GRAN));
	CU_OK(cu.MemCreate(&h, GRAN, &prop, 0));
	CU_OK(cu.MemMap(va + GRAN, GRAN, 0, h, 0));
	ASSERT_U64_EQ(buffer_id(va), id[0]);
	ASSERT_NE(buffer_id(va + GRAN), id[1]);
	ASSERT_U64_EQ(buffer_id(va + 2 * GRAN), id[2]);
	CU_OK(cu.MemUnmap(va + GRAN, GRAN));
	CU_OK(cu.MemRelease(h));
}

static unsigned long (*last_export)(CUdeviceptr *, size_t *);

/* Exports [p, +len), checks the simulator's record and the fd's size
 * (the real fd's fdinfo says size = the length exported). */
static CUresult export_checked(CUdeviceptr p, size_t len)
{
	CUdeviceptr at = 0;
	size_t size = 0;
	struct stat st;
	int fd = -1;
	CUresult rc = dmabuf(&fd, p, len, 0);

	if (rc != CUDA_SUCCESS)
		return rc;
	*(void **)&last_export = sym("hmr_sim_cuda_last_export");
	ASSERT_GT(last_export(&at, &size), 0);
	ASSERT_U64_EQ(at, p);
	ASSERT_EQ(size, len);
	ASSERT_EQ(fstat(fd, &st), 0);
	ASSERT_GE((size_t)st.st_size, len);
	ASSERT_EQ(close(fd), 0);
	return rc;
}

HMR_TEST(sim_cuda_dmabuf_exports_any_page_aligned_range)
{
	int map[2] = {1, 1};
	CUdeviceptr a, b, va;
	size_t pg = page();

	setup(0);
	CU_OK(cu.MemAlloc(&a, 16 * pg));
	CU_OK(cu.MemAlloc(&b, 16 * pg));
	ASSERT_U64_EQ(b, a + 16 * pg);              /* adjacent */
	CU_OK(export_checked(a + 3 * pg, 2 * pg));  /* inside one */
	CU_OK(export_checked(a + 15 * pg, 2 * pg)); /* over two */
	va = vmm_layout(map, 2);
	CU_OK(export_checked(va + GRAN - pg, 2 * pg)); /* over two chunks */
	CU_OK(export_checked(va, 2 * GRAN));
	CU_OK(cu.MemFree(a));
	CU_OK(cu.MemFree(b));
}

HMR_TEST(sim_cuda_dmabuf_refuses_unaligned_ranges)
{
	CUdeviceptr a;
	int fd;

	setup(0);
	CU_OK(cu.MemAlloc(&a, 16 * page()));
	ASSERT_EQ(dmabuf(&fd, a + 256, page(), 0), CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(dmabuf(&fd, a, page() + 1, 0), CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(dmabuf(&fd, a, page() / 2, 0), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cu.MemFree(a));
}

HMR_TEST(sim_cuda_dmabuf_refuses_ranges_with_an_unmapped_part)
{
	int map[4] = {1, 0, 1, 0};
	CUdeviceptr va, a;
	struct attrs at;
	int fd;

	setup(0);
	va = vmm_layout(map, 4);
	/* The reservation as the pointer attributes give it. */
	CU_OK(get_attrs(va, &at));
	ASSERT_EQ(dmabuf(&fd, at.start, at.size, 0), CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(dmabuf(&fd, va + GRAN - page(), 2 * page(), 0),
	          CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(dmabuf(&fd, va + 2 * GRAN, GRAN + page(), 0),
	          CUDA_ERROR_INVALID_VALUE);
	CU_OK(export_checked(va + 2 * GRAN, GRAN));
	/* Past the end of the last allocation of the device window. */
	CU_OK(cu.MemAlloc(&a, 4 * page()));
	ASSERT_EQ(dmabuf(&fd, a, 5 * page(), 0), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cu.MemFree(a));
}

HMR_TEST(sim_cuda_dmabuf_pcie_mapping_is_not_supported_on_pcie_parts)
{
	CUdeviceptr a;
	int fd;

	setup(0);
	CU_OK(cu.MemAlloc(&a, page()));
	ASSERT_EQ(dmabuf(&fd, a, page(),
	                 CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE),
	          CUDA_ERROR_NOT_SUPPORTED);
	ASSERT_EQ(CUDA_ERROR_NOT_SUPPORTED, 801);
	CU_OK(cu.MemFree(a));
}

HMR_TEST(sim_cuda_dmabuf_of_host_alloc_refused_when_attribute_146_is_0)
{
	void *h;
	int v = -1, fd;

	setup(0);
	CU_OK(cu.DeviceGetAttribute(
	        &v, CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED, 0));
	ASSERT_EQ(v, 0);
	CU_OK(cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
	                            0));
	ASSERT_EQ(v, 1);
	CU_OK(cu.MemAllocHost(&h, 1 << 20));
	ASSERT_EQ(dmabuf(&fd, (CUdeviceptr)(uintptr_t)h, page(), 0),
	          CUDA_ERROR_INVALID_VALUE);
	CU_OK(cu.MemFreeHost(h));
}

HMR_TEST(sim_cuda_dmabuf_of_host_alloc_where_attribute_146_is_1)
{
	void *h;
	int v = -1;

	setenv("HMR_SIM_CUDA_HOST_DMABUF", "1", 1);
	setup(0);
	CU_OK(cu.DeviceGetAttribute(
	        &v, CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED, 0));
	ASSERT_EQ(v, 1);
	CU_OK(cu.MemAllocHost(&h, 1 << 20));
	CU_OK(export_checked((CUdeviceptr)(uintptr_t)h, page()));
	CU_OK(cu.MemFreeHost(h));
}

HMR_TEST(sim_cuda_dmabuf_of_a_sub_range_cannot_be_mapped)
{
	CUdeviceptr a;
	int fd;

	setup(0);
	CU_OK(cu.MemAlloc(&a, 16 * page()));
	CU_OK(dmabuf(&fd, a + page(), page(), 0));
	/* The real driver's fds refuse mmap; this one does too. */
	ASSERT_TRUE(mmap(NULL, page(), PROT_READ, MAP_SHARED, fd, 0) ==
	            MAP_FAILED);
	close(fd);
	CU_OK(cu.MemFree(a));
}

#define CHUNK (20ULL << 20)

HMR_TEST(sim_cuda_expandable_segments_layout)
{
	CUdeviceptr t[4], base;
	struct attrs a[4];
	size_t size;
	int fd;

	setenv("HMR_SIM_CUDA_EXPANDABLE", "1", 1);
	setup(0);
	CU_OK(cu.MemAlloc(&t[0], 4096));
	CU_OK(cu.MemAlloc(&t[1], 12 << 20));
	CU_OK(cu.MemAlloc(&t[2], 10 << 20)); /* crosses into chunk 2 */
	CU_OK(cu.MemAlloc(&t[3], 100));
	for (int i = 0; i < 4; i++) {
		CU_OK(get_attrs(t[i], &a[i]));
		ASSERT_EQ(a[i].type, CU_MEMORYTYPE_DEVICE);
		/* One reservation, the same for every tensor, far larger
		 * than what is mapped. */
		ASSERT_U64_EQ(a[i].start, a[0].start);
		ASSERT_GT(a[i].size, 40 << 20);
	}
	ASSERT_U64_EQ(t[0], a[0].start);
	CU_OK(cu.MemGetAddressRange(&base, &size, t[1]));
	ASSERT_U64_EQ(base, t[0]);
	ASSERT_EQ(size, CHUNK);
	CU_OK(cu.MemGetAddressRange(&base, &size, t[3]));
	ASSERT_U64_EQ(base, t[0] + CHUNK);
	ASSERT_EQ(size, CHUNK);
	ASSERT_U64_EQ(a[0].id, a[1].id);
	ASSERT_NE(a[0].id, a[3].id);
	/* The reservation does not export; the chunks do. */
	ASSERT_EQ(dmabuf(&fd, a[0].start, a[0].size, 0),
	          CUDA_ERROR_INVALID_VALUE);
	CU_OK(export_checked(t[0], 2 * CHUNK));
	for (int i = 0; i < 4; i++)
		CU_OK(cu.MemFree(t[i]));
	ASSERT_EQ(cu.MemFree(t[1]), CUDA_ERROR_INVALID_VALUE);
}

/* Four pages of a tensor, two at the end of the first chunk and two at
 * the start of the second: one export meets two memfds. */
static CUdeviceptr tensor_across_chunks(void)
{
	CUdeviceptr pad, t;

	setenv("HMR_SIM_CUDA_EXPANDABLE", "1", 1);
	setup(0);
	CU_OK(cu.MemAlloc(&pad, CHUNK - 2 * page()));
	CU_OK(cu.MemAlloc(&t, 4 * page()));
	ASSERT_U64_EQ(t, pad + CHUNK - 2 * page());
	return t;
}

/* Without HMR_SIM_DMABUF=udmabuf, as before: no dup of one memfd can
 * stand for two, so the fd is the opaque one. */
HMR_TEST(sim_cuda_dmabuf_across_chunks_is_opaque_without_udmabuf)
{
	CUdeviceptr t = tensor_across_chunks();
	char path[64], link[128] = "";
	int fd;

	unsetenv("HMR_SIM_DMABUF");
	CU_OK(dmabuf(&fd, t, 4 * page(), 0));
	ASSERT_TRUE(mmap(NULL, page(), PROT_READ, MAP_SHARED, fd, 0) ==
	            MAP_FAILED);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ASSERT_GT(readlink(path, link, sizeof(link) - 1), 0);
	ASSERT_TRUE(strstr(link, "sim-cuda:dmabuf:dev0:") != NULL);
	close(fd);
}

/* HMR_SIM_DMABUF=udmabuf: one udmabuf of both chunks' pieces, which the
 * CPU maps as the bytes of the range; where /dev/udmabuf does not open
 * (no udmabuf in this kernel) the export fails, never the opaque fd. */
HMR_TEST(sim_cuda_udmabuf_export_across_chunks_never_falls_back_to_opaque)
{
	CUdeviceptr t = tensor_across_chunks();
	size_t len = 4 * page();
	unsigned char *want = malloc(len);
	int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC), fd = -1;

	setenv("HMR_SIM_DMABUF", "udmabuf", 1);
	ASSERT_TRUE(want != NULL);
	fill(want, len, 7);
	CU_OK(cu.MemcpyHtoD(t, want, len));
	if (dev < 0) {
		ASSERT_EQ(dmabuf(&fd, t, len, 0), CUDA_ERROR_OUT_OF_MEMORY);
		free(want);
		return;
	}
	close(dev);
	dmabuf_shows(t, len, want, len);
	free(want);
}

HMR_TEST_MAIN()
