/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_rocr_mem.c: the ROCr simulator's dma-buf, IPC and test hooks. */
#include "test_sim_rocr.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* The memfd behind a dma-buf fd carries the allocation id in its name. */
static unsigned long long fd_buffer_id(int fd)
{
	char path[64], link[128];
	unsigned long long id = 0;
	const char *s;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	ASSERT_GT(n, 0);
	link[n] = '\0';
	s = strstr(link, ":buf");
	ASSERT_TRUE(s != NULL);
	ASSERT_EQ(sscanf(s, ":buf%llu", &id), 1);
	return id;
}

HMR_TEST(sim_rocr_dmabuf_offsets_and_bytes)
{
	size_t pg = page(), len = 4 * pg + 100;
	unsigned char *in = malloc(len), *map;
	uint64_t off = 1;
	int fd = -1;
	char *p;
	void *host;

	setup();
	fill(in, len, 3);
	p = gpu_alloc(0, len);
	HSA_OK(hsa.memory_copy(p, in, len));
	/* From the base: offset 0, the fd's bytes are the allocation's. */
	HSA_OK(hsa.export_dmabuf(p, len, &fd, &off));
	ASSERT_U64_EQ(off, 0);
	ASSERT_U64_EQ(fd_buffer_id(fd), hsa.buffer_id(p));
	map = mmap(NULL, 5 * pg, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map, in, len), 0);
	munmap(map, 5 * pg);
	HSA_OK(hsa.close_dmabuf(fd));

	/* Interior pointer: the same object, ptr at the reported offset. */
	HSA_OK(hsa.export_dmabuf(p + pg + 17, 2 * pg, &fd, &off));
	ASSERT_U64_EQ(off, pg + 17);
	map = mmap(NULL, 4 * pg, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map + off, in + pg + 17, 2 * pg), 0);
	munmap(map, 4 * pg);
	HSA_OK(hsa.close_dmabuf(fd));
	ASSERT_EQ(hsa.close_dmabuf(fd), HSA_STATUS_ERROR_RESOURCE_FREE);

	/* Up to the page-rounded end, not one byte more; failures leave
	 * the out-parameters alone. */
	fd = -7;
	off = 7;
	HSA_OK(hsa.export_dmabuf(p + 5 * pg - 1, 1, &fd, &off));
	HSA_OK(hsa.close_dmabuf(fd));
	fd = -7;
	off = 7;
	ASSERT_EQ(hsa.export_dmabuf(p + pg, 4 * pg + 1, &fd, &off),
	          HSA_STATUS_ERROR_INVALID_ALLOCATION);
	ASSERT_EQ(hsa.export_dmabuf(in, 16, &fd, &off),
	          HSA_STATUS_ERROR_INVALID_ALLOCATION);
	ASSERT_EQ(fd, -7);
	ASSERT_U64_EQ(off, 7);
	ASSERT_EQ(hsa.export_dmabuf(p, 0, &fd, &off),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.export_dmabuf(p, 16, NULL, &off),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	/* System memory, even ROCr's own, is not exported. */
	HSA_OK(hsa.pool_allocate(sys.cpu_pool, pg, 0, &host));
	ASSERT_EQ(hsa.export_dmabuf(host, pg, &fd, &off),
	          HSA_STATUS_ERROR_INVALID_AGENT);
	HSA_OK(hsa.pool_free(host));
	HSA_OK(hsa.pool_free(p));
	free(in);
}

HMR_TEST(sim_rocr_dmabuf_outlives_free)
{
	unsigned char in[4096], *map;
	uint64_t off;
	void *p, *q;
	int fd;

	setup();
	fill(in, sizeof(in), 21);
	p = gpu_alloc(0, sizeof(in));
	HSA_OK(hsa.memory_copy(p, in, sizeof(in)));
	HSA_OK(hsa.export_dmabuf(p, sizeof(in), &fd, &off));
	HSA_OK(hsa.pool_free(p));
	/* The address is reused by a new allocation with new bytes ... */
	q = gpu_alloc(0, sizeof(in));
	ASSERT_PTR_EQ(q, p);
	HSA_OK(hsa.memory_copy(q, in + 1, sizeof(in) - 1));
	/* ... while the exported fd still holds the old memory. */
	map = mmap(NULL, sizeof(in), PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map, in, sizeof(in)), 0);
	ASSERT_NE(fd_buffer_id(fd), hsa.buffer_id(q));
	munmap(map, sizeof(in));
	HSA_OK(hsa.close_dmabuf(fd));
	HSA_OK(hsa.pool_free(q));
}

HMR_TEST(sim_rocr_dmabuf_no_fd_leak)
{
	int before, fd;
	uint64_t off;
	void *p;

	setup();
	p = gpu_alloc(1, 1 << 20);
	before = hmr_test_open_fds();
	for (int i = 0; i < 10000; i++) {
		HSA_OK(hsa.export_dmabuf((char *)p + (i % 256) * 4096, 4096,
		                         &fd, &off));
		HSA_OK(hsa.close_dmabuf(fd));
	}
	ASSERT_EQ(hmr_test_open_fds(), before);
	HSA_OK(hsa.pool_free(p));
	for (int i = 0; i < 100; i++)
		HSA_OK(hsa.pool_free(gpu_alloc(0, 4096)));
	ASSERT_EQ(hmr_test_open_fds(), before - 1); /* p's memfd is gone too */
}

HMR_TEST(sim_rocr_dmabuf_switched_off)
{
	bool dmabuf = true;
	uint64_t off;
	void *p;
	int fd;

	setenv("HMR_SIM_ROCR_DMABUF", "0", 1);
	setup();
	HSA_OK(hsa.system_get_info(DMABUF_SUPPORTED, &dmabuf));
	ASSERT_TRUE(!dmabuf);
	p = gpu_alloc(0, 4096);
	ASSERT_EQ(hsa.export_dmabuf(p, 4096, &fd, &off), HSA_STATUS_ERROR);
	HSA_OK(hsa.pool_free(p));
}

HMR_TEST(sim_rocr_rocm52_variant_lacks_dmabuf)
{
	const char *build = NULL;
	bool dmabuf;
	void *p;

	load_lib("HMR_SIM_ROCR52_LIB");
	ASSERT_PTR_EQ(hsa.export_dmabuf, NULL);
	ASSERT_PTR_EQ(hsa.close_dmabuf, NULL);
	HSA_OK(hsa.init());
	memset(&sys, 0, sizeof(sys));
	HSA_OK(hsa.iterate_agents(collect_agent, NULL));
	ASSERT_EQ(sys.ngpu, 2);
	/* 5.2.3 does not know the attribute, nor any allocation flag. */
	ASSERT_EQ(hsa.system_get_info(DMABUF_SUPPORTED, &dmabuf),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	HSA_OK(hsa.system_get_info(HSA_AMD_SYSTEM_INFO_BUILD_VERSION, &build));
	ASSERT_TRUE(strstr(build, "5.2.3") != NULL);
	ASSERT_EQ(hsa.pool_allocate(sys.gpu_pool[0], 64, 1, &p),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	HSA_OK(hsa.pool_allocate(sys.gpu_pool[0], 64, 0, &p));
	ASSERT_EQ(ptr_info(p).type, HSA_EXT_POINTER_TYPE_HSA);
	HSA_OK(hsa.pool_free(p));
	HSA_OK(hsa.shut_down());
}

/* A child process reads the byte at p: how did it end? */
static int child_touch(const void *p)
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
		_exit(*(const volatile unsigned char *)p == 0x5a ? 0 : 3);
	}
	ASSERT_GT(pid, 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	return status;
}

HMR_TEST(sim_rocr_device_memory_faults_on_cpu_read)
{
	unsigned char v = 0x5a;
	void *dev, *host;
	int status;

	setup();
	dev = gpu_alloc(0, 100);
	HSA_OK(hsa.memory_copy(dev, &v, 1));
	status = child_touch(dev);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(WTERMSIG(status), SIGSEGV);
	/* CPU pool memory is ROCr memory the CPU can read. */
	HSA_OK(hsa.pool_allocate(sys.cpu_pool, 100, 0, &host));
	HSA_OK(hsa.memory_copy(host, dev, 1));
	status = child_touch(host);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	HSA_OK(hsa.pool_free(host));
	HSA_OK(hsa.pool_free(dev));
}

HMR_TEST(sim_rocr_host_accessible_device_memory)
{
	unsigned char v = 0x5a, back = 0;
	unsigned char *dev;
	int status;

	setenv("HMR_SIM_ROCR_HOST_ACCESSIBLE", "1", 1);
	setup();
	dev = gpu_alloc(0, 8192);
	HSA_OK(hsa.memory_copy(dev + 4096, &v, 1));
	ASSERT_EQ(*(volatile unsigned char *)(dev + 4096), 0x5a);
	dev[0] = 0x5a;
	HSA_OK(hsa.memory_copy(&back, dev, 1));
	ASSERT_EQ(back, 0x5a);
	status = child_touch(dev);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	HSA_OK(hsa.pool_free(dev));
}

/* In the child: attach, check, write back, detach.  0 if all went well. */
static int ipc_child(const hsa_amd_ipc_memory_t *h, size_t len,
                     const unsigned char *in, void *exporter_ptr)
{
	unsigned char out[5000];
	hsa_amd_pointer_info_t info = {.size = sizeof(info)};
	unsigned char mark = 0xee;
	void *q = NULL, *r = NULL;
	int bad = 0;

	bad |= hsa.ipc_attach(h, len, 0, NULL, &q) != HSA_STATUS_SUCCESS;
	bad |= hsa.ipc_attach(h, len, 1, &sys.gpu[0], &r) != HSA_STATUS_SUCCESS;
	bad |= q == NULL || q == r || q == exporter_ptr;
	bad |= hsa.memory_copy(out, q, len) != HSA_STATUS_SUCCESS;
	bad |= memcmp(in, out, len) != 0;
	bad |= hsa.pointer_info(q, &info, NULL, NULL, NULL) != 0;
	bad |= info.type != HSA_EXT_POINTER_TYPE_IPC;
	bad |= info.agentBaseAddress != q || info.sizeInBytes != len;
	bad |= info.agentOwner.handle != sys.gpu[0].handle;
	bad |= hsa.memory_copy(r, &mark, 1) != HSA_STATUS_SUCCESS;
	bad |= hsa.pool_free(q) != HSA_STATUS_ERROR_INVALID_ARGUMENT;
	bad |= hsa.ipc_detach(q) != HSA_STATUS_SUCCESS;
	bad |= hsa.ipc_detach(q) != HSA_STATUS_ERROR_INVALID_ARGUMENT;
	bad |= hsa.ipc_detach(r) != HSA_STATUS_SUCCESS;
	return bad;
}

HMR_TEST(sim_rocr_ipc_across_processes)
{
	unsigned char in[5000], back = 0;
	hsa_amd_ipc_memory_t h;
	int status;
	pid_t pid;
	void *p;

	setup();
	fill(in, sizeof(in), 5);
	p = gpu_alloc(0, sizeof(in));
	HSA_OK(hsa.memory_copy(p, in, sizeof(in)));
	/* Only the whole allocation, from its first byte. */
	ASSERT_EQ(hsa.ipc_create((char *)p + 1, sizeof(in) - 1, &h),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.ipc_create(p, 100, &h),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	HSA_OK(hsa.ipc_create(p, 8192, &h)); /* rounded to 4 KiB is fine */
	HSA_OK(hsa.ipc_create(p, sizeof(in), &h));
	pid = fork();
	if (pid == 0)
		_exit(ipc_child(&h, sizeof(in), in, p));
	ASSERT_GT(pid, 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	/* The child's write is in the exporter's memory. */
	HSA_OK(hsa.memory_copy(&back, p, 1));
	ASSERT_EQ(back, 0xee);
	HSA_OK(hsa.pool_free(p));
}

HMR_TEST(sim_rocr_ipc_handle_rules)
{
	hsa_amd_ipc_memory_t h, junk;
	void *p, *q, *host;
	int before;

	setup();
	before = hmr_test_open_fds();
	p = gpu_alloc(1, 4096);
	HSA_OK(hsa.ipc_create(p, 4096, &h));
	/* Attaching in the exporting process maps it at a new address. */
	HSA_OK(hsa.ipc_attach(&h, 4096, 0, NULL, &q));
	ASSERT_NE((uintptr_t)q, (uintptr_t)p);
	ASSERT_U64_EQ(ptr_info(q).agentOwner.handle, sys.gpu[1].handle);
	ASSERT_EQ(hsa.ipc_create(q, 4096, &junk),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.ipc_attach(&h, 100, 0, NULL, &q),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.ipc_attach(&h, 4096, 1, (hsa_agent_t[]){{12345}}, &q),
	          HSA_STATUS_ERROR_INVALID_AGENT);
	HSA_OK(hsa.ipc_detach(q));
	ASSERT_EQ(hsa.ipc_detach(p), HSA_STATUS_ERROR_INVALID_ARGUMENT);
	/* A handle dies with its allocation, even if the fd number lives. */
	HSA_OK(hsa.pool_free(p));
	p = gpu_alloc(1, 4096);
	ASSERT_EQ(hsa.ipc_attach(&h, 4096, 0, NULL, &q),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	memset(&junk, 0x11, sizeof(junk));
	ASSERT_EQ(hsa.ipc_attach(&junk, 4096, 0, NULL, &q),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	/* System memory can be shared too. */
	HSA_OK(hsa.pool_allocate(sys.cpu_pool, 100, 0, &host));
	memset(host, 0x42, 100);
	HSA_OK(hsa.ipc_create(host, 100, &h));
	HSA_OK(hsa.ipc_attach(&h, 100, 0, NULL, &q));
	ASSERT_EQ(((unsigned char *)q)[99], 0x42);
	ASSERT_U64_EQ(ptr_info(q).agentOwner.handle, sys.cpu.handle);
	HSA_OK(hsa.ipc_detach(q));
	HSA_OK(hsa.pool_free(host));
	HSA_OK(hsa.pool_free(p));
	ASSERT_EQ(hmr_test_open_fds(), before);
}

/* What the deallocation callbacks saw. */
static struct {
	int calls;
	void *ptr[4];
	void *data[4];
	int type_inside;   /* pointer type of the freed memory, in callback */
	int reused_inside; /* an allocation in callback got its address */
	void *base;
} seen;

static void on_free(void *ptr, void *user_data)
{
	hsa_amd_pointer_info_t info = {.size = sizeof(info)};
	void *q = NULL;

	if (seen.calls < 4) {
		seen.ptr[seen.calls] = ptr;
		seen.data[seen.calls] = user_data;
	}
	seen.calls++;
	/* The callback may call the runtime; the address is still held. */
	if (hsa.pointer_info(ptr, &info, NULL, NULL, NULL) == 0)
		seen.type_inside = (int)info.type;
	if (hsa.pool_allocate(sys.gpu_pool[0], 4096, 0, &q) == 0) {
		seen.reused_inside |= q == seen.base;
		hsa.pool_free(q);
	}
}

static void on_free_other(void *ptr, void *user_data)
{
	(void)ptr;
	(void)user_data;
	seen.calls += 100;
}

HMR_TEST(sim_rocr_deallocation_callbacks)
{
	hsa_amd_ipc_memory_t h;
	char *p, *q;
	void *imp;
	int tag1, tag2;

	setup();
	p = gpu_alloc(0, 3 * 4096);
	seen.base = p;
	HSA_OK(hsa.reg_dealloc(p, on_free, &tag1));
	HSA_OK(hsa.reg_dealloc(p + 5000, on_free, &tag2)); /* interior */
	HSA_OK(hsa.reg_dealloc(p, on_free_other, NULL));
	HSA_OK(hsa.dereg_dealloc(p, on_free_other));
	ASSERT_EQ(hsa.dereg_dealloc(p, on_free_other),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.dereg_dealloc(p + 1, on_free),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	HSA_OK(hsa.pool_free(p));
	ASSERT_EQ(seen.calls, 2);
	ASSERT_PTR_EQ(seen.ptr[0], p); /* in registration order */
	ASSERT_PTR_EQ(seen.data[0], &tag1);
	ASSERT_PTR_EQ(seen.ptr[1], p + 5000);
	ASSERT_PTR_EQ(seen.data[1], &tag2);
	ASSERT_EQ(seen.type_inside, HSA_EXT_POINTER_TYPE_UNKNOWN);
	ASSERT_EQ(seen.reused_inside, 0);

	/* After the callbacks, the address is free again; and callbacks
	 * ran once: they are deregistered. */
	q = gpu_alloc(0, 4096);
	ASSERT_PTR_EQ(q, p);
	HSA_OK(hsa.pool_free(q));
	ASSERT_EQ(seen.calls, 2);

	/* Only pool allocations can be watched. */
	ASSERT_EQ(hsa.reg_dealloc(&h, on_free, NULL),
	          HSA_STATUS_ERROR_INVALID_ALLOCATION);
	ASSERT_EQ(hsa.reg_dealloc(p, NULL, NULL),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	q = gpu_alloc(0, 4096);
	HSA_OK(hsa.ipc_create(q, 4096, &h));
	HSA_OK(hsa.ipc_attach(&h, 4096, 0, NULL, &imp));
	ASSERT_EQ(hsa.reg_dealloc(imp, on_free, NULL),
	          HSA_STATUS_ERROR_INVALID_ALLOCATION);
	HSA_OK(hsa.ipc_detach(imp));
	HSA_OK(hsa.pool_free(q));
}

HMR_TEST(sim_rocr_failure_injection_nth_call)
{
	void *agent_ptr, *p[4];
	const char *s;
	int buf[4];

	setenv("HMR_SIM_ROCR_FAIL",
	       "hsa_amd_memory_pool_allocate@2=HSA_STATUS_ERROR_OUT_OF_"
	       "RESOURCES:1,hsa_amd_memory_lock,hsa_init@1=4096,"
	       "hsa_status_string=0x1001",
	       1);
	setup();
	/* The first two calls pass, the third fails, then all pass. */
	for (int i = 0; i < 4; i++) {
		hsa_status_t rc =
		        hsa.pool_allocate(sys.gpu_pool[0], 4096, 0, &p[i]);

		ASSERT_EQ(rc, i == 2 ? HSA_STATUS_ERROR_OUT_OF_RESOURCES
		                     : HSA_STATUS_SUCCESS);
	}
	/* No status: HSA_STATUS_ERROR, on every call. */
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(hsa.lock(buf, sizeof(buf), NULL, 0, &agent_ptr),
		          HSA_STATUS_ERROR);
	ASSERT_EQ(hsa.init(), HSA_STATUS_ERROR); /* second call: 4096 */
	ASSERT_EQ(hsa.status_string(HSA_STATUS_SUCCESS, &s),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.calls("hsa_amd_memory_pool_allocate"), 4);
	ASSERT_EQ(hsa.calls("hsa_amd_memory_lock"), 3);
	ASSERT_EQ(hsa.calls("hsa_init"), 2);
	HSA_OK(hsa.pool_free(p[0]));
	HSA_OK(hsa.pool_free(p[1]));
	HSA_OK(hsa.pool_free(p[3]));
}

HMR_TEST(sim_rocr_call_counters)
{
	hsa_amd_pointer_info_t info = {.size = sizeof(info)};
	hsa_signal_t sig;
	unsigned long before;

	setup();
	ASSERT_EQ(hsa.calls("hsa_init"), 1);
	before = hsa.calls("hsa_amd_pointer_info");
	HSA_OK(hsa.pointer_info(&info, &info, NULL, NULL, NULL));
	ASSERT_EQ(hsa.calls("hsa_amd_pointer_info"), before + 1);
	/* Refused calls count too. */
	ASSERT_EQ(hsa.pointer_info(NULL, &info, NULL, NULL, NULL),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.calls("hsa_amd_pointer_info"), before + 2);
	/* Calls without a status count as well. */
	HSA_OK(hsa.signal_create(3, 0, NULL, &sig));
	ASSERT_EQ(hsa.signal_load(sig), 3);
	ASSERT_EQ(hsa.calls("hsa_signal_load_scacquire"), 1);
	HSA_OK(hsa.signal_destroy(sig));
	ASSERT_EQ(hsa.calls("hsa_memory_copy"), 0);
	ASSERT_EQ(hsa.calls("no_such_call"), 0);
	ASSERT_EQ(hsa.calls(NULL), 0);
}

HMR_TEST(sim_rocr_shutdown_releases_everything)
{
	hsa_amd_pointer_info_t info = {.size = sizeof(info)};
	void *dev, *host, *agent_ptr;
	char buf[64];
	int before;

	load_lib("HMR_SIM_ROCR_LIB");
	before = hmr_test_open_fds();
	setup();
	dev = gpu_alloc(0, 1 << 20);
	HSA_OK(hsa.pool_allocate(sys.cpu_pool, 4096, 0, &host));
	HSA_OK(hsa.lock(buf, sizeof(buf), NULL, 0, &agent_ptr));
	ASSERT_EQ(hmr_test_open_fds(), before + 2);
	HSA_OK(hsa.shut_down());
	ASSERT_EQ(hmr_test_open_fds(), before);
	/* A new runtime knows none of it. */
	HSA_OK(hsa.init());
	HSA_OK(hsa.pointer_info(buf, &info, NULL, NULL, NULL));
	ASSERT_EQ(info.type, HSA_EXT_POINTER_TYPE_UNKNOWN);
	HSA_OK(hsa.pointer_info(host, &info, NULL, NULL, NULL));
	ASSERT_EQ(info.type, HSA_EXT_POINTER_TYPE_UNKNOWN);
	(void)dev;
	HSA_OK(hsa.shut_down());
}

static void *thread_allocs(void *arg)
{
	unsigned char v = (unsigned char)(uintptr_t)arg, back = 0;
	hsa_signal_t sig;
	uint64_t off;
	void *p;
	int fd;

	if (hsa.signal_create(0, 0, NULL, &sig))
		return "signal";
	for (int i = 0; i < 200; i++) {
		size_t len = (size_t)(i % 7 + 1) * 4096;

		if (hsa.pool_allocate(sys.gpu_pool[i % sys.ngpu], len, 0, &p))
			return "alloc";
		hsa.signal_store(sig, 1);
		if (hsa.async_copy(p, sys.gpu[0], &v, sys.cpu, 1, 0, NULL,
		                   sig) ||
		    hsa.signal_wait(sig, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
		                    HSA_WAIT_STATE_BLOCKED) != 0 ||
		    hsa.memory_copy(&back, p, 1) || back != v)
			return "copy";
		if (hsa.export_dmabuf(p, len, &fd, &off) ||
		    hsa.close_dmabuf(fd))
			return "dmabuf";
		if (hsa.pool_free(p))
			return "free";
	}
	hsa.signal_destroy(sig);
	return NULL;
}

HMR_TEST(sim_rocr_threads)
{
	pthread_t t[8];

	setup();
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, thread_allocs,
		                         (void *)(uintptr_t)(i + 1)),
		          0);
	for (int i = 0; i < 8; i++) {
		void *err;

		ASSERT_EQ(pthread_join(t[i], &err), 0);
		if (err)
			HMR_FAIL("thread %d: %s", i, (char *)err);
	}
}
