/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_ze_info.c: what the Level Zero backend reports; hmr_hmem_alloc. */
#include <string.h>

#include "ze_util.h"

/* CTest runs each case with one driver and with two (ze_<mode>_<case>). */

HMR_TEST(info_names_the_loader_and_counts_every_driver_s_devices)
{
	struct hmr_hmem_backend_info b = HMR_HMEM_BACKEND_INFO_INIT;
	uint32_t drivers = ze_driver_count();
	char want[32];

	ASSERT_OK(hmr_hmem_backend_info(FI_HMEM_ZE, &b));
	printf("library %s, version %s, %u devices\n", b.library, b.version,
	       b.devices);
	ASSERT_TRUE(strstr(b.library, "libze_loader.so") != NULL);
	ASSERT_TRUE(strncmp(b.version, "loader 1.", 9) == 0);
	snprintf(want, sizeof(want), ", %u drivers", drivers);
	ASSERT_TRUE(strstr(b.version, want) != NULL);
	ASSERT_EQ(b.devices, 2 * drivers); /* Two devices per driver. */
	/* No peer-memory module is known for Intel GPUs. */
	ASSERT_EQ(b.peermem[0], '\0');
}

/* fi_mr: F103 */
HMR_TEST(info_devices_carry_their_fi_hmem_ze_device_numbers)
{
	struct hmr_hmem_device_info d = HMR_HMEM_DEVICE_INFO_INIT;
	uint32_t drivers = ze_driver_count(), i;

	for (i = 0; i < 2 * drivers; i++) {
		ASSERT_OK(hmr_hmem_device_info(FI_HMEM_ZE, i, &d));
		ASSERT_U64_EQ(d.device,
		              fi_hmem_ze_device((int)i / 2, (int)i % 2));
		ASSERT_TRUE(strncmp(d.name, "hmr simulated GPU", 17) == 0);
		ASSERT_EQ(d.dmabuf, 1);
	}
	ASSERT_EQ(hmr_hmem_device_info(FI_HMEM_ZE, i, &d), -FI_ENOENT);
}

HMR_TEST(info_dmabuf_support_is_per_device)
{
	struct hmr_hmem_device_info d = HMR_HMEM_DEVICE_INFO_INIT;

	case_env("HMR_SIM_ZE_DMABUF", "1,0");
	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_ZE, 0, &d));
	ASSERT_EQ(d.dmabuf, 1);
	ASSERT_OK(hmr_hmem_device_info(FI_HMEM_ZE, 1, &d));
	ASSERT_EQ(d.dmabuf, 0);
	ASSERT_TRUE(strstr(d.dmabuf_why, "dma-buf") != NULL);
}

HMR_TEST(alloc_places_memory_on_the_device_it_names)
{
	uint32_t last = ze_driver_count() - 1;
	int device = fi_hmem_ze_device((int)last, 1);
	struct hmr_hmem_info info;
	void *p;

	ASSERT_OK(hmr_hmem_alloc(FI_HMEM_ZE, (uint64_t)device, 1 << 16, &p));
	ASSERT_OK(hmr_hmem_query(p, 1 << 16, &info));
	ASSERT_EQ(info.iface, FI_HMEM_ZE);
	ASSERT_U64_EQ(info.device, device);
	ASSERT_EQ(info.flags, HMR_HMEM_DEVICE_ONLY);
	ASSERT_OK(hmr_hmem_free(FI_HMEM_ZE, p));
	ASSERT_OK(hmr_hmem_query(p, 1, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	ASSERT_EQ(hmr_hmem_alloc(FI_HMEM_ZE, fi_hmem_ze_device(0, 2), 4096, &p),
	          -FI_EINVAL);
	ASSERT_EQ(hmr_hmem_free(FI_HMEM_ZE, &info), -FI_EINVAL);
}

HMR_TEST_MAIN()
