/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_monitor_info.c: hmr_monitor_info says which monitor runs and how. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <hmr/hmr.h>

#include "harness.h"

/* Each case in its own process: the monitor starts once per process. */

static const struct hmr_monitor_func_info *
func(const struct hmr_monitor_info *m, const char *name)
{
	unsigned i;

	for (i = 0; i < m->nfuncs; i++)
		if (!strcmp(m->funcs[i].name, name))
			return &m->funcs[i];
	return NULL;
}

static bool glibc_malloc(void)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	bool same = libc && dlsym(libc, "free") == dlsym(RTLD_DEFAULT, "free");

	if (libc)
		dlclose(libc);
	return same;
}

static void info(struct hmr_monitor_info *m)
{
	unsigned i;

	ASSERT_OK(hmr_monitor_info(m));
	printf("%s (%s), caching %d, before unmap %d\n", m->kind, m->why,
	       m->caching, m->before_unmap);
	for (i = 0; i < m->nfuncs; i++)
		printf("  %s %s: %s\n", m->funcs[i].name, m->funcs[i].mechanism,
		       m->funcs[i].how);
}

/* fi_mr: F118 */
HMR_TEST(monitor_info_memhooks_names_each_function_and_its_jump)
{
	struct hmr_monitor_info m = HMR_MONITOR_INFO_INIT;
	static const char *const names[] = {"munmap", "mremap", "madvise",
	                                    "brk",    "shmdt",  "mmap"};
	size_t i;

	setenv("FI_MR_CACHE_MONITOR", "memhooks", 1);
	info(&m);
	ASSERT_EQ(strcmp(m.kind, "memhooks"), 0);
	ASSERT_EQ(m.caching, 1);
	ASSERT_EQ(m.before_unmap, 1);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct hmr_monitor_func_info *f = func(&m, names[i]);

		ASSERT_TRUE(f != NULL);
		ASSERT_EQ(strcmp(f->mechanism, "patch"), 0);
		ASSERT_TRUE(strstr(f->how, "jump at entry+") != NULL);
	}
	/* Patched entries need no hook of free. */
	ASSERT_TRUE(func(&m, "free") == NULL);
}

HMR_TEST(monitor_info_reloc_mode_says_relocation_and_free)
{
	struct hmr_monitor_info m = HMR_MONITOR_INFO_INIT;
	const struct hmr_monitor_func_info *f;

	setenv("FI_MR_CACHE_MONITOR", "memhooks", 1);
	setenv("HMR_MEMHOOKS_MODE", "reloc", 1);
	info(&m);
	ASSERT_EQ(strcmp(m.kind, "memhooks"), 0);
	ASSERT_EQ(m.caching, 1);
	f = func(&m, "munmap");
	ASSERT_TRUE(f != NULL);
	ASSERT_EQ(strcmp(f->mechanism, "relocation"), 0);
	/* glibc's malloc unmaps inside libc: free and realloc are reached
	 * when it is the allocator (not under a sanitizer's, which is the
	 * program's own free). */
	ASSERT_EQ(func(&m, "free") != NULL, glibc_malloc());
	ASSERT_EQ(func(&m, "realloc") != NULL, glibc_malloc());
	ASSERT_TRUE(func(&m, "sbrk") != NULL);
}

HMR_TEST(monitor_info_bad_memhooks_mode_falls_back_with_reason)
{
	struct hmr_monitor_info m = HMR_MONITOR_INFO_INIT;

	setenv("FI_MR_CACHE_MONITOR", "memhooks", 1);
	setenv("HMR_MEMHOOKS_MODE", "bistro", 1);
	info(&m);
	ASSERT_TRUE(strstr(m.why, "HMR_MEMHOOKS_MODE=bistro") != NULL);
	ASSERT_TRUE(strcmp(m.kind, "memhooks") != 0);
	ASSERT_EQ(m.nfuncs, 0);
}

/* A kind without hooks: what it says of caching and of unmaps. */
static void kind_case(const char *kind, int caching, int before)
{
	struct hmr_monitor_info m = HMR_MONITOR_INFO_INIT;

	setenv("FI_MR_CACHE_MONITOR", kind, 1);
	info(&m);
	ASSERT_EQ(strcmp(m.kind, kind), 0);
	ASSERT_EQ(m.caching, caching);
	ASSERT_EQ(m.before_unmap, before);
	ASSERT_EQ(m.nfuncs, 0);
}

/* fi_mr: F118 */
HMR_TEST(monitor_info_disabled_is_not_caching)
{
	kind_case("disabled", 0, 0);
}

HMR_TEST(monitor_info_import_reports_before)
{
	kind_case("import", 1, 1);
}

HMR_TEST(monitor_info_rejects_null_and_short_struct)
{
	struct hmr_monitor_info m = {.size = 8};

	ASSERT_EQ(hmr_monitor_info(NULL), -FI_EINVAL);
	ASSERT_EQ(hmr_monitor_info(&m), -FI_EINVAL);
}

/* An older caller's smaller struct: filled up to its size, no further. */
HMR_TEST(monitor_info_fills_only_the_callers_size)
{
	struct {
		struct hmr_monitor_info m;
		unsigned char canary[8];
	} s;
	size_t small = offsetof(struct hmr_monitor_info, funcs);

	memset(&s, 0xab, sizeof(s));
	s.m.size = small;
	setenv("FI_MR_CACHE_MONITOR", "memhooks", 1);
	ASSERT_OK(hmr_monitor_info(&s.m));
	ASSERT_EQ(s.m.size, small);
	ASSERT_EQ(((unsigned char *)&s.m)[small], 0xab);
	ASSERT_EQ(strcmp(s.m.kind, "memhooks"), 0);
}

HMR_TEST_MAIN()
