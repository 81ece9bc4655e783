/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_ze_common.c: loading the real loader, setup and small helpers. */
#include "test_sim_ze.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

struct ze_loader ze;
enum test_mode mode;

static const char *const mode_names[] = {"direct", "intercept", "two",
                                         "validation"};

static void pick_mode(void)
{
	const char *m = getenv("HMR_SIM_ZE_TEST_MODE");
	size_t i;

	if (!m || !getenv("ZE_ENABLE_ALT_DRIVERS"))
		HMR_SKIP("HMR_SIM_ZE_TEST_MODE and ZE_ENABLE_ALT_DRIVERS are "
		         "set by CTest; run the case through ctest");
	for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (strcmp(m, mode_names[i]) == 0)
			break;
	if (i == sizeof(mode_names) / sizeof(mode_names[0]))
		HMR_FAIL("unknown HMR_SIM_ZE_TEST_MODE=%s", m);
	mode = (enum test_mode)i;
}

/* Loads libze_loader.so.1 and resolves the entry points; no zeInit. */
void load_loader(void)
{
	if (ze.dl)
		return;
	pick_mode();
	if (mode == MODE_VALIDATION) {
		void *layer = dlopen("libze_validation_layer.so.1",
		                     RTLD_LAZY | RTLD_LOCAL);

		if (!layer)
			HMR_SKIP("no libze_validation_layer.so.1 (%s): this "
			         "libze1 ships no validation layer",
			         dlerror());
		dlclose(layer);
	}
	ze.dl = ze_open_loader("libze_loader.so.1");
#define ZE_LOAD(name) ZE_APP_LOAD(ze, name)
	ZE_SYMS(ZE_LOAD)
#undef ZE_LOAD
}

/* zeInit through the loader, and proof that the wanted layer is in. */
void init_loader(void)
{
	load_loader();
	ZE_OK(ze.Init(0));
	if (mode == MODE_VALIDATION) {
		void *layer = dlopen("libze_validation_layer.so.1",
		                     RTLD_LAZY | RTLD_NOLOAD);

		if (!layer)
			HMR_FAIL("the loader did not load the validation "
			         "layer");
		dlclose(layer);
	}
}

int driver_count(void)
{
	uint32_t n = 0;

	ZE_OK(ze.DriverGet(&n, NULL));
	return (int)n;
}

/* The driver whose UUID carries id ('a' or 'b'), its devices, a context
 * and an immediate list on device 0's copy engine. */
void setup_driver(struct env *e, char id)
{
	ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
	ze_command_queue_desc_t qdesc = {
	        .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
	        .ordinal = 1,
	        .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
	};
	uint32_t index;

	memset(e, 0, sizeof(*e));
	init_loader();
	e->drv = ze_find_driver(ze.DriverGet, ze.DriverGetProperties, id,
	                        &index);
	e->ndev = 8;
	ZE_OK(ze.DeviceGet(e->drv, &e->ndev, e->dev));
	ZE_OK(ze.ContextCreate(e->drv, &cdesc, &e->ctx));
	ZE_OK(ze.CommandListCreateImmediate(e->ctx, e->dev[0], &qdesc,
	                                    &e->list));
	ze_get_hooks(id, &e->hooks);
}

void setup(struct env *e)
{
	setup_driver(e, 'a');
}

void teardown(struct env *e)
{
	ZE_OK(ze.CommandListDestroy(e->list));
	ZE_OK(ze.ContextDestroy(e->ctx));
}

/* What the loader answers for a NULL slot of a driver's table. */
ze_result_t unimplemented(void)
{
	return mode == MODE_DIRECT || mode == MODE_VALIDATION
	               ? ZE_RESULT_ERROR_UNSUPPORTED_FEATURE
	               : ZE_RESULT_ERROR_UNINITIALIZED;
}

size_t page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

void *dev_alloc(struct env *e, int dev, size_t size)
{
	return ze_alloc_device(ze.MemAllocDevice, e->ctx, e->dev[dev], size);
}

void *host_alloc(struct env *e, size_t size)
{
	return ze_alloc_host(ze.MemAllocHost, e->ctx, size);
}

void copy(struct env *e, void *dst, const void *src, size_t size)
{
	ZE_OK(ze.CommandListAppendMemoryCopy(e->list, dst, src, size, NULL, 0,
	                                     NULL));
}

ze_result_t props(struct env *e, const void *p,
                  ze_memory_allocation_properties_t *mp,
                  ze_device_handle_t *dev)
{
	memset(mp, 0, sizeof(*mp));
	mp->stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
	return ze.MemGetAllocProperties(e->ctx, p, mp, dev);
}

/* A dma-buf export of the allocation holding p, as libfabric asks it. */
ze_result_t export_fd(struct env *e, const void *p, int *fd)
{
	ze_external_memory_export_fd_t ex = {
	        .stype = ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_FD,
	        .flags = ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF,
	        .fd = -1,
	};
	ze_memory_allocation_properties_t mp = {
	        .stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES,
	        .pNext = &ex,
	};
	ze_device_handle_t dev;
	ze_result_t rc = ze.MemGetAllocProperties(e->ctx, p, &mp, &dev);

	*fd = ex.fd;
	return rc;
}

void *base_of(struct env *e, const void *p, size_t *size)
{
	void *base = NULL;

	ZE_OK(ze.MemGetAddressRange(e->ctx, p, &base, size));
	return base;
}

int fd_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

int child_status(pid_t pid)
{
	int status;

	ASSERT_GT(pid, 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	return status;
}
