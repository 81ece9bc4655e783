/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ze_util.c: the application's side of the Level Zero tests. */
#include <dirent.h>
#include <string.h>

#include <level_zero/ze_ddi.h>

#include "ze_util.h"

/* Loader entry points the tests use: ze<Name>, type ze_pfn<Name>_t. */
#define ZE_SYMS(X)                                                             \
	X(Init)                                                                \
	X(DriverGet)                                                           \
	X(DriverGetProperties)                                                 \
	X(DeviceGet)                                                           \
	X(ContextCreate)                                                       \
	X(ContextDestroy)                                                      \
	X(MemAllocDevice)                                                      \
	X(MemAllocHost)                                                        \
	X(MemAllocShared)                                                      \
	X(MemFree)                                                             \
	X(MemGetAllocProperties)

#define ZE_FIELD(name) ze_pfn##name##_t name;
static struct {
	void *dl;
	ZE_SYMS(ZE_FIELD)
} ze;
#undef ZE_FIELD

#define ZE_OK(expr) ASSERT_U64_EQ((expr), ZE_RESULT_SUCCESS)

/* The loader hmr uses: HMR_ZE_LIBRARY when set, else the soname. */
static void load(void)
{
	const char *path = getenv("HMR_ZE_LIBRARY");

	if (ze.dl)
		return;
	ze.dl = ze_open_loader(path && *path ? path : "libze_loader.so.1");
#define ZE_LOAD(name) ZE_APP_LOAD(ze, name)
	ZE_SYMS(ZE_LOAD)
#undef ZE_LOAD
	ZE_OK(ze.Init(0));
}

uint32_t ze_driver_count(void)
{
	uint32_t n = 0;

	load();
	ZE_OK(ze.DriverGet(&n, NULL));
	return n;
}

struct ze_hooks ze_loader_start(char id)
{
	struct ze_hooks h;

	load();
	ze_get_hooks(id, &h);
	return h;
}

struct ze_drv ze_open(char id)
{
	ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
	struct ze_drv d;

	memset(&d, 0, sizeof(d));
	load();
	d.handle = ze_find_driver(ze.DriverGet, ze.DriverGetProperties, id,
	                          &d.index);
	d.id = id;
	d.ndev = 8;
	ZE_OK(ze.DeviceGet(d.handle, &d.ndev, d.dev));
	ZE_OK(ze.ContextCreate(d.handle, &cdesc, &d.ctx));
	ze_get_hooks(id, &d.hooks);
	return d;
}

void ze_close(struct ze_drv *d)
{
	ZE_OK(ze.ContextDestroy(d->ctx));
}

void *ze_dev_alloc(struct ze_drv *d, uint32_t dev, size_t size)
{
	return ze_alloc_device(ze.MemAllocDevice, d->ctx, d->dev[dev], size);
}

void *ze_host_alloc(struct ze_drv *d, size_t size)
{
	return ze_alloc_host(ze.MemAllocHost, d->ctx, size);
}

void *ze_shared_alloc(struct ze_drv *d, int dev, size_t size)
{
	ze_device_mem_alloc_desc_t dd = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	ze_host_mem_alloc_desc_t hd = {
	        .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
	void *p = NULL;

	ZE_OK(ze.MemAllocShared(d->ctx, &dd, &hd, size, 0,
	                        dev < 0 ? NULL : d->dev[dev], &p));
	return p;
}

void ze_free(struct ze_drv *d, void *p)
{
	ZE_OK(ze.MemFree(d->ctx, p));
}

uint64_t ze_alloc_id(struct ze_drv *d, const void *p)
{
	ze_memory_allocation_properties_t mp = {
	        .stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
	ze_device_handle_t dev = NULL;

	ZE_OK(ze.MemGetAllocProperties(d->ctx, p, &mp, &dev));
	return mp.id;
}

struct fid_domain *hmem_domain(void)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *d;

	attr.caps = FI_HMEM;
	ASSERT_OK(hmr_domain_open(&attr, &d));
	return d;
}

int reg_ze(struct fid_domain *d, void *p, size_t len, int device,
           uint64_t flags, struct fid_mr **mr)
{
	struct iovec iov = {p, len};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_READ | FI_REMOTE_WRITE,
	                          .iface = FI_HMEM_ZE};

	attr.device.ze = device;
	return fi_mr_regattr(d, &attr, flags, mr);
}

void expect_ze_absent(const char *reason)
{
	struct hmr_hmem_info info;
	char why[192], buf[64];

	ASSERT_EQ(hmr_hmem_status(FI_HMEM_ZE, why, sizeof(why)), -FI_ENOSYS);
	printf("ze absent: %s\n", why);
	if (!strstr(why, reason))
		HMR_FAIL("why \"%s\" does not say \"%s\"", why, reason);
	/* Absent is not an error: host memory still classifies. */
	ASSERT_OK(hmr_hmem_query(buf, sizeof(buf), &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
}
