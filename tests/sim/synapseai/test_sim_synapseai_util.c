/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_synapseai_util.c: loading the simulator, helpers, main(). */
#include "test_sim_synapseai.h"

#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

struct syn_api api;

static void *need(void *dl, const char *name)
{
	void *p = dlsym(dl, name);

	if (!p)
		HMR_FAIL("simulator lacks %s", name);
	return p;
}

static void *open_lib(const char *dir, const char *file)
{
	char path[4096];
	void *dl;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		HMR_FAIL("dlopen %s: %s", path, dlerror());
	return dl;
}

#define SYN_LOAD(lib, fn) *(void **)&api.fn = need(api.lib, #fn);

void load(void)
{
	const char *dir = getenv("HMR_SIM_SYNAPSEAI_DIR");

	if (!dir || !*dir)
		HMR_SKIP("HMR_SIM_SYNAPSEAI_DIR is not set");
	api.syn = open_lib(dir, "libSynapse.so");
	api.thunk = open_lib(dir, "libhl-thunk.so");
	SYN_SYMS(SYN_LOAD)
	/* Found through libSynapse.so's dependency on libhl-thunk.so. */
	*(void **)&api.calls = need(api.syn, "hmr_sim_synapseai_calls");
}

void setup(int module, synDeviceInfoV2 *info)
{
	synDeviceId id = 99;

	load();
	SYN_OK(api.synInitialize());
	if (module < 0)
		SYN_OK(api.synDeviceAcquireByDeviceType(&id, synDeviceGaudi2));
	else
		SYN_OK(api.synDeviceAcquireByModuleId(&id,
		                                      (synModuleId)module));
	ASSERT_EQ(id, 0);
	SYN_OK(api.synDeviceGetInfoV2(id, info));
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

int child_touch(uint64_t addr)
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
		_exit(*(volatile unsigned char *)(uintptr_t)addr == 0x5a ? 0
		                                                         : 3);
	}
	ASSERT_GT(pid, 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	return status;
}

void h2d(synStreamHandle s, uint64_t dev, const void *host, uint64_t len)
{
	SYN_OK(api.synMemCopyAsync(s, (uint64_t)(uintptr_t)host, len, dev,
	                           HOST_TO_DRAM));
	SYN_OK(api.synStreamSynchronize(s));
}

void d2h(synStreamHandle s, void *host, uint64_t dev, uint64_t len)
{
	SYN_OK(api.synMemCopyAsync(s, dev, len, (uint64_t)(uintptr_t)host,
	                           DRAM_TO_HOST));
	SYN_OK(api.synStreamSynchronize(s));
}

HMR_TEST_MAIN()
