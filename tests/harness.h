/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* harness.h: the test harness: one case per process, typed asserts. */
#ifndef HMR_TESTS_HARNESS_H
#define HMR_TESTS_HARNESS_H

/*
 * A test file defines its cases with HMR_TEST(name) { ... } and ends with
 * HMR_TEST_MAIN().  CMake (hmr_add_test_file) scans the file for HMR_TEST
 * lines and registers one CTest entry per case, named after it, running
 * `<exe> <case>`.  A case returns 0 (pass); a failed assertion exits 1
 * after printing both values; HMR_SKIP prints its reason and exits 77,
 * which CTest reports as skipped.
 */

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*hmr_test_fn)(void);
struct hmr_test_case {
	const char *name;
	hmr_test_fn fn;
	struct hmr_test_case *next;
};
extern struct hmr_test_case *hmr_test_cases;

#define HMR_TEST(name)                                                         \
	static void test_##name(void);                                         \
	static struct hmr_test_case case_##name = {#name, test_##name, NULL};  \
	__attribute__((constructor)) static void register_##name(void)         \
	{                                                                      \
		case_##name.next = hmr_test_cases;                             \
		hmr_test_cases = &case_##name;                                 \
	}                                                                      \
	static void test_##name(void)

#define HMR_FAIL(...)                                                          \
	do {                                                                   \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                \
		fprintf(stderr, __VA_ARGS__);                                  \
		fprintf(stderr, "\n");                                         \
		exit(1);                                                       \
	} while (0)

#define HMR_SKIP(...)                                                          \
	do {                                                                   \
		printf("SKIP: ");                                              \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
		fflush(stdout);                                                \
		exit(77);                                                      \
	} while (0)

#define ASSERT_INT_OP(a, op, b)                                                \
	do {                                                                   \
		long long va_ = (long long)(a), vb_ = (long long)(b);          \
		if (!(va_ op vb_))                                             \
			HMR_FAIL("ASSERT %s %s %s: %lld vs %lld", #a, #op, #b, \
			         va_, vb_);                                    \
	} while (0)
#define ASSERT_EQ(a, b) ASSERT_INT_OP(a, ==, b)
#define ASSERT_NE(a, b) ASSERT_INT_OP(a, !=, b)
#define ASSERT_LT(a, b) ASSERT_INT_OP(a, <, b)
#define ASSERT_LE(a, b) ASSERT_INT_OP(a, <=, b)
#define ASSERT_GT(a, b) ASSERT_INT_OP(a, >, b)
#define ASSERT_GE(a, b) ASSERT_INT_OP(a, >=, b)

#define ASSERT_U64_EQ(a, b)                                                    \
	do {                                                                   \
		uint64_t va_ = (uint64_t)(a), vb_ = (uint64_t)(b);             \
		if (va_ != vb_)                                                \
			HMR_FAIL("ASSERT %s == %s: 0x%" PRIx64                 \
			         " vs 0x%" PRIx64,                             \
			         #a, #b, va_, vb_);                            \
	} while (0)

#define ASSERT_PTR_EQ(a, b)                                                    \
	do {                                                                   \
		const void *va_ = (const void *)(a), *vb_ = (const void *)(b); \
		if (va_ != vb_)                                                \
			HMR_FAIL("ASSERT %s == %s: %p vs %p", #a, #b, va_,     \
			         vb_);                                         \
	} while (0)

#define ASSERT_TRUE(c)                                                         \
	do {                                                                   \
		if (!(c))                                                      \
			HMR_FAIL("ASSERT %s", #c);                             \
	} while (0)

/* hmr's own codes (FI_ETOOSMALL, FI_EKEYREJECTED, ...) are unknown to
 * strerror: tests that include hmr.h first print hmr_strerror's names. */
#ifdef HMR_HMR_H
#define HMR_TEST_STRERROR(rc) hmr_strerror(rc)
#else
#define HMR_TEST_STRERROR(rc) strerror((rc) < 0 ? -(rc) : (rc))
#endif

/* 0 or a negative -FI_E* code, printed by name on failure. */
#define ASSERT_OK(expr)                                                        \
	do {                                                                   \
		int rc_ = (expr);                                              \
		if (rc_ != 0)                                                  \
			HMR_FAIL("%s returned %d (%s)", #expr, rc_,            \
			         HMR_TEST_STRERROR(rc_));                      \
	} while (0)

#define HMR_TEST_MAIN()                                                        \
	struct hmr_test_case *hmr_test_cases;                                  \
	int main(int argc, char **argv)                                        \
	{                                                                      \
		struct hmr_test_case *c;                                       \
		if (argc != 2) {                                               \
			for (c = hmr_test_cases; c; c = c->next)               \
				printf("%s\n", c->name);                       \
			return argc == 1 ? 0 : 2;                              \
		}                                                              \
		for (c = hmr_test_cases; c; c = c->next) {                     \
			if (strcmp(c->name, argv[1]) == 0) {                   \
				c->fn();                                       \
				return 0;                                      \
			}                                                      \
		}                                                              \
		fprintf(stderr, "no test case %s\n", argv[1]);                 \
		return 2;                                                      \
	}

/* The process's open file descriptors (its directory's entries, "." and
 * ".." and the directory's own fd included: compare counts, not values). */
static inline int hmr_test_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		HMR_FAIL("opendir /proc/self/fd");
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

#endif /* HMR_TESTS_HARNESS_H */
