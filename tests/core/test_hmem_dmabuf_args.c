/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_hmem_dmabuf_args.c: what hmr_hmem_dmabuf_get/put answer for memory
 * that has no dma-buf, whatever backends are present. */
#include <stdlib.h>

#include "core_util.h"

/* Heap, stack and a page of hmr's own host allocation: the call exists,
 * the argument is wrong (-FI_EINVAL), never "Function not implemented";
 * no fd is made. */
HMR_TEST(hmem_dmabuf_of_host_memory_is_einval)
{
	char stack[256], *heap = malloc(8192);
	uint64_t offset = 7;
	void *page;
	int fd = -1;

	ASSERT_OK(hmr_hmem_alloc(FI_HMEM_SYSTEM, 0, 4096, &page));
	ASSERT_EQ(hmr_hmem_dmabuf_get(heap, 4096, 0, &fd, &offset), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_dmabuf_get(stack, sizeof(stack), 0, &fd, &offset),
	          -FI_EINVAL);
	ASSERT_EQ(
	        hmr_hmem_dmabuf_get(page, 4096, HMR_DMABUF_PCIE, &fd, &offset),
	        -FI_EINVAL);
	ASSERT_EQ(fd, -1);
	ASSERT_U64_EQ(offset, 7);
	/* An fd hmr never gave out, for host memory. */
	ASSERT_EQ(hmr_hmem_dmabuf_put(heap, 1000), -FI_EINVAL);
	ASSERT_OK(hmr_hmem_free(FI_HMEM_SYSTEM, page));
	free(heap);
}

/* Arguments wrong before any memory is looked at. */
HMR_TEST(hmem_dmabuf_bad_arguments_are_einval)
{
	char buf[64];
	uint64_t offset;
	int fd;

	ASSERT_EQ(hmr_hmem_dmabuf_get(NULL, 64, 0, &fd, &offset), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_dmabuf_get(buf, 0, 0, &fd, &offset), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_dmabuf_get(buf, 64, 0, NULL, &offset), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_dmabuf_get(buf, 64, 0, &fd, NULL), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_dmabuf_get(buf, 64, 1ULL << 63, &fd, &offset),
	          -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_dmabuf_put(NULL, 3), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_dmabuf_put(buf, -1), -FI_EINVAL);
}

HMR_TEST_MAIN()
