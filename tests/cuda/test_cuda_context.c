/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cuda_context.c: every call that needs a context works without one. */
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_util.h"

/*
 * lab/gpu.md: on a thread with no current context the driver answers
 * cuPointerGetAttribute(s) but fails cuIpcGetMemHandle, cuIpcCloseMemHandle,
 * cuMemGetHandleForAddressRange, cuMemGetAddressRange, copies,
 * cuMemHostRegister and cuMemAlloc with CUDA_ERROR_INVALID_CONTEXT; the
 * simulator does the same.  Each case runs hmr's call on a new thread,
 * which has no context, on memory the main thread allocated.
 */

#define LEN (1 << 20)

typedef int (*body_fn)(void *arg);

struct job {
	body_fn body;
	void *arg;
	int ret;
};

static void *run_job(void *arg)
{
	struct job *j = arg;

	j->ret = j->body(j->arg);
	return NULL;
}

/* body(arg) on a fresh thread (no current context); its result. */
static int contextless(body_fn body, void *arg)
{
	struct job j = {body, arg, -1};
	pthread_t t;

	ASSERT_EQ(pthread_create(&t, NULL, run_job, &j), 0);
	ASSERT_EQ(pthread_join(t, NULL), 0);
	return j.ret;
}

struct ipc_args {
	const void *handle;
	size_t size;
	void *p;
};

static int ipc_open_body(void *arg)
{
	struct ipc_args *a = arg;

	return hmr_hmem_ipc_open(FI_HMEM_CUDA, 0, a->handle, a->size, &a->p);
}

static int ipc_close_body(void *arg)
{
	struct ipc_args *a = arg;

	return hmr_hmem_ipc_close(FI_HMEM_CUDA, a->p);
}

/* In a child (the simulator, as the driver, refuses to open a handle in
 * the exporting process): open and close on context-less threads. */
static int child_open_close(const void *handle, size_t size)
{
	struct ipc_args a = {handle, size, NULL};
	int ret = contextless(ipc_open_body, &a);

	if (ret)
		return 10;
	ret = contextless(ipc_close_body, &a);
	return ret == 0 ? 0 : ret == -FI_EIO ? 11 : 12;
}

HMR_TEST(cuda_ipc_close_works_on_a_thread_without_a_context)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 0, LEN);
	unsigned char handle[128];
	size_t size = sizeof(handle);
	int status;
	pid_t pid;

	ASSERT_OK(hmr_hmem_ipc_get((void *)(uintptr_t)p, handle, &size));
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(child_open_close(handle, size));
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	/* 11: cuIpcCloseMemHandle ran without a context (-FI_EIO). */
	ASSERT_EQ(WEXITSTATUS(status), 0);
	s.free(p);
}

struct get_args {
	const void *p;
	unsigned char handle[128];
	size_t size;
};

static int ipc_get_body(void *arg)
{
	struct get_args *a = arg;

	a->size = sizeof(a->handle);
	return hmr_hmem_ipc_get(a->p, a->handle, &a->size);
}

HMR_TEST(cuda_ipc_get_works_on_a_thread_without_a_context)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 1, LEN);
	struct get_args a = {.p = (void *)(uintptr_t)p};

	ASSERT_OK(contextless(ipc_get_body, &a));
	ASSERT_GT(a.size, 0);
	s.free(p);
}

struct range_args {
	void *p;
	size_t len;
	char buf[64];
};

static int copies_body(void *arg)
{
	struct range_args *a = arg;
	char back[sizeof(a->buf)];
	int ret = hmr_hmem_copy_to(a->p, a->buf, sizeof(a->buf));

	if (!ret)
		ret = hmr_hmem_copy_from(back, a->p, sizeof(back));
	if (!ret && memcmp(back, a->buf, sizeof(back)))
		ret = -FI_EIO;
	return ret;
}

HMR_TEST(cuda_copies_work_on_a_thread_without_a_context)
{
	struct sim s = sim_open();
	struct range_args a;

	a.p = (void *)(uintptr_t)sim_alloc_on(&s, 1, LEN);
	memset(a.buf, 0x3c, sizeof(a.buf));
	ASSERT_OK(contextless(copies_body, &a));
	s.free((uintptr_t)a.p);
}

static int dmabuf_body(void *arg)
{
	struct range_args *a = arg;
	uint64_t offset;
	int fd, ret = hmr_hmem_dmabuf_get(a->p, a->len, 0, &fd, &offset);

	return ret ? ret : hmr_hmem_dmabuf_put(a->p, fd);
}

HMR_TEST(cuda_dmabuf_export_works_on_a_thread_without_a_context)
{
	struct sim s = sim_open();
	struct range_args a = {.len = 8192};

	a.p = (void *)(uintptr_t)sim_alloc_on(&s, 0, LEN);
	ASSERT_OK(contextless(dmabuf_body, &a));
	s.free((uintptr_t)a.p);
}

static int host_register_body(void *arg)
{
	struct range_args *a = arg;
	int ret = hmr_hmem_host_register(FI_HMEM_CUDA, a->p, a->len);

	return ret ? ret : hmr_hmem_host_unregister(FI_HMEM_CUDA, a->p, a->len);
}

HMR_TEST(cuda_host_register_works_on_a_thread_without_a_context)
{
	struct range_args a = {.len = 1 << 16};

	sim_open();
	a.p = aligned_alloc(4096, a.len);
	ASSERT_TRUE(a.p != NULL);
	ASSERT_OK(contextless(host_register_body, &a));
	free(a.p);
}

static int alloc_body(void *arg)
{
	struct range_args *a = arg;
	int ret = hmr_hmem_alloc(FI_HMEM_CUDA, 1, a->len, &a->p);

	return ret ? ret : hmr_hmem_free(FI_HMEM_CUDA, a->p);
}

HMR_TEST(cuda_alloc_works_on_a_thread_without_a_context)
{
	struct range_args a = {.len = 4096};

	sim_open();
	ASSERT_OK(contextless(alloc_body, &a));
}

static int query_body(void *arg)
{
	struct range_args *a = arg;
	struct hmr_hmem_info info;
	int ret = hmr_hmem_query(a->p, a->len, &info);

	if (!ret && (info.iface != FI_HMEM_CUDA || info.device != 1 ||
	             info.base != (uintptr_t)a->p || info.size != LEN))
		ret = -FI_EOTHER;
	return ret;
}

HMR_TEST(cuda_query_works_on_a_thread_without_a_context)
{
	struct sim s = sim_open();
	struct range_args a = {.len = 4096};

	a.p = (void *)(uintptr_t)sim_alloc_on(&s, 1, LEN);
	ASSERT_OK(contextless(query_body, &a));
	s.free((uintptr_t)a.p);
}

HMR_TEST_MAIN()
