/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* alloc.c: the address table, GPU windows and memfd backing. */
#include "sim_rocr.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* All functions here expect sim.lock to be held. */

/* One reservation holds every GPU's window, 2 MiB aligned. */
int sim_windows_reserve(void)
{
	size_t len = (size_t)sim_cfg.ngpu * SIM_DEV_WINDOW + SIM_LARGE;
	void *p = sim_reserve(len);
	uintptr_t base;

	if (!p)
		return -1;
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

/* Maps the memfd at addr, inside a window: PROT_NONE unless configured. */
int sim_map_device(uintptr_t addr, int fd, size_t span)
{
	int prot = sim_cfg.host_accessible ? PROT_READ | PROT_WRITE : PROT_NONE;

	return sim_map_fixed(addr, span, prot, fd, 0);
}

/* The live entry whose [base, base + span) holds p. */
struct sim_alloc *sim_find(uintptr_t p)
{
	struct sim_alloc *a = sim_table_floor(&sim.tab, p);

	return a && p - a->base < a->span && !a->dying ? a : NULL;
}

/*
 * First fit in the GPU's window: the lowest suitably aligned address
 * where span bytes meet no entry (a dying one still holds its range).
 */
int sim_slot_find(int gpu, size_t span, uintptr_t *addr)
{
	size_t align = span >= SIM_LARGE ? SIM_LARGE : sim.page;
	uint64_t lo = sim.agents[1 + gpu].win_base, at;

	if (sim_table_first_fit(&sim.tab, lo, lo + SIM_DEV_WINDOW, span, align,
	                        &at))
		return -1;
	*addr = (uintptr_t)at;
	return 0;
}

/* Unmaps and frees an entry already removed from the table. */
void sim_destroy_alloc(struct sim_alloc *a)
{
	struct sim_notifier *n, *next;

	/* Not if hsa_shut_down already dropped the windows (a dying one). */
	if (a->base != (uintptr_t)a->shadow && sim_in_window(a->base))
		sim_unmap_fixed(a->base, a->span);
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
	while (sim.tab.n > 0) {
		struct sim_alloc *a = sim.tab.v[--sim.tab.n];

		if (a->dying) /* its pool_free is running callbacks */
			continue;
		if (a->kind != SIM_KIND_IPC)
			sim.agents[a->owner].used -= a->span;
		sim_destroy_alloc(a);
	}
	free(sim.tab.v);
	sim.tab.v = NULL;
	sim.tab.cap = 0;
	while (sim.locks) {
		struct sim_lock *l = sim.locks;

		sim.locks = l->next;
		free(l);
	}
}
