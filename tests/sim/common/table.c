/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* table.c: the sorted address table and first-fit placement. */
#include "sim_common.h"

#include <stdlib.h>
#include <string.h>

/* The fields are read by offset, so every simulator keeps its own record. */
uint64_t sim_table_base(const struct sim_table *t, const void *e)
{
	uint64_t v;

	memcpy(&v, (const char *)e + t->base_off, sizeof(v));
	return v;
}

uint64_t sim_table_span(const struct sim_table *t, const void *e)
{
	uint64_t v;

	memcpy(&v, (const char *)e + t->span_off, sizeof(v));
	return v;
}

/* Index of the first entry whose base is above p. */
size_t sim_table_index(const struct sim_table *t, uint64_t p)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sim_table_base(t, t->v[mid]) <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The entry with the highest base at or below p: the one p may be in. */
void *sim_table_floor(const struct sim_table *t, uint64_t p)
{
	size_t i = sim_table_index(t, p);

	return i > 0 ? t->v[i - 1] : NULL;
}

/* Any entry whose [base, base + span) meets [p, p + len). */
void *sim_table_overlap(const struct sim_table *t, uint64_t p, uint64_t len)
{
	size_t i = sim_table_index(t, p);

	if (i > 0 &&
	    p - sim_table_base(t, t->v[i - 1]) < sim_table_span(t, t->v[i - 1]))
		return t->v[i - 1];
	if (i < t->n && sim_table_base(t, t->v[i]) - p < len)
		return t->v[i];
	return NULL;
}

/* Adds e in base order, overlapping or not; 0 or -1 (no memory). */
int sim_table_put(struct sim_table *t, void *e)
{
	size_t i;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		void **v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -1;
		t->v = v;
		t->cap = cap;
	}
	i = sim_table_index(t, sim_table_base(t, e));
	memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof(*t->v));
	t->v[i] = e;
	t->n++;
	return 0;
}

/* Adds e unless its span meets an entry's; 0 or -1. */
int sim_table_insert(struct sim_table *t, void *e)
{
	if (sim_table_overlap(t, sim_table_base(t, e), sim_table_span(t, e)))
		return -1;
	return sim_table_put(t, e);
}

/* 0, or -1 if e is not in the table. */
int sim_table_remove(struct sim_table *t, void *e)
{
	size_t i = sim_table_index(t, sim_table_base(t, e));

	if (i == 0 || t->v[i - 1] != e)
		return -1;
	i--;
	memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof(*t->v));
	t->n--;
	return 0;
}

/*
 * First fit in [lo, hi): the lowest address aligned to align where span
 * bytes meet no entry, so a freed hole is reused.  0 or -1.
 */
int sim_table_first_fit(const struct sim_table *t, uint64_t lo, uint64_t hi,
                        uint64_t span, uint64_t align, uint64_t *addr)
{
	uint64_t cand = sim_round_up(lo, align);

	for (size_t i = sim_table_index(t, lo - 1); i < t->n; i++) {
		uint64_t base = sim_table_base(t, t->v[i]);
		uint64_t end = base + sim_table_span(t, t->v[i]);

		if (base >= hi || base >= cand + span)
			break;
		if (end > cand)
			cand = sim_round_up(end, align);
	}
	if (cand + span > hi || cand + span < cand)
		return -1;
	*addr = cand;
	return 0;
}
