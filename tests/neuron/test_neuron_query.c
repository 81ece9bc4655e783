/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_neuron_query.c: what hmr says Neuron, host and reused memory are. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>

#include "neuron_util.h"

#define MIB (1u << 20)

/* The kernel's own mapping of p, as a test reads it: [lo, hi). */
static void expect_mapping(const struct hmr_hmem_info *info, const char *va,
                           size_t size, uint64_t device)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	ASSERT_EQ(info->iface, FI_HMEM_NEURON);
	ASSERT_EQ(info->device, device);
	ASSERT_U64_EQ(info->base, (uintptr_t)va);
	ASSERT_U64_EQ(info->size, (size + page - 1) / page * page);
	ASSERT_NE(info->buffer_id, 0);
}

static void device_memory_is_neuron(void)
{
	struct app a = app_open();
	nrt_tensor_t *t0 = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, MIB);
	nrt_tensor_t *t2 = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 2, 5000);
	struct hmr_hmem_info info, inner;

	ASSERT_OK(hmr_hmem_query(app_va(&a, t0), 64, &info));
	expect_mapping(&info, app_va(&a, t0), MIB, 0);
	ASSERT_EQ(info.flags & ~HMR_HMEM_DEVICE_UNCHECKED,
	          HMR_HMEM_DEVICE_ONLY); /* efa_bdf confirmed */
	/* An interior pointer: the same allocation. */
	ASSERT_OK(hmr_hmem_query(app_va(&a, t0) + 12345, 64, &inner));
	ASSERT_U64_EQ(inner.base, info.base);
	ASSERT_U64_EQ(inner.buffer_id, info.buffer_id);
	/* NeuronCore 2 is on /dev/neuron1 (2 cores per device). */
	ASSERT_OK(hmr_hmem_query(app_va(&a, t2) + 4999, 1, &info));
	expect_mapping(&info, app_va(&a, t2), 5000, 1);
	a.free(&t0);
	a.free(&t2);
}

/* fi_mr: F89 */
HMR_TEST(neuron_query_device_memory_is_its_mapping)
{
	device_memory_is_neuron();
}

HMR_TEST(neuron_query_device_memory_by_reading_maps)
{
	case_env("HMR_NEURON_MAPS", "read");
	device_memory_is_neuron();
}

HMR_TEST(neuron_query_host_memory_is_system_then_cached)
{
	struct app a = app_open();
	struct hmr_hmem_info info;
	char *buf = malloc(4096);
	unsigned long bdf;

	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	/* Known host memory is answered without the runtime. */
	bdf = a.calls("nrt_get_attached_efa_bdf");
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	ASSERT_EQ(a.calls("nrt_get_attached_efa_bdf"), bdf);
	free(buf);
}

/*
 * A tensor freed, then another at the same address: the freed address is
 * not Neuron memory, and the new tensor is a new buffer of its own size.
 * (Asked between the two at another offset than later: hmr remembers
 * host answers, doc/hmem-neuron.md.)
 */
static void freed_then_reused(void)
{
	struct app a = app_open();
	nrt_tensor_t *t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 1, MIB);
	char *va = app_va(&a, t);
	struct hmr_hmem_info first, gone, again;

	ASSERT_OK(hmr_hmem_query(va, 64, &first));
	expect_mapping(&first, va, MIB, 0);
	a.free(&t);
	ASSERT_OK(hmr_hmem_query(va + 8192, 64, &gone));
	ASSERT_EQ(gone.iface, FI_HMEM_SYSTEM);
	t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 1, 2 * MIB);
	ASSERT_PTR_EQ(app_va(&a, t), va); /* The simulator reuses it. */
	ASSERT_OK(hmr_hmem_query(va, 64, &again));
	expect_mapping(&again, va, 2 * MIB, 0);
	ASSERT_NE(again.buffer_id, first.buffer_id);
	a.free(&t);
}

HMR_TEST(neuron_query_freed_then_reused_address_is_a_new_buffer)
{
	freed_then_reused();
}

HMR_TEST(neuron_query_freed_then_reused_address_by_reading_maps)
{
	case_env("HMR_NEURON_MAPS", "read");
	freed_then_reused();
}

/* Same address, same size: only the memory behind it differs. */
HMR_TEST(neuron_query_reused_address_same_size_new_id)
{
	struct app a = app_open();
	nrt_tensor_t *t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, MIB);
	char *va = app_va(&a, t);
	struct hmr_hmem_info first, again;

	ASSERT_OK(hmr_hmem_query(va, 64, &first));
	a.free(&t);
	t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, MIB);
	ASSERT_PTR_EQ(app_va(&a, t), va);
	ASSERT_OK(hmr_hmem_query(va, 64, &again));
	ASSERT_U64_EQ(again.size, first.size);
	ASSERT_NE(again.buffer_id, first.buffer_id);
	a.free(&t);
}

/* Mapped through /dev/neuron, but the runtime disowns it as device
 * memory: host memory, as the runtime calls it. */
HMR_TEST(neuron_query_host_placement_tensor_is_host_memory)
{
	struct app a = app_open();
	nrt_tensor_t *t = app_alloc(&a, NRT_TENSOR_PLACEMENT_HOST, -1, 65536);
	struct hmr_hmem_info info;

	ASSERT_OK(hmr_hmem_query(app_va(&a, t), 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	a.free(&t);
}

/* An address query that answers nonsense: the mapping alone decides,
 * Neuron memory but not known to be a device allocation. */
HMR_TEST(neuron_query_without_runtime_answer_trusts_the_mapping)
{
	struct app a;
	nrt_tensor_t *t;
	struct hmr_hmem_info info;
	char host[64];

	case_env("HMR_SIM_NEURON_FAIL", "nrt_get_attached_efa_bdf=NRT_INVALID");
	a = app_open();
	t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, MIB);
	ASSERT_OK(hmr_hmem_query(app_va(&a, t), 64, &info));
	expect_mapping(&info, app_va(&a, t), MIB, 0);
	ASSERT_EQ(info.flags & ~HMR_HMEM_DEVICE_UNCHECKED, 0);
	ASSERT_OK(hmr_hmem_query(host, sizeof(host), &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	a.free(&t);
}

/* Bytes this thread has read (all of them: /proc files too). */
static unsigned long long thread_rchar(void)
{
	char buf[512];
	unsigned long long v = 0;
	int fd = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
	ssize_t n;
	char *p;

	ASSERT_GE(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ASSERT_GT(n, 0);
	buf[n] = '\0';
	p = strstr(buf, "rchar:");
	ASSERT_TRUE(p != NULL);
	v = strtoull(p + 6, NULL, 10);
	return v;
}

/* Bytes read by one classification, less the reading of the count. */
static unsigned long long read_by_query(const void *p)
{
	struct hmr_hmem_info info;
	unsigned long long before = thread_rchar(), probe, after;

	probe = thread_rchar() - before; /* What one count costs. */
	before = thread_rchar();
	ASSERT_OK(hmr_hmem_query(p, 64, &info));
	after = thread_rchar();
	return after - before - probe;
}

/* Where maps are read, the runtime's answer spares host pointers the
 * read; device pointers do read them (the control). */
HMR_TEST(neuron_query_host_pointer_costs_no_maps_read)
{
	struct app a;
	nrt_tensor_t *t;
	char *host = malloc(4096);

	case_env("HMR_NEURON_MAPS", "read");
	a = app_open();
	t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, MIB);
	ASSERT_OK(hmr_hmem_status(FI_HMEM_NEURON, NULL, 0));
	ASSERT_EQ(read_by_query(host), 0);
	ASSERT_GT(read_by_query(app_va(&a, t)), 512);
	a.free(&t);
	free(host);
}

/* Linux 6.11's PROCMAP_QUERY, asked as hmr asks it. */
static int kernel_has_procmap_query(void)
{
	struct {
		uint64_t size, rest[12];
	} q = {.size = 104};
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	int r;

	ASSERT_GE(fd, 0);
	q.rest[1] = (uintptr_t)&kernel_has_procmap_query; /* query_addr */
	r = ioctl(fd, _IOWR('f', 17, q), &q);
	close(fd);
	return r == 0;
}

HMR_TEST(neuron_query_device_pointer_costs_no_maps_read_with_procmap_query)
{
	struct app a = app_open();
	nrt_tensor_t *t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, MIB);

	if (!kernel_has_procmap_query())
		HMR_SKIP("this kernel has no PROCMAP_QUERY (Linux < 6.11)");
	ASSERT_OK(hmr_hmem_status(FI_HMEM_NEURON, NULL, 0));
	ASSERT_EQ(read_by_query(app_va(&a, t)), 0);
	a.free(&t);
}

/* Before registering: cores as devices, dma-buf "unknown until tried". */
HMR_TEST(neuron_backend_and_device_info_before_registering)
{
	struct hmr_hmem_backend_info b = HMR_HMEM_BACKEND_INFO_INIT;
	struct hmr_hmem_device_info d = HMR_HMEM_DEVICE_INFO_INIT;

	ASSERT_OK(hmr_hmem_backend_info(FI_HMEM_NEURON, &b));
	ASSERT_TRUE(strstr(b.library, "libnrt.so.1") != NULL);
	ASSERT_GT(b.devices, 0);
	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_NEURON, 0, &d));
	ASSERT_EQ(d.dmabuf, -1);
	ASSERT_TRUE(strstr(d.dmabuf_why, "nrt_get_dmabuf_fd") != NULL);
	ASSERT_EQ(hmr_hmem_device_info(FI_HMEM_NEURON, b.devices, &d),
	          -FI_ENOENT);
}

HMR_TEST_MAIN()
