/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* backed.c: FI_MR_ALLOCATED's proof of backing, remembered (backed.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <hmr/fi_mr.h>

#include "base/host.h"
#include "base/log.h"
#include "base/range.h"
#include "core/backed.h"
#include "monitor/monitor.h"

/*
 * `epoch` moves at every monitor event, before the kernel acts, and at a
 * fork (in the child).  A thread's proof carries the epoch read before the
 * proof was made, so an event during the proof already voids it.  A
 * thread keeps its last PROOFS proofs (initial-exec TLS: no call on the
 * hot path); a hit costs one load of `epoch` and a few compares.
 */
#define PROOFS 4

enum { UNDECIDED, REMEMBER, NEVER };

static _Atomic uint64_t epoch = 1; /* 0 marks an empty slot */
static atomic_int state;           /* UNDECIDED, REMEMBER or NEVER */
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;

struct proof {
	uintptr_t start;
	uint64_t end;
	uint64_t epoch;
};
static __thread struct proof proofs[PROOFS]
        __attribute__((tls_model("initial-exec")));
static __thread unsigned next_proof __attribute__((tls_model("initial-exec")));

/* Inside the hooked call, on any thread: allocates nothing, locks nothing
 * (monitor.h's rules). */
static void unmapped(struct hmr_monitor_sub *sub, uintptr_t start, size_t len,
                     bool nested)
{
	(void)sub, (void)start, (void)len, (void)nested;
	atomic_fetch_add(&epoch, 1);
}

static struct hmr_monitor_sub sub = {.unmapped = unmapped};

static void forked_child(void)
{
	atomic_fetch_add(&epoch, 1);
}

static void decide(void)
{
	char why[256] = "";
	int s = NEVER;

	pthread_mutex_lock(&state_lock);
	if (atomic_load(&state) != UNDECIDED)
		goto out;
	hmr__monitor_start(why, sizeof(why));
	if (hmr__monitor_reports_before() &&
	    pthread_atfork(NULL, NULL, forked_child) == 0) {
		hmr__monitor_subscribe(&sub);
		s = REMEMBER;
	} else {
		hmr_info("FI_MR_ALLOCATED: every registration proves its "
		         "backing anew: the memory monitor is %s (%s)",
		         hmr__monitor_kind_name(hmr__monitor_kind()), why);
	}
	atomic_store(&state, s);
out:
	pthread_mutex_unlock(&state_lock);
}

static bool proven(uintptr_t start, uint64_t end, uint64_t now)
{
	unsigned i;

	for (i = 0; i < PROOFS; i++)
		if (proofs[i].epoch == now && start >= proofs[i].start &&
		    end <= proofs[i].end)
			return true;
	return false;
}

static void remember(uintptr_t start, uint64_t end, uint64_t then)
{
	struct proof *p = &proofs[next_proof++ % PROOFS];

	p->start = start;
	p->end = end;
	p->epoch = then;
}

int hmr__backed(const struct iovec *iov, size_t count)
{
	int s = atomic_load_explicit(&state, memory_order_acquire);
	uint64_t now, end;
	size_t i;
	int ret;

	if (s == UNDECIDED) {
		decide();
		s = atomic_load(&state);
	}
	/* A hook another library overwrote may have lost events: the repair
	 * reports everything unmapped, which moves the epoch. */
	if (s != REMEMBER ||
	    (!hmr__monitor_intact_quick() && !hmr__monitor_intact()))
		return hmr__host_range_mapped(iov, count);
	now = atomic_load_explicit(&epoch, memory_order_acquire);
	for (i = 0; i < count; i++) {
		uintptr_t start = (uintptr_t)iov[i].iov_base;
		/* Empty or wrapping ranges: the proof itself answers, and
		 * nothing is remembered of them. */
		bool ranged = iov[i].iov_len &&
		              hmr__range_end(start, iov[i].iov_len, &end);

		if (ranged && proven(start, end, now))
			continue;
		ret = hmr__host_range_mapped(&iov[i], 1);
		if (ret)
			return ret;
		if (ranged)
			remember(start, end, now);
	}
	return 0;
}
