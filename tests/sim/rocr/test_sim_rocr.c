/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_rocr.c: the ROCr simulator, loaded by path like a runtime. */
#include "test_sim_rocr.h"

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <unistd.h>

/*
 * The runtime's life, agents, pools, allocations, pointer queries, locks,
 * copies and signals; test_sim_rocr_mem.c has dma-buf, IPC, faults,
 * callbacks and failure injection.  One binary, one CTest entry per case.
 */

#define SIM_LOAD(field, symbol) *(void **)&hsa.field = sym(#symbol);

struct sim_hsa hsa;
struct sim_sys sys;

static void *sym(const char *name)
{
	void *p = dlsym(hsa.dl, name);

	if (!p)
		HMR_FAIL("simulator lacks %s", name);
	return p;
}

void load_lib(const char *var)
{
	const char *path = getenv(var);

	if (!path || !*path)
		HMR_SKIP("%s is not set", var);
	hsa.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!hsa.dl)
		HMR_FAIL("dlopen %s: %s", path, dlerror());
	SIM_SYMS(SIM_LOAD)
	*(void **)&hsa.export_dmabuf =
	        dlsym(hsa.dl, "hsa_amd_portable_export_dmabuf");
	*(void **)&hsa.close_dmabuf =
	        dlsym(hsa.dl, "hsa_amd_portable_close_dmabuf");
	*(void **)&hsa.calls = sym("hmr_sim_rocr_calls");
	*(void **)&hsa.buffer_id = sym("hmr_sim_rocr_buffer_id");
}

static hsa_status_t first_pool(hsa_amd_memory_pool_t pool, void *data)
{
	*(hsa_amd_memory_pool_t *)data = pool;
	return HSA_STATUS_INFO_BREAK;
}

hsa_status_t collect_agent(hsa_agent_t agent, void *data)
{
	hsa_device_type_t type;
	hsa_amd_memory_pool_t pool = {0};

	(void)data;
	if (hsa.agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) ||
	    hsa.iterate_pools(agent, first_pool, &pool) !=
	            HSA_STATUS_INFO_BREAK)
		return HSA_STATUS_ERROR;
	if (type == HSA_DEVICE_TYPE_CPU) {
		sys.cpu = agent;
		sys.cpu_pool = pool;
	} else if (sys.ngpu < 16) {
		sys.gpu_pool[sys.ngpu] = pool;
		sys.gpu[sys.ngpu++] = agent;
	}
	return HSA_STATUS_SUCCESS;
}

/* Loads the 5.6 simulator, initializes it and finds agents and pools. */
void setup(void)
{
	load_lib("HMR_SIM_ROCR_LIB");
	HSA_OK(hsa.init());
	memset(&sys, 0, sizeof(sys));
	HSA_OK(hsa.iterate_agents(collect_agent, NULL));
	ASSERT_NE(sys.cpu.handle, 0);
	ASSERT_GT(sys.ngpu, 0);
}

size_t page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

void fill(unsigned char *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 31 + seed);
}

void *gpu_alloc(int gpu, size_t size)
{
	void *p = NULL;

	HSA_OK(hsa.pool_allocate(sys.gpu_pool[gpu], size, 0, &p));
	ASSERT_TRUE(p != NULL);
	return p;
}

hsa_agent_t bogus_agent(void)
{
	hsa_agent_t a = {12345};

	return a;
}

hsa_amd_pointer_info_t ptr_info(const void *p)
{
	hsa_amd_pointer_info_t info;

	memset(&info, 0xa5, sizeof(info));
	info.size = sizeof(info);
	HSA_OK(hsa.pointer_info(p, &info, NULL, NULL, NULL));
	ASSERT_EQ(info.size, sizeof(info));
	return info;
}

HMR_TEST(sim_rocr_init_is_refcounted)
{
	hsa_agent_t agent = {0};
	hsa_amd_pointer_info_t info = {.size = sizeof(info)};
	uint16_t major = 0;
	const char *s = NULL;
	void *p;

	load_lib("HMR_SIM_ROCR_LIB");
	/* Before hsa_init only hsa_init and hsa_status_string answer. */
	ASSERT_EQ(hsa.system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major),
	          HSA_STATUS_ERROR_NOT_INITIALIZED);
	ASSERT_EQ(hsa.iterate_agents(collect_agent, NULL),
	          HSA_STATUS_ERROR_NOT_INITIALIZED);
	ASSERT_EQ(hsa.agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &major),
	          HSA_STATUS_ERROR_NOT_INITIALIZED);
	ASSERT_EQ(hsa.pointer_info(&info, &info, NULL, NULL, NULL),
	          HSA_STATUS_ERROR_NOT_INITIALIZED);
	ASSERT_EQ(hsa.pool_allocate(sys.cpu_pool, 64, 0, &p),
	          HSA_STATUS_ERROR_NOT_INITIALIZED);
	ASSERT_EQ(hsa.close_dmabuf(0), HSA_STATUS_ERROR_NOT_INITIALIZED);
	ASSERT_EQ(hsa.shut_down(), HSA_STATUS_ERROR_NOT_INITIALIZED);
	HSA_OK(hsa.status_string(HSA_STATUS_ERROR_NOT_INITIALIZED, &s));
	ASSERT_EQ(strncmp(s, "HSA_STATUS_ERROR_NOT_INITIALIZED: ", 34), 0);

	/* Two inits need two shut-downs. */
	HSA_OK(hsa.init());
	HSA_OK(hsa.init());
	HSA_OK(hsa.shut_down());
	HSA_OK(hsa.system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major));
	ASSERT_EQ(major, 1);
	HSA_OK(hsa.shut_down());
	ASSERT_EQ(hsa.system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major),
	          HSA_STATUS_ERROR_NOT_INITIALIZED);
	ASSERT_EQ(hsa.shut_down(), HSA_STATUS_ERROR_NOT_INITIALIZED);
	/* And the runtime opens again. */
	HSA_OK(hsa.init());
	HSA_OK(hsa.system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major));
	HSA_OK(hsa.shut_down());
}

HMR_TEST(sim_rocr_no_devices_fails_init)
{
	uint16_t v;

	setenv("HMR_SIM_ROCR_DEVICES", "0", 1);
	load_lib("HMR_SIM_ROCR_LIB");
	ASSERT_EQ(hsa.init(), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
	ASSERT_EQ(hsa.system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &v),
	          HSA_STATUS_ERROR_NOT_INITIALIZED);
	ASSERT_EQ(hsa.shut_down(), HSA_STATUS_ERROR_NOT_INITIALIZED);
}

HMR_TEST(sim_rocr_status_string)
{
	const char *s = "untouched";

	load_lib("HMR_SIM_ROCR_LIB");
	HSA_OK(hsa.status_string(HSA_STATUS_ERROR_INVALID_ALLOCATION, &s));
	ASSERT_EQ(strncmp(s, "HSA_STATUS_ERROR_INVALID_ALLOCATION: ", 37), 0);
	HSA_OK(hsa.status_string(
	        (hsa_status_t)HSA_STATUS_ERROR_INVALID_MEMORY_POOL, &s));
	ASSERT_EQ(strncmp(s, "HSA_STATUS_ERROR_INVALID_MEMORY_POOL", 36), 0);
	ASSERT_EQ(hsa.status_string((hsa_status_t)0x7777, &s),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.status_string(HSA_STATUS_SUCCESS, NULL),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

HMR_TEST(sim_rocr_system_info)
{
	uint16_t major = 0, minor = 0;
	uint64_t freq = 0, t0 = 0, t1 = 0;
	const char *build = NULL;
	bool dmabuf = false;
	int junk;

	setup();
	HSA_OK(hsa.system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major));
	HSA_OK(hsa.system_get_info(HSA_SYSTEM_INFO_VERSION_MINOR, &minor));
	ASSERT_EQ(major, 1);
	ASSERT_EQ(minor, 1);
	HSA_OK(hsa.system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &freq));
	ASSERT_EQ(freq, 1000000000);
	HSA_OK(hsa.system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t0));
	HSA_OK(hsa.system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t1));
	ASSERT_LE(t0, t1);
	HSA_OK(hsa.system_get_info(HSA_AMD_SYSTEM_INFO_BUILD_VERSION, &build));
	ASSERT_TRUE(strstr(build, "5.6") != NULL);
	HSA_OK(hsa.system_get_info(DMABUF_SUPPORTED, &dmabuf));
	ASSERT_TRUE(dmabuf);
	ASSERT_EQ(hsa.system_get_info((hsa_system_info_t)0x2ff, &junk),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, NULL),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

static hsa_status_t count_and_stop(hsa_agent_t agent, void *data)
{
	(void)agent;
	return ++*(int *)data == 2 ? HSA_STATUS_INFO_BREAK : HSA_STATUS_SUCCESS;
}

HMR_TEST(sim_rocr_agents_and_pools)
{
	char name[64], uuid0[21], uuid1[21];
	uint32_t node0 = 0, node1 = 0, flags = 0;
	hsa_amd_memory_pool_access_t access;
	hsa_device_type_t type;
	hsa_agent_t bogus = bogus_agent();
	size_t granule = 0;
	bool by_all = true;
	int seen = 0;

	setup();
	ASSERT_EQ(sys.ngpu, 2);
	HSA_OK(hsa.agent_get_info(sys.cpu, HSA_AGENT_INFO_DEVICE, &type));
	ASSERT_EQ(type, HSA_DEVICE_TYPE_CPU);
	HSA_OK(hsa.agent_get_info(sys.gpu[1], HSA_AGENT_INFO_DEVICE, &type));
	ASSERT_EQ(type, HSA_DEVICE_TYPE_GPU);
	HSA_OK(hsa.agent_get_info(sys.gpu[0], HSA_AGENT_INFO_NAME, name));
	ASSERT_EQ(strcmp(name, "gfx90a"), 0);
	HSA_OK(hsa.agent_get_info(sys.gpu[0], HSA_AGENT_INFO_NODE, &node0));
	HSA_OK(hsa.agent_get_info(sys.gpu[1], HSA_AGENT_INFO_NODE, &node1));
	ASSERT_NE(node0, node1);
	HSA_OK(hsa.agent_get_info(
	        sys.gpu[0], (hsa_agent_info_t)HSA_AMD_AGENT_INFO_UUID, uuid0));
	HSA_OK(hsa.agent_get_info(
	        sys.gpu[1], (hsa_agent_info_t)HSA_AMD_AGENT_INFO_UUID, uuid1));
	ASSERT_EQ(strncmp(uuid0, "GPU-", 4), 0);
	ASSERT_EQ(strlen(uuid0), 20);
	ASSERT_NE(strcmp(uuid0, uuid1), 0);
	ASSERT_EQ(hsa.agent_get_info(bogus, HSA_AGENT_INFO_DEVICE, &type),
	          HSA_STATUS_ERROR_INVALID_AGENT);
	ASSERT_EQ(hsa.agent_get_info(sys.cpu, (hsa_agent_info_t)0x7fff, name),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	/* The callback's status ends the iteration and is returned. */
	ASSERT_EQ(hsa.iterate_agents(count_and_stop, &seen),
	          HSA_STATUS_INFO_BREAK);
	ASSERT_EQ(seen, 2);

	/* GPU: coarse-grained VRAM; CPU: fine-grained system memory. */
	HSA_OK(hsa.pool_get_info(sys.gpu_pool[0],
	                         HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
	                         &flags));
	ASSERT_EQ(flags, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
	HSA_OK(hsa.pool_get_info(
	        sys.cpu_pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
	ASSERT_TRUE(flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
	HSA_OK(hsa.pool_get_info(sys.gpu_pool[0],
	                         HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE,
	                         &granule));
	ASSERT_EQ(granule, page());
	HSA_OK(hsa.pool_get_info(sys.gpu_pool[0],
	                         HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL,
	                         &by_all));
	ASSERT_TRUE(!by_all);
	HSA_OK(hsa.agent_pool_get_info(sys.gpu[1], sys.gpu_pool[0],
	                               HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS,
	                               &access));
	ASSERT_EQ(access, HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT);
	HSA_OK(hsa.agent_pool_get_info(sys.gpu[1], sys.cpu_pool,
	                               HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS,
	                               &access));
	ASSERT_EQ(access, HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT);
	ASSERT_EQ(hsa.pool_get_info((hsa_amd_memory_pool_t){1},
	                            HSA_AMD_MEMORY_POOL_INFO_SIZE, &granule),
	          HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
}

HMR_TEST(sim_rocr_device_count_from_env)
{
	setenv("HMR_SIM_ROCR_DEVICES", "5", 1);
	setup();
	ASSERT_EQ(sys.ngpu, 5);
}

HMR_TEST(sim_rocr_alloc_reuses_address_with_new_id)
{
	unsigned long long id_a;
	void *a, *b, *c, *d, *e, *big, *p;

	setup();
	a = gpu_alloc(0, 1 << 20);
	b = gpu_alloc(0, 1 << 20);
	ASSERT_EQ((uintptr_t)a % page(), 0);
	ASSERT_NE(hsa.buffer_id(a), 0);
	ASSERT_NE(hsa.buffer_id(a), hsa.buffer_id(b));
	id_a = hsa.buffer_id(a);
	HSA_OK(hsa.pool_free(a));
	ASSERT_EQ(hsa.buffer_id(a), 0);
	/* First fit: a smaller allocation lands in the freed hole. */
	c = gpu_alloc(0, 64 << 10);
	ASSERT_PTR_EQ(c, a);
	ASSERT_NE(hsa.buffer_id(c), id_a);
	HSA_OK(hsa.pool_free(c));
	d = gpu_alloc(0, 1 << 20);
	ASSERT_PTR_EQ(d, a);
	ASSERT_NE(hsa.buffer_id(d), id_a);
	/* Large allocations are 2 MiB aligned; GPUs use disjoint windows. */
	big = gpu_alloc(0, 3 << 20);
	ASSERT_EQ((uintptr_t)big % (2 << 20), 0);
	e = gpu_alloc(1, 4096);
	ASSERT_TRUE((uintptr_t)e >= (uintptr_t)big + (3 << 20) ||
	            (uintptr_t)e + 4096 <= (uintptr_t)a);
	ASSERT_PTR_EQ(ptr_info(e).agentOwner.handle, sys.gpu[1].handle);

	/* Errors: bad pool, size 0, flags, beyond the pool, bad frees. */
	ASSERT_EQ(hsa.pool_allocate((hsa_amd_memory_pool_t){8}, 64, 0, &p),
	          HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
	ASSERT_EQ(hsa.pool_allocate(sys.gpu_pool[0], 0, 0, &p),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.pool_allocate(sys.gpu_pool[0], 64, 2, &p),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.pool_allocate(sys.gpu_pool[0], 1ull << 40, 0, &p),
	          HSA_STATUS_ERROR_INVALID_ALLOCATION);
	ASSERT_EQ(hsa.pool_free((char *)d + 1),
	          HSA_STATUS_ERROR_INVALID_ALLOCATION);
	ASSERT_EQ(hsa.pool_free(&id_a), HSA_STATUS_ERROR_INVALID_ALLOCATION);
	HSA_OK(hsa.pool_free(NULL));
	HSA_OK(hsa.pool_free(b));
	HSA_OK(hsa.pool_free(d));
	HSA_OK(hsa.pool_free(big));
	HSA_OK(hsa.pool_free(e));
	ASSERT_EQ(hsa.pool_free(e), HSA_STATUS_ERROR_INVALID_ALLOCATION);
}

HMR_TEST(sim_rocr_pointer_info_kinds)
{
	hsa_amd_pointer_info_t info;
	hsa_agent_t *list = NULL;
	uint32_t n = 0;
	char stack_buf[64];
	void *dev, *host, *agent_ptr;

	setup();
	dev = gpu_alloc(0, 10000);
	info = ptr_info((char *)dev + 5000);
	ASSERT_EQ(info.type, HSA_EXT_POINTER_TYPE_HSA);
	ASSERT_PTR_EQ(info.agentBaseAddress, dev);
	ASSERT_PTR_EQ(info.hostBaseAddress, dev); /* as ROCr reports it */
	ASSERT_EQ(info.sizeInBytes, 10000);
	ASSERT_U64_EQ(info.agentOwner.handle, sys.gpu[0].handle);
	ASSERT_EQ(info.global_flags,
	          HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
	/* Past the requested size: ROCr no longer knows the address. */
	ASSERT_EQ(ptr_info((char *)dev + 10000).type,
	          HSA_EXT_POINTER_TYPE_UNKNOWN);

	/* The accessible list: the owner, then whoever is allowed. */
	info.size = sizeof(info);
	HSA_OK(hsa.pointer_info(dev, &info, malloc, &n, &list));
	ASSERT_EQ(n, 1);
	ASSERT_U64_EQ(list[0].handle, sys.gpu[0].handle);
	free(list);
	HSA_OK(hsa.allow_access(1, &sys.gpu[1], NULL, dev));
	HSA_OK(hsa.pointer_info(dev, &info, malloc, &n, &list));
	ASSERT_EQ(n, 2);
	free(list);
	ASSERT_EQ(hsa.allow_access(1, &sys.gpu[1], NULL, (char *)dev + 1),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);

	/* CPU pool memory: ROCr memory on the CPU, usable by the CPU. */
	HSA_OK(hsa.pool_allocate(sys.cpu_pool, 3000, 0, &host));
	memset(host, 7, 3000);
	info = ptr_info((char *)host + 10);
	ASSERT_EQ(info.type, HSA_EXT_POINTER_TYPE_HSA);
	ASSERT_PTR_EQ(info.hostBaseAddress, host);
	ASSERT_EQ(info.sizeInBytes, 3000);
	ASSERT_U64_EQ(info.agentOwner.handle, sys.cpu.handle);

	/* Plain host memory: UNKNOWN, all else zero, no list returned. */
	n = 77;
	list = NULL;
	info.size = sizeof(info);
	HSA_OK(hsa.pointer_info(stack_buf, &info, malloc, &n, &list));
	ASSERT_EQ(info.type, HSA_EXT_POINTER_TYPE_UNKNOWN);
	ASSERT_PTR_EQ(info.agentBaseAddress, NULL);
	ASSERT_EQ(info.sizeInBytes, 0);
	ASSERT_U64_EQ(info.agentOwner.handle, 0);
	ASSERT_EQ(n, 77);
	ASSERT_PTR_EQ(list, NULL);

	/* Locked host memory: LOCKED, owned by the CPU. */
	HSA_OK(hsa.lock(stack_buf + 8, 32, NULL, 0, &agent_ptr));
	info = ptr_info(stack_buf + 20);
	ASSERT_EQ(info.type, HSA_EXT_POINTER_TYPE_LOCKED);
	ASSERT_PTR_EQ(info.hostBaseAddress, stack_buf + 8);
	ASSERT_PTR_EQ(info.agentBaseAddress, agent_ptr);
	ASSERT_EQ(info.sizeInBytes, 32);
	ASSERT_U64_EQ(info.agentOwner.handle, sys.cpu.handle);
	HSA_OK(hsa.unlock(stack_buf + 8));
	ASSERT_EQ(ptr_info(stack_buf + 20).type, HSA_EXT_POINTER_TYPE_UNKNOWN);

	/* An older, smaller struct: nothing written past its size. */
	memset(&info, 0xa5, sizeof(info));
	info.size = offsetof(hsa_amd_pointer_info_t, sizeInBytes);
	HSA_OK(hsa.pointer_info(dev, &info, NULL, NULL, NULL));
	ASSERT_EQ(info.size, offsetof(hsa_amd_pointer_info_t, sizeInBytes));
	ASSERT_PTR_EQ(info.agentBaseAddress, dev);
	ASSERT_U64_EQ(info.sizeInBytes, 0xa5a5a5a5a5a5a5a5ull);
	info.size = 0;
	ASSERT_EQ(hsa.pointer_info(dev, &info, NULL, NULL, NULL),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.pointer_info(NULL, &info, NULL, NULL, NULL),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	HSA_OK(hsa.pool_free(host));
	HSA_OK(hsa.pool_free(dev));
}

HMR_TEST(sim_rocr_memory_lock)
{
	size_t len = 4 * page();
	void *buf, *agent_ptr = &len, *dev;

	setup();
	ASSERT_EQ(posix_memalign(&buf, page(), len), 0);
	HSA_OK(hsa.lock(buf, len, NULL, 0, &agent_ptr));
	ASSERT_PTR_EQ(agent_ptr, buf);
	HSA_OK(hsa.lock(buf, len, &sys.gpu[1], 1, &agent_ptr)); /* counted */
	HSA_OK(hsa.unlock(buf));
	ASSERT_EQ(ptr_info(buf).type, HSA_EXT_POINTER_TYPE_LOCKED);
	HSA_OK(hsa.unlock(buf));
	ASSERT_EQ(ptr_info(buf).type, HSA_EXT_POINTER_TYPE_UNKNOWN);
	HSA_OK(hsa.unlock(buf)); /* ROCr does not mind */

	/* A list with only the CPU locks nothing, as in ROCr. */
	HSA_OK(hsa.lock(buf, len, &sys.cpu, 1, &agent_ptr));
	ASSERT_PTR_EQ(agent_ptr, buf);
	ASSERT_EQ(ptr_info(buf).type, HSA_EXT_POINTER_TYPE_UNKNOWN);

	dev = gpu_alloc(0, 4096);
	ASSERT_EQ(hsa.lock((char *)dev + 4096, 10, NULL, 0, &agent_ptr),
	          HSA_STATUS_ERROR_OUT_OF_RESOURCES);
	ASSERT_PTR_EQ(agent_ptr, NULL);
	ASSERT_EQ(hsa.lock(buf, 0, NULL, 0, &agent_ptr),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.lock(buf, len, NULL, 1, &agent_ptr),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.lock(buf, len, &sys.cpu, 0, &agent_ptr),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.lock(buf, len, (hsa_agent_t[]){{3}}, 1, &agent_ptr),
	          HSA_STATUS_ERROR_INVALID_AGENT);
	HSA_OK(hsa.pool_free(dev));
	free(buf);
}

HMR_TEST(sim_rocr_copies_round_trip)
{
	enum { N = 3 * 4096 + 123 };
	static unsigned char in[N], out[N];
	void *a, *b, *host;

	setup();
	fill(in, N, 7);
	a = gpu_alloc(0, N);
	b = gpu_alloc(1, N);
	HSA_OK(hsa.memory_copy(a, in, N));
	HSA_OK(hsa.memory_copy(b, a, N)); /* GPU to GPU */
	HSA_OK(hsa.memory_copy(out, b, N));
	ASSERT_EQ(memcmp(in, out, N), 0);
	HSA_OK(hsa.pool_allocate(sys.cpu_pool, N, 0, &host));
	HSA_OK(hsa.memory_copy(host, a, N));
	ASSERT_EQ(memcmp(in, host, N), 0);
	HSA_OK(hsa.memory_copy(out, in, 0));

	/* Nothing is copied when a range leaves its buffer. */
	memset(out, 0, N);
	ASSERT_EQ(hsa.memory_copy((char *)a + 1, in, N),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.memory_copy(out, (char *)b + 100, N),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(out[0], 0);
	ASSERT_EQ(hsa.memory_copy(NULL, in, 1),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	HSA_OK(hsa.pool_free(host));
	HSA_OK(hsa.pool_free(a));
	HSA_OK(hsa.pool_free(b));
	ASSERT_EQ(hsa.memory_copy(out, a, 1),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

static hsa_signal_t late_signal;

static void *complete_later(void *arg)
{
	(void)arg;
	usleep(50000);
	hsa.signal_store(late_signal, 0);
	return NULL;
}

HMR_TEST(sim_rocr_async_copy_decrements_signal)
{
	unsigned char in[5000], out[5000];
	hsa_signal_t sig, dep, bogus = {99};
	pthread_t t;
	void *dev;

	setup();
	fill(in, sizeof(in), 9);
	dev = gpu_alloc(0, sizeof(in));
	HSA_OK(hsa.signal_create(1, 0, NULL, &sig));
	HSA_OK(hsa.async_copy(dev, sys.gpu[0], in, sys.cpu, sizeof(in), 0, NULL,
	                      sig));
	ASSERT_EQ(hsa.signal_wait(sig, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX,
	                          HSA_WAIT_STATE_BLOCKED),
	          0);
	/* Size 0 succeeds without touching the signal, as in ROCr. */
	hsa.signal_store(sig, 1);
	HSA_OK(hsa.async_copy(out, sys.cpu, dev, sys.gpu[0], 0, 0, NULL, sig));
	ASSERT_EQ(hsa.signal_load(sig), 1);
	/* A timed wait that is not satisfied returns the value it saw. */
	ASSERT_EQ(hsa.signal_wait(sig, HSA_SIGNAL_CONDITION_EQ, 0, 1000000,
	                          HSA_WAIT_STATE_ACTIVE),
	          1);

	/* A dependency: the copy waits until another thread completes it. */
	HSA_OK(hsa.signal_create(1, 1, &sys.gpu[0], &dep));
	late_signal = dep;
	ASSERT_EQ(pthread_create(&t, NULL, complete_later, NULL), 0);
	HSA_OK(hsa.async_copy(out, sys.cpu, dev, sys.gpu[0], sizeof(out), 1,
	                      &dep, sig));
	ASSERT_EQ(hsa.signal_load(dep), 0);
	ASSERT_EQ(hsa.signal_load(sig), 0);
	ASSERT_EQ(pthread_join(t, NULL), 0);
	ASSERT_EQ(memcmp(in, out, sizeof(in)), 0);

	ASSERT_EQ(hsa.async_copy(out, sys.cpu, dev, sys.gpu[0], 1, 0, NULL,
	                         bogus),
	          HSA_STATUS_ERROR_INVALID_SIGNAL);
	ASSERT_EQ(hsa.async_copy(out, sys.cpu, dev, sys.gpu[0], 1, 0, NULL,
	                         (hsa_signal_t){0}),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.async_copy(out, bogus_agent(), dev, sys.gpu[0], 1, 0,
	                         NULL, sig),
	          HSA_STATUS_ERROR_INVALID_AGENT);
	ASSERT_EQ(
	        hsa.async_copy(out, sys.cpu, dev, sys.gpu[0], 1, 1, NULL, sig),
	        HSA_STATUS_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(hsa.signal_create(0, 1, NULL, &sig),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	HSA_OK(hsa.signal_destroy(dep));
	HSA_OK(hsa.signal_destroy(sig));
	ASSERT_EQ(hsa.signal_destroy(sig), HSA_STATUS_ERROR_INVALID_SIGNAL);
	ASSERT_EQ(hsa.signal_destroy((hsa_signal_t){0}),
	          HSA_STATUS_ERROR_INVALID_ARGUMENT);
	HSA_OK(hsa.pool_free(dev));
}

HMR_TEST_MAIN()
