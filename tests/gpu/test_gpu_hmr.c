/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_gpu_hmr.c: hmr's CUDA backend on the real driver. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_util.h"

#define PAGE 4096ull

static struct hmr_hmem_info query(CUdeviceptr p, size_t len)
{
	struct hmr_hmem_info info;

	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, len, &info));
	ASSERT_EQ(info.iface, FI_HMEM_CUDA);
	return info;
}

HMR_TEST(gpu_hmr_query_of_vmm_memory_gives_its_chunk)
{
	struct gpu g = gpu_open();
	int map[8] = {1, 1};
	CUdeviceptr va = gpu_vmm(&g, map, 8);
	struct hmr_hmem_info info = query(va + g.gran + 100, 64);

	ASSERT_U64_EQ(info.base, va + g.gran);
	ASSERT_U64_EQ(info.size, g.gran);
}

HMR_TEST(gpu_hmr_query_id_over_two_chunks_changes_when_one_is_replaced)
{
	struct gpu g = gpu_open();
	int map[2] = {1, 1};
	CUdeviceptr va = gpu_vmm(&g, map, 2);
	uint64_t before = query(va + g.gran - PAGE, 2 * PAGE).buffer_id;

	ASSERT_NE(before, 0);
	gpu_replace(&g, va, 1);
	ASSERT_NE(query(va + g.gran - PAGE, 2 * PAGE).buffer_id, before);
}

/* The fd's size as the kernel tells it (exp_name nv_dmabuf on the real
 * driver); 0 when fdinfo has no size line (the simulator's memfds). */
static unsigned long long fd_size(int fd)
{
	char path[64], line[128];
	unsigned long long size = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	ASSERT_TRUE(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "size: %llu", &size) == 1)
			break;
	fclose(f);
	return size;
}

static void check_export(CUdeviceptr ptr, size_t len, uint64_t want_offset,
                         unsigned long long want_size)
{
	uint64_t offset;
	unsigned long long size;
	int fd;

	ASSERT_OK(hmr_hmem_dmabuf_get((void *)(uintptr_t)ptr, len, 0, &fd,
	                              &offset));
	ASSERT_U64_EQ(offset, want_offset);
	size = fd_size(fd);
	if (size)
		ASSERT_U64_EQ(size, want_size);
	ASSERT_OK(hmr_hmem_dmabuf_put((void *)(uintptr_t)ptr, fd));
}

HMR_TEST(gpu_hmr_dmabuf_covers_the_pages_asked_for)
{
	struct gpu g = gpu_open();
	CUdeviceptr p;

	CU_OK(g.alloc(&p, 64 << 20));
	for (unsigned long long k = 0; k < 4; k++) {
		check_export(p + k * PAGE, 1, 0, PAGE);
		check_export(p + k * PAGE + 1, PAGE, 1, 2 * PAGE);
		check_export(p + k * PAGE + PAGE - 1, 1, PAGE - 1, PAGE);
	}
	check_export(p + (32 << 20) + 256, 4096, 256, 2 * PAGE);
	CU_OK(g.free(p));
}

HMR_TEST(gpu_hmr_dmabuf_over_two_vmm_chunks)
{
	struct gpu g = gpu_open();
	int map[3] = {1, 1, 0};
	CUdeviceptr va = gpu_vmm(&g, map, 3);
	uint64_t offset;
	int fd = -1;

	check_export(va + g.gran - PAGE + 8, 2 * PAGE, 8, 3 * PAGE);
	/* Into the hole: the driver's refusal. */
	ASSERT_EQ(hmr_hmem_dmabuf_get((void *)(uintptr_t)(va + 2 * g.gran - 8),
	                              16, 0, &fd, &offset),
	          -FI_EINVAL);
	ASSERT_EQ(fd, -1);
}

struct job {
	CUdeviceptr p;
	void *host;
	int ret[5];
};

static void *hmr_calls(void *arg)
{
	struct job *j = arg;
	unsigned char handle[128], b = 1;
	size_t size = sizeof(handle);
	uint64_t offset;
	void *d;
	int fd;

	j->ret[0] = hmr_hmem_ipc_get((void *)(uintptr_t)j->p, handle, &size);
	j->ret[1] = hmr_hmem_copy_to((void *)(uintptr_t)j->p, &b, 1);
	j->ret[2] = hmr_hmem_dmabuf_get((void *)(uintptr_t)j->p, 1, 0, &fd,
	                                &offset);
	if (!j->ret[2])
		hmr_hmem_dmabuf_put((void *)(uintptr_t)j->p, fd);
	j->ret[3] = hmr_hmem_host_register(FI_HMEM_CUDA, j->host, 1 << 16);
	if (!j->ret[3])
		hmr_hmem_host_unregister(FI_HMEM_CUDA, j->host, 1 << 16);
	j->ret[4] = hmr_hmem_alloc(FI_HMEM_CUDA, 0, 4096, &d);
	if (!j->ret[4])
		hmr_hmem_free(FI_HMEM_CUDA, d);
	return NULL;
}

HMR_TEST(gpu_hmr_calls_work_on_a_thread_without_a_context)
{
	struct gpu g = gpu_open();
	struct job j;

	CU_OK(g.alloc(&j.p, 1 << 20));
	j.host = aligned_alloc(4096, 1 << 16);
	gpu_contextless(hmr_calls, &j);
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(j.ret[i], 0);
	free(j.host);
	CU_OK(g.free(j.p));
}

/* The child (this program again, HMR_GPU_IPC_HANDLE set): opens the
 * handle and closes it on a thread with no context. */
static void *close_mapping(void *p)
{
	return (void *)(intptr_t)hmr_hmem_ipc_close(FI_HMEM_CUDA, p);
}

static int ipc_child(const char *hex)
{
	unsigned char handle[64];
	void *p;

	for (size_t i = 0; i < sizeof(handle); i++)
		if (sscanf(hex + 2 * i, "%2hhx", &handle[i]) != 1)
			return 10;
	if (hmr_hmem_ipc_open(FI_HMEM_CUDA, 0, handle, sizeof(handle), &p))
		return 11;
	return gpu_contextless(close_mapping, p) ? 12 : 0;
}

HMR_TEST(gpu_hmr_ipc_close_works_on_a_thread_without_a_context)
{
	const char *hex = getenv("HMR_GPU_IPC_HANDLE");
	unsigned char handle[64];
	char text[2 * sizeof(handle) + 1];
	size_t size = sizeof(handle);
	struct gpu g;
	CUdeviceptr p;
	int status;
	pid_t pid;

	if (hex)
		exit(ipc_child(hex));
	g = gpu_open();
	CU_OK(g.alloc(&p, 2 << 20));
	ASSERT_OK(hmr_hmem_ipc_get((void *)(uintptr_t)p, handle, &size));
	ASSERT_EQ(size, sizeof(handle));
	for (size_t i = 0; i < size; i++)
		snprintf(text + 2 * i, 3, "%02x", handle[i]);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* A CUDA process must not use the driver after fork: exec. */
		setenv("HMR_GPU_IPC_HANDLE", text, 1);
		execl("/proc/self/exe", "test_gpu_hmr",
		      "gpu_hmr_ipc_close_works_on_a_thread_without_a_context",
		      (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	CU_OK(g.free(p));
}

HMR_TEST_MAIN()
