/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cuda_faults.c: every driver call hmr makes, failed, at every call. */
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_util.h"

/*
 * For each entry point hmr's CUDA backend calls and each N, a child
 * process lets N calls of it through and fails the next one (the
 * simulator's hmr_sim_cuda_fail), then walks every path that reaches the
 * driver: start-up, classification and registration, dma-buf export,
 * copies, host registration, IPC.  Each step must succeed or return one
 * of the documented -FI_E* codes; nothing may crash, and the child must
 * end with the fds it started with (the ASan build's leak check runs at
 * its exit).
 */
static const char *const calls[] = {
        "cuInit",
        "cuDriverGetVersion",
        "cuGetProcAddress",
        "cuDeviceGetCount",
        "cuDeviceGet",
        "cuDeviceGetAttribute",
        "cuDevicePrimaryCtxRetain",
        "cuCtxGetCurrent",
        "cuCtxSetCurrent",
        "cuPointerGetAttributes",
        "cuMemcpyHtoD",
        "cuMemcpyDtoH",
        "cuMemHostRegister",
        "cuMemHostUnregister",
        "cuMemGetHandleForAddressRange",
        "cuIpcGetMemHandle",
};
#define MAX_NTH 6

/* 0, or a code the step may return when the driver fails under it. */
static void allowed(const char *step, int ret)
{
	if (ret == 0 || ret == -FI_EIO || ret == -FI_ENOSYS ||
	    ret == -FI_EINVAL || ret == -FI_ENOMEM || ret == -FI_ENODEV ||
	    ret == -FI_EOPNOTSUPP)
		return;
	fprintf(stderr, "%s: %d (%s)\n", step, ret, hmr_strerror(ret));
	exit(3);
}

static void paths(unsigned long long dev)
{
	void *d = (void *)(uintptr_t)dev;
	static char host[8192] __attribute__((aligned(4096)));
	struct fid_domain *domain;
	struct fid_mr *mr;
	struct hmr_hmem_info info;
	char handle[64], out[64] = "x", in[64];
	size_t hsize = sizeof(handle);
	uint64_t offset;
	int ret, fd;

	ret = hmr_hmem_status(FI_HMEM_CUDA, NULL, 0);
	if (ret != -FI_ENOSYS)
		allowed("status", ret);
	ASSERT_OK(hmr_domain_open(
	        &(struct hmr_domain_attr){
	                .size = sizeof(struct hmr_domain_attr),
	                .caps = FI_HMEM},
	        &domain));
	ret = reg_iface(domain, d, 4096, FI_HMEM_CUDA, 0, 0, &mr);
	allowed("fi_mr_regattr", ret);
	if (!ret)
		ASSERT_OK(fi_close(&mr->fid));
	ret = hmr_hmem_dmabuf_get(d, 4096, 0, &fd, &offset);
	allowed("dmabuf_get", ret);
	if (!ret)
		allowed("dmabuf_put", hmr_hmem_dmabuf_put(d, fd));
	/* Copies only where hmr knows the memory as CUDA's: with the backend
	 * failed at start-up, hmr (rightly) takes it for host memory, which
	 * this process's own driver calls made it not. */
	ret = hmr_hmem_query(d, 4096, &info);
	allowed("query", ret);
	if (!ret && info.iface == FI_HMEM_CUDA) {
		allowed("copy_to", hmr_hmem_copy_to(d, out, sizeof(out)));
		allowed("copy_from", hmr_hmem_copy_from(in, d, sizeof(in)));
	}
	ret = hmr_hmem_host_register(FI_HMEM_CUDA, host, sizeof(host));
	allowed("host_register", ret);
	if (!ret)
		allowed("host_unregister",
		        hmr_hmem_host_unregister(FI_HMEM_CUDA, host,
		                                 sizeof(host)));
	allowed("ipc_get", hmr_hmem_ipc_get(d, handle, &hsize));
	ASSERT_OK(fi_close(&domain->fid));
}

static void child(const char *call, int nth)
{
	struct sim s = sim_open();
	unsigned long long dev = sim_alloc_on(&s, 0, 1 << 20);
	int (*fail)(const char *) = (int (*)(const char *))sim_sym(
	        dlopen(getenv("HMR_CUDA_LIBRARY"), RTLD_NOW | RTLD_NOLOAD),
	        "hmr_sim_cuda_fail");
	char spec[128];
	int fds = hmr_test_open_fds();

	/* 999 is CUDA_ERROR_UNKNOWN: a failure hmr cannot expect. */
	snprintf(spec, sizeof(spec), "%s@%d=999:1", call, nth);
	ASSERT_EQ(fail(spec), 1);
	paths(dev);
	fail("");
	ASSERT_EQ(hmr_test_open_fds(), fds);
	s.free(dev);
	exit(0);
}

HMR_TEST(cuda_every_driver_call_failed_at_every_call_ends_cleanly)
{
	size_t i;
	int nth, status, runs = 0;
	pid_t pid;

	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		for (nth = 0; nth < MAX_NTH; nth++) {
			fflush(stdout);
			pid = fork();
			ASSERT_TRUE(pid >= 0);
			if (pid == 0)
				child(calls[i], nth);
			ASSERT_EQ(waitpid(pid, &status, 0), pid);
			if (!WIFEXITED(status) || WEXITSTATUS(status))
				HMR_FAIL("%s failed at call %d: %s %d",
				         calls[i], nth + 1,
				         WIFEXITED(status) ? "exit" : "signal",
				         WIFEXITED(status) ? WEXITSTATUS(status)
				                           : WTERMSIG(status));
			runs++;
		}
	}
	printf("%d runs: %zu driver calls, each failed at calls 1..%d\n", runs,
	       sizeof(calls) / sizeof(calls[0]), MAX_NTH);
}

HMR_TEST_MAIN()
