/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_ze_faults.c: every driver call hmr makes, failed once by injection. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ze_util.h"

/*
 * One case per call (doc/hmem-ze.md lists what each failure does): no
 * crash, no fd left open, the documented error, and the next call works.
 * The simulator fails the named entry point (hmr_sim_ze_fail, counting
 * from the moment the rule is set).  ze_fault_walk_covers_every_call
 * checks that this list is every call hmr makes.
 */
static const char *const walked[] = {
        "zeInit",
        "zeDriverGet",
        "zeDeviceGet",
        "zeContextCreate",
        "zeDriverGetExtensionFunctionAddress",
        "zeMemGetAllocProperties",
        "zeMemGetAddressRange",
        "zeDeviceGetCommandQueueGroupProperties",
        "zeCommandListCreateImmediate",
        "zeCommandListAppendMemoryCopy",
        "zeMemGetIpcHandle",
        "zeMemOpenIpcHandle",
        "zeMemCloseIpcHandle",
        "zexDriverImportExternalPointer",
        "zexDriverReleaseImportedPointer",
        "zeDeviceGetProperties",
        "zeDeviceGetExternalMemoryProperties",
        "zeMemAllocDevice",
        "zeMemFree",
        /* At exit only (ze_fault_at_exit_*). */
        "zeCommandListDestroy",
        "zeContextDestroy",
};
#define WALKED  (sizeof(walked) / sizeof(walked[0]))
#define AT_EXIT 2

/* Every entry point of the simulated driver (tests/sim/ze/README.md). */
static const char *const entry_points[] = {
        "zeInit",
        "zeDriverGet",
        "zeDriverGetApiVersion",
        "zeDriverGetProperties",
        "zeDriverGetIpcProperties",
        "zeDriverGetExtensionProperties",
        "zeDriverGetExtensionFunctionAddress",
        "zeDeviceGet",
        "zeDeviceGetSubDevices",
        "zeDeviceGetProperties",
        "zeDeviceGetCommandQueueGroupProperties",
        "zeDeviceGetMemoryProperties",
        "zeDeviceGetExternalMemoryProperties",
        "zeDeviceGetP2PProperties",
        "zeDeviceCanAccessPeer",
        "zeContextCreate",
        "zeContextCreateEx",
        "zeContextDestroy",
        "zeContextGetStatus",
        "zeMemAllocDevice",
        "zeMemAllocHost",
        "zeMemAllocShared",
        "zeMemFree",
        "zeMemFreeExt",
        "zeMemGetAllocProperties",
        "zeMemGetAddressRange",
        "zeMemGetIpcHandle",
        "zeMemOpenIpcHandle",
        "zeMemCloseIpcHandle",
        "zeCommandQueueCreate",
        "zeCommandQueueDestroy",
        "zeCommandQueueExecuteCommandLists",
        "zeCommandQueueSynchronize",
        "zeCommandListCreate",
        "zeCommandListCreateImmediate",
        "zeCommandListDestroy",
        "zeCommandListClose",
        "zeCommandListReset",
        "zeCommandListAppendMemoryCopy",
        "zeCommandListAppendBarrier",
        "zexDriverImportExternalPointer",
        "zexDriverReleaseImportedPointer",
        "zexDriverGetHostPointerBaseAddress",
};
#define ENTRY_POINTS (sizeof(entry_points) / sizeof(entry_points[0]))

static void set_fail(const struct ze_hooks *h, const char *spec)
{
	ASSERT_EQ(h->fail(spec), 0);
}

/* A start-up call fails once: ze is absent, the reason names the call,
 * and the application's own use of the driver is untouched. */
static void start_fault(const char *call)
{
	struct ze_hooks h = ze_loader_start('a');
	char spec[96];
	int fds = hmr_test_open_fds();
	struct ze_drv d;

	snprintf(spec, sizeof(spec), "%s:1", call);
	set_fail(&h, spec);
	expect_ze_absent(call);
	ASSERT_EQ(hmr_test_open_fds(), fds);
	d = ze_open('a');
	ze_free(&d, ze_dev_alloc(&d, 0, 4096));
	ze_close(&d);
}

HMR_TEST(ze_fault_zeInit_makes_ze_absent)
{
	start_fault("zeInit");
}

HMR_TEST(ze_fault_zeDriverGet_makes_ze_absent)
{
	start_fault("zeDriverGet");
}

HMR_TEST(ze_fault_zeDeviceGet_makes_ze_absent)
{
	start_fault("zeDeviceGet");
}

HMR_TEST(ze_fault_zeContextCreate_makes_ze_absent)
{
	start_fault("zeContextCreate");
}

HMR_TEST(ze_fault_zeDriverGetExtensionFunctionAddress_loses_host_import)
{
	struct ze_hooks h = ze_loader_start('a');
	char *buf = aligned_alloc(4096, 4096);

	set_fail(&h, "zeDriverGetExtensionFunctionAddress:1");
	ASSERT_OK(hmr_hmem_status(FI_HMEM_ZE, NULL, 0));
	ASSERT_EQ(hmr_hmem_host_register(FI_HMEM_ZE, buf, 4096), -FI_ENOSYS);
	free(buf);
}

/* An application with device memory; hmr started; the rule set. */
struct rig {
	struct ze_drv d;
	char *dev;
	int fds;
};

static struct rig rig(const char *spec)
{
	struct rig r;

	r.d = ze_open('a');
	r.dev = ze_dev_alloc(&r.d, 1, 1 << 16);
	ASSERT_OK(hmr_hmem_status(FI_HMEM_ZE, NULL, 0));
	r.fds = hmr_test_open_fds();
	set_fail(&r.d.hooks, spec);
	return r;
}

static void rig_done(struct rig *r)
{
	ASSERT_EQ(hmr_test_open_fds(), r->fds);
	ASSERT_EQ(r->d.hooks.fd_errors(), 0);
	ze_free(&r->d, r->dev);
	ze_close(&r->d);
}

static void query_fault(const char *spec)
{
	struct rig r = rig(spec);
	struct hmr_hmem_info info;

	ASSERT_EQ(hmr_hmem_query(r.dev, 64, &info), -FI_EIO);
	ASSERT_OK(hmr_hmem_query(r.dev, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ZE);
	rig_done(&r);
}

HMR_TEST(ze_fault_zeMemGetAllocProperties_fails_the_query)
{
	query_fault("zeMemGetAllocProperties:1");
}

HMR_TEST(ze_fault_zeMemGetAddressRange_fails_the_query)
{
	query_fault("zeMemGetAddressRange:1");
}

/* The export's two calls come after the query's one. */
static void export_fault(const char *spec)
{
	struct rig r = rig(spec);
	uint64_t offset;
	int fd = -1;

	ASSERT_EQ(hmr_hmem_dmabuf_get(r.dev, 64, 0, &fd, &offset), -FI_EIO);
	ASSERT_EQ(fd, -1);
	ASSERT_OK(hmr_hmem_dmabuf_get(r.dev, 64, 0, &fd, &offset));
	ASSERT_OK(hmr_hmem_dmabuf_put(r.dev, fd));
	/* The driver keeps its own fd of the allocation until zeMemFree. */
	r.fds++;
	rig_done(&r);
}

HMR_TEST(ze_fault_zeMemGetAllocProperties_fails_the_first_export)
{
	export_fault("zeMemGetAllocProperties@1:1");
}

HMR_TEST(ze_fault_zeMemGetAllocProperties_fails_the_second_export)
{
	export_fault("zeMemGetAllocProperties@2:1");
}

/* A failed copy creates nothing for good: the next one works. */
static void copy_fault(const char *spec, int err)
{
	struct rig r = rig(spec);
	unsigned char in[256], out[256];

	fill(in, sizeof(in), 4);
	ASSERT_EQ(hmr_hmem_copy_to(r.dev, in, sizeof(in)), err);
	ASSERT_OK(hmr_hmem_copy_to(r.dev, in, sizeof(in)));
	ASSERT_OK(hmr_hmem_copy_from(out, r.dev, sizeof(out)));
	ASSERT_EQ(memcmp(in, out, sizeof(in)), 0);
	rig_done(&r);
}

HMR_TEST(ze_fault_zeDeviceGetCommandQueueGroupProperties_fails_one_copy)
{
	copy_fault("zeDeviceGetCommandQueueGroupProperties:1", -FI_EIO);
}

HMR_TEST(ze_fault_zeCommandListCreateImmediate_fails_one_copy)
{
	copy_fault("zeCommandListCreateImmediate:1", -FI_ENOMEM);
}

HMR_TEST(ze_fault_zeCommandListAppendMemoryCopy_fails_one_copy)
{
	copy_fault("zeCommandListAppendMemoryCopy:1", -FI_EIO);
}

HMR_TEST(ze_fault_zeMemGetIpcHandle_fails_the_handle)
{
	struct rig r = rig("zeMemGetIpcHandle:1");
	unsigned char handle[64];
	size_t size = sizeof(handle);

	ASSERT_EQ(hmr_hmem_ipc_get(r.dev, handle, &size), -FI_EIO);
	ASSERT_OK(hmr_hmem_ipc_get(r.dev, handle, &size));
	r.fds++; /* The handle's fd is the driver's, until zeMemFree. */
	rig_done(&r);
}

static void ipc_fault(const char *spec, int open_err, int close_err)
{
	struct rig r = rig("");
	unsigned char handle[64];
	size_t size = sizeof(handle);
	void *p;

	ASSERT_OK(hmr_hmem_ipc_get(r.dev, handle, &size));
	r.fds = hmr_test_open_fds();
	set_fail(&r.d.hooks, spec);
	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_ZE, 0, handle, size, &p), open_err);
	if (open_err)
		ASSERT_OK(hmr_hmem_ipc_open(FI_HMEM_ZE, 0, handle, size, &p));
	ASSERT_EQ(hmr_hmem_ipc_close(FI_HMEM_ZE, p), close_err);
	if (close_err)
		ASSERT_OK(hmr_hmem_ipc_close(FI_HMEM_ZE, p));
	rig_done(&r);
}

HMR_TEST(ze_fault_zeMemOpenIpcHandle_fails_the_open)
{
	ipc_fault("zeMemOpenIpcHandle:1", -FI_ENOMEM, 0);
}

HMR_TEST(ze_fault_zeMemCloseIpcHandle_fails_the_close)
{
	ipc_fault("zeMemCloseIpcHandle:1", 0, -FI_EIO);
}

HMR_TEST(ze_fault_zexDriverImportExternalPointer_fails_the_registration)
{
	struct rig r = rig("zexDriverImportExternalPointer:1");
	unsigned long live = r.d.hooks.live_allocs();
	char *buf = aligned_alloc(4096, 8192);

	ASSERT_EQ(hmr_hmem_host_register(FI_HMEM_ZE, buf, 8192), -FI_EIO);
	ASSERT_EQ(r.d.hooks.live_allocs(), live);
	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_ZE, buf, 8192));
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_ZE, buf, 8192));
	ASSERT_EQ(r.d.hooks.live_allocs(), live);
	free(buf);
	rig_done(&r);
}

HMR_TEST(ze_fault_zexDriverReleaseImportedPointer_fails_the_unregistration)
{
	struct rig r = rig("");
	unsigned long live = r.d.hooks.live_allocs();
	char *buf = aligned_alloc(4096, 8192);

	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_ZE, buf, 8192));
	set_fail(&r.d.hooks, "zexDriverReleaseImportedPointer:1");
	ASSERT_EQ(hmr_hmem_host_unregister(FI_HMEM_ZE, buf, 8192), -FI_EIO);
	ASSERT_EQ(r.d.hooks.live_allocs(), live + 1);
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_ZE, buf, 8192));
	ASSERT_EQ(r.d.hooks.live_allocs(), live);
	free(buf);
	rig_done(&r);
}

HMR_TEST(ze_fault_zeDeviceGetProperties_leaves_a_made_up_name)
{
	struct hmr_hmem_device_info di = HMR_HMEM_DEVICE_INFO_INIT;
	struct rig r = rig("zeDeviceGetProperties:1");

	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_ZE, 1, &di));
	ASSERT_TRUE(strcmp(di.name, "ze driver 0 device 1") == 0);
	ASSERT_EQ(di.dmabuf, 1);
	rig_done(&r);
}

HMR_TEST(ze_fault_zeDeviceGetExternalMemoryProperties_leaves_dmabuf_unknown)
{
	struct hmr_hmem_device_info di = HMR_HMEM_DEVICE_INFO_INIT;
	struct rig r = rig("zeDeviceGetExternalMemoryProperties:1");

	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_ZE, 0, &di));
	ASSERT_EQ(di.dmabuf, -1);
	ASSERT_TRUE(strstr(di.dmabuf_why, "ZE_RESULT_ERROR_DEVICE_LOST"));
	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_ZE, 0, &di));
	ASSERT_EQ(di.dmabuf, 1);
	rig_done(&r);
}

HMR_TEST(ze_fault_zeMemAllocDevice_fails_the_allocation)
{
	struct rig r = rig("zeMemAllocDevice:1");
	void *p;

	ASSERT_EQ(hmr_hmem_alloc(FI_HMEM_ZE, 0, 4096, &p), -FI_ENOMEM);
	ASSERT_OK(hmr_hmem_alloc(FI_HMEM_ZE, 0, 4096, &p));
	ASSERT_OK(hmr_hmem_free(FI_HMEM_ZE, p));
	rig_done(&r);
}

HMR_TEST(ze_fault_zeMemFree_fails_the_free)
{
	struct rig r = rig("");
	struct hmr_hmem_info info;
	void *p;

	ASSERT_OK(hmr_hmem_alloc(FI_HMEM_ZE, 1, 4096, &p));
	r.fds = hmr_test_open_fds();
	set_fail(&r.d.hooks, "zeMemFree:1");
	ASSERT_EQ(hmr_hmem_free(FI_HMEM_ZE, p), -FI_EIO);
	ASSERT_OK(hmr_hmem_query(p, 4096, &info)); /* Still there. */
	ASSERT_EQ(info.iface, FI_HMEM_ZE);
	ASSERT_OK(hmr_hmem_free(FI_HMEM_ZE, p));
	r.fds--; /* The allocation's own memfd, in the simulator. */
	rig_done(&r);
}

/* hmr releases its lists and contexts at exit; a failure there is logged
 * and the process still exits normally. */
static void exit_fault(const char *spec)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct rig r = rig("");
		unsigned char in[64] = {0};

		if (hmr_hmem_copy_to(r.dev, in, sizeof(in)))
			_exit(10);
		set_fail(&r.d.hooks, spec);
		exit(0); /* Through the atexit handlers. */
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
}

HMR_TEST(ze_fault_at_exit_zeCommandListDestroy_is_logged)
{
	exit_fault("zeCommandListDestroy:1");
}

HMR_TEST(ze_fault_at_exit_zeContextDestroy_is_logged)
{
	exit_fault("zeContextDestroy:1");
}

/* Everything hmr does, with the calls each entry point received. */
static void scenario(unsigned long *before, unsigned long *after)
{
	struct hmr_hmem_backend_info b = HMR_HMEM_BACKEND_INFO_INIT;
	struct hmr_hmem_device_info di = HMR_HMEM_DEVICE_INFO_INIT;
	struct ze_drv d;
	struct hmr_hmem_info info;
	unsigned char handle[64], buf[64] = {0};
	size_t size = sizeof(handle), i;
	char *dev, *host = aligned_alloc(4096, 4096);
	uint64_t offset;
	void *p;
	int fd;

	d = ze_open('a');
	dev = ze_dev_alloc(&d, 0, 1 << 16);
	for (i = 0; i < ENTRY_POINTS; i++)
		before[i] = d.hooks.calls(entry_points[i]);
	ASSERT_OK(hmr_hmem_query(dev, 64, &info));
	ASSERT_OK(hmr_hmem_dmabuf_get(dev, 64, 0, &fd, &offset));
	ASSERT_OK(hmr_hmem_dmabuf_put(dev, fd));
	ASSERT_OK(hmr_hmem_copy_to(dev, buf, sizeof(buf)));
	ASSERT_OK(hmr_hmem_copy_from(buf, dev, sizeof(buf)));
	ASSERT_OK(hmr_hmem_ipc_get(dev, handle, &size));
	ASSERT_OK(hmr_hmem_ipc_open(FI_HMEM_ZE, 0, handle, size, &p));
	ASSERT_OK(hmr_hmem_ipc_close(FI_HMEM_ZE, p));
	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_ZE, host, 4096));
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_ZE, host, 4096));
	ASSERT_OK(hmr_hmem_backend_info(FI_HMEM_ZE, &b));
	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_ZE, 0, &di));
	ASSERT_OK(hmr_hmem_alloc(FI_HMEM_ZE, 0, 4096, &p));
	ASSERT_OK(hmr_hmem_free(FI_HMEM_ZE, p));
	for (i = 0; i < ENTRY_POINTS; i++)
		after[i] = d.hooks.calls(entry_points[i]);
	free(host);
}

static int is_walked(const char *name)
{
	size_t i;

	for (i = 0; i < WALKED; i++)
		if (strcmp(walked[i], name) == 0)
			return 1;
	return 0;
}

HMR_TEST(ze_fault_walk_covers_every_call)
{
	unsigned long s0[ENTRY_POINTS], s1[ENTRY_POINTS], before[ENTRY_POINTS],
	        after[ENTRY_POINTS];
	struct ze_hooks h = ze_loader_start('a');
	size_t i, j;

	/* What hmr's start-up calls, apart from the loader's own start. */
	for (i = 0; i < ENTRY_POINTS; i++)
		s0[i] = h.calls(entry_points[i]);
	ASSERT_OK(hmr_hmem_status(FI_HMEM_ZE, NULL, 0));
	for (i = 0; i < ENTRY_POINTS; i++)
		s1[i] = h.calls(entry_points[i]);
	scenario(before, after);
	for (i = 0; i < ENTRY_POINTS; i++) {
		int used = s1[i] > s0[i] || after[i] > before[i];

		if (used && !is_walked(entry_points[i]))
			HMR_FAIL("hmr calls %s, which no fault case walks",
			         entry_points[i]);
	}
	for (j = 0; j < WALKED - AT_EXIT; j++) {
		for (i = 0; i < ENTRY_POINTS; i++)
			if (strcmp(entry_points[i], walked[j]) == 0)
				break;
		ASSERT_LT(i, ENTRY_POINTS);
		if (s1[i] == s0[i] && after[i] == before[i])
			HMR_FAIL("%s is walked but hmr never called it",
			         walked[j]);
	}
}

HMR_TEST_MAIN()
