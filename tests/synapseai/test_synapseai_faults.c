/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_synapseai_faults.c: every vendor call failing; declarations; codes. */
#include <errno.h>
#include <sys/wait.h>

#include "synapseai_util.h"

/*
 * hmr's declarations, re-read with the simulator's own types (which cite
 * the vendor headers independently): every entry of the backend's lists
 * must have exactly the simulator's prototype, or this file does not
 * compile.
 */
#define HMR_SYNAPSEAI_SDK_TYPES
typedef synStatus hmr_synStatus;
typedef synDmaDir hmr_synDmaDir;
typedef synDeviceId hmr_synDeviceId;
typedef synStreamHandle hmr_synStreamHandle;
typedef synDeviceInfoV2 hmr_synDeviceInfoV2;
#include "synapseai/synapseai_api.h"

#define ABI(name, req, ret, params)                                            \
	_Static_assert(__builtin_types_compatible_p(hmr_##name##_fn,           \
	                                            __typeof__(&name)),        \
	               #name);
HMR_SYN_CALLS(ABI)
HMR_HLTHUNK_CALLS(ABI)
#undef ABI
#define SAME_STATUS(n, value, code) _Static_assert((int)HMR_##n == (int)n, #n);
HMR_SYN_STATUSES(SAME_STATUS)
#undef SAME_STATUS
_Static_assert((int)HMR_SYN_HOST_TO_DRAM == (int)HOST_TO_DRAM, "dir");
_Static_assert((int)HMR_SYN_DRAM_TO_HOST == (int)DRAM_TO_HOST, "dir");
_Static_assert((int)HMR_HCCL_SUCCESS == (int)hcclSuccess, "hccl");
_Static_assert((int)HMR_HCCL_NO_DEVICE_FOUND == (int)hcclNoDeviceFound, "hccl");
_Static_assert((int)HMR_HCCL_UNSUPPORTED == (int)hcclUnsupported, "hccl");
_Static_assert((int)HMR_HCCL_OUT_OF_MEMORY == (int)hcclOutOfMemory, "hccl");
_Static_assert((int)HMR_HCCL_INVALID_ARGUMENT == (int)hcclInvalidArgument,
               "hccl");
#define SAME_FIELD(f)                                                          \
	_Static_assert(offsetof(struct hmr_synDeviceInfoV2, f) ==              \
	                               offsetof(synDeviceInfoV2, f) &&         \
	                       sizeof(((struct hmr_synDeviceInfoV2 *)0)->f) == \
	                               sizeof(((synDeviceInfoV2 *)0)->f),      \
	               #f);
SAME_FIELD(sramBaseAddress)
SAME_FIELD(dramBaseAddress)
SAME_FIELD(sramSize)
SAME_FIELD(dramSize)
SAME_FIELD(tpcEnabledMask)
SAME_FIELD(dramEnabled)
SAME_FIELD(deviceId)
SAME_FIELD(fd)
SAME_FIELD(deviceType)
SAME_FIELD(deviceIndex)
SAME_FIELD(globalHbmBaseAddress)
_Static_assert(sizeof(struct hmr_synDeviceInfoV2) == sizeof(synDeviceInfoV2),
               "synDeviceInfoV2");
#undef SAME_FIELD

#define MIB      ((size_t)1 << 20)
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

HMR_TEST(synapseai_vendor_errors_map_to_fi_codes)
{
	ASSERT_EQ(hmr__synapseai_check("t", synSuccess), 0);
	ASSERT_EQ(hmr__synapseai_check("t", synInvalidArgument), -FI_EINVAL);
	ASSERT_EQ(hmr__synapseai_check("t", synMappingNotFound), -FI_EFAULT);
	ASSERT_EQ(hmr__synapseai_check("t", synOutOfDeviceMemory), -FI_ENOMEM);
	ASSERT_EQ(hmr__synapseai_check("t", synUnsupported), -FI_EOPNOTSUPP);
	ASSERT_EQ(hmr__synapseai_check("t", synBusy), -FI_EBUSY);
	ASSERT_EQ(hmr__synapseai_check("t", synFailedDynamicPatching), -FI_EIO);
	ASSERT_EQ(hmr__synapseai_check("t", (synStatus)1000), -FI_EIO);
	ASSERT_EQ(hmr__hccl_check("t", hcclSuccess), 0);
	ASSERT_EQ(hmr__hccl_check("t", hcclInvalidArgument), -FI_EINVAL);
	ASSERT_EQ(hmr__hccl_check("t", hcclInternalError), -FI_EIO);
	ASSERT_EQ(hmr__hccl_check("t", hcclUninitialized), -FI_EIO);
	ASSERT_EQ(hmr__hccl_check("t", 99), -FI_EIO);
	ASSERT_EQ(hmr__hlthunk_check("t", 5), 0);
	ASSERT_EQ(hmr__hlthunk_check("t", -EINVAL), -FI_EINVAL);
	ASSERT_EQ(hmr__hlthunk_check("t", -EOPNOTSUPP), -FI_EOPNOTSUPP);
	ASSERT_EQ(hmr__hlthunk_check("t", -ENOTTY), -FI_EOPNOTSUPP);
	ASSERT_EQ(hmr__hlthunk_check("t", -EIO), -FI_EIO);
	ASSERT_EQ(hmr__hlthunk_check("t", -1), -FI_EPERM);
	ASSERT_EQ(hmr__hlthunk_check("t", -9999), -FI_EIO);
}

/* Every call the backend makes, from its own lists. */
static const char *const calls[] = {
#define NAME(name, req, ret, params) #name,
        HMR_SYN_CALLS(NAME) HMR_HLTHUNK_CALLS(NAME)
#undef NAME
};

/* fds of the simulated HBM: the simulator's own memfd, HCL's dma-buf,
 * and any exported dma-buf still open. */
static int hbm_fds(void)
{
	char target[256];
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	ssize_t n;
	int count = 0;

	if (!d)
		HMR_FAIL("opendir /proc/self/fd");
	while ((e = readdir(d))) {
		n = readlinkat(dirfd(d), e->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		count += strstr(target, "sim-synapseai:hbm") != NULL;
	}
	closedir(d);
	return count;
}

/* A result: 0 or a negative -FI_E* code, never positive. */
static int clean(int rc, const char *what)
{
	if (rc > 0)
		HMR_FAIL("%s returned %d", what, rc);
	return rc;
}
#define CLEAN(expr) clean((expr), #expr)

static void copies(uint64_t p, const unsigned char *src, unsigned char *back,
                   size_t len)
{
	const void *dev = (const void *)(uintptr_t)p;

	/* The device memory is host-accessible here: it is the truth. */
	if (!CLEAN(hmr_hmem_copy_to((void *)(uintptr_t)p, src, len)))
		ASSERT_EQ(memcmp(dev, src, len), 0);
	memset(back, 0, len);
	if (!CLEAN(hmr_hmem_copy_from(back, dev, len)))
		ASSERT_EQ(memcmp(back, dev, len), 0);
}

static void dmabuf(uint64_t p)
{
	const unsigned char *at = (const unsigned char *)(uintptr_t)p + 4101;
	uint64_t offset;
	int fd = -1;

	if (CLEAN(hmr_hmem_dmabuf_get(at, 100, 0, &fd, &offset)))
		return;
	expect_fd_bytes(fd, offset, at, 100);
	CLEAN(hmr_hmem_dmabuf_put(at, fd));
}

static void host_memory(uint64_t p, unsigned char *hbuf)
{
	pattern(hbuf, 4096, 8);
	if (CLEAN(hmr_hmem_host_register(FI_HMEM_SYNAPSEAI, hbuf, 65536)))
		return;
	if (!CLEAN(hmr_hmem_copy_to((void *)(uintptr_t)p, hbuf, 4096)))
		ASSERT_EQ(memcmp((void *)(uintptr_t)p, hbuf, 4096), 0);
	CLEAN(hmr_hmem_host_unregister(FI_HMEM_SYNAPSEAI, hbuf, 65536));
}

static void info_calls(void)
{
	struct hmr_hmem_backend_info b = HMR_HMEM_BACKEND_INFO_INIT;
	struct hmr_hmem_device_info d = HMR_HMEM_DEVICE_INFO_INIT;
	void *p;

	CLEAN(hmr_hmem_backend_info(FI_HMEM_SYNAPSEAI, &b));
	CLEAN(hmr_hmem_device_info(FI_HMEM_SYNAPSEAI, 0, &d));
	if (!CLEAN(hmr_hmem_alloc(FI_HMEM_SYNAPSEAI, 0, 4096, &p)))
		CLEAN(hmr_hmem_free(FI_HMEM_SYNAPSEAI, p));
}

/*
 * Everything the backend does, each step allowed to fail but never to
 * crash, return a positive code, give wrong bytes or leave an fd open.
 */
static void flow(bool hccl)
{
	size_t len = 5 * MIB / 2 + 3;
	unsigned char *src, *back, *hbuf;
	struct hmr_hmem_info info;
	struct fid_domain *d;
	struct fid_mr *mr;
	int fds, hbm, round;
	void *dev;
	uint64_t p;

	app_load();
	if (CLEAN(hmr_hmem_status(FI_HMEM_SYNAPSEAI, NULL, 0)))
		return; /* start-up failed cleanly */
	if (CLEAN(hmr_hmem_alloc(FI_HMEM_SYNAPSEAI, 0, 3 * MIB, &dev))) {
		hmr__synapseai_unload();
		return;
	}
	p = (uintptr_t)dev;
	src = malloc(len);
	back = malloc(len);
	hbuf = aligned_alloc(4096, 65536);
	fds = hmr_test_open_fds() - hbm_fds();
	hbm = hbm_fds();
	if (!CLEAN(hmr_hmem_query((void *)(uintptr_t)(p + 100), 64, &info)))
		ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
	pattern(src, len, 1);
	for (round = 0; round < 2; round++) /* again, after any abandon */
		copies(p, src, back, len);
	dmabuf(p);
	host_memory(p, hbuf);
	d = hmem_domain();
	if (!CLEAN(reg_iface(d, p, MIB, FI_HMEM_SYNAPSEAI, 0, &mr)))
		ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
	info_calls();
	/* Before the last free: it gives back the device hmr acquired for
	 * the allocation, and the runtime closes the device's own fds. */
	ASSERT_EQ(hmr_test_open_fds() - hbm_fds(), fds);
	/* HCL's fd may have been made; no dma-buf of hmr's is left. */
	ASSERT_LE(hbm_fds(), hbm + (hccl ? 1 : 0));
	CLEAN(hmr_hmem_free(FI_HMEM_SYNAPSEAI, dev));
	/* What exit does (hmem's destructor): stream, staging, device;
	 * hbuf is unmapped by then even if its unregister failed. */
	hmr__synapseai_unload();
	free(src);
	free(back);
	free(hbuf);
}

/* The extra failure that makes synStatusGetBriefDescription run. */
static void spec_for(const char *name, int second, char *spec, size_t len)
{
	if (!second && !strcmp(name, "synStatusGetBriefDescription"))
		snprintf(spec, len, "%s,synMemCopyAsync:1", name);
	else
		snprintf(spec, len, second ? "%s@1:1" : "%s", name);
}

/*
 * A child per failure, each failing one call for good and then (@1:1)
 * only its second call.  A child exits 10 when the flow never made the
 * call; unreached_ok names the calls a route does not make.
 */
static void walk(bool hccl, const char *unreached_ok)
{
	char spec[128];
	int status, failed = 0;
	size_t i;
	pid_t pid;

	if (!getenv("HMR_TEST_SIM_SYNAPSE"))
		HMR_SKIP("HMR_TEST_SIM_SYNAPSE is not set");
	for (i = 0; i < COUNT(calls) * 2; i++) {
		const char *name = calls[i / 2];

		spec_for(name, (int)(i % 2), spec, sizeof(spec));
		fflush(NULL);
		pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			case_env("HMR_SIM_SYNAPSEAI_FAIL", spec);
			case_env("HMR_SIM_SYNAPSEAI_HOST_ACCESSIBLE", "1");
			if (hccl)
				case_env("HMR_HLTHUNK_LIBRARY", "/nonexistent");
			flow(hccl);
			/* 10: the flow never called it. */
			exit(app.calls(name) || i % 2 ? 0 : 10);
		}
		ASSERT_EQ(waitpid(pid, &status, 0), pid);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 10 &&
		    strstr(unreached_ok, name))
			continue;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr,
			        "FAILED with HMR_SIM_SYNAPSEAI_FAIL=%s: "
			        "wait status %#x\n",
			        spec, status);
			failed++;
		}
	}
	ASSERT_EQ(failed, 0);
}

HMR_TEST(synapseai_every_injected_failure_ends_cleanly_hlthunk_route)
{
	walk(false, "hcclLookupDMABuff");
}

HMR_TEST(synapseai_every_injected_failure_ends_cleanly_hccl_route)
{
	walk(true, "hlthunk_device_mapped_memory_export_dmabuf_fd");
}

HMR_TEST_MAIN()
