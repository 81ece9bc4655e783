/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_ze_two.c: two drivers loaded at once: driver index 1 is real. */
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ze_util.h"

/* ZE_ENABLE_ALT_DRIVERS names driver a then b: the loader wraps every
 * handle, and b is index 1 of zeDriverGet's array. */

/* fi_mr: F92 F103 */
HMR_TEST(ze_two_driver1_device1_memory_is_encoded_and_registers)
{
	struct ze_drv b = ze_open('b');
	struct fid_domain *dom = hmem_domain();
	char *p = ze_dev_alloc(&b, 1, 1 << 16);
	struct hmr_hmem_info info;
	struct fid_mr *mr;

	ASSERT_EQ(b.index, 1);
	ASSERT_OK(hmr_hmem_query(p + 10, 100, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ZE);
	ASSERT_U64_EQ(info.device, fi_hmem_ze_device(1, 1));
	ASSERT_U64_EQ(info.device, 0x10001);
	ASSERT_U64_EQ(info.base, (uintptr_t)p);
	ASSERT_U64_EQ(info.buffer_id, ze_alloc_id(&b, p));
	ASSERT_OK(reg_ze(dom, p, 1 << 16, fi_hmem_ze_device(1, 1),
	                 FI_HMEM_DEVICE_ONLY, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	/* The same device index on driver 0, or device 0 of driver 1. */
	ASSERT_EQ(reg_ze(dom, p, 1 << 16, fi_hmem_ze_device(0, 1), 0, &mr),
	          -FI_EINVAL);
	ASSERT_EQ(reg_ze(dom, p, 1 << 16, fi_hmem_ze_device(1, 0), 0, &mr),
	          -FI_EINVAL);
	ASSERT_OK(fi_close(&dom->fid));
	ze_free(&b, p);
	ze_close(&b);
}

HMR_TEST(ze_two_each_driver_classifies_its_own_memory)
{
	struct ze_drv a = ze_open('a'), b = ze_open('b');
	char *pa = ze_dev_alloc(&a, 1, 4096), *pb = ze_dev_alloc(&b, 1, 4096);
	char *ha = ze_host_alloc(&a, 4096), *hb = ze_host_alloc(&b, 4096);
	struct hmr_hmem_info info;

	ASSERT_EQ(ze_driver_count(), 2);
	ASSERT_OK(hmr_hmem_query(pa, 4096, &info));
	ASSERT_U64_EQ(info.device, fi_hmem_ze_device((int)a.index, 1));
	ASSERT_U64_EQ(info.buffer_id, ze_alloc_id(&a, pa));
	ASSERT_OK(hmr_hmem_query(pb, 4096, &info));
	ASSERT_U64_EQ(info.device, fi_hmem_ze_device((int)b.index, 1));
	ASSERT_U64_EQ(info.buffer_id, ze_alloc_id(&b, pb));
	ASSERT_OK(hmr_hmem_query(hb, 4096, &info));
	ASSERT_EQ(info.flags, HMR_HMEM_HOST_ALLOC);
	ASSERT_U64_EQ(info.device, fi_hmem_ze_device((int)b.index, 0));
	ASSERT_OK(hmr_hmem_query(ha, 4096, &info));
	ASSERT_U64_EQ(info.device, fi_hmem_ze_device((int)a.index, 0));
	ze_free(&a, pa);
	ze_free(&b, pb);
	ze_free(&a, ha);
	ze_free(&b, hb);
	ze_close(&a);
	ze_close(&b);
}

HMR_TEST(ze_two_driver1_copies_and_dmabuf)
{
	struct ze_drv b = ze_open('b');
	char *p = ze_dev_alloc(&b, 1, 1 << 20);
	unsigned char in[4096], out[4096], *map;
	uint64_t offset;
	int fd;

	fill(in, sizeof(in), 9);
	ASSERT_OK(hmr_hmem_copy_to(p + 8192, in, sizeof(in)));
	ASSERT_OK(hmr_hmem_copy_from(out, p + 8192, sizeof(out)));
	ASSERT_EQ(memcmp(in, out, sizeof(in)), 0);
	ASSERT_OK(hmr_hmem_dmabuf_get(p + 8192, sizeof(in), 0, &fd, &offset));
	ASSERT_U64_EQ(offset, 8192);
	map = mmap(NULL, 1 << 20, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map + offset, in, sizeof(in)), 0);
	munmap(map, 1 << 20);
	ASSERT_OK(hmr_hmem_dmabuf_put(p, fd));
	ASSERT_EQ(b.hooks.fd_errors(), 0);
	ze_free(&b, p);
	ze_close(&b);
}

HMR_TEST(ze_two_driver1_ipc_opens_on_driver1)
{
	struct ze_drv b = ze_open('b');
	char *p = ze_dev_alloc(&b, 0, 1 << 16);
	unsigned char handle[64], pattern[32], back[32];
	size_t size = sizeof(handle);
	struct hmr_hmem_info info;
	int status;
	void *q;
	pid_t pid;

	fill(pattern, sizeof(pattern), 3);
	ASSERT_OK(hmr_hmem_copy_to(p, pattern, sizeof(pattern)));
	ASSERT_OK(hmr_hmem_ipc_get(p, handle, &size));
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (hmr_hmem_ipc_open(FI_HMEM_ZE, fi_hmem_ze_device(1, 1),
		                      handle, size, &q) ||
		    hmr_hmem_query(q, 1, &info) ||
		    info.device != (uint64_t)fi_hmem_ze_device(1, 1) ||
		    hmr_hmem_copy_from(back, q, sizeof(back)) ||
		    memcmp(back, pattern, sizeof(back)))
			_exit(10);
		_exit(hmr_hmem_ipc_close(FI_HMEM_ZE, q) ? 11 : 0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	ze_free(&b, p);
	ze_close(&b);
}

HMR_TEST(ze_two_host_register_imports_into_both_drivers)
{
	struct ze_drv a = ze_open('a'), b = ze_open('b');
	unsigned long la = a.hooks.live_allocs(), lb = b.hooks.live_allocs();
	char *buf = aligned_alloc(4096, 1 << 16);

	/* Each driver gets its own handle, not the loader's wrapped one. */
	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_ZE, buf, 1 << 16));
	ASSERT_EQ(a.hooks.live_allocs(), la + 1);
	ASSERT_EQ(b.hooks.live_allocs(), lb + 1);
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_ZE, buf, 1 << 16));
	ASSERT_EQ(a.hooks.live_allocs(), la);
	ASSERT_EQ(b.hooks.live_allocs(), lb);
	free(buf);
	ze_close(&a);
	ze_close(&b);
}

HMR_TEST(ze_two_host_register_failure_undoes_the_first_import)
{
	struct ze_drv a = ze_open('a'), b = ze_open('b');
	unsigned long la = a.hooks.live_allocs();
	char *buf = aligned_alloc(4096, 1 << 16);

	ASSERT_EQ(b.hooks.fail("zexDriverImportExternalPointer:1"), 0);
	ASSERT_EQ(hmr_hmem_host_register(FI_HMEM_ZE, buf, 1 << 16), -FI_EIO);
	ASSERT_EQ(a.hooks.live_allocs(), la);
	free(buf);
	ze_close(&a);
	ze_close(&b);
}

HMR_TEST(ze_two_device_number_past_driver1_devices_names_nothing)
{
	struct ze_drv b;
	unsigned char handle[64] = {0};
	void *q;

	case_env("HMR_SIM_ZE_B_DEVICES", "1");
	b = ze_open('b');
	ASSERT_EQ(b.ndev, 1);
	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_ZE, fi_hmem_ze_device(1, 1), handle,
	                            sizeof(handle), &q),
	          -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_ZE, fi_hmem_ze_device(2, 0), handle,
	                            sizeof(handle), &q),
	          -FI_EINVAL);
	ze_close(&b);
}

HMR_TEST_MAIN()
