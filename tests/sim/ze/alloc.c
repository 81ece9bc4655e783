/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* alloc.c: the address table, window placement and memfd backing. */
#include "sim_ze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* All functions here expect sim.lock to be held. */

/* Maps all of m at addr, inside a window. */
int sim_map_device(uintptr_t addr, const struct sim_mem *m, int host_rw)
{
	int prot = host_rw || sim_cfg.host_accessible ? PROT_READ | PROT_WRITE
	                                              : PROT_NONE;

	return sim_map_fixed(addr, m->size, prot, m->fd, 0);
}

int sim_in_window(uintptr_t p)
{
	uintptr_t lo = sim.dev[0].win_base;

	return sim.initialized && p >= lo &&
	       p - lo < (uintptr_t)sim_cfg.ndev * SIM_DEV_WINDOW;
}

/* The entry whose [base, base + size) holds p. */
struct sim_alloc *sim_find(uintptr_t p)
{
	struct sim_alloc *a = sim_table_floor(&sim.tab, p);

	return a && p - a->base < a->size ? a : NULL;
}

/* First fit in the device's window; a freed hole is reused. */
int sim_slot_find(ze_device_handle_t dev, size_t span, size_t align,
                  uintptr_t *addr)
{
	uint64_t at;

	if (sim_table_first_fit(&sim.tab, dev->win_base,
	                        dev->win_base + SIM_DEV_WINDOW, span, align,
	                        &at))
		return -1;
	*addr = (uintptr_t)at;
	return 0;
}

struct sim_alloc *sim_alloc_new(enum sim_kind kind, ze_device_handle_t dev)
{
	struct sim_alloc *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->kind = kind;
	a->dev = dev;
	a->id = sim.next_id++;
	a->mem.fd = -1;
	a->drv_fd = -1;
	a->drv_ref = -1;
	return a;
}

/* USM allocations: what zeMemGetAllocProperties knows about. */
int sim_is_usm(const struct sim_alloc *a)
{
	return a->kind != SIM_KIND_IMPORT;
}

/* Removes a from the table and releases everything it holds. */
void sim_free_alloc(struct sim_alloc *a)
{
	(void)sim_table_remove(&sim.tab, a);
	sim_release_driver_fd(a);
	switch (a->kind) {
	case SIM_KIND_DEVICE:
		a->dev->used -= a->span;
		/* fall through */
	case SIM_KIND_SHARED:
	case SIM_KIND_IPC:
		sim_unmap_fixed(a->base, a->span);
		sim_mem_destroy(&a->mem);
		break;
	case SIM_KIND_HOST:
		sim_mem_destroy(&a->mem);
		break;
	case SIM_KIND_IMPORT:
		break;
	}
	free(a);
}

/* Test hook: live entries (USM allocations, IPC mappings, imports). */
SIM_API unsigned long hmr_sim_ze_live_allocs(void)
{
	unsigned long n;

	pthread_mutex_lock(&sim.lock);
	n = sim.tab.n;
	pthread_mutex_unlock(&sim.lock);
	return n;
}
