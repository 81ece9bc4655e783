/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* monitor.c: the process's monitor: its kind, subscribers and events. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "base/config.h"
#include "base/log.h"
#include "base/range.h"
#include "monitor/monitor.h"
#include "monitor/monitor_impl.h"

/*
 * memhooks is the default because it reports BEFORE the kernel unmaps
 * (rdma-core wants a region deregistered before its memory is gone) and
 * costs nothing measurable: munmap of an unwatched 4 KiB page, medians
 * of 7 runs (tests/monitor/bench_monitor, 2-vCPU VM): ~2.0-2.8 us with
 * or without hooks (the syscall's noise); of an empty range 168-227 ns
 * without, 172-236 ns with hooks, 188-258 ns with a subscriber.
 * userfaultfd reports AFTER the fact, adds 6-8 us to each munmap of a
 * watched page (the unmapping thread waits for our reader thread), and
 * splits a mapping per watched range (vm.max_map_count: about 32,000
 * watches of distinct pages fit): a fallback.
 */
HMR_CONFIG_VAR(FI_MR_CACHE_MONITOR, "memhooks",
               "What tells the registration caches that memory goes "
               "away: memhooks, userfaultfd, kdreg2, import (only "
               "hmr_mr_cache_invalidate) or disabled (no caching)");

/*
 * Subscribers: a singly linked list, pushed at the head under sub_lock and
 * walked without it (events arrive inside malloc and free, where no lock
 * a thread may hold while allocating can be taken).  Removal waits until
 * no event is being delivered (`delivering`), then unlinks.
 */
static pthread_mutex_t sub_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hmr_monitor_sub *_Atomic subs; /* (sub_lock to change) */
static atomic_int delivering;                /* Events in flight. */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int kind = -1; /* enum hmr_monitor_kind once started. */
static pid_t started_pid;     /* (start_lock) */
static char start_why[512];   /* (start_lock; read once kind is set) */
static atomic_bool forked;
/* Depth of event delivery on this thread: nested events only mark. */
static __thread int depth __attribute__((tls_model("initial-exec")));

static const char *const kind_names[] = {
        [HMR_MONITOR_DISABLED] = "disabled",
        [HMR_MONITOR_MEMHOOKS] = "memhooks",
        [HMR_MONITOR_USERFAULTFD] = "userfaultfd",
        [HMR_MONITOR_KDREG2] = "kdreg2",
        [HMR_MONITOR_IMPORT] = "import",
};

const char *hmr__monitor_kind_name(enum hmr_monitor_kind k)
{
	if ((unsigned)k >= sizeof(kind_names) / sizeof(kind_names[0]))
		return "unknown";
	return kind_names[k];
}

enum hmr_monitor_kind hmr__monitor_kind(void)
{
	int k = atomic_load(&kind);

	return k < 0 ? HMR_MONITOR_DISABLED : (enum hmr_monitor_kind)k;
}

static void child_after_fork(void)
{
	atomic_store(&forked, true);
}

bool hmr__monitor_forked(void)
{
	return atomic_load_explicit(&forked, memory_order_relaxed);
}

static int parse_kind(const char *s, enum hmr_monitor_kind *out)
{
	size_t i;

	for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		if (!strcmp(s, kind_names[i])) {
			*out = (enum hmr_monitor_kind)i;
			return 0;
		}
	}
	return -FI_EINVAL;
}

/* Append to a reason already in why. */
static void append(char *why, size_t why_len, const char *fmt, const char *s)
{
	size_t used = strnlen(why, why_len);

	if (used + 1 < why_len)
		snprintf(why + used, why_len - used, fmt, s);
}

/* Try the kinds from `want` down the fallback order: userfaultfd and
 * kdreg2 fall back to memhooks, memhooks to userfaultfd (it reports after
 * the kernel acted, but a cache with it still never hands out a stale
 * registration: doc/cache.md), then disabled; why says what was refused
 * and what runs instead. */
static enum hmr_monitor_kind start_kind(enum hmr_monitor_kind want, char *why,
                                        size_t why_len)
{
	char other_why[256];
	enum hmr_monitor_kind other = HMR_MONITOR_MEMHOOKS;
	int rc;

	switch (want) {
	case HMR_MONITOR_KDREG2:
		rc = hmr__monitor_kdreg2_start(why, why_len);
		break;
	case HMR_MONITOR_USERFAULTFD:
		rc = hmr__monitor_uffd_start(why, why_len);
		break;
	case HMR_MONITOR_MEMHOOKS:
		rc = hmr__monitor_hooks_start(why, why_len);
		other = HMR_MONITOR_USERFAULTFD;
		break;
	default:
		return want;
	}
	if (!rc)
		return want;
	rc = other == HMR_MONITOR_MEMHOOKS
	             ? hmr__monitor_hooks_start(other_why, sizeof(other_why))
	             : hmr__monitor_uffd_start(other_why, sizeof(other_why));
	if (!rc) {
		append(why, why_len, "; %s used instead", kind_names[other]);
		hmr_warn("%s", why);
		return other;
	}
	append(why, why_len, "; %s; no monitor, caching disabled", other_why);
	hmr_warn("%s", why);
	return HMR_MONITOR_DISABLED;
}

int hmr__monitor_start(char *why, size_t why_len)
{
	enum hmr_monitor_kind want, got;
	const char *v;

	if (atomic_load(&kind) >= 0)
		goto done;
	pthread_mutex_lock(&start_lock);
	if (atomic_load(&kind) < 0) {
		v = hmr__config_get("FI_MR_CACHE_MONITOR", NULL);
		if (!v || parse_kind(v, &want)) {
			hmr_warn("FI_MR_CACHE_MONITOR=%s: not one of memhooks, "
			         "userfaultfd, kdreg2, import, disabled; "
			         "caching disabled",
			         v ? v : "(unset)");
			want = HMR_MONITOR_DISABLED;
		}
		snprintf(why, why_len, "FI_MR_CACHE_MONITOR=%s", v ? v : "");
		got = start_kind(want, why, why_len);
		snprintf(start_why, sizeof(start_why), "%s", why);
		started_pid = getpid();
		pthread_atfork(NULL, NULL, child_after_fork);
		atomic_store(&kind, (int)got);
		hmr_info("memory monitor: %s", kind_names[got]);
	}
	pthread_mutex_unlock(&start_lock);
done:
	if (hmr__monitor_kind() != HMR_MONITOR_DISABLED)
		return 0;
	return -FI_ENOSYS;
}

void hmr__monitor_subscribe(struct hmr_monitor_sub *sub)
{
	struct hmr_monitor_sub *s;

	pthread_mutex_lock(&sub_lock);
	/* Twice would make the list a cycle every event walks forever. */
	for (s = atomic_load(&subs); s && s != sub; s = atomic_load(&s->next))
		;
	if (s)
		hmr_warn("monitor subscriber %p subscribed twice; ignored",
		         (void *)sub);
	else {
		atomic_store(&sub->next, atomic_load(&subs));
		atomic_store(&subs, sub);
	}
	pthread_mutex_unlock(&sub_lock);
}

void hmr__monitor_unsubscribe(struct hmr_monitor_sub *sub)
{
	struct hmr_monitor_sub *_Atomic *pp;

	pthread_mutex_lock(&sub_lock);
	for (pp = &subs; atomic_load(pp); pp = &atomic_load(pp)->next) {
		if (atomic_load(pp) == sub) {
			atomic_store(pp, atomic_load(&sub->next));
			break;
		}
	}
	/* An event walking the list may still be inside sub: wait it out
	 * (events are short and never wait for sub_lock). */
	while (atomic_load(&delivering) > 0)
		sched_yield();
	pthread_mutex_unlock(&sub_lock);
}

/* Deliver [start, start + len) to every subscriber; the outermost event
 * on this thread then drains until no subscriber has work left. */
void hmr__monitor_notify(uintptr_t start, size_t len)
{
	struct hmr_monitor_sub *s;
	uint64_t end;
	bool more;

	if (!len || !atomic_load_explicit(&subs, memory_order_acquire))
		return;
	if (!hmr__range_end(start, len, &end))
		len = (size_t)(UINT64_MAX - (uint64_t)start); /* Clip. */
	if (!len)
		return;
	atomic_fetch_add(&delivering, 1);
	depth++;
	for (s = atomic_load(&subs); s; s = atomic_load(&s->next))
		s->unmapped(s, start, len, depth > 1);
	if (depth == 1) {
		do {
			more = false;
			for (s = atomic_load(&subs); s;
			     s = atomic_load(&s->next))
				if (s->drain && s->drain(s))
					more = true;
		} while (more);
	}
	depth--;
	atomic_fetch_sub(&delivering, 1);
}

int hmr__monitor_watch(uintptr_t start, size_t len)
{
	if (hmr__monitor_kind() != HMR_MONITOR_USERFAULTFD)
		return 0;
	return hmr__monitor_uffd_watch(start, len);
}

void hmr__monitor_unwatch(uintptr_t start, size_t len)
{
	if (hmr__monitor_kind() == HMR_MONITOR_USERFAULTFD)
		hmr__monitor_uffd_unwatch(start, len);
}

bool hmr__monitor_intact(void)
{
	if (hmr__monitor_kind() != HMR_MONITOR_MEMHOOKS)
		return true;
	return hmr__monitor_hooks_intact();
}

const char *hmr__monitor_why(void)
{
	return atomic_load(&kind) < 0 ? "not started" : start_why;
}

size_t hmr__monitor_describe(struct hmr__monitor_func *out, size_t max)
{
	if (hmr__monitor_kind() != HMR_MONITOR_MEMHOOKS)
		return 0;
	return hmr__monitor_hooks_describe(out, max);
}

bool hmr__monitor_reports_before(void)
{
	enum hmr_monitor_kind k = hmr__monitor_kind();

	return k == HMR_MONITOR_MEMHOOKS || k == HMR_MONITOR_IMPORT;
}
