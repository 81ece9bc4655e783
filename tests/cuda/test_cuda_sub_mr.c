/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cuda_sub_mr.c: a sub-MR of CUDA memory is its base's memory. */
#include "core/domain.h"
#include "cuda_util.h"

#define MIB (1 << 20)

/*
 * No public call says what memory an MR holds, and on the software domain
 * nothing a peer can see depends on it (the verbs registrar exports a
 * dma-buf of mr->iface and mr->device): read the MR object, linked
 * against the library's objects with core's include view.
 */
static const struct hmr_mr *mr_of(const struct fid_mr *mr)
{
	return (const struct hmr_mr *)mr;
}

static struct fid_mr *sub_reg(struct fid_domain *d, struct fid_mr *base,
                              void *p, uint64_t key, enum fi_hmem_iface iface,
                              int device)
{
	struct iovec iov = {p, 4096};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_READ,
	                          .requested_key = key,
	                          .iface = iface,
	                          .base_mr = base};
	struct fid_mr *mr = NULL;

	attr.device.reserved = (uint64_t)device;
	ASSERT_OK(fi_mr_regattr(d, &attr, 0, &mr));
	return mr;
}

HMR_TEST(cuda_sub_mr_takes_base_iface_and_device)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 1, MIB);
	struct fid_domain *d = hmem_domain();
	struct fid_mr *base, *sub[2];
	int i;

	ASSERT_OK(reg_iface(d, (void *)(uintptr_t)p, MIB, FI_HMEM_CUDA, 1,
	                    FI_HMEM_DEVICE_ONLY, &base));
	ASSERT_EQ(mr_of(base)->iface, FI_HMEM_CUDA);
	ASSERT_EQ(mr_of(base)->device, 1);
	ASSERT_EQ(mr_of(base)->hmem_flags, HMR_HMEM_DEVICE_ONLY);
	/* Left unset (system, device 0), or set to something else: both
	 * ignored, the base's taken. */
	sub[0] = sub_reg(d, base, (void *)(uintptr_t)(p + 4096), 1,
	                 FI_HMEM_SYSTEM, 0);
	sub[1] = sub_reg(d, base, (void *)(uintptr_t)(p + 8192), 2, FI_HMEM_ZE,
	                 5);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(mr_of(sub[i])->iface, FI_HMEM_CUDA);
		ASSERT_EQ(mr_of(sub[i])->device, 1);
		ASSERT_EQ(mr_of(sub[i])->hmem_flags, HMR_HMEM_DEVICE_ONLY);
		ASSERT_OK(fi_close(&sub[i]->fid));
	}
	ASSERT_OK(fi_close(&base->fid));
	ASSERT_OK(fi_close(&d->fid));
	s.free(p);
}

HMR_TEST_MAIN()
