/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_neuron_copy.c: copies, host registration and IPC on Neuron memory. */
#include <string.h>

#include "neuron_util.h"

#define LEN 65536

HMR_TEST(neuron_copy_to_goes_through_the_runtime)
{
	struct app a = app_open();
	nrt_tensor_t *t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 1, LEN);
	unsigned char in[300], out[300];

	fill(in, sizeof(in), 3);
	ASSERT_OK(hmr_hmem_copy_to(app_va(&a, t) + 1000, in, sizeof(in)));
	ASSERT_EQ(a.calls("nrt_memcpy_to_device"), 1);
	ASSERT_EQ(a.read(t, out, 1000, sizeof(out)), NRT_SUCCESS);
	ASSERT_EQ(memcmp(in, out, sizeof(in)), 0);
	a.free(&t);
}

/* The runtime copies back only by tensor handle; a mapping the CPU may
 * not read (the simulator's default) answers -FI_ENOSYS, not a fault. */
HMR_TEST(neuron_copy_from_unreadable_mapping_is_enosys)
{
	struct app a = app_open();
	nrt_tensor_t *t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, LEN);
	char out[64];

	ASSERT_EQ(hmr_hmem_copy_from(out, app_va(&a, t), sizeof(out)),
	          -FI_ENOSYS);
	a.free(&t);
}

/* The real mapping is read/write for its owner: a plain copy. */
HMR_TEST(neuron_copy_from_readable_mapping_copies)
{
	struct app a;
	nrt_tensor_t *t;
	unsigned char in[LEN], out[100];

	case_env("HMR_SIM_NEURON_HOST_ACCESSIBLE", "1");
	a = app_open();
	t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, LEN);
	fill(in, sizeof(in), 9);
	ASSERT_EQ(a.write(t, in, 0, sizeof(in)), NRT_SUCCESS);
	ASSERT_OK(hmr_hmem_copy_from(out, app_va(&a, t) + 777, sizeof(out)));
	ASSERT_EQ(memcmp(out, in + 777, sizeof(out)), 0);
	a.free(&t);
}

HMR_TEST(neuron_copy_from_past_the_mapping_is_einval)
{
	struct app a;
	nrt_tensor_t *t;
	char out[128];

	case_env("HMR_SIM_NEURON_HOST_ACCESSIBLE", "1");
	a = app_open();
	t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, LEN);
	ASSERT_EQ(
	        hmr_hmem_copy_from(out, app_va(&a, t) + LEN - 64, sizeof(out)),
	        -FI_EINVAL);
	a.free(&t);
}

HMR_TEST(neuron_host_register_is_enosys)
{
	char *buf = malloc(LEN);

	ASSERT_EQ(hmr_hmem_host_register(FI_HMEM_NEURON, buf, LEN), -FI_ENOSYS);
	ASSERT_EQ(hmr_hmem_host_unregister(FI_HMEM_NEURON, buf, LEN),
	          -FI_ENOSYS);
	free(buf);
}

HMR_TEST(neuron_ipc_is_enosys)
{
	struct app a = app_open();
	nrt_tensor_t *t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, LEN);
	char handle[64];
	size_t size = sizeof(handle);
	void *p = NULL;

	ASSERT_EQ(hmr_hmem_ipc_get(app_va(&a, t), handle, &size), -FI_ENOSYS);
	ASSERT_EQ(hmr_hmem_ipc_open(FI_HMEM_NEURON, 0, handle, size, &p),
	          -FI_ENOSYS);
	ASSERT_EQ(hmr_hmem_ipc_close(FI_HMEM_NEURON, app_va(&a, t)),
	          -FI_ENOSYS);
	a.free(&t);
}

HMR_TEST_MAIN()
