/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_neuron_dmabuf.c: dma-buf export through v2 and v1, offsets and bytes. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "neuron_util.h"

#define LEN (256u << 10)

/* A device tensor whose bytes the test knows. */
static nrt_tensor_t *patterned(struct app *a, unsigned char *bytes)
{
	nrt_tensor_t *t = app_alloc(a, NRT_TENSOR_PLACEMENT_DEVICE, 0, LEN);

	fill(bytes, LEN, 7);
	ASSERT_EQ(a->write(t, bytes, 0, LEN), NRT_SUCCESS);
	return t;
}

/* Export [p, p + len); the fd, mapped, holds the tensor's bytes at the
 * offset hmr reports.  Returns that offset. */
static uint64_t export_and_check(char *p, size_t len,
                                 const unsigned char *expect)
{
	uint64_t offset = ~0ULL;
	off_t size;
	char *map;
	int fd = -1;

	ASSERT_OK(hmr_hmem_dmabuf_get(p, len, 0, &fd, &offset));
	ASSERT_GE(fd, 0);
	size = lseek(fd, 0, SEEK_END);
	ASSERT_GE(size, (off_t)(offset + len));
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map + offset, expect, len), 0);
	munmap(map, (size_t)size);
	ASSERT_OK(hmr_hmem_dmabuf_put(p, fd));
	return offset;
}

/* v2: every interior pointer, aligned or not, at the simulator's truth
 * (where the pointer lies in the tensor). */
HMR_TEST(neuron_dmabuf_v2_interior_offsets_are_the_runtimes)
{
	static const size_t at[] = {0, 1, 4095, 4096, 12345, LEN - 64};
	static unsigned char bytes[LEN];
	struct app a = app_open();
	nrt_tensor_t *t = patterned(&a, bytes);
	char *va = app_va(&a, t);
	size_t i;

	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		ASSERT_U64_EQ(export_and_check(va + at[i], 64, bytes + at[i]),
		              at[i]);
	ASSERT_EQ(a.calls("nrt_get_dmabuf_fd_v2"), 6);
	ASSERT_EQ(a.calls("nrt_get_dmabuf_fd"), 0);
	a.free(&t);
}

HMR_TEST(neuron_dmabuf_v1_base_is_offset_zero)
{
	static unsigned char bytes[LEN];
	struct app a;
	nrt_tensor_t *t;

	case_runtime("HMR_TEST_SIM_NEURON_V1");
	a = app_open();
	t = patterned(&a, bytes);
	ASSERT_U64_EQ(export_and_check(app_va(&a, t), LEN, bytes), 0);
	ASSERT_EQ(a.calls("nrt_get_dmabuf_fd"), 1);
	a.free(&t);
}

/* One tensor per mapping: the mapping's start is the base v1 needs. */
HMR_TEST(neuron_dmabuf_v1_interior_exports_from_the_allocation_start)
{
	static unsigned char bytes[LEN];
	struct app a;
	nrt_tensor_t *t;

	case_runtime("HMR_TEST_SIM_NEURON_V1");
	a = app_open();
	t = patterned(&a, bytes);
	ASSERT_U64_EQ(export_and_check(app_va(&a, t) + 5000, 100, bytes + 5000),
	              5000);
	ASSERT_EQ(a.calls("nrt_get_dmabuf_fd"), 1);
	a.free(&t);
}

/* NEURON_RT_MAP_HBM: a mapping may hold several tensors, so its start is
 * no base; v1 is not even asked, and nothing leaks. */
HMR_TEST(neuron_dmabuf_v1_interior_under_map_hbm_is_einval)
{
	struct app a;
	nrt_tensor_t *t;
	uint64_t offset = 77;
	int fd = -1, fds;

	case_runtime("HMR_TEST_SIM_NEURON_V1");
	case_env("NEURON_RT_MAP_HBM", "1");
	a = app_open();
	t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, LEN);
	ASSERT_OK(hmr_hmem_status(FI_HMEM_NEURON, NULL, 0));
	fds = hmr_test_open_fds();
	ASSERT_EQ(
	        hmr_hmem_dmabuf_get(app_va(&a, t) + 4096, 64, 0, &fd, &offset),
	        -FI_EINVAL);
	ASSERT_EQ(fd, -1);
	ASSERT_EQ(offset, 77);
	ASSERT_EQ(a.calls("nrt_get_dmabuf_fd"), 0);
	ASSERT_EQ(hmr_test_open_fds(), fds);
	/* The base still works: it starts the allocation. */
	ASSERT_OK(hmr_hmem_dmabuf_get(app_va(&a, t), 64, 0, &fd, &offset));
	ASSERT_EQ(offset, 0);
	ASSERT_OK(hmr_hmem_dmabuf_put(app_va(&a, t), fd));
	a.free(&t);
}

HMR_TEST(neuron_dmabuf_range_past_the_tensor_is_einval)
{
	struct app a = app_open();
	nrt_tensor_t *t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, LEN);
	uint64_t offset;
	int fd = -1;

	ASSERT_EQ(hmr_hmem_dmabuf_get(app_va(&a, t) + LEN - 64, 128, 0, &fd,
	                              &offset),
	          -FI_EINVAL);
	ASSERT_EQ(fd, -1);
	ASSERT_EQ(a.calls("nrt_get_dmabuf_fd_v2"), 0);
	a.free(&t);
}

/* The runtime's NRT_FAILURE (this core exports nothing): a path the
 * caller replaces, -FI_EOPNOTSUPP. */
HMR_TEST(neuron_dmabuf_refused_by_the_core_is_eopnotsupp)
{
	struct app a;
	nrt_tensor_t *t;
	uint64_t offset;
	int fd = -1;

	case_env("HMR_SIM_NEURON_DMABUF", "0");
	a = app_open();
	t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, LEN);
	ASSERT_EQ(hmr_hmem_dmabuf_get(app_va(&a, t), 64, 0, &fd, &offset),
	          -FI_EOPNOTSUPP);
	ASSERT_EQ(fd, -1);
	a.free(&t);
}

HMR_TEST(neuron_dmabuf_put_closes_the_fd)
{
	struct app a = app_open();
	nrt_tensor_t *t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, LEN);
	uint64_t offset;
	int fd;

	ASSERT_OK(hmr_hmem_dmabuf_get(app_va(&a, t), 64, 0, &fd, &offset));
	ASSERT_OK(hmr_hmem_dmabuf_put(app_va(&a, t), fd));
	ASSERT_EQ(fcntl(fd, F_GETFD), -1);
	ASSERT_EQ(errno, EBADF);
	a.free(&t);
}

static void cycles(void)
{
	struct app a = app_open();
	nrt_tensor_t *t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, LEN);
	char *va = app_va(&a, t);
	uint64_t offset;
	int i, fd, fds;

	/* Once first: hmr's own descriptors are open from here on. */
	ASSERT_OK(hmr_hmem_dmabuf_get(va, 64, 0, &fd, &offset));
	ASSERT_OK(hmr_hmem_dmabuf_put(va, fd));
	fds = hmr_test_open_fds();
	for (i = 0; i < 10000; i++) {
		ASSERT_OK(hmr_hmem_dmabuf_get(va + 4096, 64, 0, &fd, &offset));
		ASSERT_OK(hmr_hmem_dmabuf_put(va + 4096, fd));
	}
	ASSERT_EQ(hmr_test_open_fds(), fds);
	a.free(&t);
}

HMR_TEST(neuron_dmabuf_10000_cycles_leave_fds_flat)
{
	cycles();
}

HMR_TEST(neuron_dmabuf_10000_cycles_leave_fds_flat_v1)
{
	case_runtime("HMR_TEST_SIM_NEURON_V1");
	cycles();
}

HMR_TEST(neuron_dmabuf_of_host_memory_is_refused)
{
	struct app a = app_open();
	char *buf = malloc(4096);
	uint64_t offset;
	int fd = -1;

	(void)a;
	ASSERT_NE(hmr_hmem_dmabuf_get(buf, 64, 0, &fd, &offset), 0);
	ASSERT_EQ(fd, -1);
	ASSERT_EQ(a.calls("nrt_get_dmabuf_fd_v2"), 0);
	free(buf);
}

HMR_TEST_MAIN()
