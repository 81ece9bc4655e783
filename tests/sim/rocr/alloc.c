/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* alloc.c: the address table, GPU windows and memfd backing. */
#include "sim_rocr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* All functions here expect sim.lock to be held. */

/* One reservation holds every GPU's window, 2 MiB aligned. */
int sim_windows_reserve(void)
{
	size_t len = (size_t)sim_cfg.ngpu * SIM_DEV_WINDOW + SIM_LARGE;
	void *p = mmap(NULL, len, PROT_NONE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t base;

	if (p == MAP_FAILED) {
		sim_log("cannot reserve %zu bytes of address space: %s", len,
		        strerror(errno));
		return -1;
	}
	sim.window = p;
	sim.window_len = len;
	base = sim_round_up((uintptr_t)p, SIM_LARGE);
	for (int i = 0; i < sim_cfg.ngpu; i++)
		sim.agents[1 + i].win_base =
		        base + (uintptr_t)i * SIM_DEV_WINDOW;
	return 0;
}

void sim_windows_release(void)
{
	if (sim.window)
		munmap(sim.window, sim.window_len);
	sim.window = NULL;
	sim.window_len = 0;
}

int sim_in_window(uintptr_t p)
{
	uintptr_t lo = (uintptr_t)sim.window;

	return sim.window && p >= lo && p - lo < sim.window_len;
}

/* A memfd of span bytes, or -1. */
int sim_memfd(size_t span, const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd >= 0 && ftruncate(fd, (off_t)span) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void *sim_map_shadow(int fd, size_t span)
{
	void *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Maps the memfd at addr, inside a window: PROT_NONE unless configured. */
int sim_map_device(uintptr_t addr, int fd, size_t span)
{
	int prot = sim_cfg.host_accessible ? PROT_READ | PROT_WRITE : PROT_NONE;
	void *p = mmap((void *)addr, span, prot, MAP_SHARED | MAP_FIXED, fd, 0);

	return p == MAP_FAILED ? -1 : 0;
}

/* Gives [addr, addr + span) back to the PROT_NONE reservation. */
void sim_unmap_device(uintptr_t addr, size_t span)
{
	mmap((void *)addr, span, PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

/* Index of the first entry whose base is above p. */
static size_t sim_index_of(uintptr_t p)
{
	size_t lo = 0, hi = sim.ntab;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sim.tab[mid]->base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The live entry whose [base, base + span) holds p. */
struct sim_alloc *sim_find(uintptr_t p)
{
	size_t i = sim_index_of(p);
	struct sim_alloc *a;

	if (i == 0)
		return NULL;
	a = sim.tab[i - 1];
	return p - a->base < a->span && !a->dying ? a : NULL;
}

/* Any entry, dying ones included, whose span meets [p, p + len). */
static struct sim_alloc *sim_find_overlap(uintptr_t p, size_t len)
{
	size_t i = sim_index_of(p);

	if (i > 0 && p - sim.tab[i - 1]->base < sim.tab[i - 1]->span)
		return sim.tab[i - 1];
	if (i < sim.ntab && sim.tab[i]->base - p < len)
		return sim.tab[i];
	return NULL;
}

int sim_insert(struct sim_alloc *a)
{
	size_t i;

	if (sim_find_overlap(a->base, a->span))
		return -1;
	if (sim.ntab == sim.captab) {
		size_t cap = sim.captab ? sim.captab * 2 : 64;
		struct sim_alloc **t = realloc(sim.tab, cap * sizeof(*t));

		if (!t)
			return -1;
		sim.tab = t;
		sim.captab = cap;
	}
	i = sim_index_of(a->base);
	memmove(&sim.tab[i + 1], &sim.tab[i],
	        (sim.ntab - i) * sizeof(*sim.tab));
	sim.tab[i] = a;
	sim.ntab++;
	return 0;
}

void sim_remove(struct sim_alloc *a)
{
	size_t i = sim_index_of(a->base);

	if (i == 0 || sim.tab[i - 1] != a)
		return;
	i--;
	memmove(&sim.tab[i], &sim.tab[i + 1],
	        (sim.ntab - i - 1) * sizeof(*sim.tab));
	sim.ntab--;
}

/*
 * First fit in the GPU's window: the lowest suitably aligned address
 * where span bytes meet no entry (a dying one still holds its range).
 */
int sim_slot_find(int gpu, size_t span, uintptr_t *addr)
{
	size_t align = span >= SIM_LARGE ? SIM_LARGE : sim.page;
	uintptr_t lo = sim.agents[1 + gpu].win_base, hi = lo + SIM_DEV_WINDOW;
	uintptr_t cand = sim_round_up(lo, align);

	for (size_t i = sim_index_of(lo - 1); i < sim.ntab; i++) {
		struct sim_alloc *a = sim.tab[i];

		if (a->base >= hi || a->base >= cand + span)
			break;
		if (a->base + a->span > cand)
			cand = sim_round_up(a->base + a->span, align);
	}
	if (cand + span > hi)
		return -1;
	*addr = cand;
	return 0;
}

/* Unmaps and frees an entry already removed from the table. */
void sim_destroy_alloc(struct sim_alloc *a)
{
	struct sim_notifier *n, *next;

	/* Not if hsa_shut_down already dropped the windows (a dying one). */
	if (a->base != (uintptr_t)a->shadow && sim_in_window(a->base))
		sim_unmap_device(a->base, a->span);
	if (a->shadow)
		munmap(a->shadow, a->span);
	if (a->fd >= 0)
		close(a->fd);
	for (n = a->notify; n; n = next) {
		next = n->next;
		free(n);
	}
	free(a);
}

struct sim_lock *sim_lock_find(uintptr_t p)
{
	for (struct sim_lock *l = sim.locks; l; l = l->next)
		if (p - l->host < l->size)
			return l;
	return NULL;
}

/* The last hsa_shut_down: every allocation, mapping and lock goes. */
void sim_free_everything(void)
{
	while (sim.ntab > 0) {
		struct sim_alloc *a = sim.tab[--sim.ntab];

		if (a->dying) /* its pool_free is running callbacks */
			continue;
		if (a->kind != SIM_KIND_IPC)
			sim.agents[a->owner].used -= a->span;
		sim_destroy_alloc(a);
	}
	free(sim.tab);
	sim.tab = NULL;
	sim.captab = 0;
	while (sim.locks) {
		struct sim_lock *l = sim.locks;

		sim.locks = l->next;
		free(l);
	}
}
