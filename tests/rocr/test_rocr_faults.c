/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_rocr_faults.c: every runtime call the backend makes, failed once. */
#include <sys/wait.h>
#include <unistd.h>

#include "rocr_util.h"

#include "hmem/hmem.h"
#include "rocr/rocr_api.h"

/*
 * The walk goes over the backend's own list of entry points
 * (HMR_ROCR_CALLS, seen through the INTERNAL include view): a call added
 * there without a scenario here fails the test.  Each scenario runs in a
 * child of its own, with HMR_SIM_ROCR_FAIL set before hmr or the
 * simulator start, and its log captured: the operation that makes the
 * call must fail with the error the wrapper documents, a retry must work,
 * no fd may be left behind, and the child must exit cleanly (under ASan,
 * LeakSanitizer checks the child at exit).  Failures at fini happen in
 * hmr's destructor: the parent reads the child's log for those.
 */
#define MIB (1 << 20)
#define OOM "=HSA_STATUS_ERROR_OUT_OF_RESOURCES:1"

static struct app a;

/* The backend started, the application's runtime open. */
static void start(void)
{
	ASSERT_OK(hmr_hmem_status(FI_HMEM_ROCR, NULL, 0));
	a = app_open();
}

/* `shut_downs`: hsa_shut_down calls owed by hmr (1 when hsa_init had
 * succeeded before the failure). */
static int absent_because(const char *reason, unsigned long shut_downs)
{
	char why[192];

	ASSERT_EQ(hmr_hmem_status(FI_HMEM_ROCR, why, sizeof(why)), -FI_ENOSYS);
	if (!strstr(why, reason))
		HMR_FAIL("why \"%s\" lacks \"%s\"", why, reason);
	a = app_open();
	/* A started runtime was shut down before giving up. */
	ASSERT_EQ(a.calls("hsa_shut_down"), shut_downs);
	return 0;
}

static int f_status_string(void)
{
	static char buf[4096] __attribute__((aligned(4096)));

	start();
	ASSERT_EQ(hmr_hmem_host_register(FI_HMEM_ROCR, buf, 4096), -FI_ENOMEM);
	ASSERT_TRUE(log_has("hsa_amd_memory_lock: HSA status (0x1008)"));
	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_ROCR, buf, 4096));
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_ROCR, buf, 4096));
	return 0;
}

static int f_init(void)
{
	return absent_because("hsa_init: HSA_STATUS_ERROR (0x1000)", 0);
}

static int f_iterate_agents(void)
{
	return absent_because("hsa_iterate_agents: HSA_STATUS_ERROR (0x1000)",
	                      1);
}

static int f_agent_get_info(void)
{
	return absent_because("hsa_agent_get_info: HSA_STATUS_ERROR (0x1000)",
	                      1);
}

/* The dma-buf question is the first: no dma-buf, the backend runs. */
static int f_system_get_info(void)
{
	char *p;
	uint64_t off;
	int fd;

	start();
	p = gpu_alloc(&a, 0, MIB);
	ASSERT_EQ(hmr_hmem_dmabuf_get(p, 4096, 0, &fd, &off), -FI_EOPNOTSUPP);
	ASSERT_TRUE(log_has("dma-buf no: hsa_system_get_info"));
	app_free(&a, p);
	return 0;
}

/* Fails in hmr's destructor: the parent reads the warning. */
static int f_shut_down(void)
{
	start();
	return 0;
}

static int f_pointer_info(void)
{
	struct hmr_hmem_info info;
	char *p;

	start();
	p = gpu_alloc(&a, 0, MIB);
	ASSERT_EQ(hmr_hmem_query(p, 64, &info), -FI_ENOMEM);
	ASSERT_OK(hmr_hmem_query(p, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ROCR);
	app_free(&a, p);
	return 0;
}

/* Nothing half-tracked stays: the retry registers, the free drops it. */
static int f_register(void)
{
	struct hmr_hmem_info info;
	char *p;

	start();
	p = gpu_alloc(&a, 0, MIB);
	ASSERT_EQ(hmr_hmem_query(p, 64, &info), -FI_ENOMEM);
	ASSERT_EQ(hmr__memtype_lookup((uintptr_t)p, 64, &info), 0);
	ASSERT_OK(hmr_hmem_query(p, 64, &info));
	ASSERT_NE(info.buffer_id, 0);
	app_free(&a, p);
	ASSERT_EQ(hmr__memtype_lookup((uintptr_t)p, 64, &info), 0);
	return 0;
}

/* Left registered for fini to deregister, which fails: the allocation
 * (one memfd) lives on to the end. */
static int f_deregister(void)
{
	struct hmr_hmem_info info;

	start();
	ASSERT_OK(hmr_hmem_query(gpu_alloc(&a, 0, MIB), 64, &info));
	return 1;
}

static int f_lock(void)
{
	static char buf[8192] __attribute__((aligned(4096)));

	start();
	ASSERT_EQ(hmr_hmem_host_register(FI_HMEM_ROCR, buf, 8192), -FI_ENOMEM);
	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_ROCR, buf, 8192));
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_ROCR, buf, 8192));
	return 0;
}

static int f_unlock(void)
{
	static char buf[8192] __attribute__((aligned(4096)));
	struct hmr_hmem_info info;

	start();
	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_ROCR, buf, 8192));
	ASSERT_EQ(hmr_hmem_host_unregister(FI_HMEM_ROCR, buf, 8192), -FI_EIO);
	ASSERT_OK(hmr_hmem_query(buf, 64, &info)); /* Still locked. */
	ASSERT_EQ(info.iface, FI_HMEM_ROCR);
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_ROCR, buf, 8192));
	ASSERT_OK(hmr_hmem_query(buf, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	return 0;
}

static int f_copy(void)
{
	char out[64] = {1}, *p;

	start();
	p = gpu_alloc(&a, 1, MIB);
	ASSERT_EQ(hmr_hmem_copy_to(p, out, sizeof(out)), -FI_EIO);
	ASSERT_OK(hmr_hmem_copy_to(p, out, sizeof(out)));
	app_free(&a, p);
	return 0;
}

static int f_ipc_create(void)
{
	unsigned char h[64];
	size_t size = sizeof(h);
	char *p;

	start();
	p = gpu_alloc(&a, 0, MIB);
	ASSERT_EQ(hmr_hmem_ipc_get(p, h, &size), -FI_ENOMEM);
	ASSERT_OK(hmr_hmem_ipc_get(p, h, &size));
	app_free(&a, p);
	return 0;
}

/* Exported and attached in this process, as ROCr allows. */
static char *exported(unsigned char *h, size_t *size)
{
	char *p;

	start();
	p = gpu_alloc(&a, 0, MIB);
	ASSERT_OK(hmr_hmem_ipc_get(p, h, size));
	return p;
}

static int f_ipc_attach(void)
{
	unsigned char h[64];
	size_t size = sizeof(h);
	char *p = exported(h, &size);
	void *m;

	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_ROCR, 0, h, size, &m), -FI_EINVAL);
	ASSERT_OK(hmr_hmem_ipc_open(FI_HMEM_ROCR, 0, h, size, &m));
	ASSERT_OK(hmr_hmem_ipc_close(FI_HMEM_ROCR, m));
	app_free(&a, p);
	return 0;
}

static int f_ipc_detach(void)
{
	unsigned char h[64];
	size_t size = sizeof(h);
	char *p = exported(h, &size);
	struct hmr_hmem_info info;
	void *m;

	ASSERT_OK(hmr_hmem_ipc_open(FI_HMEM_ROCR, 0, h, size, &m));
	ASSERT_EQ(hmr_hmem_ipc_close(FI_HMEM_ROCR, m), -FI_EIO);
	ASSERT_OK(hmr_hmem_ipc_close(FI_HMEM_ROCR, m));
	ASSERT_OK(hmr_hmem_query(m, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	app_free(&a, p);
	return 0;
}

static int f_export(void)
{
	uint64_t off;
	int fd, before;
	char *p;

	start();
	p = gpu_alloc(&a, 0, MIB);
	before = hmr_test_open_fds();
	ASSERT_EQ(hmr_hmem_dmabuf_get(p, 4096, 0, &fd, &off), -FI_ENOMEM);
	ASSERT_EQ(hmr_test_open_fds(), before);
	ASSERT_OK(hmr_hmem_dmabuf_get(p, 4096, 0, &fd, &off));
	ASSERT_OK(hmr_hmem_dmabuf_put(p, fd));
	app_free(&a, p);
	return 0;
}

/* ROCr's close is close(2): the fd is gone whatever it returns, and hmr
 * never closes it again.  The simulator's injected failure skips the
 * close, which ROCr cannot do, so the test closes it. */
static int f_close(void)
{
	uint64_t off;
	int fd, before;
	char *p;

	start();
	p = gpu_alloc(&a, 0, MIB);
	before = hmr_test_open_fds();
	ASSERT_OK(hmr_hmem_dmabuf_get(p, 4096, 0, &fd, &off));
	ASSERT_EQ(hmr_hmem_dmabuf_put(p, fd), -FI_EBADF);
	ASSERT_EQ(close(fd), 0);
	ASSERT_EQ(hmr_test_open_fds(), before);
	app_free(&a, p);
	return 0;
}

struct fault {
	const char *call;
	const char *fail; /* HMR_SIM_ROCR_FAIL */
	int (*run)(void); /* The fds it leaves open on purpose. */
	/* Failed in hmr's destructor: the child's log must say this. */
	const char *log;
};

#define ERR "=HSA_STATUS_ERROR:1"
static const struct fault faults[] = {
        {"hsa_status_string", "hsa_amd_memory_lock" OOM ",hsa_status_string:1",
         f_status_string, NULL},
        {"hsa_init", "hsa_init" ERR, f_init, NULL},
        {"hsa_shut_down", "hsa_shut_down" ERR, f_shut_down,
         "hsa_shut_down: HSA_STATUS_ERROR:"},
        {"hsa_system_get_info", "hsa_system_get_info" ERR, f_system_get_info,
         NULL},
        {"hsa_iterate_agents", "hsa_iterate_agents" ERR, f_iterate_agents,
         NULL},
        {"hsa_agent_get_info", "hsa_agent_get_info" ERR, f_agent_get_info,
         NULL},
        {"hsa_amd_pointer_info", "hsa_amd_pointer_info" OOM, f_pointer_info,
         NULL},
        {"hsa_amd_register_deallocation_callback",
         "hsa_amd_register_deallocation_callback" OOM, f_register, NULL},
        {"hsa_amd_deregister_deallocation_callback",
         "hsa_amd_deregister_deallocation_callback" ERR, f_deregister,
         "hsa_amd_deregister_deallocation_callback: HSA_STATUS_ERROR:"},
        {"hsa_amd_memory_lock", "hsa_amd_memory_lock" OOM, f_lock, NULL},
        {"hsa_amd_memory_unlock", "hsa_amd_memory_unlock" ERR, f_unlock, NULL},
        {"hsa_memory_copy", "hsa_memory_copy" ERR, f_copy, NULL},
        {"hsa_amd_ipc_memory_create", "hsa_amd_ipc_memory_create" OOM,
         f_ipc_create, NULL},
        {"hsa_amd_ipc_memory_attach",
         "hsa_amd_ipc_memory_attach=HSA_STATUS_ERROR_INVALID_ARGUMENT:1",
         f_ipc_attach, NULL},
        {"hsa_amd_ipc_memory_detach", "hsa_amd_ipc_memory_detach" ERR,
         f_ipc_detach, NULL},
        {"hsa_amd_portable_export_dmabuf", "hsa_amd_portable_export_dmabuf" OOM,
         f_export, NULL},
        {"hsa_amd_portable_close_dmabuf",
         "hsa_amd_portable_close_dmabuf=HSA_STATUS_ERROR_RESOURCE_FREE:1",
         f_close, NULL},
};
#define NFAULTS (sizeof(faults) / sizeof(faults[0]))

static void child(const struct fault *f)
{
	int fds;

	case_env("HMR_SIM_ROCR_FAIL", f->fail);
	capture_log();
	fds = hmr_test_open_fds();
	fds += f->run();
	/* The injected failure happened (fini's are read by the parent). */
	if (!f->log)
		ASSERT_GE(a.calls(f->call), 1);
	ASSERT_EQ(hmr_test_open_fds(), fds);
	exit(0); /* hmr's destructor runs, then LeakSanitizer. */
}

static void run_fault(const struct fault *f)
{
	char path[64];
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		child(f);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	snprintf(path, sizeof(path), "/tmp/hmr-rocr-log-%d", (int)pid);
	snprintf(capture_path, sizeof(capture_path), "%s", path);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    (f->log && !log_has(f->log))) {
		log_has("(the child's log)");
		HMR_FAIL("%s failed once: child status %#x", f->call, status);
	}
	unlink(path);
	printf("%s failed once: as documented\n", f->call);
}

static const struct fault *scenario(const char *call)
{
	size_t i;

	for (i = 0; i < NFAULTS; i++)
		if (!strcmp(faults[i].call, call))
			return &faults[i];
	return NULL;
}

HMR_TEST(rocr_every_runtime_call_failed_once_is_reported_cleanly)
{
#define NAME(name, header, req, params) #name,
	static const char *const calls[] = {HMR_ROCR_CALLS(NAME)};
#undef NAME
	size_t i;

	ASSERT_EQ(NFAULTS, sizeof(calls) / sizeof(calls[0]));
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		if (!scenario(calls[i]))
			HMR_FAIL("no fault scenario for %s", calls[i]);
		run_fault(scenario(calls[i]));
	}
}

HMR_TEST_MAIN()
