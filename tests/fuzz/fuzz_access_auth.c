/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* fuzz_access_auth.c: fuzz target: hmr_mr_access_auth vs. the model. */
#include "fuzz_util.h"

/*
 * The target side of a software RMA: hmr_mr_access_auth (and
 * hmr_mr_access) with any key (live, closed, single-use, mapped, a
 * peer's, anything), address, length (0 to SIZE_MAX), access bits and
 * initiator auth key (the domain's, the MR's, one byte off, one byte
 * short, NULL with a size; exact heap copies, so reading past the size
 * trips ASan), on MRs registered with their own auth keys
 * (drv_profile_auth).  Registrations are not judged here (fuzz_mr_reg
 * does that): one the model refuses is kept as "rogue", and any grant
 * through it, any grant the model refuses, or a pointer other than the
 * model's is a crash, as is a refusal of an access the model grants.
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
	return fuzz_drive(data, size, DRV_CHECK_ACCESS | DRV_CHECK_CNTR,
	                  &drv_profile_auth);
}
