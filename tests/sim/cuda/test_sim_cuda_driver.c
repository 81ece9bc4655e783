/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_cuda_driver.c: the simulator does what lab/gpu.md measured. */
#include "test_sim_cuda.h"

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

HMR_TEST_MAIN()
