/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_synapseai.c: the simulated Gaudi runtime, loaded like a backend. */
#include "test_sim_synapseai.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

HMR_TEST(sim_synapseai_calls_before_init)
{
	uint32_t n = 0;
	synDeviceId id = 7;
	synStreamHandle s;
	uint64_t addr;
	char buf[64];

	load();
	ASSERT_EQ(api.synDeviceGetCount(&n), synUninitialized);
	ASSERT_EQ(api.synDeviceAcquire(&id, NULL), synUninitialized);
	ASSERT_EQ(id, 7);
	ASSERT_EQ(api.synDeviceMalloc(0, 4096, 0, 0, &addr), synUninitialized);
	ASSERT_EQ(api.synStreamCreateGeneric(&s, 0, 0), synUninitialized);
	/* These two work before synInitialize. */
	SYN_OK(api.synDriverGetVersion(buf, sizeof(buf)));
	ASSERT_GT(strlen(buf), 0);
	SYN_OK(api.synDriverGetVersion(buf, 4));
	ASSERT_EQ(strlen(buf), 3);
	SYN_OK(api.synStatusGetBriefDescription(synDeviceAlreadyAcquired, buf,
	                                        sizeof(buf)));
	ASSERT_EQ(strcmp(buf, "Device already acquired"), 0);
	SYN_OK(api.synStatusGetBriefDescription(synDeviceAlreadyAcquired, buf,
	                                        7));
	ASSERT_EQ(strcmp(buf, "Device"), 0);
	ASSERT_EQ(api.synStatusGetBriefDescription(synFailTpcKernels, buf,
	                                           sizeof(buf)),
	          synFail);
	/* synDestroy without synInitialize; synInitialize twice. */
	SYN_OK(api.synDestroy());
	SYN_OK(api.synInitialize());
	SYN_OK(api.synInitialize());
	ASSERT_EQ(api.synDeviceGetCount(NULL), synInvalidArgument);
	SYN_OK(api.synDeviceGetCount(&n));
	ASSERT_EQ(n, 2);
	SYN_OK(api.synDestroy());
	ASSERT_EQ(api.synDeviceGetCount(&n), synUninitialized);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* libfabric's synapseai_init on a host without a Gaudi, then synDestroy. */
HMR_TEST(sim_synapseai_no_gaudi_returns_promptly)
{
	uint32_t n = 99;
	synDeviceId id = 7;
	int fd = -1;
	double t0;

	setenv("HMR_SIM_SYNAPSEAI_DEVICES", "0", 1);
	load();
	t0 = now();
	SYN_OK(api.synInitialize());
	SYN_OK(api.synDeviceGetCount(&n));
	ASSERT_EQ(n, 0);
	SYN_OK(api.synDeviceGetCountByDeviceType(&n, synDeviceGaudi2));
	ASSERT_EQ(n, 0);
	ASSERT_EQ(api.synDeviceAcquire(&id, NULL), synNoDeviceFound);
	ASSERT_EQ(id, SYN_INVALID_DEVICE_ID);
	ASSERT_EQ(api.hcclLookupDMABuff(0x1000, 4096, &fd), hcclSuccess);
	ASSERT_EQ(fd, -1); /* no gaudi-direct region: *fd untouched */
	ASSERT_EQ(api.hlthunk_open(HLTHUNK_DEVICE_DONT_CARE, NULL), -ENODEV);
	SYN_OK(api.synDestroy());
	ASSERT_LT(now() - t0, 1.0);
}

HMR_TEST(sim_synapseai_one_device_per_process)
{
	synDeviceInfoV2 info, info1;
	synDeviceId id = 7;
	uint32_t n = 0;

	load();
	SYN_OK(api.synInitialize());
	ASSERT_EQ(api.synDeviceGetInfoV2(0, &info), synFail); /* none yet */
	SYN_OK(api.synDeviceGetCountByDeviceType(&n, synDeviceGaudi2));
	ASSERT_EQ(n, 2);
	SYN_OK(api.synDeviceGetCountByDeviceType(&n, synDeviceGaudi3));
	ASSERT_EQ(n, 0);
	ASSERT_EQ(api.synDeviceAcquireByDeviceType(&id, synDeviceGaudi),
	          synDeviceTypeMismatch);
	ASSERT_EQ(api.synDeviceAcquireByDeviceType(NULL, synDeviceGaudi2),
	          synInvalidArgument);
	SYN_OK(api.synDeviceAcquire(&id, ""));
	ASSERT_EQ(id, 0);
	SYN_OK(api.synDeviceGetInfoV2(id, &info));
	ASSERT_EQ(info.deviceIndex, 0);
	/* A second device in the same process: refused, id untouched. */
	id = 7;
	ASSERT_EQ(api.synDeviceAcquire(&id, NULL), synDeviceAlreadyAcquired);
	ASSERT_EQ(api.synDeviceAcquireByModuleId(&id, 1),
	          synDeviceAlreadyAcquired);
	ASSERT_EQ(id, 7);
	SYN_OK(api.synDeviceRelease(0));
	ASSERT_EQ(api.synDeviceRelease(0), synNoDeviceFound);

	SYN_OK(api.synDeviceAcquireByModuleId(&id, 1));
	SYN_OK(api.synDeviceGetInfoV2(id, &info1));
	ASSERT_EQ(info1.deviceIndex, 1);
	ASSERT_GE(info1.globalHbmBaseAddress,
	          info.globalHbmBaseAddress + info.dramSize);
	SYN_OK(api.synDeviceRelease(0));
	SYN_OK(api.synDeviceAcquire(&id, "0000:1A:00.0")); /* module 1 */
	SYN_OK(api.synDeviceGetInfoV2(id, &info1));
	ASSERT_EQ(info1.deviceIndex, 1);
	SYN_OK(api.synDeviceRelease(0));
	ASSERT_EQ(api.synDeviceAcquire(&id, "0000:99:00.0"), synNoDeviceFound);
	ASSERT_EQ(id, SYN_INVALID_DEVICE_ID);
	ASSERT_EQ(api.synDeviceAcquireByModuleId(&id, 2), synNoDeviceFound);
	SYN_OK(api.synDestroy());
}

HMR_TEST(sim_synapseai_device_info)
{
	uint64_t free1, free2, total, p;
	synDeviceInfoV2 info;
	synDeviceInfo v1;

	setenv("HMR_SIM_SYNAPSEAI_HBM_MIB", "64", 1);
	setup(-1, &info);
	ASSERT_EQ(info.deviceType, synDeviceGaudi2);
	ASSERT_EQ(info.deviceId, 0x1020);
	ASSERT_EQ(info.dramEnabled, 1);
	ASSERT_U64_EQ(info.dramSize, 64ULL << 20);
	ASSERT_EQ(info.globalHbmBaseAddress % (2 << 20), 0);
	ASSERT_NE(info.globalHbmBaseAddress, info.dramBaseAddress);
	ASSERT_GE(fcntl((int)info.fd, F_GETFD), 0); /* an open device fd */
	SYN_OK(api.synDeviceGetInfo(0, &v1));
	ASSERT_EQ(memcmp(&v1, &info, sizeof(v1)), 0);
	ASSERT_EQ(api.synDeviceGetInfoV2(0, NULL), synInvalidArgument);

	SYN_OK(api.synDeviceGetMemoryInfo(0, &free1, &total));
	ASSERT_U64_EQ(total, info.dramSize);
	ASSERT_U64_EQ(free1, total - (2 << 20)); /* the runtime's own */
	SYN_OK(api.synDeviceMalloc(0, 1 << 20, 0, 0, &p));
	SYN_OK(api.synDeviceGetMemoryInfo(0, &free2, &total));
	ASSERT_U64_EQ(free2, free1 - (1 << 20));
	SYN_OK(api.synDeviceFree(0, p, 0));
	SYN_OK(api.synDestroy());
}

HMR_TEST(sim_synapseai_malloc_first_fit_reuses_freed)
{
	uint64_t a, b, c, d, e, x = 0x1234, base, end;
	synDeviceInfoV2 info;

	setenv("HMR_SIM_SYNAPSEAI_HBM_MIB", "64", 1);
	setup(-1, &info);
	base = info.globalHbmBaseAddress;
	end = base + info.dramSize;
	SYN_OK(api.synDeviceMalloc(0, 1 << 20, 0, 0, &a));
	ASSERT_U64_EQ(a, base + (2 << 20)); /* after the runtime's own */
	SYN_OK(api.synDeviceMalloc(0, 1 << 20, 0, 0, &b));
	ASSERT_U64_EQ(b, a + (1 << 20));
	SYN_OK(api.synDeviceFree(0, a, 0));
	SYN_OK(api.synDeviceMalloc(0, 100, 0, 0, &c)); /* into a's hole */
	ASSERT_U64_EQ(c, a);
	SYN_OK(api.synDeviceMalloc(0, 512 << 10, 0, 0, &d));
	ASSERT_U64_EQ(d, a + page());
	/* reqAddr is a hint the allocator ignores. */
	SYN_OK(api.synDeviceMalloc(0, 4096, end - (8 << 20), 0, &e));
	ASSERT_U64_EQ(e, d + (512 << 10));
	ASSERT_LE(e + 4096, b);

	ASSERT_EQ(api.synDeviceMalloc(0, 4096, 0, 1, &x), synFail);
	ASSERT_EQ(api.synDeviceMalloc(0, 4096, 0, 0, NULL), synInvalidArgument);
	SYN_OK(api.synDeviceMalloc(0, 0, 0, 0, &x));
	ASSERT_U64_EQ(x, 0);
	ASSERT_EQ(api.synDeviceMalloc(0, info.dramSize, 0, 0, &x), synFail);
	ASSERT_EQ(api.synDeviceFree(0, c + 16, 0), synFail); /* interior */
	ASSERT_EQ(api.synDeviceFree(0, end - 4096, 0), synFail);
	ASSERT_EQ(api.synDeviceFree(0, b, 1), synFail);
	SYN_OK(api.synDeviceFree(0, 0, 0));
	SYN_OK(api.synDeviceFree(0, b, 0));
	ASSERT_EQ(api.synDeviceFree(0, b, 0), synFail); /* twice */
	SYN_OK(api.synDeviceFree(0, c, 0));
	SYN_OK(api.synDeviceFree(0, d, 0));
	SYN_OK(api.synDeviceFree(0, e, 0));
	SYN_OK(api.synDeviceMalloc(0, 3 << 20, 0, 0, &a));
	ASSERT_U64_EQ(a, base + (2 << 20)); /* everything was given back */
	SYN_OK(api.synDestroy());
}

/* Synapse has no pointer query: the HBM range from the info is it. */
HMR_TEST(sim_synapseai_hbm_range_holds_device_not_host)
{
	synDeviceInfoV2 info;
	int on_stack = 0;
	void *heap = malloc(64), *pinned;
	uint64_t p, lo, hi;

	setup(-1, &info);
	lo = info.globalHbmBaseAddress;
	hi = lo + info.dramSize;
	SYN_OK(api.synDeviceMalloc(0, 10000, 0, 0, &p));
	SYN_OK(api.synHostMalloc(0, 10000, 0, &pinned));
	ASSERT_TRUE(p >= lo && p + 10000 <= hi);
	ASSERT_TRUE((uintptr_t)&on_stack < lo || (uintptr_t)&on_stack >= hi);
	ASSERT_TRUE((uintptr_t)heap < lo || (uintptr_t)heap >= hi);
	ASSERT_TRUE((uintptr_t)pinned < lo || (uintptr_t)pinned >= hi);
	/* dramBaseAddress is device-physical: no buffer lives there. */
	ASSERT_TRUE(p < info.dramBaseAddress ||
	            p >= info.dramBaseAddress + info.dramSize);
	SYN_OK(api.synHostFree(0, pinned, 0));
	SYN_OK(api.synDeviceFree(0, p, 0));
	SYN_OK(api.synDestroy());
	free(heap);
}

HMR_TEST(sim_synapseai_copies_wait_for_synchronize)
{
	enum { N = 3 * 4096 + 123 };
	unsigned char *src, *dst;
	synStreamHandle s;
	synDeviceInfoV2 info;
	uint64_t a, b;

	setup(-1, &info);
	SYN_OK(api.synStreamCreateGeneric(&s, 0, 0));
	SYN_OK(api.synHostMalloc(0, N, 0, (void **)&src));
	SYN_OK(api.synHostMalloc(0, N, 0, (void **)&dst));
	memset(dst, 0, N);
	fill(src, N, 7);
	SYN_OK(api.synDeviceMalloc(0, N, 0, 0, &a));
	SYN_OK(api.synDeviceMalloc(0, N, 0, 0, &b));
	SYN_OK(api.synMemCopyAsync(s, (uintptr_t)src, N, a, HOST_TO_DRAM));
	SYN_OK(api.synMemCopyAsync(s, a, N, b, DRAM_TO_DRAM));
	SYN_OK(api.synMemsetD8Async(b + 10, 0xee, 5, s));
	SYN_OK(api.synMemCopyAsync(s, b, N, (uintptr_t)dst, DRAM_TO_HOST));
	ASSERT_EQ(dst[0], 0); /* queued, not done */
	ASSERT_EQ(api.synStreamDestroy(s), synBusy);
	SYN_OK(api.synStreamSynchronize(s));
	ASSERT_EQ(memcmp(dst, src, 10), 0);
	ASSERT_EQ(dst[10], 0xee);
	ASSERT_EQ(dst[14], 0xee);
	ASSERT_EQ(memcmp(dst + 15, src + 15, N - 15), 0);

	/* synDeviceSynchronize runs every stream. */
	memset(dst, 0, N);
	SYN_OK(api.synMemCopyAsync(s, a, N, (uintptr_t)dst, DRAM_TO_HOST));
	SYN_OK(api.synDeviceSynchronize(0));
	ASSERT_EQ(memcmp(dst, src, N), 0);
	SYN_OK(api.synStreamDestroy(s));
	ASSERT_EQ(api.synStreamSynchronize(s), synInvalidArgument);
	SYN_OK(api.synHostFree(0, src, 0));
	SYN_OK(api.synHostFree(0, dst, 0));
	SYN_OK(api.synDestroy());
}

HMR_TEST(sim_synapseai_copy_checks)
{
	unsigned char plain[8192] __attribute__((aligned(4096)));
	unsigned char *pinned;
	synStreamHandle s;
	synDeviceInfoV2 info;
	uint64_t a, src;

	setup(-1, &info);
	SYN_OK(api.synStreamCreateGeneric(&s, 0, 0));
	SYN_OK(api.synDeviceMalloc(0, 4096, 0, 0, &a));
	SYN_OK(api.synHostMalloc(0, 4096, 0, (void **)&pinned));
	src = (uintptr_t)plain;
	/* The device cannot reach host memory nobody mapped for it. */
	ASSERT_EQ(api.synMemCopyAsync(s, src, 16, a, HOST_TO_DRAM),
	          synMappingNotFound);
	SYN_OK(api.synHostMap(0, sizeof(plain), plain));
	SYN_OK(api.synHostMap(0, 100, plain + 10)); /* inside: no-op */
	ASSERT_EQ(api.synHostMap(0, sizeof(plain), plain + 4096),
	          synInvalidArgument); /* straddles the end */
	SYN_OK(api.synMemCopyAsync(s, src, 16, a, HOST_TO_DRAM));
	ASSERT_EQ(api.synMemCopyAsync(s, src + 8190, 16, a, HOST_TO_DRAM),
	          synMappingNotFound);
	SYN_OK(api.synStreamSynchronize(s));
	SYN_OK(api.synHostUnmap(0, plain));
	ASSERT_EQ(api.synHostUnmap(0, plain), synInvalidArgument);
	ASSERT_EQ(api.synHostUnmap(0, pinned), synInvalidArgument);
	ASSERT_EQ(api.synMemCopyAsync(s, src, 16, a, HOST_TO_DRAM),
	          synMappingNotFound);

	/* The device side lies inside one live buffer. */
	src = (uintptr_t)pinned;
	ASSERT_EQ(api.synMemCopyAsync(s, src, 16, a + 4090, HOST_TO_DRAM),
	          synInvalidArgument);
	ASSERT_EQ(api.synMemCopyAsync(s, src, 16, a + 8192, HOST_TO_DRAM),
	          synInvalidArgument);
	ASSERT_EQ(api.synMemsetD8Async(a, 1, 4097, s), synInvalidArgument);
	ASSERT_EQ(api.synMemCopyAsync(s, 0, 16, a, HOST_TO_DRAM),
	          synInvalidArgument);
	SYN_OK(api.synMemCopyAsync(s, 0, 0, a, HOST_TO_DRAM)); /* no work */
	ASSERT_EQ(api.synMemCopyAsync(s, src, 16, a, DIRECTION_ENUM_MAX),
	          synInvalidArgument);
	ASSERT_EQ(api.synMemCopyAsync(NULL, src, 16, a, HOST_TO_DRAM),
	          synInvalidArgument);
	ASSERT_EQ(api.synHostFree(0, pinned + 1, 0), synInvalidArgument);
	SYN_OK(api.synHostFree(0, pinned, 0));
	ASSERT_EQ(api.synHostFree(0, pinned, 0), synInvalidArgument);
	SYN_OK(api.synStreamDestroy(s));
	SYN_OK(api.synDestroy());
}

HMR_TEST(sim_synapseai_device_memory_faults)
{
	synDeviceInfoV2 info;
	unsigned char *pinned;
	synStreamHandle s;
	uint64_t p;
	int status;

	setup(-1, &info);
	SYN_OK(api.synStreamCreateGeneric(&s, 0, 0));
	SYN_OK(api.synDeviceMalloc(0, 4096, 0, 0, &p));
	SYN_OK(api.synHostMalloc(0, 4096, 0, (void **)&pinned));
	pinned[0] = 0x5a;
	h2d(s, p, pinned, 1);
	status = child_touch(p);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(WTERMSIG(status), SIGSEGV);
	SYN_OK(api.synDestroy());
}

HMR_TEST(sim_synapseai_host_accessible)
{
	synDeviceInfoV2 info;
	unsigned char *pinned;
	synStreamHandle s;
	uint64_t p;
	int status;

	setenv("HMR_SIM_SYNAPSEAI_HOST_ACCESSIBLE", "1", 1);
	setup(-1, &info);
	SYN_OK(api.synStreamCreateGeneric(&s, 0, 0));
	SYN_OK(api.synDeviceMalloc(0, 8192, 0, 0, &p));
	SYN_OK(api.synHostMalloc(0, 4096, 0, (void **)&pinned));
	pinned[0] = 0x5a;
	h2d(s, p + 4096, pinned, 1);
	ASSERT_EQ(*(volatile unsigned char *)(uintptr_t)(p + 4096), 0x5a);
	*(volatile unsigned char *)(uintptr_t)p = 0x5a;
	pinned[0] = 0;
	d2h(s, pinned, p, 1);
	ASSERT_EQ(pinned[0], 0x5a);
	status = child_touch(p);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	SYN_OK(api.synDestroy());
}

HMR_TEST(sim_synapseai_release_drops_memory)
{
	synDeviceInfoV2 info;
	unsigned char *pinned;
	synStreamHandle s;
	synDeviceId id;
	uint64_t p, q;

	setup(1, &info);
	SYN_OK(api.synStreamCreateGeneric(&s, 0, 0));
	SYN_OK(api.synDeviceMalloc(0, 4096, 0, 0, &p));
	SYN_OK(api.synHostMalloc(0, 4096, 0, (void **)&pinned));
	memset(pinned, 0x77, 4096);
	h2d(s, p, pinned, 4096);
	SYN_OK(api.synDeviceRelease(0));
	ASSERT_EQ(api.synStreamSynchronize(s), synInvalidArgument);
	ASSERT_EQ(api.synDeviceMalloc(0, 4096, 0, 0, &q), synFail);
	SYN_OK(api.synDeviceFree(0, p, 0)); /* no device: nothing to do */

	SYN_OK(api.synDeviceAcquireByModuleId(&id, 1));
	SYN_OK(api.synStreamCreateGeneric(&s, 0, 0));
	SYN_OK(api.synDeviceMalloc(0, 4096, 0, 0, &q));
	ASSERT_U64_EQ(q, p);
	SYN_OK(api.synHostMalloc(0, 4096, 0, (void **)&pinned));
	memset(pinned, 1, 4096);
	d2h(s, pinned, q, 4096);
	ASSERT_EQ(pinned[0], 0); /* the released device's bytes are gone */
	ASSERT_EQ(pinned[4095], 0);
	SYN_OK(api.synDestroy());
}

HMR_TEST(sim_synapseai_failure_injection_nth_call)
{
	uint64_t p[4] = {0, 0, 0, 0}, x = 42;
	synDeviceInfoV2 info;
	synStreamHandle s;
	uint32_t n = 0;

	setenv("HMR_SIM_SYNAPSEAI_FAIL",
	       "synDeviceMalloc@2=synOutOfDeviceMemory:1,"
	       "synStreamCreateGeneric,hlthunk_open=EBUSY,"
	       "synDeviceGetCount@1=8,hcclLookupDMABuff=hcclSystemError,"
	       "bogus@x",
	       1);
	setup(-1, &info);
	SYN_OK(api.synDeviceMalloc(0, 4096, 0, 0, &p[0]));
	SYN_OK(api.synDeviceMalloc(0, 4096, 0, 0, &p[1]));
	x = 42;
	ASSERT_EQ(api.synDeviceMalloc(0, 4096, 0, 0, &x),
	          synOutOfDeviceMemory);                   /* the third call */
	ASSERT_U64_EQ(x, 42);                              /* nothing written */
	SYN_OK(api.synDeviceMalloc(0, 4096, 0, 0, &p[2])); /* :1 */
	ASSERT_U64_EQ(p[2], p[1] + 4096);
	ASSERT_EQ(api.synStreamCreateGeneric(&s, 0, 0), synFail); /* default */
	SYN_OK(api.synDeviceGetCount(&n));
	ASSERT_EQ(api.synDeviceGetCount(&n), synNoDeviceFound);
	ASSERT_EQ(api.synDeviceGetCount(&n), synNoDeviceFound);
	ASSERT_EQ(api.hlthunk_open(HLTHUNK_DEVICE_DONT_CARE, NULL), -EBUSY);
	ASSERT_EQ(api.hcclLookupDMABuff(p[0], 4096, NULL), hcclSystemError);
	SYN_OK(api.synDestroy());
}

HMR_TEST(sim_synapseai_call_counters)
{
	synDeviceInfoV2 info;
	uint64_t p;
	int fd = -1, dmabuf;

	setup(-1, &info);
	ASSERT_EQ(api.calls("synInitialize"), 1);
	ASSERT_EQ(api.calls("synDeviceAcquireByDeviceType"), 1);
	ASSERT_EQ(api.calls("synDeviceGetInfoV2"), 1);
	/* The runtime's own use of the driver is not counted. */
	ASSERT_EQ(api.calls("hlthunk_open"), 0);
	SYN_OK(api.synDeviceMalloc(0, 4096, 0, 0, &p));
	ASSERT_EQ(api.synDeviceMalloc(0, 4096, 0, 1, &p), synFail);
	ASSERT_EQ(api.calls("synDeviceMalloc"), 2);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(api.hcclLookupDMABuff(p, 4096, &fd), hcclSuccess);
	ASSERT_EQ(api.calls("hcclLookupDMABuff"), 3);
	ASSERT_EQ(api.calls("hlthunk_device_mapped_memory_export_dmabuf_fd"),
	          0); /* HCL's export is the runtime's own */
	dmabuf = api.hlthunk_device_mapped_memory_export_dmabuf_fd(
	        (int)info.fd, info.globalHbmBaseAddress, 4096,
	        p - info.globalHbmBaseAddress, O_RDWR | O_CLOEXEC);
	ASSERT_GE(dmabuf, 0);
	ASSERT_EQ(api.hlthunk_close(dmabuf), 0);
	ASSERT_EQ(api.calls("hlthunk_device_mapped_memory_export_dmabuf_fd"),
	          1);
	ASSERT_EQ(api.calls("hlthunk_close"), 1);
	ASSERT_EQ(api.calls("synNoSuchThing"), 0);
	ASSERT_EQ(api.calls(NULL), 0);
	/* Only vendor names and hmr_sim_* hooks are exported. */
	ASSERT_TRUE(dlsym(api.syn, "syn_ready") == NULL);
	ASSERT_TRUE(dlsym(api.syn, "syn") == NULL);
	ASSERT_TRUE(dlsym(api.thunk, "sim_config") == NULL);
	ASSERT_TRUE(dlsym(api.thunk, "hmr_sim_synapseai_calls") != NULL);
	SYN_OK(api.synDestroy());
}

HMR_TEST(sim_synapseai_hlthunk_open_is_exclusive)
{
	synDeviceInfoV2 info;
	synDeviceId id;
	int fd0, fd, pfd[2];

	load();
	SYN_OK(api.synInitialize());
	fd0 = api.hlthunk_open(HLTHUNK_DEVICE_DONT_CARE, NULL);
	ASSERT_GE(fd0, 0);
	/* The runtime takes the next free device. */
	SYN_OK(api.synDeviceAcquire(&id, NULL));
	SYN_OK(api.synDeviceGetInfoV2(id, &info));
	ASSERT_EQ(info.deviceIndex, 1);
	ASSERT_EQ(api.hlthunk_open(HLTHUNK_DEVICE_GAUDI2, NULL), -EBUSY);
	ASSERT_EQ(api.hlthunk_open(HLTHUNK_DEVICE_INVALID, "0000:19:00.0"),
	          -EBUSY);
	ASSERT_EQ(api.hlthunk_open(HLTHUNK_DEVICE_GAUDI, NULL), -ENODEV);
	ASSERT_EQ(api.hlthunk_open_by_module_id(5), -ENODEV);
	SYN_OK(api.synDeviceRelease(0));
	ASSERT_EQ(api.synDeviceAcquireByModuleId(&id, 0), synNoDeviceFound);
	ASSERT_EQ(api.hlthunk_close(fd0), 0);
	SYN_OK(api.synDeviceAcquireByModuleId(&id, 0));
	SYN_OK(api.synDeviceRelease(0));
	fd = api.hlthunk_open_by_module_id(1);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(api.hlthunk_close(fd), 0);
	/* Other fds are simply closed, as hl-thunk does. */
	ASSERT_EQ(pipe(pfd), 0);
	ASSERT_EQ(api.hlthunk_close(pfd[0]), 0);
	ASSERT_EQ(api.hlthunk_close(pfd[0]), -1);
	ASSERT_EQ(errno, EBADF);
	close(pfd[1]);
	SYN_OK(api.synDestroy());
}

static void *thread_copies(void *arg)
{
	unsigned char *pinned = NULL;
	synStreamHandle s;
	unsigned seed = (unsigned)(uintptr_t)arg;
	uint64_t p;

	if (api.synStreamCreateGeneric(&s, 0, 0) != synSuccess ||
	    api.synHostMalloc(0, 8192, 0, (void **)&pinned) != synSuccess)
		return "setup";
	for (int i = 0; i < 200; i++) {
		size_t len = (size_t)(i % 7 + 1) * 1000;

		if (api.synDeviceMalloc(0, len, 0, 0, &p) != synSuccess)
			return "malloc";
		fill(pinned, len, seed + (unsigned)i);
		if (api.synMemCopyAsync(s, (uintptr_t)pinned, len, p,
		                        HOST_TO_DRAM) ||
		    api.synStreamSynchronize(s))
			return "h2d";
		memset(pinned, 0, len);
		if (api.synMemCopyAsync(s, p, len, (uintptr_t)pinned,
		                        DRAM_TO_HOST) ||
		    api.synStreamSynchronize(s))
			return "d2h";
		if (pinned[len - 1] !=
		    (unsigned char)((len - 1) * 31 + seed + (unsigned)i))
			return "data";
		if (api.synDeviceFree(0, p, 0) != synSuccess)
			return "free";
	}
	if (api.synStreamDestroy(s) || api.synHostFree(0, pinned, 0))
		return "teardown";
	return NULL;
}

HMR_TEST(sim_synapseai_threads)
{
	synDeviceInfoV2 info;
	pthread_t t[8];

	setup(-1, &info);
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, thread_copies,
		                         (void *)(uintptr_t)i),
		          0);
	for (int i = 0; i < 8; i++) {
		void *err;

		ASSERT_EQ(pthread_join(t[i], &err), 0);
		if (err)
			HMR_FAIL("thread %d: %s", i, (char *)err);
	}
	SYN_OK(api.synDestroy());
}
