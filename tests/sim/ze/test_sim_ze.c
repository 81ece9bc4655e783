/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_ze.c: the simulated driver through the real loader: basics. */
#include "test_sim_ze.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Cases run in every loader mode; see test_sim_ze.h. */

HMR_TEST(init_rules)
{
	struct ze_hooks h;
	uint32_t n = 0;

	load_loader();
	/* The loader loads drivers in zeInit and refuses all before it. */
	ASSERT_PTR_EQ(
	        dlopen(getenv("HMR_SIM_ZE_DRIVER_A"), RTLD_NOW | RTLD_NOLOAD),
	        NULL);
	ZE_RC(ze.DriverGet(&n, NULL), ZE_RESULT_ERROR_UNINITIALIZED);
	ZE_OK(ze.Init(0));
	/* (The 1.8 loader calls the driver's pfnInit twice in its first
	 * zeInit, and again in every later one.) */
	ze_get_hooks('a', &h);
	ASSERT_GE(h.calls("zeInit"), 1);
	ZE_OK(ze.Init(ZE_INIT_FLAG_GPU_ONLY));
	ASSERT_EQ(driver_count(), mode == MODE_TWO ? 2 : 1);
}

/* With two drivers the loader reports only that none initialized. */
HMR_TEST(init_rejects_unknown_flags)
{
	ze_result_t want;

	load_loader();
	want = mode == MODE_TWO ? ZE_RESULT_ERROR_UNINITIALIZED
	                        : ZE_RESULT_ERROR_INVALID_ENUMERATION;
	ZE_RC(ze.Init(0x4), want);
	/* The loader remembers its first zeInit. */
	ZE_RC(ze.Init(0), want);
}

/* No driver is left: with wrapped handles zeDriverGet finds none. */
HMR_TEST(init_vpu_only_finds_no_gpu_driver)
{
	uint32_t n = 0;

	load_loader();
	ZE_RC(ze.Init(ZE_INIT_FLAG_VPU_ONLY), ZE_RESULT_ERROR_UNINITIALIZED);
	if (mode == MODE_INTERCEPT || mode == MODE_TWO) {
		ZE_OK(ze.DriverGet(&n, NULL));
		ASSERT_EQ(n, 0);
	} else {
		ZE_RC(ze.DriverGet(&n, NULL), ZE_RESULT_ERROR_UNINITIALIZED);
	}
}

/* A driver without devices fails its init; the loader drops it. */
HMR_TEST(init_without_devices)
{
	ze_driver_properties_t p = {
	        .stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
	ze_driver_handle_t drv;
	uint32_t n = 1;

	setenv("HMR_SIM_ZE_A_DEVICES", "0", 1);
	load_loader();
	if (mode != MODE_TWO) {
		ZE_RC(ze.Init(0), ZE_RESULT_ERROR_UNINITIALIZED);
		return;
	}
	ZE_OK(ze.Init(0));
	ZE_OK(ze.DriverGet(&n, &drv));
	ASSERT_EQ(n, 1);
	ZE_OK(ze.DriverGetProperties(drv, &p));
	ASSERT_EQ(p.uuid.id[13], 'b');
}

HMR_TEST(driver_properties)
{
	ze_driver_properties_t p = {
	        .stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
	ze_driver_ipc_properties_t ipc = {
	        .stype = ZE_STRUCTURE_TYPE_DRIVER_IPC_PROPERTIES};
	ze_driver_extension_properties_t ext[4];
	ze_api_version_t v;
	struct env e;
	uint32_t n = 0;

	setup(&e);
	ZE_OK(ze.DriverGetProperties(e.drv, &p));
	ASSERT_EQ(memcmp(p.uuid.id, "hmrsimze-drv-a", 14), 0);
	ASSERT_EQ(p.driverVersion, 0x01040000);
	ZE_OK(ze.DriverGetApiVersion(e.drv, &v));
	ASSERT_EQ(v, ZE_API_VERSION_1_4);
	ZE_OK(ze.DriverGetIpcProperties(e.drv, &ipc));
	ASSERT_EQ(ipc.flags, ZE_IPC_PROPERTY_FLAG_MEMORY);
	ZE_OK(ze.DriverGetExtensionProperties(e.drv, &n, NULL));
	ASSERT_EQ(n, 1);
	ZE_OK(ze.DriverGetExtensionProperties(e.drv, &n, ext));
	ASSERT_EQ(strcmp(ext[0].name, ZE_MEMORY_FREE_POLICIES_EXT_NAME), 0);
	teardown(&e);
}

HMR_TEST(device_enumeration_and_properties)
{
	ze_device_properties_t p[2];
	ze_command_queue_group_properties_t groups[4];
	ze_device_memory_properties_t mem;
	ze_device_external_memory_properties_t ext = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_EXTERNAL_MEMORY_PROPERTIES};
	ze_bool_t peer = 0;
	struct env e;
	uint32_t n = 0;

	setup(&e);
	ASSERT_EQ(e.ndev, 2);
	ZE_OK(ze.DeviceGet(e.drv, &n, NULL));
	ASSERT_EQ(n, 2);
	for (int i = 0; i < 2; i++) {
		memset(&p[i], 0, sizeof(p[i]));
		p[i].stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
		ZE_OK(ze.DeviceGetProperties(e.dev[i], &p[i]));
		ASSERT_EQ(p[i].type, ZE_DEVICE_TYPE_GPU);
		ASSERT_EQ(p[i].vendorId, 0x8086);
		ASSERT_EQ(p[i].maxMemAllocSize, 4ULL << 30);
		ASSERT_EQ(p[i].uuid.id[15], i);
	}
	ASSERT_NE(memcmp(p[0].uuid.id, p[1].uuid.id, ZE_MAX_DEVICE_UUID_SIZE),
	          0);
	n = 4;
	ZE_OK(ze.DeviceGetCommandQueueGroupProperties(e.dev[0], &n, groups));
	ASSERT_EQ(n, 2);
	ASSERT_TRUE(groups[1].flags &
	            ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY);
	n = 1;
	mem.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
	mem.pNext = NULL;
	ZE_OK(ze.DeviceGetMemoryProperties(e.dev[1], &n, &mem));
	ASSERT_EQ(mem.totalSize, 16ULL << 30);
	ZE_OK(ze.DeviceGetExternalMemoryProperties(e.dev[0], &ext));
	ASSERT_EQ(ext.memoryAllocationExportTypes,
	          ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF);
	ZE_OK(ze.DeviceCanAccessPeer(e.dev[0], e.dev[1], &peer));
	ASSERT_EQ(peer, 1);
	n = 5;
	ZE_OK(ze.DeviceGetSubDevices(e.dev[0], &n, NULL));
	ASSERT_EQ(n, 0);
	teardown(&e);
}

HMR_TEST(device_count_from_environment)
{
	struct env e;

	setenv("HMR_SIM_ZE_DEVICES", "3", 1);
	setenv("HMR_SIM_ZE_B_DEVICES", "1", 1);
	setenv("HMR_SIM_ZE_P2P", "0", 1);
	setup(&e);
	ASSERT_EQ(e.ndev, 3);
	{
		ze_bool_t peer = 1;

		ZE_OK(ze.DeviceCanAccessPeer(e.dev[0], e.dev[2], &peer));
		ASSERT_EQ(peer, 0);
	}
	if (mode == MODE_TWO) {
		struct env b;

		setup_driver(&b, 'b');
		ASSERT_EQ(b.ndev, 1);
		teardown(&b);
	}
	teardown(&e);
}

/* A CPU load from device memory faults, as on a discrete GPU. */
HMR_TEST(device_memory_faults_on_cpu_access)
{
	struct env e;
	unsigned char *p;
	pid_t pid;
	int status;

	setup(&e);
	p = dev_alloc(&e, 0, 4096);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		_exit(*(volatile unsigned char *)p);
	}
	status = child_status(pid);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(WTERMSIG(status), SIGSEGV);
	ZE_OK(ze.MemFree(e.ctx, p));
	teardown(&e);
}

HMR_TEST(device_memory_host_accessible)
{
	unsigned char in[100], *p;
	struct env e;

	setenv("HMR_SIM_ZE_HOST_ACCESSIBLE", "1", 1);
	setup(&e);
	fill(in, sizeof(in), 3);
	p = dev_alloc(&e, 1, sizeof(in));
	copy(&e, p, in, sizeof(in));
	ASSERT_EQ(memcmp(p, in, sizeof(in)), 0);
	p[7] = 0xee;
	copy(&e, in, p, sizeof(in));
	ASSERT_EQ(in[7], 0xee);
	ZE_OK(ze.MemFree(e.ctx, p));
	teardown(&e);
}

HMR_TEST(freed_address_is_reused_with_new_id)
{
	ze_memory_allocation_properties_t mp;
	ze_device_handle_t dev;
	struct env e;
	void *p, *q;
	uint64_t id;

	setup(&e);
	p = dev_alloc(&e, 0, 10000);
	ZE_OK(props(&e, p, &mp, &dev));
	id = mp.id;
	ZE_OK(ze.MemFree(e.ctx, p));
	ZE_RC(props(&e, p, &mp, &dev), ZE_RESULT_SUCCESS);
	ASSERT_EQ(mp.type, ZE_MEMORY_TYPE_UNKNOWN);
	q = dev_alloc(&e, 0, 10000);
	ASSERT_PTR_EQ(q, p);
	ZE_OK(props(&e, q, &mp, &dev));
	ASSERT_NE(mp.id, id);
	ASSERT_EQ(e.hooks.live_allocs(), 1);
	ZE_OK(ze.MemFree(e.ctx, q));
	ASSERT_EQ(e.hooks.live_allocs(), 0);
	teardown(&e);
}

HMR_TEST(allocation_arguments)
{
	ze_device_mem_alloc_desc_t d = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	ze_memory_allocation_properties_t mp;
	ze_device_handle_t dev;
	struct env e;
	void *p = NULL, *big;

	setup(&e);
	ZE_RC(ze.MemAllocDevice(e.ctx, &d, 4096, 3, e.dev[0], &p),
	      ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
	ZE_RC(ze.MemAllocDevice(e.ctx, &d, 0, 0, e.dev[0], &p),
	      ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
	ZE_RC(ze.MemAllocDevice(e.ctx, &d, (4ULL << 30) + 1, 0, e.dev[0], &p),
	      ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
	ZE_OK(ze.MemAllocDevice(e.ctx, &d, 100, 1 << 20, e.dev[0], &p));
	ASSERT_EQ((uintptr_t)p % (1 << 20), 0);
	big = dev_alloc(&e, 0, 3 << 20);
	ASSERT_EQ((uintptr_t)big % (2 << 20), 0);
	ZE_OK(props(&e, big, &mp, &dev));
	ASSERT_EQ(mp.pageSize, 2 << 20);
	ZE_OK(ze.MemFree(e.ctx, big));
	ZE_OK(ze.MemFree(e.ctx, p));
	{
		ze_host_mem_alloc_desc_t h = {
		        .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};

		ZE_OK(ze.MemAllocHost(e.ctx, &h, 100, 1 << 16, &p));
		ASSERT_EQ((uintptr_t)p % (1 << 16), 0);
		ZE_OK(ze.MemFree(e.ctx, p));
	}
	teardown(&e);
}

HMR_TEST(free_rules)
{
	ze_memory_free_ext_desc_t fd = {
	        .stype = ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC,
	        .freePolicy =
	                ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE,
	};
	struct env e;
	char stack;
	char *p;

	setup(&e);
	p = dev_alloc(&e, 0, 8192);
	ZE_RC(ze.MemFree(e.ctx, p + 1), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	ZE_RC(ze.MemFree(e.ctx, &stack), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	ZE_OK(ze.MemFree(e.ctx, p));
	ZE_RC(ze.MemFree(e.ctx, p), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	p = host_alloc(&e, 100);
	ZE_OK(ze.MemFreeExt(e.ctx, &fd, p));
	ASSERT_EQ(e.hooks.live_allocs(), 0);
	teardown(&e);
}

/* What zeMemGetAllocProperties and zeMemGetAddressRange tell apart. */
HMR_TEST(pointer_queries_by_memory_type)
{
	ze_device_mem_alloc_desc_t dd = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	ze_host_mem_alloc_desc_t hd = {
	        .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
	ze_memory_allocation_properties_t mp;
	ze_device_handle_t dev;
	char *d1, *h, *s1, *s0, *heap = malloc(64);
	struct env e;
	size_t size;

	setup(&e);
	d1 = dev_alloc(&e, 1, 5000);
	h = host_alloc(&e, 300);
	ZE_OK(ze.MemAllocShared(e.ctx, &dd, &hd, 6000, 0, e.dev[1],
	                        (void **)&s1));
	ZE_OK(ze.MemAllocShared(e.ctx, &dd, &hd, 6000, 0, NULL, (void **)&s0));

	ZE_OK(props(&e, d1 + 4999, &mp, &dev));
	ASSERT_EQ(mp.type, ZE_MEMORY_TYPE_DEVICE);
	ASSERT_PTR_EQ(dev, e.dev[1]);
	ASSERT_PTR_EQ(base_of(&e, d1 + 4999, &size), d1);
	ASSERT_EQ(size, 5000);
	ZE_OK(props(&e, h + 10, &mp, &dev));
	ASSERT_EQ(mp.type, ZE_MEMORY_TYPE_HOST);
	ASSERT_PTR_EQ(dev, NULL);
	ASSERT_PTR_EQ(base_of(&e, h + 299, &size), h);
	ZE_OK(props(&e, s1, &mp, &dev));
	ASSERT_EQ(mp.type, ZE_MEMORY_TYPE_SHARED);
	ASSERT_PTR_EQ(dev, e.dev[1]);
	ZE_OK(props(&e, s0, &mp, &dev));
	ASSERT_EQ(mp.type, ZE_MEMORY_TYPE_SHARED);
	ASSERT_PTR_EQ(dev, NULL);
	s0[5] = 'x'; /* shared memory is host memory too */

	/* Plain host memory: UNKNOWN and success, id left alone; the
	 * address range fails.  Past the end of an allocation is unknown. */
	ZE_OK(props(&e, heap, &mp, NULL));
	ASSERT_EQ(mp.type, ZE_MEMORY_TYPE_UNKNOWN);
	mp.id = 777;
	ZE_OK(ze.MemGetAllocProperties(e.ctx, heap, &mp, NULL));
	ASSERT_EQ(mp.id, 777);
	ZE_OK(props(&e, d1 + 5000, &mp, NULL));
	ASSERT_EQ(mp.type, ZE_MEMORY_TYPE_UNKNOWN);
	ZE_RC(ze.MemGetAddressRange(e.ctx, heap, NULL, &size),
	      ZE_RESULT_ERROR_UNKNOWN);

	ZE_OK(ze.MemFree(e.ctx, d1));
	ZE_OK(ze.MemFree(e.ctx, h));
	ZE_OK(ze.MemFree(e.ctx, s1));
	ZE_OK(ze.MemFree(e.ctx, s0));
	free(heap);
	teardown(&e);
}

HMR_TEST(copies_through_command_lists)
{
	ze_command_list_desc_t ld = {
	        .stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
	        .commandQueueGroupOrdinal = 1};
	ze_command_queue_desc_t qd = {
	        .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, .ordinal = 1};
	unsigned char in[9000], out[9000];
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l;
	struct env e;
	char *d0, *d1, *h;

	setup(&e);
	fill(in, sizeof(in), 11);
	d0 = dev_alloc(&e, 0, sizeof(in));
	d1 = dev_alloc(&e, 1, sizeof(in));
	h = host_alloc(&e, sizeof(in));
	copy(&e, d0, in, sizeof(in));
	copy(&e, d1, d0, sizeof(in));
	copy(&e, h, d1, sizeof(in));
	ASSERT_EQ(memcmp(h, in, sizeof(in)), 0);

	/* A regular list runs at execution, in order. */
	memset(out, 0, sizeof(out));
	ZE_OK(ze.CommandQueueCreate(e.ctx, e.dev[0], &qd, &q));
	ZE_OK(ze.CommandListCreate(e.ctx, e.dev[0], &ld, &l));
	ZE_OK(ze.CommandListAppendMemoryCopy(l, d0 + 1, in + 100, 10, NULL, 0,
	                                     NULL));
	ZE_OK(ze.CommandListAppendBarrier(l, NULL, 0, NULL));
	ZE_OK(ze.CommandListAppendMemoryCopy(l, out, d0, sizeof(out), NULL, 0,
	                                     NULL));
	ZE_RC(ze.CommandQueueExecuteCommandLists(q, 1, &l, NULL),
	      ZE_RESULT_ERROR_INVALID_ARGUMENT); /* not closed */
	ASSERT_EQ(out[1], 0);
	ZE_OK(ze.CommandListClose(l));
	ZE_RC(ze.CommandListAppendMemoryCopy(l, out, d0, 1, NULL, 0, NULL),
	      ZE_RESULT_ERROR_INVALID_ARGUMENT);
	ZE_OK(ze.CommandQueueExecuteCommandLists(q, 1, &l, NULL));
	ZE_OK(ze.CommandQueueSynchronize(q, UINT64_MAX));
	ASSERT_EQ(memcmp(out + 1, in + 100, 10), 0);
	ASSERT_EQ(memcmp(out + 11, in + 11, sizeof(out) - 11), 0);
	ZE_OK(ze.CommandListReset(l));
	ZE_OK(ze.CommandListDestroy(l));
	ZE_OK(ze.CommandQueueDestroy(q));

	/* Overruns and holes of the device window are refused. */
	ZE_RC(ze.CommandListAppendMemoryCopy(e.list, out, d0 + 1, sizeof(in),
	                                     NULL, 0, NULL),
	      ZE_RESULT_ERROR_INVALID_ARGUMENT);
	ZE_RC(ze.CommandListAppendMemoryCopy(e.list, out, d1 + (64 << 20), 1,
	                                     NULL, 0, NULL),
	      ZE_RESULT_ERROR_INVALID_ARGUMENT);
	ZE_OK(ze.MemFree(e.ctx, d0));
	ZE_OK(ze.MemFree(e.ctx, d1));
	ZE_OK(ze.MemFree(e.ctx, h));
	teardown(&e);
}

/* Events are not simulated, and say so. */
HMR_TEST(events_are_unsupported)
{
	ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
	                           .count = 1};
	ze_event_pool_handle_t pool;
	ze_event_handle_t ev = (ze_event_handle_t)&pd;
	unsigned char a = 1, b = 0;
	struct env e;

	setup(&e);
	ZE_RC(ze.EventPoolCreate(e.ctx, &pd, 0, NULL, &pool), unimplemented());
	if (mode == MODE_DIRECT)
		ZE_RC(ze.CommandListAppendMemoryCopy(e.list, &b, &a, 1, ev, 0,
		                                     NULL),
		      ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
	teardown(&e);
}

/* Each thread has its own list: command lists are not thread-safe. */
static void *thread_allocs(void *arg)
{
	struct env *e = arg;
	ze_device_mem_alloc_desc_t d = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	ze_command_queue_desc_t qd = {
	        .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
	unsigned char v = 7, back = 0;
	ze_command_list_handle_t l;
	void *p;

	if (ze.CommandListCreateImmediate(e->ctx, e->dev[0], &qd, &l))
		return "list";
	for (int i = 0; i < 200; i++) {
		if (ze.MemAllocDevice(e->ctx, &d, (size_t)(i % 5 + 1) * 4096, 0,
		                      e->dev[i % 2], &p))
			return "alloc";
		if (ze.CommandListAppendMemoryCopy(l, p, &v, 1, NULL, 0,
		                                   NULL) ||
		    ze.CommandListAppendMemoryCopy(l, &back, p, 1, NULL, 0,
		                                   NULL) ||
		    back != 7)
			return "copy";
		if (ze.MemFree(e->ctx, p))
			return "free";
	}
	return ze.CommandListDestroy(l) ? "destroy" : NULL;
}

HMR_TEST(threads)
{
	pthread_t t[6];
	struct env e;

	setup(&e);
	for (int i = 0; i < 6; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, thread_allocs, &e), 0);
	for (int i = 0; i < 6; i++) {
		void *err;

		ASSERT_EQ(pthread_join(t[i], &err), 0);
		if (err)
			HMR_FAIL("thread %d: %s", i, (char *)err);
	}
	ASSERT_EQ(e.hooks.live_allocs(), 0);
	teardown(&e);
}

HMR_TEST_MAIN()
