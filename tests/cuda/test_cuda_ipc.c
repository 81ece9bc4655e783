/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cuda_ipc.c: device memory shared with another process by IPC. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_util.h"

#define LEN (1 << 20)

/* The child opens the parent's handle, checks the bytes, closes it. */
static int child(const void *handle, size_t size, const char *pattern)
{
	char back[64];
	void *p;

	if (hmr_hmem_ipc_open(FI_HMEM_CUDA, 0, handle, size, &p))
		return 10;
	if (hmr_hmem_copy_from(back, (char *)p + 4096, sizeof(back)))
		return 11;
	if (memcmp(back, pattern, sizeof(back)))
		return 12;
	return hmr_hmem_ipc_close(FI_HMEM_CUDA, p) ? 13 : 0;
}

HMR_TEST(cuda_ipc_handle_opens_in_another_process)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 0, LEN);
	unsigned char handle[256];
	size_t size = 1;
	char pattern[64];
	int status;
	pid_t pid;

	memset(pattern, 0x4d, sizeof(pattern));
	ASSERT_EQ(s.htod(p + 4096, pattern, sizeof(pattern)), 0);
	ASSERT_EQ(hmr_hmem_ipc_get((void *)(uintptr_t)p, handle, &size),
	          -FI_ETOOSMALL);
	ASSERT_LE(size, sizeof(handle));
	ASSERT_OK(hmr_hmem_ipc_get((void *)(uintptr_t)p, handle, &size));
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(child(handle, size, pattern));
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	s.free(p);
}

HMR_TEST(cuda_ipc_bad_arguments_are_einval)
{
	unsigned char handle[64] = {0};
	size_t size = sizeof(handle);
	char host[64];
	void *p;

	sim_open();
	ASSERT_EQ(hmr_hmem_ipc_get(NULL, handle, &size), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_ipc_get(host, handle, &size), -FI_ENOSYS);
	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_SYSTEM, 0, handle, size, &p),
	          -FI_EINVAL);
	/* A handle that names nothing. */
	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_CUDA, 0, handle, size, &p),
	          -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_ipc_close(FI_HMEM_CUDA, NULL), -FI_EINVAL);
}

HMR_TEST_MAIN()
