/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_rocr_ipc.c: GPU memory shared with another process by IPC. */
#include <sys/wait.h>
#include <unistd.h>

#include "rocr_util.h"

#define LEN (1 << 20)

/* The child opens the parent's handle on GPU 1, checks the bytes and
 * what the mapping classifies as, and closes it. */
static int child(const void *handle, size_t size, const char *pattern)
{
	struct hmr_hmem_info info;
	char back[64];
	void *p;

	if (hmr_hmem_ipc_open(FI_HMEM_ROCR, 1, handle, size, &p))
		return 10;
	if (hmr_hmem_copy_from(back, (char *)p + 4096, sizeof(back)))
		return 11;
	if (memcmp(back, pattern, sizeof(back)))
		return 12;
	if (hmr_hmem_query(p, 64, &info) || info.iface != FI_HMEM_ROCR ||
	    info.device != 0 || info.flags != HMR_HMEM_DEVICE_ONLY ||
	    !info.buffer_id)
		return 13;
	return hmr_hmem_ipc_close(FI_HMEM_ROCR, p) ? 14 : 0;
}

HMR_TEST(rocr_ipc_handle_opens_in_a_forked_process)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 0, LEN);
	unsigned char handle[256];
	size_t size = 1;
	char pattern[64];
	int status;
	pid_t pid;

	memset(pattern, 0x4d, sizeof(pattern));
	ASSERT_EQ(a.memory_copy(p + 4096, pattern, sizeof(pattern)),
	          HSA_STATUS_SUCCESS);
	ASSERT_EQ(hmr_hmem_ipc_get(p, handle, &size), -FI_ETOOSMALL);
	ASSERT_LE(size, sizeof(handle));
	/* An interior pointer names its allocation, as with CUDA. */
	ASSERT_OK(hmr_hmem_ipc_get(p + 100, handle, &size));
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(child(handle, size, pattern));
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	app_free(&a, p);
}

/* Attached twice in this process: two mappings, two ids, each forgotten
 * (and dropped from the memtype cache) at its close. */
HMR_TEST(rocr_ipc_mappings_have_their_own_ids)
{
	struct app a = app_open();
	char *p = gpu_alloc(&a, 1, LEN);
	unsigned char handle[64];
	size_t size = sizeof(handle);
	struct hmr_hmem_info i1, i2;
	void *m1, *m2;

	ASSERT_OK(hmr_hmem_ipc_get(p, handle, &size));
	ASSERT_OK(hmr_hmem_ipc_open(FI_HMEM_ROCR, 0, handle, size, &m1));
	ASSERT_OK(hmr_hmem_ipc_open(FI_HMEM_ROCR, 0, handle, size, &m2));
	ASSERT_TRUE(m1 != m2 && m1 != p);
	ASSERT_OK(hmr_hmem_query(m1, 8, &i1));
	ASSERT_OK(hmr_hmem_query(m2, 8, &i2));
	ASSERT_EQ(i1.device, 1); /* The exporter's GPU owns it. */
	ASSERT_NE(i1.buffer_id, 0);
	ASSERT_NE(i1.buffer_id, i2.buffer_id);
	ASSERT_OK(hmr_hmem_ipc_close(FI_HMEM_ROCR, m1));
	ASSERT_OK(hmr_hmem_ipc_close(FI_HMEM_ROCR, m2));
	ASSERT_OK(hmr_hmem_query(m1, 8, &i1));
	ASSERT_EQ(i1.iface, FI_HMEM_SYSTEM);
	app_free(&a, p);
}

HMR_TEST(rocr_ipc_bad_arguments_are_einval)
{
	unsigned char handle[40] = {0};
	size_t size = sizeof(handle);
	struct app a = app_open();
	char host[64], *p = gpu_alloc(&a, 0, LEN);
	void *m;

	ASSERT_EQ(hmr_hmem_ipc_get(NULL, handle, &size), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_ipc_get(host, handle, &size), -FI_ENOSYS);
	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_SYSTEM, 0, handle, size, &m),
	          -FI_EINVAL);
	/* A handle that names nothing. */
	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_ROCR, 0, handle, size, &m),
	          -FI_EINVAL);
	ASSERT_OK(hmr_hmem_ipc_get(p, handle, &size));
	/* A device that does not exist; a truncated handle. */
	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_ROCR, 2, handle, size, &m),
	          -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_ROCR, 0, handle, size - 1, &m),
	          -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_ipc_close(FI_HMEM_ROCR, NULL), -FI_EINVAL);
	app_free(&a, p);
}

HMR_TEST_MAIN()
