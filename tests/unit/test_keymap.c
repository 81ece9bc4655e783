/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_keymap.c: the key map on its own, against a simple model. */
#include <stdint.h>

#include "core/keymap.h"
#include "harness.h"
#include <hmr/fi_mr.h>

#define VAL(k) ((void *)(uintptr_t)((k)*2 + 1)) /* Never NULL. */

HMR_TEST(keymap_empty_finds_nothing)
{
	struct hmr_keymap m;

	hmr__keymap_init(&m);
	ASSERT_PTR_EQ(hmr__keymap_find(&m, 0), NULL);
	ASSERT_PTR_EQ(hmr__keymap_find(&m, UINT64_MAX), NULL);
	ASSERT_PTR_EQ(hmr__keymap_remove(&m, 7), NULL);
	hmr__keymap_fini(&m);
}

HMR_TEST(keymap_insert_find_remove_at_key_extremes)
{
	const uint64_t keys[] = {0, 1, UINT64_MAX, UINT64_MAX - 1, 1ULL << 63};
	struct hmr_keymap m;
	size_t i;

	hmr__keymap_init(&m);
	for (i = 0; i < 5; i++)
		ASSERT_OK(hmr__keymap_insert(&m, keys[i], VAL(i)));
	for (i = 0; i < 5; i++)
		ASSERT_PTR_EQ(hmr__keymap_find(&m, keys[i]), VAL(i));
	ASSERT_EQ(m.count, 5);
	for (i = 0; i < 5; i++) {
		ASSERT_PTR_EQ(hmr__keymap_remove(&m, keys[i]), VAL(i));
		ASSERT_PTR_EQ(hmr__keymap_find(&m, keys[i]), NULL);
	}
	ASSERT_EQ(m.count, 0);
	hmr__keymap_fini(&m);
}

HMR_TEST(keymap_duplicate_insert_is_enokey_and_keeps_first)
{
	struct hmr_keymap m;

	hmr__keymap_init(&m);
	ASSERT_OK(hmr__keymap_insert(&m, 42, VAL(1)));
	ASSERT_EQ(hmr__keymap_insert(&m, 42, VAL(2)), -FI_ENOKEY);
	ASSERT_PTR_EQ(hmr__keymap_find(&m, 42), VAL(1));
	ASSERT_EQ(m.count, 1);
	hmr__keymap_fini(&m);
}

/*
 * Backward-shift deletion: removing a key from the middle of a probe run
 * must keep every later key of the run reachable.  Keys that land in the
 * same slot of a small table make long runs; every removal order of a
 * run is checked against the survivors.
 */
HMR_TEST(keymap_removal_inside_a_probe_run_keeps_the_rest_reachable)
{
	enum { N = 400 };
	struct hmr_keymap m;
	uint64_t k;
	size_t start;

	for (start = 0; start < 7; start++) {
		hmr__keymap_init(&m);
		for (k = 0; k < N; k++)
			ASSERT_OK(hmr__keymap_insert(&m, k, VAL(k)));
		/* Remove every 7th key starting at `start`, then all. */
		for (k = start; k < N; k += 7)
			ASSERT_PTR_EQ(hmr__keymap_remove(&m, k), VAL(k));
		for (k = 0; k < N; k++)
			ASSERT_PTR_EQ(hmr__keymap_find(&m, k),
			              (k % 7 == start) ? NULL : VAL(k));
		for (k = 0; k < N; k++)
			if (k % 7 != start)
				ASSERT_PTR_EQ(hmr__keymap_remove(&m, k),
				              VAL(k));
		ASSERT_EQ(m.count, 0);
		hmr__keymap_fini(&m);
	}
}

/* A random mix of operations against a plain array: every answer equal. */
HMR_TEST(keymap_random_operations_match_a_model)
{
	enum { KEYS = 512, OPS = 200000 };
	static void *model[KEYS];
	struct hmr_keymap m;
	uint64_t x = 88172645463325252ULL; /* xorshift64 */
	size_t live = 0;
	int i;

	hmr__keymap_init(&m);
	for (i = 0; i < OPS; i++) {
		uint64_t k, key;
		int op;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k = x % KEYS;
		op = (int)((x >> 32) % 3);
		/* Spread keys over the whole 64-bit space, not 0..KEYS. */
		key = k * 0x9e3779b97f4a7c15ULL;
		if (op == 0) {
			int r = hmr__keymap_insert(&m, key, VAL(k));

			ASSERT_EQ(r, model[k] ? -FI_ENOKEY : 0);
			if (!r)
				model[k] = VAL(k), live++;
		} else if (op == 1) {
			ASSERT_PTR_EQ(hmr__keymap_remove(&m, key), model[k]);
			if (model[k])
				model[k] = NULL, live--;
		} else {
			ASSERT_PTR_EQ(hmr__keymap_find(&m, key), model[k]);
		}
		ASSERT_EQ(m.count, live);
	}
	hmr__keymap_fini(&m);
}

HMR_TEST_MAIN()
