/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* fuzz_mr_reg.c: fuzz target: registration attributes and flags vs. the model.
 */
#include "fuzz_util.h"

/*
 * fi_mr_reg, fi_mr_regv and fi_mr_regattr with any iovs (wrapping, ending
 * at 2^64, NULL, unmapped, over the iov limit), access bits, flags, keys,
 * offsets, auth keys, page sizes and base MRs (live, closed, another
 * domain's), with sub-MRs, single-use keys, accesses and closes in any
 * order, on a domain whose mode the input draws (drv_profile_reg).  Every
 * answer is compared with the model: a registration the model refuses but
 * the library accepts, or a grant the model refuses, is a crash.
 */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("HMR_LOG_LEVEL", "none", 0); /* Refusals are the common case. */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_drive(data, size, DRV_CHECK_ALL, &drv_profile_reg);
}
