/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* alloc.c: the address table, window placement and memfd backing. */
#include "sim_cuda.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* All functions here expect sim.lock to be held. */

/* Maps [off, off + len) of m at addr, inside a window. */
int sim_map_device(CUdeviceptr addr, const struct sim_mem *m, size_t off,
                   size_t len, int host_rw)
{
	int prot = host_rw || sim_cfg.host_accessible ? PROT_READ | PROT_WRITE
	                                              : PROT_NONE;

	return sim_map_fixed(addr, len, prot, m->fd, (off_t)off);
}

int sim_in_window(CUdeviceptr p)
{
	CUdeviceptr lo = sim.dev[0].win_base;

	return sim.initialized && p >= lo && p < sim.vmm_base + SIM_VMM_WINDOW;
}

/* The entry whose [base, base + size) holds p. */
struct sim_alloc *sim_find(CUdeviceptr p)
{
	struct sim_alloc *a = sim_table_floor(&sim.tab, p);

	return a && p - a->base < a->size ? a : NULL;
}

/* First fit in the device's window; a freed hole is reused. */
int sim_slot_find(int device, size_t span, size_t align, CUdeviceptr *addr)
{
	uint64_t lo = sim.dev[device].win_base, at;

	if (sim_table_first_fit(&sim.tab, lo, lo + SIM_DEV_WINDOW, span, align,
	                        &at))
		return -1;
	*addr = at;
	return 0;
}

/* Where the simulator reads and writes the byte at p of entry a. */
unsigned char *sim_view(const struct sim_alloc *a, CUdeviceptr p)
{
	size_t off = p - a->base;

	switch (a->kind) {
	case SIM_KIND_REGISTERED:
		return (unsigned char *)(uintptr_t)p;
	case SIM_KIND_VMM:
		return a->phys->mem.shadow + a->offset + off;
	default:
		return a->mem.shadow + off;
	}
}

struct sim_phys *sim_phys_find(CUmemGenericAllocationHandle h)
{
	for (struct sim_phys *p = sim.phys; p; p = p->next)
		if (p->handle == h && p->handle_refs > 0)
			return p;
	return NULL;
}

/* Frees a physical allocation once no handle and no mapping remain. */
void sim_phys_put(struct sim_phys *p)
{
	struct sim_phys **pp;

	if (p->handle_refs > 0 || p->map_refs > 0)
		return;
	for (pp = &sim.phys; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	sim.dev[p->prop.location.id].used -= p->mem.size;
	sim_mem_destroy(&p->mem);
	free(p);
}

void sim_free_alloc(struct sim_alloc *a)
{
	(void)sim_table_remove(&sim.tab, a);
	switch (a->kind) {
	case SIM_KIND_DEVICE:
		sim.dev[a->device].used -= a->span;
		/* fall through */
	case SIM_KIND_MANAGED:
	case SIM_KIND_IPC:
		if (!a->shared_page) /* else never mapped at base */
			sim_unmap_fixed(a->base, a->span);
		sim_mem_destroy(&a->mem);
		break;
	case SIM_KIND_HOST:
		sim_mem_destroy(&a->mem);
		break;
	case SIM_KIND_VMM:
		sim_unmap_fixed(a->base, a->span);
		a->phys->map_refs--;
		sim_phys_put(a->phys);
		break;
	case SIM_KIND_REGISTERED:
		break;
	}
	free(a);
}

/* A destroyed context takes its memory with it, as with the driver. */
void sim_free_ctx_allocs(CUcontext ctx)
{
	for (size_t i = sim.tab.n; i-- > 0;) {
		if (i < sim.tab.n && sim_at(i)->ctx == ctx &&
		    sim_at(i)->kind != SIM_KIND_VMM)
			sim_free_alloc(sim_at(i));
	}
}
