/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_key_shard.c: which shard (and so which lock) a key's MR takes. */
#include <stdint.h>

#include "core/domain.h"
#include "harness.h"

#define STEPS 4096

static struct hmr_domain requested = {.mr_mode = FI_MR_LOCAL};
static struct hmr_domain provider = {.mr_mode = FI_MR_PROV_KEY};

/* Steps at which thread a's and thread b's keys share a shard, when each
 * thread's key is (thread << shift) + step. */
static unsigned shared_steps(uint64_t a, uint64_t b, unsigned shift)
{
	unsigned c, same = 0;

	for (c = 0; c < STEPS; c++)
		same += hmr__key_shard(&requested, (a << shift) + c) ==
		        hmr__key_shard(&requested, (b << shift) + c);
	return same;
}

/* Threads that number their own keys with the thread in the high bits
 * walk the shards independently: at about 1/16 of the steps two of them
 * meet on one lock, never at every step (as low bits alone made them). */
HMR_TEST(key_shard_spreads_threads_whose_keys_differ_only_in_high_bits)
{
	static const unsigned shifts[] = {16, 32, 48, 56, 60, 63};
	uint64_t a, b;
	size_t i;

	for (i = 0; i < sizeof(shifts) / sizeof(shifts[0]); i++) {
		uint64_t threads = shifts[i] == 63 ? 2 : 8;

		for (a = 0; a < threads; a++)
			for (b = a + 1; b < threads; b++) {
				unsigned same = shared_steps(a, b, shifts[i]);

				if (same > STEPS / 8)
					printf("threads %llu and %llu << %u: "
					       "%u of %u steps in one shard\n",
					       (unsigned long long)a,
					       (unsigned long long)b, shifts[i],
					       same, STEPS);
				ASSERT_TRUE(same <= STEPS / 8);
			}
	}
}

/* Keys that differ only in their lowest bits (a counter in one thread's
 * range) still spread over the shards. */
HMR_TEST(key_shard_spreads_keys_that_differ_only_in_low_bits)
{
	static const uint64_t bases[] = {0, 1ULL << 20, 0xdeadbeef0000ULL,
	                                 1ULL << 63, UINT64_MAX - 15};
	size_t i, total = 0;

	for (i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		unsigned hit = 0, j;

		for (j = 0; j < HMR_SHARDS; j++)
			hit |= 1u << hmr__key_shard(&requested, bases[i] + j);
		ASSERT_TRUE(__builtin_popcount(hit) >= HMR_SHARDS / 2);
		total += (size_t)__builtin_popcount(hit);
	}
	/* A random function would reach about 10.3 of 16 on average. */
	ASSERT_TRUE(total >= 9 * sizeof(bases) / sizeof(bases[0]));
}

/* Sequential keys (the common numbering) fill every shard evenly. */
HMR_TEST(key_shard_spreads_sequential_keys_evenly)
{
	size_t count[HMR_SHARDS] = {0}, i;
	uint64_t k;

	for (k = 0; k < 16 * STEPS; k++)
		count[hmr__key_shard(&requested, k)]++;
	for (i = 0; i < HMR_SHARDS; i++) {
		ASSERT_TRUE(count[i] >= STEPS * 9 / 10);
		ASSERT_TRUE(count[i] <= STEPS * 11 / 10);
	}
}

/* A key always takes the same shard, and every shard is in range, from 0
 * to the top of the key space. */
HMR_TEST(key_shard_is_a_function_of_the_key_in_range)
{
	static const uint64_t keys[] = {
	        0,         1, 15, 16, UINT32_MAX, 1ULL << 32, UINT64_MAX - 1,
	        UINT64_MAX};
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t s = hmr__key_shard(&requested, keys[i]);

		ASSERT_TRUE(s < HMR_SHARDS);
		ASSERT_EQ(s, hmr__key_shard(&requested, keys[i]));
		ASSERT_TRUE(hmr__key_shard(&provider, keys[i]) < HMR_SHARDS);
	}
}

/* Provider keys are hmr's own, made per shard (shard i issues i, i + 16,
 * ...): their shard is the one that issued them. */
HMR_TEST(key_shard_of_a_provider_key_is_the_shard_that_issued_it)
{
	uint64_t i, n;

	for (i = 0; i < HMR_SHARDS; i++)
		for (n = 0; n < 1000; n++)
			ASSERT_EQ(hmr__key_shard(&provider, i + HMR_SHARDS * n),
			          i);
	ASSERT_EQ(hmr__key_shard(&provider, UINT64_MAX), HMR_SHARDS - 1);
}

HMR_TEST_MAIN()
