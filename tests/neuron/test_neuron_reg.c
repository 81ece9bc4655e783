/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_neuron_reg.c: fi_mr_regattr of Neuron memory on a software domain. */
#include "neuron_util.h"

#define LEN (1u << 20)

/* device.neuron is the N of /dev/neuron<N>: NeuronCore 2 is on 1. */
/* fi_mr: F47 F89 */
HMR_TEST(neuron_regattr_with_neuron_hint_registers_device_memory)
{
	struct app a = app_open();
	nrt_tensor_t *t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 2, LEN);
	struct fid_domain *d = hmem_domain();
	struct fid_mr *mr;

	ASSERT_OK(reg_iface(d, app_va(&a, t), LEN, FI_HMEM_NEURON, 1,
	                    FI_HMEM_DEVICE_ONLY, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
	a.free(&t);
}

/* fi_mr: F48 */
HMR_TEST(neuron_reg_without_hint_detects_neuron_memory)
{
	struct app a = app_open();
	nrt_tensor_t *t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, LEN);
	struct fid_domain *d = hmem_domain();
	struct fid_mr *mr;

	/* FI_HMEM_DEVICE_ONLY holds only if detection found device memory. */
	ASSERT_OK(fi_mr_reg(d, app_va(&a, t), LEN, FI_REMOTE_WRITE, 0, 7,
	                    FI_HMEM_DEVICE_ONLY, &mr, NULL));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
	a.free(&t);
}

HMR_TEST(neuron_regattr_neuron_hint_on_host_memory_is_refused)
{
	struct fid_domain *d = hmem_domain();
	struct fid_mr *mr;
	char *buf = malloc(LEN);

	app_open();
	ASSERT_EQ(reg_iface(d, buf, LEN, FI_HMEM_NEURON, 0, 0, &mr),
	          -FI_EINVAL);
	ASSERT_OK(fi_close(&d->fid));
	free(buf);
}

/* fi_mr: F93 */
HMR_TEST(neuron_regattr_cuda_hint_on_neuron_memory_is_refused)
{
	struct app a;
	nrt_tensor_t *t;
	struct fid_domain *d;
	struct fid_mr *mr;

	case_env("HMR_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
	a = app_open();
	t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, LEN);
	d = hmem_domain();
	ASSERT_NE(reg_iface(d, app_va(&a, t), LEN, FI_HMEM_CUDA, 0, 0, &mr), 0);
	ASSERT_OK(fi_close(&d->fid));
	a.free(&t);
}

/* Callers name Neuron devices in several ways (fabtests: the NeuronCore;
 * aws-ofi-nccl: -1): any device hint is taken, the iface still checked. */
/* fi_mr: F93 */
HMR_TEST(neuron_regattr_device_hint_is_not_checked)
{
	struct app a = app_open();
	nrt_tensor_t *t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, LEN);
	struct fid_domain *d = hmem_domain();
	struct hmr_hmem_info info;
	struct fid_mr *mr;
	int hints[] = {0, 1, 3, -1};
	size_t i;

	ASSERT_OK(hmr_hmem_query(app_va(&a, t), LEN, &info));
	ASSERT_TRUE(info.flags & HMR_HMEM_DEVICE_UNCHECKED);
	for (i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
		ASSERT_OK(reg_iface(d, app_va(&a, t), LEN, FI_HMEM_NEURON,
		                    hints[i], 0, &mr));
		ASSERT_OK(fi_close(&mr->fid));
	}
	ASSERT_EQ(reg_iface(d, app_va(&a, t), LEN, FI_HMEM_CUDA, 0, 0, &mr),
	          -FI_ENOSYS);
	ASSERT_OK(fi_close(&d->fid));
	a.free(&t);
}

HMR_TEST_MAIN()
