/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* driver.c: choice sources, the arena, episodes: open, run, tear down. */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "driver.h"

void drv_src_seed(struct drv_src *s, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->state = seed;
}

void drv_src_bytes(struct drv_src *s, const uint8_t *data, size_t size)
{
	memset(s, 0, sizeof(*s));
	s->fuzz = true;
	s->data = data;
	s->size = size;
}

static uint64_t take(struct drv_src *s, unsigned bytes)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < bytes; i++) {
		if (s->pos >= s->size) {
			s->done = true;
			return 0;
		}
		v |= (uint64_t)s->data[s->pos++] << (8 * i);
	}
	return v;
}

static uint64_t splitmix(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

bool drv_src_record(struct drv_src *s)
{
	if (!s->rec) {
		s->rec_cap = 4096;
		s->rec = malloc(s->rec_cap);
	}
	s->rec_len = 0;
	return s->rec != NULL;
}

static void record(struct drv_src *s, uint64_t v, unsigned bytes)
{
	unsigned i;

	if (s->rec_len + bytes > s->rec_cap) {
		uint8_t *grown = realloc(s->rec, s->rec_cap * 2);

		if (!grown)
			return;
		s->rec = grown;
		s->rec_cap *= 2;
	}
	for (i = 0; i < bytes; i++)
		s->rec[s->rec_len++] = (uint8_t)(v >> (8 * i));
}

static unsigned width(uint64_t n)
{
	return n <= 256 ? 1 : n <= 65536 ? 2 : 8;
}

uint64_t drv_pick(struct drv_src *s, uint64_t n)
{
	uint64_t v;

	if (n <= 1)
		return 0;
	if (s->fuzz)
		return take(s, width(n)) % n;
	v = splitmix(&s->state) % n;
	if (s->rec)
		record(s, v, width(n));
	return v;
}

uint64_t drv_u64(struct drv_src *s)
{
	uint64_t v;

	if (s->fuzz)
		return take(s, 8);
	v = splitmix(&s->state);
	if (s->rec)
		record(s, v, 8);
	return v;
}

/* The arena: ARENA_PAGES pages, page HOLE_PAGE unmapped.  Made once per
 * process and never freed (the MRs of every episode point into it).
 * After it, TAIL_GAP unmapped pages (ranges past its end reach at most 3
 * pages into them: drv_gen_iov), then one PROT_NONE page that stays
 * mapped: so the gap is a hole of its own, which only a mapping of at
 * most TAIL_GAP pages could fill.  Without it the free space above the
 * arena let another thread's mapping (ASan's, a stack) land right after
 * its end between the library's check and the model's, and the two
 * disagreed (model_threads_grants_match_model under ASan in CI). */
#define ARENA_PAGES 16
#define HOLE_PAGE   10
#define TAIL_GAP    4
static pthread_once_t arena_once = PTHREAD_ONCE_INIT;
static uint64_t arena_base, arena_len, arena_hole;
static size_t huge_sizes[8], nhuge;

static void arena_make(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long kb;
	struct dirent *e;
	char *p;
	DIR *dir;

	p = mmap(NULL, (ARENA_PAGES + TAIL_GAP + 1) * page,
	         PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		abort();
	munmap(p + HOLE_PAGE * page, page);
	munmap(p + ARENA_PAGES * page, TAIL_GAP * page);
	if (mprotect(p + (ARENA_PAGES + TAIL_GAP) * page, page, PROT_NONE))
		abort();
	arena_base = (uint64_t)(uintptr_t)p;
	arena_len = ARENA_PAGES * page;
	arena_hole = arena_base + HOLE_PAGE * page;
	/* Huge page sizes: valid page_size values besides the base page. */
	dir = opendir("/sys/kernel/mm/hugepages");
	while (dir && (e = readdir(dir)) && nhuge < 8)
		if (sscanf(e->d_name, "hugepages-%lukB", &kb) == 1)
			huge_sizes[nhuge++] = kb * 1024;
	if (dir)
		closedir(dir);
}

void drv_arena(uint64_t *base, uint64_t *len, uint64_t *hole)
{
	pthread_once(&arena_once, arena_make);
	*base = arena_base;
	*len = arena_len;
	*hole = arena_hole;
}

/* Ask the kernel whether every page of the range is mapped: mincore a
 * chunk of pages at a time (it fails with ENOMEM on the first unmapped
 * page) for ranges up to 256 MiB, one msync(MS_ASYNC) (ENOMEM likewise)
 * for longer ones, whose page walk would take seconds. */
static bool env_mapped(uint64_t addr, uint64_t len, void *arg)
{
	enum { CHUNK = 1024 };
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), p, end, n;
	unsigned char vec[CHUNK];

	(void)arg;
	if (!len || len > UINT64_MAX - addr)
		return false;
	end = addr + len;
	p = addr & ~(page - 1);
	if (end - p > (256ULL << 20))
		return msync((void *)(uintptr_t)p, end - p, MS_ASYNC) == 0;
	for (; p < end; p += n * page) {
		n = (end - p + page - 1) / page;
		n = n > CHUNK ? CHUNK : n;
		if (mincore((void *)(uintptr_t)p, n * page, vec) != 0)
			return false;
	}
	return true;
}

static bool env_page_size_ok(size_t size, void *arg)
{
	size_t i;

	(void)arg;
	pthread_once(&arena_once, arena_make);
	if (size == (size_t)sysconf(_SC_PAGESIZE))
		return true;
	for (i = 0; i < nhuge; i++)
		if (huge_sizes[i] == size)
			return true;
	return false;
}

const struct model_env drv_env = {
        .mapped = env_mapped,
        .page_size_ok = env_page_size_ok,
        .arg = NULL,
};

void drv_trace(struct drv *d, const char *fmt, ...)
{
	va_list ap;
	char *line;

	if (d->opts.quiet_trace)
		return;
	line = d->trace[d->trace_next++ % DRV_TRACE];
	va_start(ap, fmt);
	vsnprintf(line, sizeof(d->trace[0]), fmt, ap);
	va_end(ap);
	if (d->opts.echo)
		fprintf(stderr, "%s\n", line);
}

void drv_fail(struct drv *d, const char *fmt, ...)
{
	char report[DRV_TRACE * 210 + 600];
	size_t used = 0;
	unsigned i;
	va_list ap;

	used += snprintf(report, sizeof(report), "last operations:\n");
	for (i = d->trace_next > DRV_TRACE ? d->trace_next - DRV_TRACE : 0;
	     i < d->trace_next && used < sizeof(report); i++)
		used += snprintf(report + used, sizeof(report) - used, "  %s\n",
		                 d->trace[i % DRV_TRACE]);
	if (used < sizeof(report))
		used += snprintf(report + used, sizeof(report) - used,
		                 "MISMATCH at step %lu (episode %lu, mr_mode "
		                 "%#llx): ",
		                 d->step, d->stats.episodes,
		                 (unsigned long long)d->m.mr_mode);
	if (used < sizeof(report)) {
		va_start(ap, fmt);
		vsnprintf(report + used, sizeof(report) - used, fmt, ap);
		va_end(ap);
	}
	d->opts.fail(report, d->opts.fail_arg);
	abort(); /* opts.fail must not return. */
}

void drv_init(struct drv *d, const struct drv_opts *opts)
{
	memset(d, 0, sizeof(*d));
	d->opts = *opts;
	if (!d->opts.profile)
		d->opts.profile = &drv_profile_mixed;
}
