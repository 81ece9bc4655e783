/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* fuzz_raw_key.c: fuzz target: raw keys, forged and truncated, vs. the model.
 */
#include "fuzz_util.h"

/*
 * fi_mr_raw_attr into buffers of every size (exact heap allocations, so a
 * write past *key_size trips ASan), fi_mr_map_raw of this domain's and a
 * peer domain's raw keys, whole, truncated, padded, with bytes flipped or
 * words replaced, with the right and wrong base address, and
 * fi_mr_unmap_key of mapped and unmapped keys, between registrations,
 * closes and accesses through the mapped keys (drv_profile_raw).  A
 * mapped key that reaches memory the model refuses, a genuine key that
 * does not map, a forged one of this domain that does, or an unmap of a
 * key never mapped is a crash.
 */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("HMR_LOG_LEVEL", "none", 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_drive(data, size, DRV_CHECK_ALL, &drv_profile_raw);
}
