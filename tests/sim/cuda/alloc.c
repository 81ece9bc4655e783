/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* alloc.c: the address table, window placement and memfd backing. */
#include "sim_cuda.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* All functions here expect sim.lock to be held. */

int sim_mem_create(struct sim_mem *m, size_t size, const char *name)
{
	m->shadow = NULL;
	m->size = size;
	m->fd = memfd_create(name, MFD_CLOEXEC);
	if (m->fd < 0)
		return -1;
	if (ftruncate(m->fd, (off_t)size) == 0)
		return sim_mem_adopt(m, m->fd, size);
	close(m->fd);
	m->fd = -1;
	return -1;
}

/* Takes ownership of fd, even on failure. */
int sim_mem_adopt(struct sim_mem *m, int fd, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	m->fd = fd;
	m->size = size;
	m->shadow = NULL;
	if (p != MAP_FAILED) {
		m->shadow = p;
		return 0;
	}
	close(fd);
	m->fd = -1;
	return -1;
}

void sim_mem_destroy(struct sim_mem *m)
{
	if (m->shadow)
		munmap(m->shadow, m->size);
	if (m->fd >= 0)
		close(m->fd);
	m->shadow = NULL;
	m->fd = -1;
}

/* Maps [off, off + len) of m at addr, inside a window. */
int sim_map_device(CUdeviceptr addr, const struct sim_mem *m, size_t off,
                   size_t len, int host_rw)
{
	int prot = host_rw || sim_cfg.host_accessible ? PROT_READ | PROT_WRITE
	                                              : PROT_NONE;
	void *p = mmap((void *)(uintptr_t)addr, len, prot,
	               MAP_SHARED | MAP_FIXED, m->fd, (off_t)off);

	return p == MAP_FAILED ? -1 : 0;
}

/* Gives [addr, addr + len) back to the PROT_NONE reservation. */
void sim_unmap_device(CUdeviceptr addr, size_t len)
{
	mmap((void *)(uintptr_t)addr, sim_round_up(len, sim.page), PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

int sim_in_window(CUdeviceptr p)
{
	CUdeviceptr lo = sim.dev[0].win_base;

	return sim.initialized && p >= lo && p < sim.vmm_base + SIM_VMM_WINDOW;
}

/* Index of the first entry whose base is above p. */
size_t sim_index_of(CUdeviceptr p)
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

/* The entry whose [base, base + size) holds p. */
struct sim_alloc *sim_find(CUdeviceptr p)
{
	size_t i = sim_index_of(p);
	struct sim_alloc *a;

	if (i == 0)
		return NULL;
	a = sim.tab[i - 1];
	return p - a->base < a->size ? a : NULL;
}

/* Any entry whose [base, base + span) meets [p, p + len). */
struct sim_alloc *sim_find_overlap(CUdeviceptr p, size_t len)
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
 * First fit in the device's window: the lowest address aligned to align
 * where span bytes meet no entry.  A freed hole is reused.
 */
int sim_slot_find(int device, size_t span, size_t align, CUdeviceptr *addr)
{
	CUdeviceptr lo = sim.dev[device].win_base, hi = lo + SIM_DEV_WINDOW;
	CUdeviceptr cand = sim_round_up(lo, align);

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
	sim_remove(a);
	switch (a->kind) {
	case SIM_KIND_DEVICE:
		sim.dev[a->device].used -= a->span;
		/* fall through */
	case SIM_KIND_MANAGED:
	case SIM_KIND_IPC:
		sim_unmap_device(a->base, a->span);
		sim_mem_destroy(&a->mem);
		break;
	case SIM_KIND_HOST:
		sim_mem_destroy(&a->mem);
		break;
	case SIM_KIND_VMM:
		sim_unmap_device(a->base, a->span);
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
	for (size_t i = sim.ntab; i-- > 0;) {
		if (i < sim.ntab && sim.tab[i]->ctx == ctx &&
		    sim.tab[i]->kind != SIM_KIND_VMM)
			sim_free_alloc(sim.tab[i]);
	}
}
