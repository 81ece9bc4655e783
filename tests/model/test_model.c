/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_model.c: random call sequences, every answer compared with the model. */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h"
#include "harness.h"

/*
 * Each case draws call sequences from a seeded PRNG (episodes of 50 to
 * 1550 calls, each on a fresh domain with a drawn mr_mode), lets the
 * driver compare the library with the model, and stops after its step
 * count or its time budget.  A grant the model refuses, or another
 * pointer, fails every case; each case adds the answers it is named after,
 * and checks that the calls it is about happened (in proportion to the
 * steps run, so that a slow sanitizer build passes as well).
 *
 *   HMR_MODEL_SEED=<n>     replay a failure (the seed is printed); "time"
 *                          draws a new seed
 *   HMR_MODEL_STEPS=<n>    steps per case (the budget still applies)
 *   HMR_MODEL_SECONDS=<s>  time budget per case
 *   HMR_MODEL_TRACE=1      print every call and answer to stderr
 *   HMR_MODEL_RECORD=<file> on failure, write the failing episode's
 *                          choices there: an input of the fuzz targets
 *                          that drive the same profile (tests/fuzz)
 */

struct run {
	const char *name;
	uint64_t seed;
	struct drv_src *src;
};

static void report(const char *text, void *arg)
{
	const struct run *r = arg;
	const char *path = getenv("HMR_MODEL_RECORD");
	FILE *f;

	if (path && r->src->rec && (f = fopen(path, "wb"))) {
		fwrite(r->src->rec, 1, r->src->rec_len, f);
		fclose(f);
		fprintf(stderr, "the failing episode's choices: %s\n", path);
	}

	fprintf(stderr, "%s\n%s: seed %llu (HMR_MODEL_SEED=%llu replays it)\n",
	        text, r->name, (unsigned long long)r->seed,
	        (unsigned long long)r->seed);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double env_num(const char *name, double dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtod(v, NULL) : dflt;
}

static struct drv_stats run(const char *name, uint64_t seed, unsigned checks,
                            const struct drv_profile *profile, long steps,
                            double seconds)
{
	const char *s = getenv("HMR_MODEL_SEED");
	struct drv_src src;
	struct run r = {name, seed, &src};
	struct drv_opts opts = {
	        .checks = checks,
	        .profile = profile,
	        .fail = report,
	        .fail_arg = &r,
	};
	struct drv *d = calloc(1, sizeof(*d));
	struct drv_stats st;
	double start = now();
	long done = 0;

	ASSERT_TRUE(d != NULL);
	setenv("HMR_LOG_LEVEL", "none", 0); /* Refusals are expected. */
	if (s && strcmp(s, "time") == 0)
		r.seed = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)&r;
	else if (s && *s)
		r.seed = strtoull(s, NULL, 0);
	steps = (long)env_num("HMR_MODEL_STEPS", (double)steps);
	seconds = env_num("HMR_MODEL_SECONDS", seconds);
	opts.echo = env_num("HMR_MODEL_TRACE", 0) != 0;
	drv_init(d, &opts);
	drv_src_seed(&src, r.seed);
	while (done < steps && now() - start < seconds) {
		long n = 50 + (long)drv_pick(&src, 1500);

		/* A fuzz input is one episode: record each from its start. */
		if (getenv("HMR_MODEL_RECORD"))
			drv_src_record(&src);
		done += drv_episode(d, &src, n);
	}
	free(src.rec);
	st = d->stats;
	printf("%s: seed %llu, %lu steps in %lu episodes, %.2f s: %lu regs "
	       "(%lu rogue, %lu subs), %lu refused; %lu grants, %lu "
	       "refusals (%lu spent single-use); %lu closes (%lu busy), %lu "
	       "binds, %lu enables, %lu refreshes; %lu raw maps (%lu "
	       "refused), %lu unmaps\n",
	       name, (unsigned long long)r.seed, st.steps, st.episodes,
	       now() - start, st.regs, st.rogue, st.subs, st.regs_refused,
	       st.grants, st.refusals, st.single_use_refused, st.closes,
	       st.busy, st.binds, st.enables, st.refreshes, st.raw_maps,
	       st.raw_refused, st.unmaps);
	free(d);
	/* Enough calls to mean something, however slow the build. */
	ASSERT_GE(st.steps, steps < 10000 ? steps : 10000);
	return st;
}

HMR_TEST(model_access_answers_match_model)
{
	struct drv_stats st =
	        run("model_access_answers_match_model", 1, DRV_CHECK_ACCESS,
	            &drv_profile_mixed, 500000, 8.0);

	ASSERT_GT(st.grants, st.steps / 2000);
	ASSERT_GT(st.refusals, st.steps / 2000);
	ASSERT_GT(st.subs, st.steps / 20000);
}

HMR_TEST(model_registration_answers_match_model)
{
	struct drv_stats st = run("model_registration_answers_match_model", 2,
	                          DRV_CHECK_REG, &drv_profile_reg, 200000, 2.5);

	ASSERT_GT(st.regs, st.steps / 2000);
	ASSERT_GT(st.regs_refused, st.steps / 2000);
}

HMR_TEST(model_single_use_keys_grant_once)
{
	struct drv_stats st =
	        run("model_single_use_keys_grant_once", 3, DRV_CHECK_ACCESS,
	            &drv_profile_single_use, 200000, 2.5);

	ASSERT_GT(st.single_use_refused, st.steps / 2000);
}

HMR_TEST(model_close_bind_enable_answers_match_model)
{
	struct drv_stats st =
	        run("model_close_bind_enable_answers_match_model", 4,
	            DRV_CHECK_OBJ, &drv_profile_objects, 200000, 2.5);

	ASSERT_GT(st.closes, st.steps / 2000);
	ASSERT_GT(st.busy, st.steps / 2000);
	ASSERT_GT(st.binds, st.steps / 2000);
	ASSERT_GT(st.enables, st.steps / 2000);
}

HMR_TEST(model_counters_count_granted_accesses)
{
	struct drv_stats st =
	        run("model_counters_count_granted_accesses", 5, DRV_CHECK_CNTR,
	            &drv_profile_objects, 200000, 2.5);

	ASSERT_GT(st.binds, st.steps / 2000);
	ASSERT_GT(st.grants, st.steps / 2000);
}

HMR_TEST(model_raw_key_answers_match_model)
{
	struct drv_stats st = run("model_raw_key_answers_match_model", 6,
	                          DRV_CHECK_RAW, &drv_profile_raw, 200000, 2.5);

	ASSERT_GT(st.raw_maps, st.steps / 2000);
	ASSERT_GT(st.raw_refused, st.steps / 2000);
	ASSERT_GT(st.unmaps, st.steps / 2000);
}

HMR_TEST(model_refresh_answers_match_model)
{
	struct drv_stats st =
	        run("model_refresh_answers_match_model", 7, DRV_CHECK_REFRESH,
	            &drv_profile_refresh, 200000, 2.5);

	ASSERT_GT(st.refreshes, st.steps / 2000);
}

HMR_TEST(model_auth_key_answers_match_model)
{
	struct drv_stats st =
	        run("model_auth_key_answers_match_model", 8, DRV_CHECK_ACCESS,
	            &drv_profile_auth, 200000, 2.5);

	ASSERT_GT(st.grants, st.steps / 2000);
}

HMR_TEST(model_all_answers_match_model)
{
	struct drv_stats st =
	        run("model_all_answers_match_model", 9, DRV_CHECK_ALL,
	            &drv_profile_mixed, 200000, 2.5);

	ASSERT_GT(st.grants, st.steps / 2000);
}

HMR_TEST_MAIN()
