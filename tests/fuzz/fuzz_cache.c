/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* fuzz_cache.c: the registration cache's lookups and invalidations. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hmr/hmr.h>

#include "cache/cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * One input: a cache configuration (max_count, max_size, merge), then
 * gets, puts, invalidations and flushes until the input ends, on fake
 * registrations (no memory is touched, so any address works, 0 and the
 * top of the address space included).  Checked after every step:
 *  - a get answers with a live registration that covers the WHOLE range
 *    asked, with at least the access asked, for the same memory id;
 *  - no registration made before an invalidation that overlaps it is
 *    handed out after that invalidation;
 *  - a range past the end of the address space is -FI_EINVAL;
 *  - at the end, after the last put and close, every registration has
 *    been deregistered exactly once (no leak, no double dereg).
 */
#define MAX_REGS  4096
#define MAX_HELD  32
#define MAX_INVAL 256

struct reg {
	uintptr_t start, end;
	uint64_t access, id;
	unsigned long born; /* Step of registration. */
	bool live;
};

struct inval {
	uintptr_t start;
	uint64_t end; /* May be 2^64 - 1 clipped. */
	unsigned long step;
};

static struct reg regs[MAX_REGS];
static size_t nregs;
static struct inval invals[MAX_INVAL];
static size_t ninvals;
static unsigned long step;

struct bytes {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct bytes *b, unsigned nbytes)
{
	uint64_t v = 0;

	while (nbytes--) {
		v = v << 8 | (b->n ? *b->p : 0);
		if (b->n)
			b->p++, b->n--;
	}
	return v;
}

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_cache: %s (step %lu)\n", what, step);
	abort();
}

static int fake_reg(void *ctx, struct hmr_cache_entry *e)
{
	(void)ctx;
	if (nregs == MAX_REGS)
		return -FI_ENOMEM;
	if (e->end <= e->start)
		fail("asked to register an empty or wrapped range");
	regs[nregs] =
	        (struct reg){e->start, e->end, e->access, e->id, step, true};
	e->handle = &regs[nregs++];
	return 0;
}

static void fake_dereg(void *ctx, struct hmr_cache_entry *e)
{
	struct reg *r = e->handle;

	(void)ctx;
	if (!r->live)
		fail("a registration deregistered twice");
	r->live = false;
}

static const struct hmr_cache_ops ops = {fake_reg, fake_dereg};

/* Addresses from a few places: near 0, a middle arena, near the top. */
static uintptr_t gen_addr(struct bytes *b)
{
	uint64_t off = take(b, 2) * 64;

	switch (take(b, 1) % 4) {
	case 0:
		return (uintptr_t)off;
	case 1:
	case 2:
		return (uintptr_t)(0x7f0000000000ULL + off);
	default:
		return (uintptr_t)(UINT64_MAX - off);
	}
}

static void check_hit(const struct hmr_cache_entry *e, uintptr_t start,
                      size_t len, uint64_t access, uint64_t id)
{
	const struct reg *r = e->handle;
	size_t i;

	if (!r || !r->live)
		fail("a get answered with a dead registration");
	if (e->start > start || e->end - start < len || r->start != e->start ||
	    r->end != e->end)
		fail("a get answered with a registration not covering the "
		     "range");
	if ((e->access & access) != access || r->access != e->access)
		fail("a get answered without the access asked");
	if (e->id != id)
		fail("a get answered for another memory id");
	for (i = 0; i < ninvals; i++)
		if (invals[i].step > r->born && invals[i].start < r->end &&
		    r->start < invals[i].end)
			fail("a get answered with a registration invalidated "
			     "after it was made");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bytes b = {data, size};
	struct hmr_cache_attr attr = {.ops = &ops, .name = "fuzz"};
	struct hmr_cache_entry *held[MAX_HELD];
	struct hmr_cache *c;
	size_t nheld = 0, i;

	nregs = ninvals = 0;
	step = 0;
	attr.max_count = (size_t)take(&b, 1) % 9;
	attr.max_size = (size_t)take(&b, 1) * 4096 + 1;
	attr.merge_regions = take(&b, 1) & 1;
	if (hmr__cache_open(&attr, &c))
		return 0;
	while (b.n && step < 20000) {
		uint64_t op = take(&b, 1), access = take(&b, 1) % 8;
		uint64_t id = take(&b, 1) % 3;
		uintptr_t start = gen_addr(&b);
		size_t len = (size_t)(take(&b, 2) % 8192) + 1;
		uint64_t end;
		struct hmr_cache_entry *e = NULL;
		int ret;

		step++;
		switch (op % 8) {
		case 0:
		case 1:
		case 2:
			ret = hmr__cache_get(c, start, len, access, id, &e);
			if (__builtin_add_overflow(start, len, &end)) {
				if (ret != -FI_EINVAL)
					fail("a range past 2^64 was not "
					     "-FI_EINVAL");
				break;
			}
			if (ret == -FI_ENOMEM)
				break;
			if (ret)
				fail("a get failed");
			check_hit(e, start, len, access, id);
			if (nheld < MAX_HELD)
				held[nheld++] = e;
			else
				hmr__cache_put(c, e);
			break;
		case 3:
		case 4:
			if (nheld) {
				i = (size_t)(access % nheld);
				hmr__cache_put(c, held[i]);
				held[i] = held[--nheld];
			}
			break;
		case 5:
		case 6:
			if (ninvals == MAX_INVAL)
				break;
			hmr__cache_invalidate(c, start, len);
			invals[ninvals].start = start;
			invals[ninvals].end =
			        __builtin_add_overflow(start, len, &end)
			                ? UINT64_MAX
			                : end;
			invals[ninvals++].step = step;
			break;
		default:
			hmr__cache_flush(c);
			break;
		}
	}
	while (nheld)
		hmr__cache_put(c, held[--nheld]);
	if (hmr__cache_close(c))
		fail("close failed with no user left");
	for (i = 0; i < nregs; i++)
		if (regs[i].live)
			fail("a registration outlived the cache");
	return 0;
}
