/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_synapseai_backend.c: classification, device, copies, host memory. */
#include "synapseai_util.h"

#define MIB ((size_t)1 << 20)

/* Device bytes through the application's own stream (the truth). */
static void app_read(void *dst, uint64_t dev, size_t len)
{
	synStreamHandle s;
	void *pinned;

	ASSERT_EQ(app.synStreamCreateGeneric(&s, 0, 0), synSuccess);
	ASSERT_EQ(app.synHostMalloc(0, len, 0, &pinned), synSuccess);
	ASSERT_EQ(app.synMemCopyAsync(s, dev, len, (uintptr_t)pinned,
	                              DRAM_TO_HOST),
	          synSuccess);
	ASSERT_EQ(app.synStreamSynchronize(s), synSuccess);
	memcpy(dst, pinned, len);
	ASSERT_EQ(app.synStreamDestroy(s), synSuccess);
	ASSERT_EQ(app.synHostFree(0, pinned, 0), synSuccess);
}

static void expect_host(const void *p, size_t len)
{
	struct hmr_hmem_info info;

	ASSERT_OK(hmr_hmem_query(p, len, &info));
	if (info.iface != FI_HMEM_SYSTEM)
		HMR_FAIL("%p classified as %s", p,
		         hmr_hmem_iface_name(info.iface));
}

/* fi_mr: F90 */
HMR_TEST(synapseai_classifies_device_memory_by_hbm_range)
{
	struct hmr_hmem_info info;
	uint64_t p;

	app_start();
	p = app_malloc(MIB);
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)(p + 100), 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
	ASSERT_EQ(info.device, 0);
	/* Synapse cannot tell the allocation: the HBM range stands for it. */
	ASSERT_U64_EQ(info.base, app.info.globalHbmBaseAddress);
	ASSERT_U64_EQ(info.size, app.info.dramSize);
	/* The HBM is one buffer, whose identity never changes. */
	ASSERT_U64_EQ(info.buffer_id, 1);
	ASSERT_EQ(info.flags, HMR_HMEM_DEVICE_ONLY);
	/* The first and the last byte of HBM. */
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)info.base, 1, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)(info.base + info.size - 1),
	                         1, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
}

HMR_TEST(synapseai_classifies_host_memory_as_system)
{
	char stack[256];
	char *heap = malloc(4096);
	void *pinned;

	app_start();
	expect_host(stack, sizeof(stack));
	expect_host(heap, 4096);
	/* The application's own pinned memory: Synapse cannot say so. */
	ASSERT_EQ(app.synHostMalloc(0, 4096, 0, &pinned), synSuccess);
	expect_host(pinned, 4096);
	free(heap);
}

HMR_TEST(synapseai_pointer_outside_hbm_is_not_device_memory)
{
	uint64_t base, end;

	app_start();
	base = app.info.globalHbmBaseAddress;
	end = base + app.info.dramSize;
	expect_host((void *)(uintptr_t)(base - 1), 1);
	expect_host((void *)(uintptr_t)(base - 4096), 4096);
	expect_host((void *)(uintptr_t)end, 1);
	expect_host((void *)(uintptr_t)(end + 4096), 64);
	/* dramBaseAddress is device-physical, not a device pointer. */
	expect_host((void *)(uintptr_t)app.info.dramBaseAddress, 64);
}

HMR_TEST(synapseai_range_past_hbm_end_is_refused)
{
	struct hmr_hmem_info info;
	uint64_t end;

	app_start();
	end = app.info.globalHbmBaseAddress + app.info.dramSize;
	ASSERT_EQ(hmr_hmem_query((void *)(uintptr_t)(end - 64), 65, &info),
	          -FI_EINVAL);
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)(end - 64), 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
}

/* fi_mr: F90 */
HMR_TEST(synapseai_fi_mr_regattr_registers_device_memory)
{
	struct fid_domain *d;
	struct fid_mr *mr;
	uint64_t p;

	app_start();
	p = app_malloc(MIB);
	d = hmem_domain();
	ASSERT_OK(reg_iface(d, p + 4096, 8192, FI_HMEM_SYNAPSEAI, 0, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	/* Without a hint: found by classification. */
	ASSERT_OK(reg_iface(d, p, MIB, FI_HMEM_SYSTEM, 0, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
}

/* fi_mr: F94 */
HMR_TEST(synapseai_wrong_device_hint_is_refused)
{
	struct fid_domain *d;
	struct fid_mr *mr;
	char host[4096];
	uint64_t p;

	app_start();
	p = app_malloc(MIB);
	d = hmem_domain();
	/* The process's one device is 0. */
	ASSERT_EQ(reg_iface(d, p, 4096, FI_HMEM_SYNAPSEAI, 1, &mr), -FI_EINVAL);
	ASSERT_EQ(reg_iface(d, p, 4096, FI_HMEM_SYNAPSEAI, -1, &mr),
	          -FI_EINVAL);
	/* Host memory is not Gaudi memory. */
	ASSERT_EQ(reg_iface(d, (uintptr_t)host, sizeof(host), FI_HMEM_SYNAPSEAI,
	                    0, &mr),
	          -FI_EINVAL);
	ASSERT_OK(fi_close(&d->fid));
}

/*
 * hmr starts first and is asked everything a framework's first calls ask
 * (status, backend and device info, a query, an FI_HMEM domain, a
 * registration of host memory): it never acquires the Gaudi, so the
 * application's own acquire then succeeds, and hmr classifies its memory.
 */
HMR_TEST(synapseai_hmr_first_never_acquires_the_application_device)
{
	struct hmr_hmem_backend_info b = HMR_HMEM_BACKEND_INFO_INIT;
	struct hmr_hmem_device_info di = HMR_HMEM_DEVICE_INFO_INIT;
	synDeviceId id = 99;
	struct hmr_hmem_info info;
	struct fid_domain *d;
	struct fid_mr *mr;
	char host[4096];
	uint64_t p;

	app_load();
	ASSERT_OK(hmr_hmem_status(FI_HMEM_SYNAPSEAI, NULL, 0));
	ASSERT_OK(hmr_hmem_backend_info(FI_HMEM_SYNAPSEAI, &b));
	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_SYNAPSEAI, 0, &di));
	expect_host(host, sizeof(host));
	d = hmem_domain();
	ASSERT_OK(reg_iface(d, (uintptr_t)host, sizeof(host), FI_HMEM_SYSTEM, 0,
	                    &mr));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_EQ(app.calls("synDeviceAcquire"), 0);
	ASSERT_EQ(app.synInitialize(), synSuccess);
	ASSERT_EQ(app.synDeviceAcquireByModuleId(&id, 0), synSuccess);
	ASSERT_EQ(id, 0);
	ASSERT_EQ(app.synDeviceGetInfoV2(0, &app.info), synSuccess);
	p = app_malloc(MIB);
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, MIB, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
	ASSERT_U64_EQ(info.base, app.info.globalHbmBaseAddress);
	ASSERT_OK(reg_iface(d, p, MIB, FI_HMEM_SYNAPSEAI, 0, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
	ASSERT_EQ(app.calls("synDeviceAcquire"), 0);
	ASSERT_EQ(app.calls("synDeviceRelease"), 0);
}

/* The application acquired first: hmr works on that device, without an
 * acquire or a release of its own. */
HMR_TEST(synapseai_shares_the_application_device)
{
	struct hmr_hmem_info info;
	uint64_t p;

	app_start();
	ASSERT_OK(hmr_hmem_status(FI_HMEM_SYNAPSEAI, NULL, 0));
	p = app_malloc(MIB);
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
	ASSERT_EQ(app.calls("synDeviceAcquire"), 0);
	ASSERT_EQ(app.calls("synDeviceRelease"), 0);
	ASSERT_EQ(app.calls("synDestroy"), 0);
}

/*
 * hmr queries before any acquire, and again after: before, nothing is the
 * Gaudi's (not even the address the HBM will be at) and what needs the
 * device says so; after, the application's memory is the Gaudi's.
 */
HMR_TEST(synapseai_notices_the_application_acquire_after_queries)
{
	struct hmr_hmem_info info;
	unsigned char *hbuf = aligned_alloc(4096, 65536);
	synDeviceId id = 99;
	uint64_t p, offset;
	int fd;

	app_load();
	expect_host(hbuf, 65536);
	ASSERT_EQ(hmr_hmem_host_register(FI_HMEM_SYNAPSEAI, hbuf, 65536),
	          -FI_ENODEV);
	ASSERT_EQ(app.synInitialize(), synSuccess);
	ASSERT_EQ(app.synDeviceAcquireByModuleId(&id, 0), synSuccess);
	ASSERT_EQ(app.synDeviceGetInfoV2(0, &app.info), synSuccess);
	p = app_malloc(MIB);
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)(p + 64), 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
	ASSERT_OK(hmr_hmem_dmabuf_get((void *)(uintptr_t)p, 4096, 0, &fd,
	                              &offset));
	ASSERT_U64_EQ(offset, p - app.info.globalHbmBaseAddress);
	ASSERT_OK(hmr_hmem_dmabuf_put((void *)(uintptr_t)p, fd));
	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_SYNAPSEAI, hbuf, 65536));
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_SYNAPSEAI, hbuf, 65536));
	ASSERT_EQ(app.calls("synDeviceAcquire"), 0);
	free(hbuf);
}

/* hmr_hmem_alloc asks for device memory: with nobody holding the Gaudi it
 * acquires it, and the last free gives it back for the application. */
HMR_TEST(synapseai_alloc_acquires_and_its_last_free_releases)
{
	struct hmr_hmem_info info;
	synDeviceId id = 99;
	void *a, *b;
	uint64_t p;

	app_load();
	ASSERT_OK(hmr_hmem_alloc(FI_HMEM_SYNAPSEAI, 0, MIB, &a));
	ASSERT_OK(hmr_hmem_alloc(FI_HMEM_SYNAPSEAI, 0, MIB, &b));
	ASSERT_EQ(app.calls("synDeviceAcquire"), 1);
	ASSERT_OK(hmr_hmem_query(a, MIB, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
	ASSERT_OK(hmr_hmem_free(FI_HMEM_SYNAPSEAI, a));
	ASSERT_EQ(app.calls("synDeviceRelease"), 0);
	ASSERT_OK(hmr_hmem_free(FI_HMEM_SYNAPSEAI, b));
	ASSERT_EQ(app.calls("synDeviceRelease"), 1);
	/* The application's turn, and hmr notices it. */
	ASSERT_EQ(app.synDeviceAcquireByModuleId(&id, 0), synSuccess);
	ASSERT_EQ(app.synDeviceGetInfoV2(0, &app.info), synSuccess);
	p = app_malloc(MIB);
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, MIB, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
	ASSERT_EQ(app.calls("synDeviceAcquire"), 1);
}

/* With the application's device held, hmr_hmem_alloc allocates on it and
 * neither acquires nor releases. */
HMR_TEST(synapseai_alloc_uses_the_application_device)
{
	void *a;

	app_start();
	ASSERT_OK(hmr_hmem_alloc(FI_HMEM_SYNAPSEAI, 0, MIB, &a));
	ASSERT_OK(hmr_hmem_free(FI_HMEM_SYNAPSEAI, a));
	ASSERT_EQ(app.calls("synDeviceAcquire"), 0);
	ASSERT_EQ(app.calls("synDeviceRelease"), 0);
}

/* 2.5 MiB + 7 bytes: three trips through the 1 MiB staging buffer. */
HMR_TEST(synapseai_copies_round_trip_through_staging)
{
	size_t len = 5 * MIB / 2 + 7;
	unsigned char *src = malloc(len), *back = malloc(len),
	              *truth = malloc(len);
	uint64_t p;

	app_start();
	p = app_malloc(3 * MIB);
	pattern(src, len, 5);
	ASSERT_OK(hmr_hmem_copy_to((void *)(uintptr_t)(p + 3), src, len));
	app_read(truth, p + 3, len);
	ASSERT_EQ(memcmp(truth, src, len), 0);
	memset(back, 0, len);
	ASSERT_OK(hmr_hmem_copy_from(back, (void *)(uintptr_t)(p + 3), len));
	ASSERT_EQ(memcmp(back, src, len), 0);
	ASSERT_EQ(app.calls("synStreamCreateGeneric"), 2); /* hmr: once */
	ASSERT_EQ(app.calls("synHostMalloc"), 2);          /* hmr: once */
	free(src);
	free(back);
	free(truth);
}

/*
 * hmr never maps the caller's buffer around a copy: a buffer the
 * application mapped keeps its mapping (an unmap by hmr would remove it).
 */
HMR_TEST(synapseai_copy_leaves_application_mapping_alone)
{
	unsigned char *buf = aligned_alloc(4096, 4 * 4096);
	synStreamHandle s;
	uint64_t p;

	app_start();
	p = app_malloc(MIB);
	pattern(buf, 4 * 4096, 9);
	ASSERT_EQ(app.synHostMap(0, 4 * 4096, buf), synSuccess);
	ASSERT_OK(hmr_hmem_copy_to((void *)(uintptr_t)p, buf, 4096));
	ASSERT_OK(hmr_hmem_copy_from(buf + 4096, (void *)(uintptr_t)p, 4096));
	ASSERT_EQ(memcmp(buf, buf + 4096, 4096), 0);
	ASSERT_EQ(app.calls("synHostMap"), 1);
	ASSERT_EQ(app.calls("synHostUnmap"), 0);
	/* Still mapped: the application's own DMA from it works. */
	ASSERT_EQ(app.synStreamCreateGeneric(&s, 0, 0), synSuccess);
	ASSERT_EQ(app.synMemCopyAsync(s, (uintptr_t)buf, 4096, p, HOST_TO_DRAM),
	          synSuccess);
	ASSERT_EQ(app.synStreamSynchronize(s), synSuccess);
	ASSERT_EQ(app.synHostUnmap(0, buf), synSuccess);
	free(buf);
}

HMR_TEST(synapseai_host_register_maps_and_reclassifies)
{
	size_t len = 64 * 1024;
	unsigned char *buf = aligned_alloc(4096, len), back[4096];
	struct hmr_hmem_info info;
	uint64_t p;

	app_start();
	p = app_malloc(MIB);
	expect_host(buf, 4096); /* now cached as host */
	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_SYNAPSEAI, buf, len));
	ASSERT_EQ(app.calls("synHostMap"), 1);
	ASSERT_OK(hmr_hmem_query(buf + 100, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
	ASSERT_EQ(info.flags, HMR_HMEM_HOST_ALLOC);
	ASSERT_PTR_EQ(info.base, buf);
	ASSERT_U64_EQ(info.size, len);
	/* Mapped memory is copied from directly, without staging. */
	pattern(buf, 4096, 3);
	ASSERT_OK(hmr_hmem_copy_to((void *)(uintptr_t)p, buf, 4096));
	ASSERT_EQ(app.calls("synHostMalloc"), 0);
	app_read(back, p, sizeof(back));
	ASSERT_EQ(memcmp(back, buf, sizeof(back)), 0);
	/* An overlapping range, and a pointer that is not a start. */
	ASSERT_EQ(hmr_hmem_host_register(FI_HMEM_SYNAPSEAI, buf + 4096, 4096),
	          -FI_EALREADY);
	ASSERT_EQ(hmr_hmem_host_unregister(FI_HMEM_SYNAPSEAI, buf + 4096, 4096),
	          -FI_EINVAL);
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_SYNAPSEAI, buf, len));
	ASSERT_EQ(app.calls("synHostUnmap"), 1);
	expect_host(buf + 100, 64);
	free(buf);
}

HMR_TEST(synapseai_ipc_is_not_supported)
{
	char handle[64];
	size_t size = sizeof(handle);
	void *ptr;
	uint64_t p;

	app_start();
	p = app_malloc(MIB);
	ASSERT_EQ(hmr_hmem_ipc_get((void *)(uintptr_t)p, handle, &size),
	          -FI_ENOSYS);
	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_SYNAPSEAI, 0, handle, size, &ptr),
	          -FI_ENOSYS);
}

HMR_TEST_MAIN()
