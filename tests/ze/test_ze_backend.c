/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_ze_backend.c: the Level Zero backend in every loader mode. */
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ze_util.h"

/* CTest runs each case once per loader mode (ze_<mode>_<case>): one
 * driver passed through, ZE_ENABLE_LOADER_INTERCEPT=1, two drivers, and
 * the validation layer.  Driver a is used; test_ze_two.c covers b. */

static void expect_info(const void *p, size_t len, uint64_t device,
                        uint64_t base, uint64_t size, uint32_t flags)
{
	struct hmr_hmem_info info;

	ASSERT_OK(hmr_hmem_query(p, len, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ZE);
	ASSERT_U64_EQ(info.device, device);
	ASSERT_U64_EQ(info.base, base);
	ASSERT_U64_EQ(info.size, size);
	ASSERT_EQ(info.flags, flags);
}

/* fi_mr: F88 */
HMR_TEST(query_device_memory_names_driver_and_device)
{
	struct ze_drv d = ze_open('a');
	char *p = ze_dev_alloc(&d, 1, 5000);
	struct hmr_hmem_info info;

	expect_info(p + 100, 10, fi_hmem_ze_device((int)d.index, 1),
	            (uintptr_t)p, 5000, HMR_HMEM_DEVICE_ONLY);
	ASSERT_OK(hmr_hmem_query(p + 4999, 1, &info));
	ASSERT_U64_EQ(info.buffer_id, ze_alloc_id(&d, p));
	ASSERT_NE(info.buffer_id, 0);
	ze_free(&d, p);
	ze_close(&d);
}

HMR_TEST(query_host_alloc_is_host_alloc_of_its_driver)
{
	struct ze_drv d = ze_open('a');
	char *p = ze_host_alloc(&d, 300);

	/* No device: device index 0 of the driver, which fi_mr(3) says
	 * FI_HMEM_HOST_ALLOC ignores. */
	expect_info(p + 299, 1, fi_hmem_ze_device((int)d.index, 0),
	            (uintptr_t)p, 300, HMR_HMEM_HOST_ALLOC);
	ze_free(&d, p);
	ze_close(&d);
}

HMR_TEST(query_shared_memory_is_managed)
{
	struct ze_drv d = ze_open('a');
	char *bound = ze_shared_alloc(&d, 1, 6000);
	char *unbound = ze_shared_alloc(&d, -1, 6000);

	expect_info(bound, 6000, fi_hmem_ze_device((int)d.index, 1),
	            (uintptr_t)bound, 6000, HMR_HMEM_MANAGED);
	expect_info(unbound + 1, 1, fi_hmem_ze_device((int)d.index, 0),
	            (uintptr_t)unbound, 6000, HMR_HMEM_MANAGED);
	ze_free(&d, bound);
	ze_free(&d, unbound);
	ze_close(&d);
}

HMR_TEST(query_malloc_memory_is_system)
{
	struct ze_drv d = ze_open('a');
	struct hmr_hmem_info info;
	char *heap = malloc(64);

	ASSERT_OK(hmr_hmem_query(heap, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	free(heap);
	ze_close(&d);
}

HMR_TEST(freed_and_reallocated_address_gets_new_buffer_id)
{
	struct ze_drv d = ze_open('a');
	struct hmr_hmem_info first, second;
	char *p = ze_dev_alloc(&d, 0, 1 << 20), *q;

	ASSERT_OK(hmr_hmem_query(p, 4096, &first));
	ze_free(&d, p);
	q = ze_dev_alloc(&d, 0, 1 << 20);
	ASSERT_PTR_EQ(q, p); /* The simulator reuses the first fit. */
	ASSERT_OK(hmr_hmem_query(q, 4096, &second));
	ASSERT_NE(second.buffer_id, first.buffer_id);
	ASSERT_U64_EQ(second.buffer_id, ze_alloc_id(&d, q));
	ze_free(&d, q);
	ze_close(&d);
}

HMR_TEST(dmabuf_offset_counts_from_allocation_base)
{
	struct ze_drv d = ze_open('a');
	char *p = ze_dev_alloc(&d, 1, 1 << 20);
	unsigned char data[16];
	unsigned char *map;
	uint64_t offset;
	int fd;

	fill(data, sizeof(data), 5);
	ASSERT_OK(hmr_hmem_copy_to(p + 4096 + 7, data, sizeof(data)));
	ASSERT_OK(hmr_hmem_dmabuf_get(p + 4096 + 7, sizeof(data), 0, &fd,
	                              &offset));
	ASSERT_U64_EQ(offset, 4096 + 7);
	map = mmap(NULL, 1 << 20, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map + offset, data, sizeof(data)), 0);
	munmap(map, 1 << 20);
	ASSERT_OK(hmr_hmem_dmabuf_put(p, fd));
	ASSERT_EQ(d.hooks.fd_errors(), 0);
	ze_free(&d, p);
	ze_close(&d);
}

HMR_TEST(dmabuf_past_allocation_end_is_einval)
{
	struct ze_drv d = ze_open('a');
	char *p = ze_dev_alloc(&d, 0, 8192);
	uint64_t offset;
	int fd = -1, fds = hmr_test_open_fds();

	ASSERT_EQ(hmr_hmem_dmabuf_get(p + 4096, 4097, 0, &fd, &offset),
	          -FI_EINVAL);
	ASSERT_EQ(fd, -1);
	ASSERT_EQ(hmr_test_open_fds(), fds);
	ze_free(&d, p);
	ze_close(&d);
}

HMR_TEST(dmabuf_of_shared_memory_is_eopnotsupp)
{
	struct ze_drv d = ze_open('a');
	char *p = ze_shared_alloc(&d, 0, 8192);
	uint64_t offset;
	int fd = -1;

	ASSERT_EQ(hmr_hmem_dmabuf_get(p, 8192, 0, &fd, &offset),
	          -FI_EOPNOTSUPP);
	ASSERT_EQ(fd, -1);
	ze_free(&d, p);
	ze_close(&d);
}

HMR_TEST(dmabuf_support_is_per_device)
{
	struct ze_drv d;
	char *p0, *p1;
	uint64_t offset;
	int fd = -1;

	case_env("HMR_SIM_ZE_DMABUF", "1,0");
	d = ze_open('a');
	p0 = ze_dev_alloc(&d, 0, 8192);
	p1 = ze_dev_alloc(&d, 1, 8192);
	ASSERT_EQ(hmr_hmem_dmabuf_get(p1, 8192, 0, &fd, &offset),
	          -FI_EOPNOTSUPP);
	ASSERT_OK(hmr_hmem_dmabuf_get(p0, 8192, 0, &fd, &offset));
	ASSERT_OK(hmr_hmem_dmabuf_put(p0, fd));
	ze_free(&d, p0);
	ze_free(&d, p1);
	ze_close(&d);
}

HMR_TEST(copies_round_trip_on_every_device_and_host_alloc)
{
	struct ze_drv d = ze_open('a');
	unsigned char in[9000], out[9000];
	uint32_t i;
	char *p;

	for (i = 0; i <= d.ndev; i++) {
		p = i < d.ndev ? ze_dev_alloc(&d, i, sizeof(in))
		               : ze_host_alloc(&d, sizeof(in));
		fill(in, sizeof(in), i);
		memset(out, 0, sizeof(out));
		ASSERT_OK(hmr_hmem_copy_to(p, in, sizeof(in)));
		ASSERT_OK(hmr_hmem_copy_from(out, p, sizeof(out)));
		ASSERT_EQ(memcmp(in, out, sizeof(in)), 0);
		/* One byte past the allocation: refused, never attempted. */
		ASSERT_EQ(hmr_hmem_copy_to(p + 1, in, sizeof(in)), -FI_EINVAL);
		ze_free(&d, p);
	}
	ze_close(&d);
}

/* fi_mr: F88 */
HMR_TEST(regattr_with_ze_device_registers)
{
	struct ze_drv d = ze_open('a');
	struct fid_domain *dom = hmem_domain();
	char *p = ze_dev_alloc(&d, 1, 1 << 16);
	struct fid_mr *mr;

	ASSERT_OK(reg_ze(dom, p, 1 << 16, fi_hmem_ze_device((int)d.index, 1),
	                 FI_HMEM_DEVICE_ONLY, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&dom->fid));
	ze_free(&d, p);
	ze_close(&d);
}

/* fi_mr: F92 */
HMR_TEST(regattr_wrong_device_hint_is_refused)
{
	struct ze_drv d = ze_open('a');
	struct fid_domain *dom = hmem_domain();
	char *p = ze_dev_alloc(&d, 1, 1 << 16);
	struct fid_mr *mr;

	ASSERT_EQ(reg_ze(dom, p, 1 << 16, fi_hmem_ze_device((int)d.index, 0), 0,
	                 &mr),
	          -FI_EINVAL);
	ASSERT_EQ(reg_ze(dom, p, 1 << 16,
	                 fi_hmem_ze_device((int)d.index + 1, 1), 0, &mr),
	          -FI_EINVAL);
	/* Device memory is not a host allocation. */
	ASSERT_EQ(reg_ze(dom, p, 1 << 16, fi_hmem_ze_device((int)d.index, 1),
	                 FI_HMEM_HOST_ALLOC, &mr),
	          -FI_EINVAL);
	ASSERT_OK(fi_close(&dom->fid));
	ze_free(&d, p);
	ze_close(&d);
}

/* fi_mr: F109 */
HMR_TEST(regattr_host_alloc_ignores_device)
{
	struct ze_drv d = ze_open('a');
	struct fid_domain *dom = hmem_domain();
	char *p = ze_host_alloc(&d, 1 << 16);
	struct fid_mr *mr;

	ASSERT_OK(reg_ze(dom, p, 1 << 16, 7, FI_HMEM_HOST_ALLOC, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&dom->fid));
	ze_free(&d, p);
	ze_close(&d);
}

/* The child opens the parent's handle on device 0, reads, closes. */
static int ipc_child(uint32_t driver, const void *handle, size_t size,
                     const unsigned char *pattern)
{
	unsigned char back[64];
	void *p;

	if (hmr_hmem_ipc_open(FI_HMEM_ZE, (uint64_t)driver << 16, handle, size,
	                      &p))
		return 10;
	if (hmr_hmem_copy_from(back, (char *)p + 4096, sizeof(back)))
		return 11;
	if (memcmp(back, pattern, sizeof(back)))
		return 12;
	return hmr_hmem_ipc_close(FI_HMEM_ZE, p) ? 13 : 0;
}

HMR_TEST(ipc_handle_opens_in_another_process)
{
	struct ze_drv d = ze_open('a');
	char *p = ze_dev_alloc(&d, 1, 1 << 20);
	unsigned char handle[256], pattern[64];
	size_t size = 1;
	int status;
	pid_t pid;

	fill(pattern, sizeof(pattern), 77);
	ASSERT_OK(hmr_hmem_copy_to(p + 4096, pattern, sizeof(pattern)));
	ASSERT_EQ(hmr_hmem_ipc_get(p, handle, &size), -FI_ETOOSMALL);
	ASSERT_EQ(size, 64);
	ASSERT_OK(hmr_hmem_ipc_get(p, handle, &size));
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(ipc_child(d.index, handle, size, pattern));
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	ze_free(&d, p);
	ze_close(&d);
}

HMR_TEST(ipc_bad_arguments_are_refused)
{
	struct ze_drv d = ze_open('a');
	char *p = ze_dev_alloc(&d, 0, 1 << 16), *heap = malloc(64);
	unsigned char handle[64];
	size_t size = sizeof(handle);
	void *q;

	ASSERT_OK(hmr_hmem_ipc_get(p, handle, &size));
	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_ZE, 0, handle, 63, &q), -FI_EINVAL);
	/* A device number that names no device. */
	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_ZE, 8, handle, size, &q),
	          -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_ZE, 7ull << 16, handle, size, &q),
	          -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_ipc_close(FI_HMEM_ZE, heap), -FI_EINVAL);
	free(heap);
	ze_free(&d, p);
	ze_close(&d);
}

HMR_TEST(host_register_imports_into_every_driver)
{
	struct ze_drv d = ze_open('a');
	unsigned long before = d.hooks.calls("zexDriverImportExternalPointer");
	unsigned long live = d.hooks.live_allocs();
	char *buf = aligned_alloc(4096, 1 << 16);

	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_ZE, buf, 1 << 16));
	ASSERT_EQ(d.hooks.calls("zexDriverImportExternalPointer"), before + 1);
	ASSERT_EQ(d.hooks.live_allocs(), live + 1);
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_ZE, buf, 1 << 16));
	ASSERT_EQ(d.hooks.live_allocs(), live);
	free(buf);
	ze_close(&d);
}

HMR_TEST_MAIN()
