/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_ze_loader.c: hooks, failures, layers and two drivers. */
#include "test_sim_ze.h"

#include <stdint.h>
#include <unistd.h>

HMR_TEST(failure_injection_from_environment)
{
	ze_device_mem_alloc_desc_t d = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	ze_memory_allocation_properties_t mp;
	struct env e;
	void *p[3], *q;

	/* The third and fourth allocations fail; the rest succeed. */
	setenv("HMR_SIM_ZE_FAIL",
	       "zeMemAllocDevice@2=ZE_RESULT_ERROR_DEVICE_LOST:2,"
	       "zeMemGetAllocProperties=0x70000002",
	       1);
	setup(&e);
	p[0] = dev_alloc(&e, 0, 4096);
	p[1] = dev_alloc(&e, 0, 4096);
	ZE_RC(ze.MemAllocDevice(e.ctx, &d, 4096, 0, e.dev[0], &q),
	      ZE_RESULT_ERROR_DEVICE_LOST);
	ZE_RC(ze.MemAllocDevice(e.ctx, &d, 4096, 0, e.dev[0], &q),
	      ZE_RESULT_ERROR_DEVICE_LOST);
	p[2] = dev_alloc(&e, 0, 4096);
	ZE_RC(props(&e, p[0], &mp, NULL), ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
	ZE_RC(props(&e, p[0], &mp, NULL), ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
	ASSERT_EQ(e.hooks.calls("zeMemAllocDevice"), 5);
	for (int i = 0; i < 3; i++)
		ZE_OK(ze.MemFree(e.ctx, p[i]));
	teardown(&e);
}

/* The hook reached through dlopen(RTLD_NOLOAD) fails the Nth call. */
HMR_TEST(failure_injection_from_hook)
{
	struct env e;
	void *p;
	int fd;

	setup(&e);
	p = dev_alloc(&e, 0, 4096);
	ASSERT_EQ(e.hooks.fail("zeMemGetAllocProperties@1"), 0);
	ZE_OK(export_fd(&e, p, &fd));
	ZE_RC(export_fd(&e, p, &fd), ZE_RESULT_ERROR_DEVICE_LOST);
	ZE_RC(export_fd(&e, p, &fd), ZE_RESULT_ERROR_DEVICE_LOST);
	ASSERT_EQ(e.hooks.fail("zeMemAllocDevice=ZE_NO_SUCH_RESULT"), -1);
	ZE_RC(export_fd(&e, p, &fd), ZE_RESULT_ERROR_DEVICE_LOST);
	ASSERT_EQ(e.hooks.fail("zeMemFree:1"), 0);
	ZE_RC(ze.MemFree(e.ctx, p), ZE_RESULT_ERROR_DEVICE_LOST);
	ZE_OK(export_fd(&e, p, &fd));
	ASSERT_EQ(e.hooks.fail(NULL), 0);
	ZE_OK(ze.MemFree(e.ctx, p));
	teardown(&e);
}

/* One API call through the loader is one driver call, in every mode. */
HMR_TEST(call_counters_count_driver_calls)
{
	struct ze_hooks b;
	struct env e;
	unsigned long allocs, queries;
	void *p;

	setup(&e);
	allocs = e.hooks.calls("zeMemAllocDevice");
	queries = e.hooks.calls("zeMemGetAllocProperties");
	p = dev_alloc(&e, 0, 4096);
	ASSERT_EQ(e.hooks.calls("zeMemAllocDevice"), allocs + 1);
	ASSERT_EQ(e.hooks.calls("zeMemGetAllocProperties"), queries);
	ZE_OK(ze.MemFree(e.ctx, p));
	ASSERT_EQ(e.hooks.calls("zeMemFree"), 1);
	ASSERT_EQ(e.hooks.calls("zeContextCreate"), 1);
	ASSERT_EQ(e.hooks.calls("zeNoSuchCall"), 0);
	if (mode == MODE_TWO) {
		ze_get_hooks('b', &b);
		ASSERT_EQ(b.calls("zeMemAllocDevice"), 0);
		ASSERT_GE(b.calls("zeInit"), 1);
	}
	teardown(&e);
}

/*
 * The driver checks its arguments itself; under the validation layer
 * the layer answers first and the driver never sees the call.
 */
HMR_TEST(argument_checks)
{
	ze_device_mem_alloc_desc_t d = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	unsigned long before, reached;
	struct env e;
	void *p;

	setup(&e);
	reached = mode == MODE_VALIDATION ? 0 : 2;
	before = e.hooks.calls("zeMemAllocDevice");
	ZE_RC(ze.MemAllocDevice(e.ctx, NULL, 4096, 0, e.dev[0], &p),
	      ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	ZE_RC(ze.MemAllocDevice(e.ctx, &d, 4096, 48, e.dev[0], &p),
	      ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
	ASSERT_EQ(e.hooks.calls("zeMemAllocDevice"), before + reached);
	ZE_RC(ze.MemFree(e.ctx, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	teardown(&e);
}

typedef ze_result_t (*zex_import_t)(ze_driver_handle_t, void *, size_t);
typedef ze_result_t (*zex_release_t)(ze_driver_handle_t, void *);
typedef ze_result_t (*zex_base_t)(ze_driver_handle_t, void *, void **);

/*
 * zexDriverImportExternalPointer & co. are called directly, with the
 * application's driver handle: they work when the loader passes handles
 * through, and refuse a wrapped (loader) handle.
 */
HMR_TEST(host_import_extension)
{
	ze_memory_allocation_properties_t mp;
	size_t len = 2 * page();
	char *buf = aligned_alloc(page(), len);
	zex_import_t import;
	zex_release_t release;
	zex_base_t base_of_import;
	struct env e;
	void *fn, *base = NULL;

	setup(&e);
	ZE_RC(ze.DriverGetExtensionFunctionAddress(e.drv, "zexNoSuchThing",
	                                           &fn),
	      ZE_RESULT_ERROR_INVALID_ARGUMENT);
	ZE_OK(ze.DriverGetExtensionFunctionAddress(
	        e.drv, "zexDriverImportExternalPointer", &fn));
	*(void **)&import = fn;
	ZE_OK(ze.DriverGetExtensionFunctionAddress(
	        e.drv, "zexDriverReleaseImportedPointer", &fn));
	*(void **)&release = fn;
	ZE_OK(ze.DriverGetExtensionFunctionAddress(
	        e.drv, "zexDriverGetHostPointerBaseAddress", &fn));
	*(void **)&base_of_import = fn;
	if (mode == MODE_INTERCEPT || mode == MODE_TWO) {
		ZE_RC(import(e.drv, buf, len),
		      ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
		goto out;
	}
	ZE_OK(import(e.drv, buf, len));
	ZE_RC(import(e.drv, buf + 1, 10), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	ZE_OK(base_of_import(e.drv, buf + page() + 3, &base));
	ASSERT_PTR_EQ(base, buf);
	/* Imported host memory is still not a USM allocation. */
	ZE_OK(props(&e, buf, &mp, NULL));
	ASSERT_EQ(mp.type, ZE_MEMORY_TYPE_UNKNOWN);
	ZE_RC(release(e.drv, buf + 1), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	ZE_OK(release(e.drv, buf));
	ZE_RC(base_of_import(e.drv, buf, &base),
	      ZE_RESULT_ERROR_INVALID_ARGUMENT);
out:
	free(buf);
	teardown(&e);
}

/* Only in the "validation" mode: proof that the layer is in the path. */
HMR_TEST(validation_layer_answers_before_driver)
{
	ze_context_handle_t ctx;
	struct env e;

	setup(&e);
	ZE_RC(ze.ContextCreate(e.drv, NULL, &ctx),
	      ZE_RESULT_ERROR_INVALID_NULL_POINTER);
	ASSERT_EQ(e.hooks.calls("zeContextCreate"), 1);
	teardown(&e);
}

/* Only in the "two" mode: driver index 1 is a real, separate driver. */
HMR_TEST(two_drivers_are_separate)
{
	ze_driver_properties_t pa = {
	        .stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
	ze_driver_properties_t pb = {
	        .stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
	ze_device_properties_t da = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
	ze_device_properties_t db = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
	ze_memory_allocation_properties_t mp;
	ze_driver_handle_t drv[2];
	ze_device_handle_t dev;
	struct env a, b;
	uint32_t n = 2;
	char *pa_mem, *pb_mem, byte = 0;

	setup_driver(&a, 'a');
	setup_driver(&b, 'b');
	ZE_OK(ze.DriverGet(&n, drv));
	ASSERT_EQ(n, 2);
	ASSERT_PTR_EQ(drv[1], b.drv); /* ZE_ENABLE_ALT_DRIVERS order */
	ZE_OK(ze.DriverGetProperties(a.drv, &pa));
	ZE_OK(ze.DriverGetProperties(b.drv, &pb));
	ASSERT_NE(memcmp(pa.uuid.id, pb.uuid.id, ZE_MAX_DRIVER_UUID_SIZE), 0);
	ASSERT_NE(pa.driverVersion, pb.driverVersion);
	ZE_OK(ze.DeviceGetProperties(a.dev[0], &da));
	ZE_OK(ze.DeviceGetProperties(b.dev[0], &db));
	ASSERT_NE(memcmp(da.uuid.id, db.uuid.id, ZE_MAX_DEVICE_UUID_SIZE), 0);

	pa_mem = dev_alloc(&a, 0, 4096);
	pb_mem = dev_alloc(&b, 1, 4096);
	ASSERT_NE((uintptr_t)pa_mem, (uintptr_t)pb_mem);
	ZE_OK(props(&b, pb_mem, &mp, &dev));
	ASSERT_EQ(mp.type, ZE_MEMORY_TYPE_DEVICE);
	ASSERT_PTR_EQ(dev, b.dev[1]);
	/* Each driver knows only its own memory, and cannot copy the
	 * other's (the CPU cannot touch it either). */
	ZE_OK(props(&a, pb_mem, &mp, NULL));
	ASSERT_EQ(mp.type, ZE_MEMORY_TYPE_UNKNOWN);
	ZE_RC(ze.CommandListAppendMemoryCopy(a.list, &byte, pb_mem, 1, NULL, 0,
	                                     NULL),
	      ZE_RESULT_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(a.hooks.live_allocs(), 1);
	ASSERT_EQ(b.hooks.live_allocs(), 1);
	ZE_OK(ze.MemFree(a.ctx, pa_mem));
	ZE_OK(ze.MemFree(b.ctx, pb_mem));
	teardown(&a);
	teardown(&b);
}
