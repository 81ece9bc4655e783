/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* fuzz_util.h: what the fuzz targets share: entry points, the driver run. */
#ifndef HMR_TESTS_FUZZ_UTIL_H
#define HMR_TESTS_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "driver.h"

/* libFuzzer's entry points (replay_main.c calls them in plain builds). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A mismatch with the model is a crash: print the report, abort. */
static inline void fuzz_report(const char *text, void *arg)
{
	(void)arg;
	fprintf(stderr, "%s\n", text);
	abort();
}

/*
 * One input = one episode of the model driver (tests/model/driver.h): a
 * domain configuration, then operations until the input ends.  The input
 * is the driver's choices in its fuzz encoding (tests/fuzz/README.md).
 */
static inline int fuzz_drive(const uint8_t *data, size_t size, unsigned checks,
                             const struct drv_profile *profile)
{
	static struct drv d;
	struct drv_opts opts = {
	        .checks = checks,
	        .profile = profile,
	        .fail = fuzz_report,
	        .echo = getenv("HMR_MODEL_TRACE") != NULL,
	};
	struct drv_src src;

	drv_init(&d, &opts);
	drv_src_bytes(&src, data, size);
	drv_episode(&d, &src, 1L << 20);
	return 0;
}

#endif /* HMR_TESTS_FUZZ_UTIL_H */
