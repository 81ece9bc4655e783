/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cache_events.c: the cache with a monitor, after fork, out of memory. */
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "monitor/monitor.h"
#include "cache_fake.h"

#define B  ((uintptr_t)0x7f0000000000ULL)
#define PG 4096
#define RW 3ULL

/* The import monitor: events only from hmr__monitor_notify (CMake sets
 * FI_MR_CACHE_MONITOR=import for this file). */
static struct hmr_cache *monitored(struct fake *f)
{
	struct hmr_cache *c = fake_cache(f, 100, 0, false, true);
	char why[128];

	if (!hmr__cache_active(c, why, sizeof(why)))
		HMR_FAIL("monitored cache inactive: %s", why);
	ASSERT_EQ(hmr__monitor_kind(), HMR_MONITOR_IMPORT);
	return c;
}

static struct hmr_cache_entry *get(struct hmr_cache *c, uintptr_t s, size_t len)
{
	struct hmr_cache_entry *e;

	ASSERT_OK(hmr__cache_get(c, s, len, RW, 1, &e));
	return e;
}

HMR_TEST(cache_monitor_event_invalidates)
{
	struct fake_reg *r_a, *r_b;
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b;

	fake_init(&f);
	c = monitored(&f);
	a = get(c, B, PG);
	r_a = rec(a);
	hmr__cache_put(c, a);
	b = get(c, B + PG, PG);
	r_b = rec(b);
	hmr__monitor_notify(B, 2 * PG);
	ASSERT_TRUE(!fake_live(r_a)); /* Idle: before notify returned. */
	ASSERT_TRUE(fake_live(r_b));  /* In use: at its last put. */
	ASSERT_EQ(stats(c).entries, 0);
	hmr__cache_put(c, b);
	ASSERT_TRUE(!fake_live(r_b));
	/* An event elsewhere leaves entries alone. */
	hmr__cache_put(c, get(c, B, PG));
	hmr__monitor_notify(B + PG, PG);
	ASSERT_EQ(stats(c).entries, 1);
	fake_close(&f, c);
}

/* Deregistering A unmaps B's memory (a nested event): B is only marked
 * then, and deregistered by the drain before the outer event returns. */
static struct hmr_cache_entry *nested_b;
static struct fake_reg *r_nested_b;
static int b_live_after_nested = -1;
static void dereg_unmaps(struct fake *f, struct hmr_cache_entry *e)
{
	if (e == nested_b || b_live_after_nested >= 0)
		return;
	hmr__monitor_notify(nested_b->start, PG);
	b_live_after_nested = fake_live(r_nested_b);
	(void)f;
}

HMR_TEST(cache_nested_event_defers_to_drain)
{
	struct fake_reg *r_a;
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a;

	fake_init(&f);
	c = monitored(&f);
	a = get(c, B, PG);
	r_a = rec(a);
	hmr__cache_put(c, a);
	nested_b = get(c, B + 8 * PG, PG);
	r_nested_b = rec(nested_b);
	hmr__cache_put(c, nested_b);
	f.on_dereg = dereg_unmaps;
	hmr__monitor_notify(B, PG);
	ASSERT_EQ(b_live_after_nested, 1); /* Not inside the nested event. */
	ASSERT_TRUE(!fake_live(r_a));
	ASSERT_TRUE(!fake_live(r_nested_b)); /* By the drain. */
	ASSERT_EQ(stats(c).entries, 0);
	fake_close(&f, c);
}

HMR_TEST(cache_fork_child_bypasses)
{
	struct fake_reg *r_a, *r_b;
	struct fake f;
	struct hmr_cache *c;
	struct hmr_cache_entry *a, *b;
	int status;
	pid_t pid;

	fake_init(&f);
	c = monitored(&f);
	a = get(c, B, PG);
	r_a = rec(a);
	hmr__cache_put(c, a);
	fflush(stdout);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		/* Nothing of the parent's handed out or deregistered. */
		b = get(c, B, PG);
		r_b = rec(b);
		if (b == a || atomic_load(&f.regs) != 2)
			_exit(10);
		hmr__cache_put(c, b);
		if (fake_live(r_b) || !fake_live(r_a))
			_exit(11);
		hmr__cache_flush(c);
		hmr__cache_invalidate(c, B, PG);
		hmr__monitor_notify(B, PG);
		if (!fake_live(r_a) || atomic_load(&f.deregs) != 1)
			_exit(12);
		if (hmr__cache_active(c, NULL, 0))
			_exit(13);
		ASSERT_OK(hmr__cache_close(c));
		_exit(fake_live(r_a) ? 0 : 14);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	/* The parent still caches. */
	ASSERT_PTR_EQ(get(c, B, PG), a);
	hmr__cache_put(c, a);
	fake_close(&f, c);
}

/* Every allocation of open, a miss and a merge fails in turn: -FI_ENOMEM,
 * nothing registered or leaked, the cache still usable. */
HMR_TEST(cache_allocation_failures_leave_nothing)
{
	struct hmr_cache_attr attr = {
	        .ops = &fake_ops, .max_count = 100, .merge_regions = true};
	struct hmr_cache_entry *a, *b;
	struct hmr_cache *c;
	struct fake f;
	long n, points = 0;
	int ret;

	fake_init(&f);
	attr.ctx = &f;
	for (n = 0; n < 100; n++) {
		c = NULL;
		hmr__alloc_fail_after(n);
		ret = hmr__cache_open(&attr, &c);
		if (!ret) {
			ret = hmr__cache_get(c, B, PG, RW, 1, &a);
			if (!ret) {
				hmr__cache_put(c, a);
				ret = hmr__cache_get(c, B + PG, PG, RW, 1, &b);
				if (!ret)
					hmr__cache_put(c, b);
			}
		}
		if (hmr__alloc_armed()) {
			hmr__alloc_fail_after(-1);
			ASSERT_OK(ret);
			break;
		}
		hmr__alloc_fail_after(-1);
		ASSERT_EQ(ret, -FI_ENOMEM);
		points++;
		if (!c)
			continue;
		ASSERT_EQ(atomic_load(&f.regs) - atomic_load(&f.deregs),
		          stats(c).entries);
		ASSERT_OK(hmr__cache_close(c));
	}
	ASSERT_GE(points, 3); /* The cache, an entry, the merged entry. */
	ASSERT_EQ(stats(c).entries, 1);
	ASSERT_EQ(stats(c).merges, 1);
	fake_close(&f, c);
}

HMR_TEST_MAIN()
