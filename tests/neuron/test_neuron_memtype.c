/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_neuron_memtype.c: Neuron memory where host memory was is Neuron's. */
#include <sys/mman.h>

#include "hmem/hmem.h"
#include "hmem_reuse.h"
#include "monitor/monitor.h"
#include "neuron_util.h"

#define KIB 1024

/* Host answers are remembered (the import monitor) unless said otherwise:
 * what keeps hmr right must be the rule under test, not a cold cache. */
static struct app start(const char *monitor)
{
	if (monitor)
		case_env("FI_MR_CACHE_MONITOR", monitor);
	/* Device memory readable by the CPU, as the real BAR mapping is: an
	 * unreadable mapping alone would not be remembered as host. */
	case_env("HMR_SIM_NEURON_HOST_ACCESSIBLE", "1");
	return app_open();
}

static nrt_tensor_t *last; /* The tensor alloc_64k made last. */

static void *alloc_64k(void *ctx)
{
	last = app_alloc(ctx, NRT_TENSOR_PLACEMENT_DEVICE, 0, 64 * KIB);
	return app_va(ctx, last);
}

static void free_last(void *ctx, void *p)
{
	ASSERT_PTR_EQ(p, app_va(ctx, last));
	((struct app *)ctx)->free(&last);
}

/* The freed VA goes back to the window: not readable, not remembered. */
HMR_TEST(neuron_freed_address_reallocated_is_device)
{
	struct app a = start("import");
	struct reuse_ops o = {alloc_64k, free_last, &a};

	expect_reuse_is_device(&o, FI_HMEM_NEURON);
}

/* Host memory at `host` is classified and remembered, then unmapped;
 * `event` delivers what the monitor would; then Neuron maps device memory
 * at the same address (the driver's mmap may land anywhere). */
static void remapped_as_device(struct app *a, int notify)
{
	void (*next_va)(const void *) =
	        (void (*)(const void *))app_sym(a->dl, "hmr_sim_neuron_next_"
	                                               "device_va");
	char *host = mmap(NULL, 64 * KIB, PROT_READ | PROT_WRITE,
	                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct hmr_hmem_info info;
	nrt_tensor_t *t;

	ASSERT_TRUE(host != MAP_FAILED);
	ASSERT_OK(hmr_hmem_query(host, 64 * KIB, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	/* Remembered: the next answer would come from the cache. */
	ASSERT_EQ(hmr__memtype_lookup((uintptr_t)host, 64 * KIB, &info), 1);
	if (notify) /* As a hook sees munmap: before the kernel acts. */
		hmr__monitor_notify((uintptr_t)host, 64 * KIB);
	ASSERT_EQ(munmap(host, 64 * KIB), 0);
	next_va(host);
	t = app_alloc(a, NRT_TENSOR_PLACEMENT_DEVICE, 0, 64 * KIB);
	ASSERT_PTR_EQ(app_va(a, t), host);
	ASSERT_OK(hmr_hmem_query(host, 64 * KIB, &info));
	ASSERT_EQ(info.iface, FI_HMEM_NEURON);
	ASSERT_U64_EQ(info.base, (uintptr_t)host);
	a->free(&t);
}

/* The event as the import monitor's user reports it. */
HMR_TEST(neuron_host_range_remapped_as_device_is_device)
{
	struct app a = start("import");

	remapped_as_device(&a, 1);
}

/* The default monitor (memhooks) sees the real munmap by itself. */
HMR_TEST(neuron_host_range_remapped_as_device_is_device_with_memhooks)
{
	char why[256];
	struct app a = start(NULL);

	if (hmr__monitor_start(why, sizeof(why)) ||
	    hmr__monitor_kind() != HMR_MONITOR_MEMHOOKS)
		HMR_SKIP("the memhooks monitor is not running: %s", why);
	remapped_as_device(&a, 0);
}

HMR_TEST_MAIN()
