/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cuda_args.c: the public hmem calls refuse bad arguments early. */
#include <string.h>

#include "cuda_util.h"

#define MIB (1 << 20)

HMR_TEST(cuda_query_bad_arguments_are_einval)
{
	struct hmr_hmem_info info;
	char buf[64];

	sim_open();
	ASSERT_EQ(hmr_hmem_query(NULL, 64, &info), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_query(buf, 64, NULL), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_query(buf, 0, &info), -FI_EINVAL);
	ASSERT_EQ(
	        hmr_hmem_query((void *)(uintptr_t)(UINT64_MAX - 63), 64, &info),
	        -FI_EINVAL);
	ASSERT_EQ(
	        hmr_hmem_query((void *)(uintptr_t)(UINT64_MAX - 63), 65, &info),
	        -FI_EINVAL);
	ASSERT_OK(hmr_hmem_query(buf, 64, &info));
}

HMR_TEST(cuda_dmabuf_get_bad_arguments_are_einval)
{
	struct sim s = sim_open();
	void *p = (void *)(uintptr_t)sim_alloc_on(&s, 0, MIB);
	uint64_t offset;
	int fd;

	ASSERT_EQ(hmr_hmem_dmabuf_get(p, 4096, 1ULL << 1, &fd, &offset),
	          -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_dmabuf_get(p, 4096, HMR_DMABUF_PCIE | (1ULL << 40),
	                              &fd, &offset),
	          -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_dmabuf_get(NULL, 4096, 0, &fd, &offset), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_dmabuf_get(p, 0, 0, &fd, &offset), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_dmabuf_get(p, 4096, 0, NULL, &offset), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_dmabuf_get(p, 4096, 0, &fd, NULL), -FI_EINVAL);
	ASSERT_OK(hmr_hmem_dmabuf_get(p, 4096, 0, &fd, &offset));
	ASSERT_OK(hmr_hmem_dmabuf_put(p, fd));
	s.free((uintptr_t)p);
}

HMR_TEST(cuda_dmabuf_put_bad_arguments_are_einval)
{
	struct sim s = sim_open();
	void *p = (void *)(uintptr_t)sim_alloc_on(&s, 0, MIB);

	ASSERT_EQ(hmr_hmem_dmabuf_put(p, -1), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_dmabuf_put(NULL, 0), -FI_EINVAL);
	s.free((uintptr_t)p);
}

/* A NULL handle is a size query only when *handle_size is 0. */
HMR_TEST(cuda_ipc_get_null_handle_only_asks_the_size)
{
	struct sim s = sim_open();
	void *p = (void *)(uintptr_t)sim_alloc_on(&s, 0, MIB);
	unsigned long calls = s.calls("cuIpcGetMemHandle");
	size_t size = 64;

	/* Refused before the driver is asked (which would refuse it too). */
	ASSERT_EQ(hmr_hmem_ipc_get(p, NULL, &size), -FI_EINVAL);
	ASSERT_EQ(size, 64);
	ASSERT_EQ(s.calls("cuIpcGetMemHandle"), calls);
	size = 0;
	ASSERT_EQ(hmr_hmem_ipc_get(p, NULL, &size), -FI_ETOOSMALL);
	ASSERT_GT(size, 0);
	s.free((uintptr_t)p);
}

/* Nothing to lock: refused before the driver is asked. */
HMR_TEST(cuda_host_register_zero_length_is_einval)
{
	struct sim s = sim_open();
	char *buf = aligned_alloc(4096, 4096);
	unsigned long reg = s.calls("cuMemHostRegister");
	unsigned long unreg = s.calls("cuMemHostUnregister");

	ASSERT_EQ(hmr_hmem_host_register(FI_HMEM_CUDA, buf, 0), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_host_unregister(FI_HMEM_CUDA, buf, 0), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_host_register(FI_HMEM_CUDA, NULL, 4096), -FI_EINVAL);
	ASSERT_EQ(s.calls("cuMemHostRegister"), reg);
	ASSERT_EQ(s.calls("cuMemHostUnregister"), unreg);
	free(buf);
}

/* A copy of 0 bytes does nothing, and asks nobody what the memory is. */
HMR_TEST(cuda_copy_of_zero_bytes_asks_nobody)
{
	struct sim s = sim_open();
	void *p = (void *)(uintptr_t)sim_alloc_on(&s, 0, MIB);
	unsigned long queries = s.calls("cuPointerGetAttributes");
	char host[8];

	ASSERT_OK(hmr_hmem_copy_to(p, host, 0));
	ASSERT_OK(hmr_hmem_copy_from(host, p, 0));
	ASSERT_EQ(s.calls("cuPointerGetAttributes"), queries);
	ASSERT_EQ(hmr_hmem_copy_to(NULL, host, 0), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_copy_from(host, NULL, 0), -FI_EINVAL);
	s.free((uintptr_t)p);
}

HMR_TEST_MAIN()
