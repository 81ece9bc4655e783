/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_ze_intel.c: Intel's real driver installed, no GPU: ze absent. */
#include <libgen.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ze_util.h"

/*
 * CTest gives this case HMR_ZE_LIBRARY = the real loader (absolute path)
 * and no ZE_ENABLE_ALT_DRIVERS: the loader looks for the drivers
 * installed on this machine.  Not in ASan/TSan builds, whose runtime
 * aborts at a dlopen of Intel's driver (test_ze_sanitized.c).
 */

/* Where Debian's intel-opencl-icd put Intel's driver: the loader's own
 * directory (both come from the multiarch library directory). */
static const char *intel_driver(char *path, size_t len)
{
	const char *loader = getenv("HMR_ZE_LIBRARY");
	char dir[512];

	if (!loader || !*loader)
		HMR_FAIL("HMR_ZE_LIBRARY is not set by CTest");
	snprintf(dir, sizeof(dir), "%s", loader);
	snprintf(path, len, "%s/libze_intel_gpu.so.1", dirname(dir));
	return path;
}

/*
 * The real Intel GPU driver (compute-runtime), installed and no GPU: the
 * loader loads it, it finds no device, and zeInit fails: ze is absent,
 * with the reason, and nothing crashes.  That the loader did load Intel's
 * driver is read from the dynamic linker's own trace (LD_DEBUG=files),
 * which needs a fresh process: the case runs itself again.
 */
HMR_TEST(ze_absent_with_intel_driver_and_no_gpu)
{
	char driver[600], trace[64], file[96], line[1024];
	int status, loaded = 0;
	pid_t pid;
	FILE *f;

	if (getenv("HMR_TEST_ZE_CHILD")) {
		expect_ze_absent("zeInit: ZE_RESULT_ERROR_UNINITIALIZED");
		return;
	}
	if (access(intel_driver(driver, sizeof(driver)), R_OK))
		HMR_SKIP("%s is missing: apt-get install intel-opencl-icd "
		         "(scripts/deps.sh installs it)",
		         driver);
	snprintf(trace, sizeof(trace), "/tmp/hmr-ze-ld-%d", (int)getpid());
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		setenv("HMR_TEST_ZE_CHILD", "1", 1);
		setenv("LD_DEBUG", "files", 1);
		setenv("LD_DEBUG_OUTPUT", trace, 1);
		execl("/proc/self/exe", "test_ze_absent",
		      "ze_absent_with_intel_driver_and_no_gpu", (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	snprintf(file, sizeof(file), "%s.%d", trace, (int)pid);
	f = fopen(file, "r");
	ASSERT_TRUE(f != NULL);
	while (fgets(line, sizeof(line), f))
		loaded |= strstr(line, "file=libze_intel_gpu.so.1") &&
		          strstr(line, "dynamically loaded by") &&
		          strstr(line, "libze_loader.so.1");
	fclose(f);
	unlink(file);
	if (!loaded)
		HMR_FAIL("the loader never loaded libze_intel_gpu.so.1");
}

HMR_TEST_MAIN()
