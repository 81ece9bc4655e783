/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_ze_export.c: dma-buf export, fd ownership, IPC handles. */
#include "test_sim_ze.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Offset 0 of the fd is the allocation base, for any pointer queried. */
HMR_TEST(dmabuf_export_maps_allocation_from_base)
{
	size_t len = 3 * page(), size;
	unsigned char *in = malloc(len), *map;
	char *p, *inner, *base;
	int fd, fd2;
	struct env e;

	setup(&e);
	fill(in, len, 9);
	p = dev_alloc(&e, 1, len);
	copy(&e, p, in, len);
	ZE_OK(export_fd(&e, p, &fd));
	ASSERT_GE(fd, 0);
	inner = p + page() + 5;
	ZE_OK(export_fd(&e, inner, &fd2));
	ASSERT_EQ(fd2, fd); /* driver mode: the same fd again */
	base = base_of(&e, inner, &size);
	ASSERT_PTR_EQ(base, p);
	ASSERT_EQ(size, len);
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map, in, len), 0);
	ASSERT_EQ(map[inner - base], in[page() + 5]);
	munmap(map, len);
	/* An fd offset of one page maps the allocation's second page. */
	map = mmap(NULL, page(), PROT_READ, MAP_SHARED, fd, (off_t)page());
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map, in + page(), page()), 0);
	munmap(map, page());
	ZE_OK(ze.MemFree(e.ctx, p));
	ASSERT_TRUE(!fd_open(fd)); /* zeMemFree closed it */
	free(in);
	teardown(&e);
}

HMR_TEST(dmabuf_export_rules)
{
	ze_device_mem_alloc_desc_t dd = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	ze_host_mem_alloc_desc_t hd = {
	        .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
	ze_external_memory_export_fd_t ex = {
	        .stype = ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_FD,
	        .flags = ZE_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD,
	        .fd = -1,
	};
	ze_memory_allocation_properties_t mp = {
	        .stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES,
	        .pNext = &ex,
	};
	struct env e;
	void *d, *h, *s;
	int heap, fd;

	setup(&e);
	d = dev_alloc(&e, 0, 4096);
	h = host_alloc(&e, 4096);
	ZE_OK(ze.MemAllocShared(e.ctx, &dd, &hd, 4096, 0, e.dev[0], &s));
	ZE_RC(ze.MemGetAllocProperties(e.ctx, d, &mp, NULL),
	      ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
	ex.flags = 0;
	ZE_RC(ze.MemGetAllocProperties(e.ctx, d, &mp, NULL),
	      ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
	ASSERT_EQ(ex.fd, -1);
	ZE_OK(export_fd(&e, h, &fd)); /* host memory exports too */
	ASSERT_GE(fd, 0);
	ZE_RC(export_fd(&e, s, &fd), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
	/* Unknown memory: success, type UNKNOWN, no fd. */
	ZE_OK(export_fd(&e, &heap, &fd));
	ASSERT_EQ(fd, -1);
	ASSERT_EQ(e.hooks.open_fds(), 1); /* the host allocation's */
	ZE_OK(ze.MemFree(e.ctx, d));
	ZE_OK(ze.MemFree(e.ctx, h));
	ZE_OK(ze.MemFree(e.ctx, s));
	ASSERT_EQ(e.hooks.open_fds(), 0);
	teardown(&e);
}

HMR_TEST(dmabuf_switches_per_device_and_host)
{
	ze_device_external_memory_properties_t ext = {
	        .stype = ZE_STRUCTURE_TYPE_DEVICE_EXTERNAL_MEMORY_PROPERTIES};
	struct env e;
	void *d0, *d1, *h;
	int fd;

	setenv("HMR_SIM_ZE_DMABUF", "1,0", 1);
	setenv("HMR_SIM_ZE_HOST_DMABUF", "0", 1);
	setup(&e);
	ZE_OK(ze.DeviceGetExternalMemoryProperties(e.dev[1], &ext));
	ASSERT_EQ(ext.memoryAllocationExportTypes, 0);
	d0 = dev_alloc(&e, 0, 4096);
	d1 = dev_alloc(&e, 1, 4096);
	h = host_alloc(&e, 4096);
	ZE_OK(export_fd(&e, d0, &fd));
	ZE_RC(export_fd(&e, d1, &fd), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
	ZE_RC(export_fd(&e, h, &fd), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
	ZE_OK(ze.MemFree(e.ctx, d0));
	ZE_OK(ze.MemFree(e.ctx, d1));
	ZE_OK(ze.MemFree(e.ctx, h));
	teardown(&e);
}

/* A backend that closes the driver's fd is caught at the next export. */
HMR_TEST(driver_fd_closed_by_caller_is_detected)
{
	struct env e;
	void *p, *q;
	int fd, again, other;

	setup(&e);
	p = dev_alloc(&e, 0, 4096);
	ZE_OK(export_fd(&e, p, &fd));
	ASSERT_EQ(e.hooks.open_fds(), 1);
	close(fd);
	ZE_RC(export_fd(&e, p, &again), ZE_RESULT_ERROR_UNKNOWN);
	ASSERT_EQ(e.hooks.fd_errors(), 1);
	ZE_RC(export_fd(&e, p, &again), ZE_RESULT_ERROR_UNKNOWN);
	ZE_OK(ze.MemFree(e.ctx, p));
	ASSERT_EQ(e.hooks.fd_errors(), 1);

	/* Closed, the number reused elsewhere, then freed: the driver
	 * notices and leaves the new owner's fd open. */
	q = dev_alloc(&e, 0, 4096);
	ZE_OK(export_fd(&e, q, &fd));
	close(fd);
	other = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT_EQ(other, fd);
	ZE_OK(ze.MemFree(e.ctx, q));
	ASSERT_EQ(e.hooks.fd_errors(), 2);
	ASSERT_TRUE(fd_open(other));
	close(other);
	ASSERT_EQ(e.hooks.open_fds(), 0);
	teardown(&e);
}

HMR_TEST(caller_fd_mode_gives_new_fd_per_export)
{
	unsigned char in[64], *map;
	struct env e;
	void *p;
	int fd, fd2;

	setenv("HMR_SIM_ZE_FD_MODE", "caller", 1);
	setup(&e);
	fill(in, sizeof(in), 1);
	p = dev_alloc(&e, 0, 4096);
	copy(&e, p, in, sizeof(in));
	ZE_OK(export_fd(&e, p, &fd));
	ZE_OK(export_fd(&e, p, &fd2));
	ASSERT_NE(fd, fd2);
	ASSERT_EQ(e.hooks.open_fds(), 0);
	close(fd);
	ZE_OK(ze.MemFree(e.ctx, p));
	/* The caller's fd outlives the allocation and keeps its bytes. */
	ASSERT_TRUE(fd_open(fd2));
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd2, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map, in, sizeof(in)), 0);
	munmap(map, 4096);
	close(fd2);
	ASSERT_EQ(e.hooks.fd_errors(), 0);
	teardown(&e);
}

/* 10,000 allocate/export/release cycles leave the fd count flat. */
static void export_cycles(int caller)
{
	struct env e;
	int before, fd, fd2;
	void *p;

	setup(&e);
	before = hmr_test_open_fds();
	for (int i = 0; i < 10000; i++) {
		p = dev_alloc(&e, i % 2, 4096);
		ZE_OK(export_fd(&e, p, &fd));
		ZE_OK(export_fd(&e, (char *)p + 100, &fd2));
		if (caller) {
			ASSERT_NE(fd, fd2);
			close(fd);
			close(fd2);
		} else {
			ASSERT_EQ(fd, fd2);
			ASSERT_EQ(e.hooks.open_fds(), 1);
		}
		ZE_OK(ze.MemFree(e.ctx, p));
	}
	ASSERT_EQ(hmr_test_open_fds(), before);
	ASSERT_EQ(e.hooks.open_fds(), 0);
	ASSERT_EQ(e.hooks.fd_errors(), 0);
	ASSERT_EQ(e.hooks.live_allocs(), 0);
	teardown(&e);
}

HMR_TEST(fd_count_flat_over_10000_exports_driver_mode)
{
	export_cycles(0);
}

HMR_TEST(fd_count_flat_over_10000_exports_caller_mode)
{
	setenv("HMR_SIM_ZE_FD_MODE", "caller", 1);
	export_cycles(1);
}

static void ipc_child(struct env *e, ze_ipc_mem_handle_t h,
                      const unsigned char *in, size_t len)
{
	unsigned char *out = malloc(len);
	void *q = NULL, *r = NULL;
	int bad = !out;

	bad |= ze.MemOpenIpcHandle(e->ctx, e->dev[1], h, 0, &q) != 0;
	bad |= ze.MemOpenIpcHandle(e->ctx, e->dev[1], h, 0, &r) != 0;
	bad |= q == r || !q || !r;
	bad |= ze.CommandListAppendMemoryCopy(e->list, out, q, len, NULL, 0,
	                                      NULL) != 0;
	bad |= memcmp(out, in, len) != 0;
	bad |= ze.MemFree(e->ctx, q) != ZE_RESULT_ERROR_INVALID_ARGUMENT;
	bad |= ze.MemCloseIpcHandle(e->ctx, q) != 0;
	bad |= ze.MemCloseIpcHandle(e->ctx, q) !=
	       ZE_RESULT_ERROR_INVALID_ARGUMENT;
	bad |= ze.MemCloseIpcHandle(e->ctx, r) != 0;
	free(out);
	_exit(bad);
}

HMR_TEST(ipc_handles_across_fork)
{
	unsigned char in[5000];
	ze_ipc_mem_handle_t h, mine;
	struct env e;
	char *p;
	int status, fd;
	void *q;
	pid_t pid;

	setup(&e);
	fill(in, sizeof(in), 5);
	p = dev_alloc(&e, 0, sizeof(in));
	copy(&e, p, in, sizeof(in));
	ZE_RC(ze.MemGetIpcHandle(e.ctx, p + 1, &h),
	      ZE_RESULT_ERROR_INVALID_ARGUMENT);
	ZE_OK(ze.MemGetIpcHandle(e.ctx, p, &h));
	/* The handle starts with the driver-owned dma-buf fd. */
	ZE_OK(export_fd(&e, p, &fd));
	ASSERT_EQ(*(int *)h.data, fd);
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		ipc_child(&e, h, in, sizeof(in));
	status = child_status(pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);

	/* A handle carrying only a fd of this process, as libfabric's shm
	 * provider builds after passing the fd itself. */
	memset(&mine, 0, sizeof(mine));
	*(int *)mine.data = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	ZE_OK(ze.MemOpenIpcHandle(e.ctx, e.dev[1], mine, 0, &q));
	ASSERT_NE((uintptr_t)q, (uintptr_t)p);
	close(*(int *)mine.data);
	ZE_OK(ze.MemCloseIpcHandle(e.ctx, q));

	/* Once freed, the exporter's handle opens nothing. */
	ZE_OK(ze.MemFree(e.ctx, p));
	pid = fork();
	if (pid == 0)
		_exit(ze.MemOpenIpcHandle(e.ctx, e.dev[0], h, 0, &q) !=
		      ZE_RESULT_ERROR_INVALID_ARGUMENT);
	status = child_status(pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	ASSERT_EQ(e.hooks.live_allocs(), 0);
	teardown(&e);
}
