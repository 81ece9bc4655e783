/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cuda_absent.c: CUDA absent for each reason, cleanly; old drivers. */
#include <string.h>
#include <unistd.h>

#include "cuda_util.h"

/* Each case runs with its own HMR_CUDA_LIBRARY (see CMakeLists.txt). */
static void expect_absent(const char *reason)
{
	struct hmr_hmem_info info;
	char why[192], buf[64];

	ASSERT_EQ(hmr_hmem_status(FI_HMEM_CUDA, why, sizeof(why)), -FI_ENOSYS);
	if (!strstr(why, reason))
		HMR_FAIL("why \"%s\" does not say \"%s\"", why, reason);
	/* Absent is not an error: host memory still classifies. */
	ASSERT_OK(hmr_hmem_query(buf, sizeof(buf), &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
}

HMR_TEST(cuda_absent_with_toolkit_stub_library)
{
	const char *lib;

	case_driver("HMR_TEST_CUDA_STUB");
	lib = getenv("HMR_CUDA_LIBRARY");

	if (!lib || !*lib || access(lib, R_OK))
		HMR_SKIP("the CUDA toolkit's stub libcuda is not installed");
	expect_absent("stub");
}

HMR_TEST(cuda_absent_without_libcuda)
{
	case_env("HMR_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
	expect_absent("does not load");
}

HMR_TEST(cuda_absent_with_no_device)
{
	case_env("HMR_SIM_CUDA_DEVICES", "0");
	expect_absent("no CUDA device");
}

HMR_TEST(cuda_not_selected_by_hmr_hmem)
{
	case_env("HMR_HMEM", "rocr");
	expect_absent("not selected");
}

HMR_TEST(cuda_absent_domain_refuses_cuda_hint)
{
	struct fid_domain *d;
	struct fid_mr *mr;

	case_env("HMR_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
	d = hmem_domain();
	char buf[4096];

	/* HMR_CUDA_LIBRARY points nowhere for this case. */
	ASSERT_EQ(reg_iface(d, buf, sizeof(buf), FI_HMEM_CUDA, 0, 0, &mr),
	          -FI_ENOSYS);
	ASSERT_OK(fi_close(&d->fid));
}

HMR_TEST(cuda_old_driver_has_no_dmabuf)
{
	struct sim s;
	unsigned long long p;

	case_driver("HMR_TEST_SIM_CUDA11");
	s = sim_open();
	p = sim_alloc_on(&s, 0, 1 << 20);
	struct hmr_hmem_info info;
	uint64_t offset;
	int fd;

	/* Symbols came through cuGetProcAddress (v1): queries work. */
	ASSERT_OK(hmr_hmem_status(FI_HMEM_CUDA, NULL, 0));
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_CUDA);
	/* cuMemGetHandleForAddressRange needs driver 11.7. */
	ASSERT_EQ(hmr_hmem_dmabuf_get((void *)(uintptr_t)p, 4096, 0, &fd,
	                              &offset),
	          -FI_EOPNOTSUPP);
	s.free(p);
}

/* HMR_HMEM names a backend by its whole name: neither a longer nor a
 * shorter one selects it. */
HMR_TEST(cuda_hmr_hmem_selects_by_whole_name)
{
	case_env("HMR_HMEM", "cudax,cud");
	expect_absent("not selected");
}

HMR_TEST_MAIN()
