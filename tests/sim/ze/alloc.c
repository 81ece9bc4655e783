/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* alloc.c: the address table, window placement and memfd backing. */
#include "sim_ze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* All functions here expect sim.lock to be held. */

/*
 * Maps m->fd read/write at an align-aligned address (align: a power of
 * two); over-reserves, then trims, when align exceeds a page.
 */
static int sim_mem_map(struct sim_mem *m, size_t align)
{
	size_t len = align > sim.page ? m->size + align : m->size;
	unsigned char *p =
	        mmap(NULL, len, PROT_NONE,
	             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t at;

	if (p == MAP_FAILED)
		return -1;
	at = align > sim.page ? sim_round_up((uintptr_t)p, align)
	                      : (uintptr_t)p;
	if (at > (uintptr_t)p)
		munmap(p, at - (uintptr_t)p);
	if ((uintptr_t)p + len > at + m->size)
		munmap((void *)(at + m->size),
		       (uintptr_t)p + len - at - m->size);
	if (mmap((void *)at, m->size, PROT_READ | PROT_WRITE,
	         MAP_SHARED | MAP_FIXED, m->fd, 0) == MAP_FAILED) {
		munmap((void *)at, m->size);
		return -1;
	}
	m->shadow = (unsigned char *)at;
	return 0;
}

/* A new memfd of size bytes (a page multiple) and its read/write view. */
int sim_mem_create(struct sim_mem *m, size_t size, size_t align,
                   const char *name)
{
	m->shadow = NULL;
	m->size = size;
	m->fd = memfd_create(name, MFD_CLOEXEC);
	if (m->fd < 0)
		return -1;
	if (ftruncate(m->fd, (off_t)size) == 0 && sim_mem_map(m, align) == 0)
		return 0;
	close(m->fd);
	m->fd = -1;
	return -1;
}

/* Takes ownership of fd, even on failure. */
int sim_mem_adopt(struct sim_mem *m, int fd, size_t size)
{
	m->fd = fd;
	m->size = size;
	m->shadow = NULL;
	if (sim_mem_map(m, sim.page) == 0)
		return 0;
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

/* Maps all of m at addr, inside a window. */
int sim_map_device(uintptr_t addr, const struct sim_mem *m, int host_rw)
{
	int prot = host_rw || sim_cfg.host_accessible ? PROT_READ | PROT_WRITE
	                                              : PROT_NONE;
	void *p = mmap((void *)addr, m->size, prot, MAP_SHARED | MAP_FIXED,
	               m->fd, 0);

	return p == MAP_FAILED ? -1 : 0;
}

/* Gives [addr, addr + len) back to the PROT_NONE reservation. */
void sim_unmap_device(uintptr_t addr, size_t len)
{
	mmap((void *)addr, sim_round_up(len, sim.page), PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

int sim_in_window(uintptr_t p)
{
	uintptr_t lo = sim.dev[0].win_base;

	return sim.initialized && p >= lo &&
	       p - lo < (uintptr_t)sim_cfg.ndev * SIM_DEV_WINDOW;
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

/* The entry whose [base, base + size) holds p. */
struct sim_alloc *sim_find(uintptr_t p)
{
	size_t i = sim_index_of(p);
	struct sim_alloc *a;

	if (i == 0)
		return NULL;
	a = sim.tab[i - 1];
	return p - a->base < a->size ? a : NULL;
}

/* Any entry whose [base, base + span) meets [p, p + len). */
struct sim_alloc *sim_find_overlap(uintptr_t p, size_t len)
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
int sim_slot_find(ze_device_handle_t dev, size_t span, size_t align,
                  uintptr_t *addr)
{
	uintptr_t lo = dev->win_base, hi = lo + SIM_DEV_WINDOW;
	uintptr_t cand = sim_round_up(lo, align);

	for (size_t i = sim_index_of(lo - 1); i < sim.ntab; i++) {
		struct sim_alloc *a = sim.tab[i];

		if (a->base >= hi || a->base >= cand + span)
			break;
		if (a->base + a->span > cand)
			cand = sim_round_up(a->base + a->span, align);
	}
	if (cand + span > hi || cand + span < cand)
		return -1;
	*addr = cand;
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
	sim_remove(a);
	sim_release_driver_fd(a);
	switch (a->kind) {
	case SIM_KIND_DEVICE:
		a->dev->used -= a->span;
		/* fall through */
	case SIM_KIND_SHARED:
	case SIM_KIND_IPC:
		sim_unmap_device(a->base, a->span);
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
	n = sim.ntab;
	pthread_mutex_unlock(&sim.lock);
	return n;
}
