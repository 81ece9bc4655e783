/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cuda_info.c: what hmr says of the CUDA backend before registering. */
#include "cuda_util.h"

HMR_TEST(cuda_backend_info_names_library_version_devices_peermem)
{
	struct hmr_hmem_backend_info info = HMR_HMEM_BACKEND_INFO_INIT;

	ASSERT_OK(hmr_hmem_backend_info(FI_HMEM_CUDA, &info));
	ASSERT_TRUE(strcmp(info.library, getenv("HMR_CUDA_LIBRARY")) == 0);
	ASSERT_TRUE(strcmp(info.version, "driver 13.0") == 0);
	ASSERT_EQ(info.devices, 2);
	ASSERT_TRUE(strstr(info.peermem, "nvidia_peermem") != NULL);
}

/* HMR_SIM_CUDA_DMABUF=1,0 for the file: device 1 cannot export. */
HMR_TEST(cuda_device_info_says_dmabuf_support_per_device)
{
	struct hmr_hmem_device_info d0 = HMR_HMEM_DEVICE_INFO_INIT;
	struct hmr_hmem_device_info d1 = HMR_HMEM_DEVICE_INFO_INIT;
	struct hmr_hmem_device_info d2 = HMR_HMEM_DEVICE_INFO_INIT;

	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_CUDA, 0, &d0));
	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_CUDA, 1, &d1));
	ASSERT_EQ(hmr_hmem_device_info(FI_HMEM_CUDA, 2, &d2), -FI_ENOENT);
	ASSERT_EQ(d0.device, 0);
	ASSERT_EQ(d1.device, 1);
	ASSERT_TRUE(d0.name[0] != '\0');
	ASSERT_EQ(d0.dmabuf, 1);
	ASSERT_EQ(d1.dmabuf, 0);
	ASSERT_TRUE(strstr(d1.dmabuf_why, "DMA_BUF_SUPPORTED") != NULL);
}

HMR_TEST(cuda_device_info_of_old_driver_says_what_it_lacks)
{
	struct hmr_hmem_device_info d = HMR_HMEM_DEVICE_INFO_INIT;

	case_driver("HMR_TEST_SIM_CUDA11");
	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_CUDA, 0, &d));
	ASSERT_EQ(d.dmabuf, 0);
	ASSERT_TRUE(strstr(d.dmabuf_why, "cuMemGetHandleForAddressRange"));
}

/* A caller built against a smaller struct gets only what fits. */
HMR_TEST(cuda_device_info_fills_no_more_than_the_callers_size)
{
	struct {
		struct hmr_hmem_device_info info;
		char guard[16];
	} s;

	memset(&s, 0x5a, sizeof(s));
	s.info.size = offsetof(struct hmr_hmem_device_info, dmabuf);
	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_CUDA, 1, &s.info));
	ASSERT_EQ(s.info.device, 1);
	ASSERT_EQ((unsigned char)((char *)&s.info.dmabuf)[0], 0x5a);
	ASSERT_EQ((unsigned char)s.guard[0], 0x5a);
}

HMR_TEST(cuda_alloc_gives_device_memory_hmr_classifies)
{
	struct hmr_hmem_info info;
	void *p;

	ASSERT_OK(hmr_hmem_alloc(FI_HMEM_CUDA, 1, 1 << 20, &p));
	ASSERT_OK(hmr_hmem_query(p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_CUDA);
	ASSERT_EQ(info.device, 1);
	ASSERT_OK(hmr_hmem_free(FI_HMEM_CUDA, p));
	ASSERT_EQ(hmr_hmem_alloc(FI_HMEM_CUDA, 7, 4096, &p), -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_alloc(FI_HMEM_CUDA, 0, 0, &p), -FI_EINVAL);
}

HMR_TEST(hmem_system_alloc_is_page_aligned_host_memory)
{
	struct hmr_hmem_backend_info info = HMR_HMEM_BACKEND_INFO_INIT;
	struct hmr_hmem_device_info d = HMR_HMEM_DEVICE_INFO_INIT;
	void *p;

	ASSERT_OK(hmr_hmem_alloc(FI_HMEM_SYSTEM, 0, 100, &p));
	ASSERT_EQ((uintptr_t)p % 4096, 0);
	memset(p, 1, 100);
	ASSERT_OK(hmr_hmem_free(FI_HMEM_SYSTEM, p));
	ASSERT_OK(hmr_hmem_backend_info(FI_HMEM_SYSTEM, &info));
	ASSERT_EQ(info.devices, 0);
	ASSERT_EQ(hmr_hmem_device_info(FI_HMEM_SYSTEM, 0, &d), -FI_ENOENT);
	ASSERT_EQ(hmr_hmem_backend_info(FI_HMEM_ROCR, &info), -FI_ENOSYS);
	ASSERT_EQ(hmr_hmem_backend_info((enum fi_hmem_iface)99, &info),
	          -FI_EINVAL);
}

HMR_TEST_MAIN()
