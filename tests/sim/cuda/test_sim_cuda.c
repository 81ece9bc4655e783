/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_cuda.c: the CUDA driver simulator, loaded by path like a driver. */
#include "test_sim_cuda.h"

#include <sys/wait.h>

HMR_TEST(sim_cuda_init_and_devices)
{
	CUdeviceptr p;
	const char *s;
	unsigned int type;
	int n = 0, v = 0, bus0 = 0, bus1 = 0;
	CUdevice dev;
	void *data[] = {&type};
	CUpointer_attribute attr[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE};

	load_lib("HMR_SIM_CUDA_LIB");
	/* Before cuInit: only the version and error names work. */
	ASSERT_EQ(cu.DeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
	ASSERT_EQ(cu.PointerGetAttribute(&type,
	                                 CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	                                 (CUdeviceptr)(uintptr_t)&n),
	          CUDA_ERROR_NOT_INITIALIZED);
	ASSERT_EQ(cu.PointerGetAttributes(1, attr, data,
	                                  (CUdeviceptr)(uintptr_t)&n),
	          CUDA_ERROR_NOT_INITIALIZED);
	CU_OK(cu.DriverGetVersion(&v));
	ASSERT_EQ(v, 13000);
	CU_OK(cu.GetErrorName(CUDA_ERROR_INVALID_VALUE, &s));
	ASSERT_EQ(strcmp(s, "CUDA_ERROR_INVALID_VALUE"), 0);
	CU_OK(cu.GetErrorString(CUDA_ERROR_INVALID_VALUE, &s));
	ASSERT_EQ(strcmp(s, "invalid argument"), 0);
	ASSERT_EQ(cu.GetErrorName((CUresult)12345, &s),
	          CUDA_ERROR_INVALID_VALUE);

	CU_OK(cu.Init(0));
	CU_OK(cu.DeviceGetCount(&n));
	ASSERT_EQ(n, 2);
	ASSERT_EQ(cu.DeviceGet(&dev, 2), CUDA_ERROR_INVALID_DEVICE);
	CU_OK(cu.DeviceGet(&dev, 1));
	ASSERT_EQ(dev, 1);
	CU_OK(cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING,
	                            0));
	ASSERT_EQ(v, 1);
	CU_OK(cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
	                            1));
	ASSERT_EQ(v, 1);
	/* 0, as on the H200 (HMR_SIM_CUDA_HOST_DMABUF sets it). */
	CU_OK(cu.DeviceGetAttribute(
	        &v, CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED, 0));
	ASSERT_EQ(v, 0);
	CU_OK(cu.DeviceGetAttribute(
	        &v, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, 0));
	ASSERT_EQ(v, 1);
	CU_OK(cu.DeviceGetAttribute(&bus0, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0));
	CU_OK(cu.DeviceGetAttribute(&bus1, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 1));
	ASSERT_NE(bus0, bus1);
	ASSERT_EQ(cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, 0),
	          CUDA_ERROR_INVALID_VALUE);
	/* Allocations need a current context. */
	ASSERT_EQ(cu.MemAlloc(&p, 4096), CUDA_ERROR_INVALID_CONTEXT);
}

HMR_TEST(sim_cuda_no_devices)
{
	int n;

	setenv("HMR_SIM_CUDA_DEVICES", "0", 1);
	load_lib("HMR_SIM_CUDA_LIB");
	ASSERT_EQ(cu.Init(0), CUDA_ERROR_NO_DEVICE);
	ASSERT_EQ(cu.DeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
}

/* A child process reads the byte at p: how did it end? */
static int child_touch(CUdeviceptr p)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct sigaction sa;
		struct rlimit no_core = {0, 0};

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(SIGSEGV, &sa, NULL);
		setrlimit(RLIMIT_CORE, &no_core);
		_exit(*(volatile unsigned char *)(uintptr_t)p == 0x5a ? 0 : 3);
	}
	ASSERT_GT(pid, 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	return status;
}

HMR_TEST(sim_cuda_device_memory_faults)
{
	CUdeviceptr small, big, other;
	unsigned char v = 0x5a;
	int status, ord = -1;
	CUcontext ctx1;

	setup(0);
	CU_OK(cu.MemAlloc(&small, 100));
	CU_OK(cu.MemAlloc(&big, 3 << 20));
	ASSERT_EQ(small % page(), 0);
	ASSERT_EQ(big % (2 << 20), 0);
	CU_OK(cu.MemcpyHtoD(small, &v, 1));
	status = child_touch(small);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(WTERMSIG(status), SIGSEGV);

	/* Device windows are disjoint and report their device. */
	CU_OK(cu.PrimaryCtxRetain(&ctx1, 1));
	CU_OK(cu.CtxSetCurrent(ctx1));
	CU_OK(cu.MemAlloc(&other, 100));
	ASSERT_TRUE(other >= big + (3 << 20) || other + 100 <= small);
	CU_OK(cu.PointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
	                             other));
	ASSERT_EQ(ord, 1);
	CU_OK(cu.MemFree(other));
	CU_OK(cu.MemFree(small));
	CU_OK(cu.MemFree(big));
}

HMR_TEST(sim_cuda_host_accessible)
{
	CUdeviceptr p;
	unsigned char v = 0x5a, back = 0;
	int status;

	setenv("HMR_SIM_CUDA_HOST_ACCESSIBLE", "1", 1);
	setup(0);
	CU_OK(cu.MemAlloc(&p, 8192));
	CU_OK(cu.MemcpyHtoD(p + 4096, &v, 1));
	ASSERT_EQ(*(volatile unsigned char *)(uintptr_t)(p + 4096), 0x5a);
	*(volatile unsigned char *)(uintptr_t)p = 0x5a;
	CU_OK(cu.MemcpyDtoH(&back, p, 1));
	ASSERT_EQ(back, 0x5a);
	status = child_touch(p);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	CU_OK(cu.MemFree(p));
}

HMR_TEST(sim_cuda_copies_round_trip)
{
	enum { N = 3 * 4096 + 123 };
	static unsigned char in[N], out[N];
	CUdeviceptr a, b;
	unsigned char *host;

	setup(0);
	fill(in, N, 7);
	CU_OK(cu.MemAlloc(&a, N));
	CU_OK(cu.MemAlloc(&b, N));
	CU_OK(cu.MemcpyHtoD(a, in, N));
	CU_OK(cu.MemcpyDtoD(b, a, N));
	CU_OK(cu.MemcpyDtoH(out, b, N));
	ASSERT_EQ(memcmp(in, out, N), 0);

	/* cuMemcpy with unified addresses, pinned host memory included. */
	CU_OK(cu.MemAllocHost((void **)&host, N));
	CU_OK(cu.Memcpy((CUdeviceptr)(uintptr_t)host, a, N));
	ASSERT_EQ(memcmp(in, host, N), 0);
	CU_OK(cu.MemsetD8(b + 10, 0xee, 5));
	CU_OK(cu.MemcpyDtoH(out, b, 20));
	ASSERT_EQ(out[9], in[9]);
	ASSERT_EQ(out[10], 0xee);
	ASSERT_EQ(out[14], 0xee);
	ASSERT_EQ(out[15], in[15]);

	/* Past the end of an allocation, or not CUDA memory at all. */
	ASSERT_EQ(cu.MemcpyHtoD(a + 1, in, N), CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(cu.MemcpyHtoD((CUdeviceptr)(uintptr_t)out, in, 1),
	          CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(cu.MemsetD8(a + N, 0, 1), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cu.MemFreeHost(host));
	CU_OK(cu.MemFree(a));
	CU_OK(cu.MemFree(b));
	ASSERT_EQ(cu.MemFree(a), CUDA_ERROR_INVALID_VALUE);
}

HMR_TEST(sim_cuda_buffer_id_changes_on_reuse)
{
	CUdeviceptr a, b, c, d;
	unsigned long long id_a;

	setup(0);
	CU_OK(cu.MemAlloc(&a, 1 << 20));
	CU_OK(cu.MemAlloc(&b, 1 << 20));
	ASSERT_NE(buffer_id(a), buffer_id(b));
	id_a = buffer_id(a);
	CU_OK(cu.MemFree(a));
	/* First fit: a smaller allocation lands in the freed hole. */
	CU_OK(cu.MemAlloc(&c, 64 << 10));
	ASSERT_U64_EQ(c, a);
	ASSERT_NE(buffer_id(c), id_a);
	CU_OK(cu.MemFree(c));
	CU_OK(cu.MemAlloc(&d, 1 << 20));
	ASSERT_U64_EQ(d, a);
	ASSERT_NE(buffer_id(d), id_a);
	ASSERT_NE(buffer_id(d), buffer_id(b));
	CU_OK(cu.MemFree(b));
	CU_OK(cu.MemFree(d));
}

HMR_TEST(sim_cuda_pointer_attributes)
{
	CUpointer_attribute attrs[] = {
	        CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
	        CU_POINTER_ATTRIBUTE_BUFFER_ID,
	        CU_POINTER_ATTRIBUTE_IS_MANAGED,
	        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
	        CU_POINTER_ATTRIBUTE_RANGE_SIZE,
	        CU_POINTER_ATTRIBUTE_MAPPED,
	        CU_POINTER_ATTRIBUTE_CONTEXT,
	        CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
	        CU_POINTER_ATTRIBUTE_HOST_POINTER,
	        CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
	        CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
	};
	unsigned int type;
	int ordinal, managed, mapped, sync, ipc;
	unsigned long long id;
	CUdeviceptr start, devptr, base, m;
	size_t size, rsize;
	CUcontext ctx, actx;
	void *host, *hp;
	void *data[] = {&type,   &ordinal, &id,     &managed, &start, &size,
	                &mapped, &actx,    &devptr, &host,    &sync,  &ipc};
	unsigned n = sizeof(attrs) / sizeof(attrs[0]);
	CUdeviceptr p;
	char stack_buf[64];

	ctx = setup(0);
	CU_OK(cu.MemAlloc(&p, 10000));
	CU_OK(cu.PointerGetAttributes(n, attrs, data, p + 5000));
	ASSERT_EQ(type, CU_MEMORYTYPE_DEVICE);
	ASSERT_EQ(ordinal, 0);
	ASSERT_U64_EQ(id, buffer_id(p));
	ASSERT_EQ(managed, 0);
	ASSERT_U64_EQ(start, p);
	ASSERT_EQ(size, 10000);
	ASSERT_EQ(mapped, 1);
	ASSERT_PTR_EQ(actx, ctx);
	ASSERT_U64_EQ(devptr, p + 5000);
	ASSERT_PTR_EQ(host, NULL);
	ASSERT_EQ(ipc, 1);
	ASSERT_EQ(cu.PointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER,
	                                 p),
	          CUDA_ERROR_INVALID_VALUE);
	CU_OK(cu.MemGetAddressRange(&base, &rsize, p + 9999));
	ASSERT_U64_EQ(base, p);
	ASSERT_EQ(rsize, 10000);

	/* Memory CUDA does not know: zeros (ordinal -2) and success,
	 * singular fails. */
	CU_OK(cu.PointerGetAttributes(n, attrs, data,
	                              (CUdeviceptr)(uintptr_t)stack_buf));
	ASSERT_EQ(type, 0);
	ASSERT_EQ(ordinal, -2);
	ASSERT_U64_EQ(id, 0);
	ASSERT_EQ(mapped, 0);
	ASSERT_PTR_EQ(actx, NULL);
	ASSERT_EQ(cu.PointerGetAttribute(&type,
	                                 CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	                                 (CUdeviceptr)(uintptr_t)stack_buf),
	          CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(cu.MemGetAddressRange(&base, &rsize,
	                                (CUdeviceptr)(uintptr_t)stack_buf),
	          CUDA_ERROR_NOT_FOUND);

	/* Pinned host memory: HOST, device pointer = host pointer. */
	CU_OK(cu.MemAllocHost(&hp, 5000));
	CU_OK(cu.PointerGetAttributes(n, attrs, data,
	                              (CUdeviceptr)(uintptr_t)hp));
	ASSERT_EQ(type, CU_MEMORYTYPE_HOST);
	ASSERT_U64_EQ(devptr, (uintptr_t)hp);
	ASSERT_PTR_EQ(host, hp);
	CU_OK(cu.MemFreeHost(hp));

	/* Managed: DEVICE, IS_MANAGED, and the host can touch it. */
	CU_OK(cu.MemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL));
	*(volatile char *)(uintptr_t)m = 1;
	CU_OK(cu.PointerGetAttributes(n, attrs, data, m));
	ASSERT_EQ(type, CU_MEMORYTYPE_DEVICE);
	ASSERT_EQ(managed, 1);
	ASSERT_PTR_EQ(host, (void *)(uintptr_t)m);
	CU_OK(cu.MemFree(m));
	CU_OK(cu.MemFree(p));
}

HMR_TEST(sim_cuda_host_register)
{
	size_t len = 4 * page();
	unsigned int type = 0;
	CUdeviceptr p;
	void *buf;

	setup(0);
	ASSERT_EQ(posix_memalign(&buf, page(), len), 0);
	memset(buf, 0, len);
	CU_OK(cu.MemHostRegister(buf, len, 0));
	CU_OK(cu.PointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	                             (CUdeviceptr)(uintptr_t)buf + 10));
	ASSERT_EQ(type, CU_MEMORYTYPE_HOST);
	ASSERT_EQ(cu.MemHostRegister((char *)buf + page(), page(), 0),
	          CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	CU_OK(cu.MemAlloc(&p, 100));
	ASSERT_EQ(cu.MemHostRegister((void *)(uintptr_t)p, 100, 0),
	          CUDA_ERROR_INVALID_VALUE);
	CU_OK(cu.MemHostUnregister(buf));
	ASSERT_EQ(cu.MemHostUnregister(buf),
	          CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
	CU_OK(cu.MemFree(p));
	free(buf);
}

HMR_TEST(sim_cuda_dmabuf_maps_right_bytes)
{
	size_t pg = page(), len = 4 * pg + 100, span = 5 * pg;
	unsigned char *in = malloc(len);
	CUdeviceptr p;
	int fd = -1;

	setup(0);
	fill(in, len, 3);
	CU_OK(cu.MemAlloc(&p, len));
	CU_OK(cu.MemcpyHtoD(p, in, len));
	dmabuf_shows(p, span, in, len);

	/* A sub-range exports too, as an fd the CPU cannot map. */
	CU_OK(dmabuf(&fd, p + pg, 2 * pg, 0));
	ASSERT_TRUE(mmap(NULL, 2 * pg, PROT_READ, MAP_SHARED, fd, 0) ==
	            MAP_FAILED);
	close(fd);

	ASSERT_EQ(dmabuf(&fd, p + 100, pg, 0), CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(dmabuf(&fd, p, pg + 1, 0), CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(dmabuf(&fd, p, span + pg, 0), CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(
	        dmabuf(&fd, p, pg, CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE),
	        CUDA_ERROR_NOT_SUPPORTED);
	ASSERT_EQ(dmabuf(&fd, p, pg, 2), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cu.MemFree(p));
	free(in);
}

HMR_TEST(sim_cuda_dmabuf_pcie_mapping)
{
	CUdeviceptr p;
	int fd = -1;

	setenv("HMR_SIM_CUDA_PCIE_MAPPING", "1", 1);
	setup(0);
	CU_OK(cu.MemAlloc(&p, page()));
	CU_OK(dmabuf(&fd, p, page(),
	             CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE));
	close(fd);
	CU_OK(cu.MemFree(p));
}

HMR_TEST(sim_cuda_dmabuf_no_fd_leak)
{
	CUdeviceptr p;
	int before, fd;

	setup(0);
	CU_OK(cu.MemAlloc(&p, 1 << 20));
	before = hmr_test_open_fds();
	for (int i = 0; i < 1000; i++) {
		CU_OK(dmabuf(&fd, p, 1 << 20, 0));
		ASSERT_EQ(close(fd), 0);
	}
	CU_OK(cu.MemFree(p));
	for (int i = 0; i < 100; i++) {
		CU_OK(cu.MemAlloc(&p, 4096));
		CU_OK(cu.MemFree(p));
	}
	ASSERT_EQ(hmr_test_open_fds(), before - 1); /* p's memfd is gone too */
}

HMR_TEST(sim_cuda_dmabuf_switch_per_device)
{
	CUdeviceptr p0, p1;
	CUcontext ctx1;
	int v = -1, fd;

	setenv("HMR_SIM_CUDA_DMABUF", "1,0", 1);
	setup(0);
	CU_OK(cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
	                            1));
	ASSERT_EQ(v, 0);
	CU_OK(cu.MemAlloc(&p0, page()));
	CU_OK(cu.PrimaryCtxRetain(&ctx1, 1));
	CU_OK(cu.CtxSetCurrent(ctx1));
	CU_OK(cu.MemAlloc(&p1, page()));
	CU_OK(dmabuf(&fd, p0, page(), 0));
	close(fd);
	ASSERT_EQ(dmabuf(&fd, p1, page(), 0), CUDA_ERROR_NOT_SUPPORTED);
	CU_OK(cu.MemFree(p0));
	CU_OK(cu.MemFree(p1));
}

HMR_TEST(sim_cuda_vmm_segments)
{
	CUmemAllocationProp prop = {0};
	CUmemAccessDesc access = {{CU_MEM_LOCATION_TYPE_DEVICE, 0},
	                          CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	CUmemGenericAllocationHandle h[3], again;
	size_t gran = 0, rsize, len;
	CUdeviceptr va, base, start;
	unsigned char *in, *out, *map;
	int before, fd;

	setup(0);
	before = hmr_test_open_fds();
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	CU_OK(cu.MemGetAllocationGranularity(&gran, &prop,
	                                     CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	ASSERT_EQ(gran, 2 << 20);
	len = 3 * gran;
	in = malloc(len);
	out = malloc(len);
	fill(in, len, 11);
	CU_OK(cu.MemAddressReserve(&va, len, 0, 0, 0));
	for (int i = 0; i < 3; i++) {
		CU_OK(cu.MemCreate(&h[i], gran, &prop, 0));
		CU_OK(cu.MemMap(va + i * gran, gran, 0, h[i], 0));
	}
	/* No access yet: the device cannot copy into it. */
	ASSERT_EQ(cu.MemcpyHtoD(va, in, 1), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cu.MemSetAccess(va, len, &access, 1));
	CU_OK(cu.MemcpyHtoD(va, in, len)); /* spans three segments */
	CU_OK(cu.MemcpyDtoH(out, va, len));
	ASSERT_EQ(memcmp(in, out, len), 0);

	/* cuMemGetAddressRange gives the mapped segment, the pointer
	 * attributes the reservation (test_sim_cuda_driver.c). */
	CU_OK(cu.MemGetAddressRange(&base, &rsize, va + gran + gran / 2));
	ASSERT_U64_EQ(base, va + gran);
	ASSERT_EQ(rsize, gran);
	CU_OK(cu.PointerGetAttribute(&start,
	                             CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
	                             va + 2 * gran + 5));
	ASSERT_U64_EQ(start, va);
	ASSERT_NE(buffer_id(va), buffer_id(va + gran));

	/* dma-buf: one segment from its start maps its handle's bytes. */
	CU_OK(dmabuf(&fd, va + gran, gran, 0));
	map = mmap(NULL, gran, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map, in + gran, gran), 0);
	munmap(map, gran);
	close(fd);

	CU_OK(cu.MemRetainAllocationHandle(&again,
	                                   (void *)(uintptr_t)(va + 1)));
	ASSERT_U64_EQ(again, h[0]);
	CU_OK(cu.MemRelease(again));
	CU_OK(cu.MemExportToShareableHandle(
	        &fd, h[2], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	close(fd);

	/* Unmap must cover whole segments; release frees after unmap. */
	ASSERT_EQ(cu.MemUnmap(va, gran / 2), CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(cu.MemAddressFree(va, len), CUDA_ERROR_INVALID_VALUE);
	for (int i = 0; i < 3; i++)
		CU_OK(cu.MemRelease(h[i]));
	CU_OK(cu.MemcpyDtoH(out, va, len)); /* mappings keep the memory */
	ASSERT_EQ(memcmp(in, out, len), 0);
	CU_OK(cu.MemUnmap(va, len));
	ASSERT_EQ(cu.MemRelease(h[0]), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cu.MemAddressFree(va, len));
	ASSERT_EQ(hmr_test_open_fds(), before);
	free(in);
	free(out);
}

HMR_TEST(sim_cuda_error_injection)
{
	PFN_cuMemGetHandleForAddressRange_v11070 get_handle;
	unsigned long (*calls)(const char *);
	CUdriverProcAddressQueryResult status;
	CUdeviceptr p;
	int fd;

	setenv("HMR_SIM_CUDA_FAIL",
	       "cuMemAlloc=2:2,cuMemGetHandleForAddressRange="
	       "CUDA_ERROR_NOT_PERMITTED",
	       1);
	setup(0);
	ASSERT_EQ(cu.MemAlloc(&p, 4096), CUDA_ERROR_OUT_OF_MEMORY);
	ASSERT_EQ(cu.MemAlloc(&p, 4096), CUDA_ERROR_OUT_OF_MEMORY);
	CU_OK(cu.MemAlloc(&p, 4096));
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(dmabuf(&fd, p, 4096, 0), CUDA_ERROR_NOT_PERMITTED);
	CU_OK(cu.GetProcAddress("cuMemGetHandleForAddressRange",
	                        (void **)&get_handle, 13000, 0, &status));
	ASSERT_EQ(get_handle(&fd, p, 4096, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
	                     0),
	          CUDA_ERROR_NOT_PERMITTED);
	CU_OK(cu.MemFree(p));

	/* The test hook counts calls by base name, whatever the path. */
	*(void **)&calls = sym("hmr_sim_cuda_calls");
	ASSERT_EQ(calls("cuMemAlloc"), 3);
	ASSERT_EQ(calls("cuMemGetHandleForAddressRange"), 4);
	ASSERT_EQ(calls("cuNoSuchThing"), 0);
}

HMR_TEST(sim_cuda_proc_address)
{
	CUdriverProcAddressQueryResult status;
	CUresult (*v1_alloc)(unsigned int *, unsigned int);
	unsigned int p32;
	void *fn;

	load_lib("HMR_SIM_CUDA_LIB");
	ASSERT_TRUE(cu.GetProcAddress != NULL);
	/* Works before cuInit, like the driver's. */
	CU_OK(cu.GetProcAddress("cuInit", &fn, 13000, 0, &status));
	ASSERT_PTR_EQ(fn, (void *)cu.Init);
	CU_OK(cu.GetProcAddress("cuMemAlloc", &fn, 13000, 0, &status));
	ASSERT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
	ASSERT_PTR_EQ(fn, sym("cuMemAlloc_v2"));
	CU_OK(cu.GetProcAddress("cuMemAlloc", &fn, 3020, 0, &status));
	ASSERT_PTR_EQ(fn, sym("cuMemAlloc_v2"));
	CU_OK(cu.GetProcAddress("cuMemAlloc", &fn, 3010, 0, &status));
	ASSERT_PTR_EQ(fn, sym("cuMemAlloc"));
	CU_OK(cu.GetProcAddress("cuMemHostRegister", &fn, 12000, 0, &status));
	ASSERT_PTR_EQ(fn, sym("cuMemHostRegister_v2"));
	CU_OK(cu.GetProcAddress("cuGetProcAddress", &fn, 12000, 0, &status));
	ASSERT_PTR_EQ(fn, (void *)cu.GetProcAddress);
	CU_OK(cu.GetProcAddress("cuMemcpyHtoD", &fn, 13000,
	                        CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	                        &status));
	ASSERT_PTR_EQ(fn, sym("cuMemcpyHtoD_v2_ptds"));

	/* Unknown: success, NULL, SYMBOL_NOT_FOUND. */
	fn = &status;
	CU_OK(cu.GetProcAddress("cuNoSuchThing", &fn, 13000, 0, &status));
	ASSERT_PTR_EQ(fn, NULL);
	ASSERT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	CU_OK(cu.GetProcAddress("cuMemGetHandleForAddressRange", &fn, 11040, 0,
	                        &status));
	ASSERT_PTR_EQ(fn, NULL);
	ASSERT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
	ASSERT_EQ(cu.GetProcAddressV1("cuNoSuchThing", &fn, 13000, 0),
	          CUDA_ERROR_NOT_FOUND);

	/* The plain names are the v1 ABI, which the simulator refuses. */
	*(void **)&v1_alloc = sym("cuMemAlloc");
	ASSERT_EQ(v1_alloc(&p32, 4096), CUDA_ERROR_NOT_SUPPORTED);
}

HMR_TEST(sim_cuda_older_driver_version)
{
	CUdriverProcAddressQueryResult status;
	void *fn;
	int v;

	setenv("HMR_SIM_CUDA_DRIVER_VERSION", "11040", 1);
	load_lib("HMR_SIM_CUDA_LIB");
	CU_OK(cu.Init(0));
	CU_OK(cu.DriverGetVersion(&v));
	ASSERT_EQ(v, 11040);
	CU_OK(cu.GetProcAddress("cuMemGetHandleForAddressRange", &fn, 13000, 0,
	                        &status));
	ASSERT_PTR_EQ(fn, NULL);
	ASSERT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
	ASSERT_EQ(cu.DeviceGetAttribute(
	                  &v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0),
	          CUDA_ERROR_INVALID_VALUE);
}

HMR_TEST(sim_cuda_old_variant)
{
	void *fn;
	int v;

	load_lib("HMR_SIM_CUDA11_LIB");
	ASSERT_PTR_EQ(cu.GetProcAddress, NULL);
	ASSERT_PTR_EQ(cu.MemGetHandleForAddressRange, NULL);
	CU_OK(cu.DriverGetVersion(&v));
	ASSERT_EQ(v, 11040);
	CU_OK(cu.GetProcAddressV1("cuMemAlloc", &fn, 11040, 0));
	ASSERT_PTR_EQ(fn, sym("cuMemAlloc_v2"));
	ASSERT_EQ(cu.GetProcAddressV1("cuMemGetHandleForAddressRange", &fn,
	                              11070, 0),
	          CUDA_ERROR_NOT_FOUND);
	ASSERT_PTR_EQ(fn, NULL);
}

HMR_TEST(sim_cuda_ipc)
{
	CUipcMemHandle handle;
	unsigned char in[5000];
	CUdeviceptr p, q;
	int status;
	pid_t pid;

	setup(0);
	fill(in, sizeof(in), 5);
	CU_OK(cu.MemAlloc(&p, sizeof(in)));
	CU_OK(cu.MemcpyHtoD(p, in, sizeof(in)));
	ASSERT_EQ(cu.IpcGetMemHandle(&handle, p + 1), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cu.IpcGetMemHandle(&handle, p));
	ASSERT_EQ(cu.IpcOpenMemHandle(&q, handle, 1),
	          CUDA_ERROR_INVALID_CONTEXT);
	pid = fork();
	if (pid == 0) {
		unsigned char out[sizeof(in)];
		CUdeviceptr r;
		int bad = 0;

		bad |= cu.IpcOpenMemHandle(&q, handle, 1) != CUDA_SUCCESS;
		bad |= cu.IpcOpenMemHandle(&r, handle, 1) != CUDA_SUCCESS;
		bad |= q != r || q == p;
		bad |= cu.MemcpyDtoH(out, q, sizeof(out)) != CUDA_SUCCESS;
		bad |= memcmp(in, out, sizeof(in)) != 0;
		bad |= cu.IpcCloseMemHandle(q) != CUDA_SUCCESS;
		bad |= cu.IpcCloseMemHandle(q) != CUDA_SUCCESS;
		bad |= cu.IpcCloseMemHandle(q) != CUDA_ERROR_INVALID_VALUE;
		_exit(bad);
	}
	ASSERT_GT(pid, 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	CU_OK(cu.MemFree(p));
}

HMR_TEST(sim_cuda_context_release_frees_memory)
{
	CUcontext ctx;
	CUdeviceptr p, base;

	ctx = setup(0);
	CU_OK(cu.MemAlloc(&p, 4096));
	CU_OK(cu.PrimaryCtxRelease(0));
	/* The current context is gone: calls that need one fail. */
	ASSERT_EQ(cu.MemGetAddressRange(&base, NULL, p),
	          CUDA_ERROR_INVALID_CONTEXT);
	ASSERT_EQ(cu.MemAlloc(&p, 4096), CUDA_ERROR_INVALID_CONTEXT);
	CU_OK(cu.PrimaryCtxRetain(&ctx, 0));
	CU_OK(cu.CtxSetCurrent(ctx));
	ASSERT_EQ(cu.MemGetAddressRange(&base, NULL, p), CUDA_ERROR_NOT_FOUND);
	CU_OK(cu.MemAlloc(&p, 4096));
	CU_OK(cu.MemFree(p));
}

static void *thread_allocs(void *arg)
{
	CUcontext ctx = arg;
	unsigned char v = 1, back = 0;
	CUdeviceptr p;

	if (cu.CtxSetCurrent(ctx) != CUDA_SUCCESS)
		return "set current";
	for (int i = 0; i < 200; i++) {
		if (cu.MemAlloc(&p, (size_t)(i % 7 + 1) * 4096) != CUDA_SUCCESS)
			return "alloc";
		if (cu.MemcpyHtoD(p, &v, 1) || cu.MemcpyDtoH(&back, p, 1) ||
		    back != 1)
			return "copy";
		if (cu.MemFree(p) != CUDA_SUCCESS)
			return "free";
	}
	return NULL;
}

HMR_TEST(sim_cuda_threads)
{
	pthread_t t[8];
	CUcontext ctx = setup(0);

	for (int i = 0; i < 8; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, thread_allocs, ctx), 0);
	for (int i = 0; i < 8; i++) {
		void *err;

		ASSERT_EQ(pthread_join(t[i], &err), 0);
		if (err)
			HMR_FAIL("thread %d: %s", i, (char *)err);
	}
}

HMR_TEST_MAIN()
