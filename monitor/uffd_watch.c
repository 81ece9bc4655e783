/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* uffd_watch.c: the ranges userfaultfd watches, counted page by page. */
#include <errno.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "base/log.h"
#include "base/oserr.h"
#include "base/range.h"
#include "monitor/monitor_impl.h"
#include "monitor/uffd.h"

/*
 * Watched pages are kept as disjoint segments [start, end) with the
 * number of watches covering them, in a treap ordered by start.  A watch
 * registers exactly its pages with the kernel (never a wider range: one
 * that covered the monitor's own stack would deadlock it) and counts
 * them; an unwatch uncounts, and unregisters only the pages no watch
 * covers any more, so overlapping watchers stay covered.
 *
 * A watch always asks the kernel, even for pages counted already: an
 * unmap drops the kernel's registration at once, while the counts drop
 * only when the watcher, told of the unmap, unwatches; memory mapped
 * again at that address in between must be registered anew.
 *
 * When the kernel refuses (ENOMEM at vm.max_map_count: each registered
 * range inside a mapping splits it; EINVAL for memory userfaultfd cannot
 * watch; EBUSY when another userfaultfd has it), the watch returns the
 * code and the caller does not cache the range; pages the failed call
 * registered that no watch counts are unregistered again.
 *
 * ranges_lock is taken by watchers only, never by the monitor's threads
 * (an unmapping thread may hold it while waiting for them).
 */

struct seg {
	uintptr_t start, end;
	unsigned long count;
	unsigned prio;
	struct seg *l, *r;
};

static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;
static struct seg *root;                  /* (ranges_lock) */
static unsigned prio_state = 2463534242u; /* (ranges_lock) */

static struct seg *seg_new(uintptr_t start, uintptr_t end, unsigned long n)
{
	struct seg *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->start = start;
	s->end = end;
	s->count = n;
	prio_state ^= prio_state << 13; /* xorshift32 */
	prio_state ^= prio_state >> 17;
	prio_state ^= prio_state << 5;
	s->prio = prio_state;
	return s;
}

/* *a: segments starting below key; *b: the rest. */
static void split(struct seg *t, uintptr_t key, struct seg **a, struct seg **b)
{
	if (!t) {
		*a = *b = NULL;
	} else if (t->start < key) {
		split(t->r, key, &t->r, b);
		*a = t;
	} else {
		split(t->l, key, a, &t->l);
		*b = t;
	}
}

/* Every segment of a lies before every segment of b. */
static struct seg *merge(struct seg *a, struct seg *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		a->r = merge(a->r, b);
		return a;
	}
	b->l = merge(a, b->l);
	return b;
}

/* No segment straddles x afterwards. */
static int cut(uintptr_t x)
{
	struct seg *a, *b, *m, *n;

	split(root, x, &a, &b);
	for (m = a; m && m->r; m = m->r)
		;
	if (m && m->end > x) {
		n = seg_new(x, m->end, m->count);
		if (!n) {
			root = merge(a, b);
			return -FI_ENOMEM;
		}
		m->end = x;
		b = merge(n, b);
	}
	root = merge(a, b);
	return 0;
}

static size_t count_nodes(const struct seg *t)
{
	return t ? 1 + count_nodes(t->l) + count_nodes(t->r) : 0;
}

static void in_order(struct seg *t, struct seg **v, size_t *n)
{
	if (!t)
		return;
	in_order(t->l, v, n);
	v[(*n)++] = t;
	in_order(t->r, v, n);
	t->l = t->r = NULL;
}

static struct seg *build(struct seg **v, size_t n)
{
	struct seg *t = NULL;
	size_t i;

	for (i = 0; i < n; i++)
		t = merge(t, v[i]);
	return t;
}

static int uffd_ioctl(unsigned long req, uintptr_t start, uintptr_t end)
{
	struct uffdio_register reg = {
	        .range = {.start = start, .len = end - start},
	        .mode = hmr__uffd_mode()};
	void *arg = req == UFFDIO_REGISTER ? (void *)&reg : (void *)&reg.range;

	return ioctl(hmr__uffd_fd(), req, arg) ? hmr__os_error(errno) : 0;
}

/* The segments of [s, e) (cut at both ends) taken out of the tree into
 * v (sorted); *a and *c keep the rest. */
static int take(uintptr_t s, uintptr_t e, struct seg ***v, size_t *n,
                size_t extra, struct seg **a, struct seg **c)
{
	struct seg *m;
	int rc;

	rc = cut(s);
	if (!rc)
		rc = cut(e);
	if (rc)
		return rc;
	split(root, s, a, &m);
	split(m, e, &m, c);
	*n = count_nodes(m);
	*v = malloc((2 * *n + extra) * sizeof(**v));
	if (!*v) {
		root = merge(merge(*a, m), *c);
		return -FI_ENOMEM;
	}
	*n = 0;
	in_order(m, *v, n);
	return 0;
}

/* v[0..n) sorted inside [s, e); the gaps between them become new
 * segments of count 0, appended after v[n]; their number returned, or
 * -1 when out of memory. */
static long gaps(struct seg **v, size_t n, uintptr_t s, uintptr_t e)
{
	uintptr_t at = s;
	size_t i, g = 0;

	for (i = 0; i <= n; i++) {
		uintptr_t next = i < n ? v[i]->start : e;

		if (next > at) {
			v[n + g] = seg_new(at, next, 0);
			if (!v[n + g])
				goto err;
			g++;
		}
		if (i < n)
			at = v[i]->end;
	}
	return (long)g;
err:
	while (g--)
		free(v[n + g]);
	return -1;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = *(struct seg *const *)a;
	const struct seg *y = *(struct seg *const *)b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool page_range(uintptr_t start, size_t len, uintptr_t *s, uintptr_t *e)
{
	uint64_t end, pg = (uint64_t)sysconf(_SC_PAGESIZE);

	if (!len || !hmr__range_end(start, len, &end) ||
	    !hmr__align_up(end, pg, &end))
		return false;
	*s = start & ~(uintptr_t)(pg - 1);
	*e = (uintptr_t)end;
	return true;
}

int hmr__monitor_uffd_watch(uintptr_t start, size_t len)
{
	struct seg **v, *a, *c;
	uintptr_t s, e;
	size_t n, i;
	long g;
	int rc;

	if (!page_range(start, len, &s, &e))
		return -FI_EINVAL;
	pthread_mutex_lock(&ranges_lock);
	rc = take(s, e, &v, &n, 1, &a, &c);
	if (rc)
		goto out;
	g = gaps(v, n, s, e);
	if (g < 0) {
		rc = -FI_ENOMEM;
	} else {
		rc = uffd_ioctl(UFFDIO_REGISTER, s, e);
		if (rc) {
			/* Undo what the refused call registered of pages
			 * no watch counts. */
			for (i = n; i < n + (size_t)g; i++) {
				uffd_ioctl(UFFDIO_UNREGISTER, v[i]->start,
				           v[i]->end);
				free(v[i]);
			}
			hmr_dbg("userfaultfd: register [0x%lx, 0x%lx): %s",
			        (unsigned long)s, (unsigned long)e,
			        strerror(-rc));
		} else {
			n += (size_t)g;
			for (i = 0; i < n; i++)
				v[i]->count++;
			qsort(v, n, sizeof(*v), seg_cmp);
		}
	}
	root = merge(merge(a, build(v, n)), c);
	free(v);
out:
	pthread_mutex_unlock(&ranges_lock);
	return rc;
}

void hmr__monitor_uffd_unwatch(uintptr_t start, size_t len)
{
	struct seg **v, *a, *c;
	uintptr_t s, e, zs = 0, ze = 0;
	size_t n, i, kept = 0;

	if (!page_range(start, len, &s, &e))
		return;
	pthread_mutex_lock(&ranges_lock);
	if (take(s, e, &v, &n, 0, &a, &c)) {
		/* Out of memory: the pages stay registered (more events,
		 * never fewer). */
		pthread_mutex_unlock(&ranges_lock);
		return;
	}
	for (i = 0; i < n; i++) {
		if (v[i]->count > 1) {
			v[i]->count--;
			v[kept++] = v[i];
			continue;
		}
		/* Coalesce runs of pages no watch covers any more. */
		if (ze != v[i]->start) {
			if (ze > zs)
				uffd_ioctl(UFFDIO_UNREGISTER, zs, ze);
			zs = v[i]->start;
		}
		ze = v[i]->end;
		free(v[i]);
	}
	if (ze > zs)
		uffd_ioctl(UFFDIO_UNREGISTER, zs, ze);
	root = merge(merge(a, build(v, kept)), c);
	free(v);
	pthread_mutex_unlock(&ranges_lock);
}
