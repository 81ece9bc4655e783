/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_synapseai_info.c: what hmr says of the SynapseAI backend. */
#include "synapseai_util.h"

HMR_TEST(synapseai_backend_info_names_library_version_one_device)
{
	struct hmr_hmem_backend_info info = HMR_HMEM_BACKEND_INFO_INIT;

	ASSERT_OK(hmr_hmem_backend_info(FI_HMEM_SYNAPSEAI, &info));
	ASSERT_TRUE(strcmp(info.library, getenv("HMR_SYNAPSEAI_LIBRARY")) == 0);
	ASSERT_TRUE(strcmp(info.version, "driver 1.21.0.hmrsim") == 0);
	/* Two Gaudis on the host, one per process. */
	ASSERT_EQ(info.devices, 1);
	ASSERT_TRUE(info.peermem[0] == '\0');
}

HMR_TEST(synapseai_device_info_probes_hlthunk_export)
{
	struct hmr_hmem_device_info d = HMR_HMEM_DEVICE_INFO_INIT;
	int before;

	app_start();
	ASSERT_OK(hmr_hmem_status(FI_HMEM_SYNAPSEAI, NULL, 0));
	before = hmr_test_open_fds();
	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_SYNAPSEAI, 0, &d));
	ASSERT_EQ(d.device, 0);
	ASSERT_TRUE(strcmp(d.name, "Gaudi2 module 0") == 0);
	ASSERT_EQ(d.dmabuf, 1);
	ASSERT_EQ(hmr_test_open_fds(), before); /* the probe's fd is closed */
	ASSERT_EQ(app.calls("hlthunk_device_mapped_memory_export_dmabuf_fd"),
	          1);
	ASSERT_EQ(hmr_hmem_device_info(FI_HMEM_SYNAPSEAI, 1, &d), -FI_ENOENT);
}

HMR_TEST(synapseai_device_info_says_why_export_is_off)
{
	struct hmr_hmem_device_info d = HMR_HMEM_DEVICE_INFO_INIT;

	case_env("HMR_SIM_SYNAPSEAI_DMABUF", "0");
	app_start();
	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_SYNAPSEAI, 0, &d));
	ASSERT_EQ(d.dmabuf, 0);
	ASSERT_TRUE(strstr(d.dmabuf_why, "Operation not supported") != NULL);
}

/* HCL's fd is not asked for: unknown until a registration tries. */
HMR_TEST(synapseai_device_info_without_hlthunk_is_unknown)
{
	struct hmr_hmem_device_info d = HMR_HMEM_DEVICE_INFO_INIT;

	case_env("HMR_HLTHUNK_LIBRARY", "/nonexistent/libhl-thunk.so");
	app_start();
	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_SYNAPSEAI, 0, &d));
	ASSERT_EQ(d.dmabuf, -1);
	ASSERT_TRUE(strstr(d.dmabuf_why, "hcclLookupDMABuff") != NULL);
	ASSERT_EQ(app.calls("hcclLookupDMABuff"), 0);
}

/* Before the application acquires the Gaudi, hmr says so and asks the
 * device nothing: no export probe, no acquire of its own. */
HMR_TEST(synapseai_device_info_before_any_acquire_asks_the_device_nothing)
{
	struct hmr_hmem_device_info d = HMR_HMEM_DEVICE_INFO_INIT;

	app_load();
	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_SYNAPSEAI, 0, &d));
	ASSERT_EQ(d.device, 0);
	ASSERT_TRUE(strcmp(d.name, "Gaudi, not acquired by this process") == 0);
	ASSERT_EQ(d.dmabuf, -1);
	ASSERT_TRUE(strstr(d.dmabuf_why, "acquires") != NULL);
	ASSERT_EQ(app.calls("hlthunk_device_mapped_memory_export_dmabuf_fd"),
	          0);
	ASSERT_EQ(app.calls("synDeviceAcquire"), 0);
}

HMR_TEST(synapseai_alloc_gives_device_memory_hmr_classifies)
{
	struct hmr_hmem_info info;
	void *p;

	ASSERT_OK(hmr_hmem_alloc(FI_HMEM_SYNAPSEAI, 0, 1 << 20, &p));
	ASSERT_OK(hmr_hmem_query(p, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYNAPSEAI);
	ASSERT_EQ(info.device, 0);
	ASSERT_OK(hmr_hmem_free(FI_HMEM_SYNAPSEAI, p));
	ASSERT_EQ(hmr_hmem_alloc(FI_HMEM_SYNAPSEAI, 1, 4096, &p), -FI_EINVAL);
	/* Not a buffer's start: Synapse refuses, hmr says so. */
	ASSERT_OK(hmr_hmem_alloc(FI_HMEM_SYNAPSEAI, 0, 8192, &p));
	ASSERT_EQ(hmr_hmem_free(FI_HMEM_SYNAPSEAI, (char *)p + 4096), -FI_EIO);
	ASSERT_OK(hmr_hmem_free(FI_HMEM_SYNAPSEAI, p));
}

HMR_TEST_MAIN()
