/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* mem.c: NeuronCore windows, tensor backing and the VA table. */
#include "sim_neuron.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Every function here expects sim.lock to be held, but the test hook
 * hmr_sim_neuron_next_device_va, which takes it. */

static void sim_fork_prepare(void)
{
	pthread_mutex_lock(&sim.lock);
}

static void sim_fork_parent(void)
{
	pthread_mutex_unlock(&sim.lock);
}

/*
 * The driver marks its device mappings VM_DONTCOPY, so a fork child has
 * no device memory.  The child loses access by mprotect, not by
 * MADV_DONTFORK's hole: the window stays reserved, and none of the
 * child's own mappings can land at a device VA.
 */
static void sim_fork_child(void)
{
	for (size_t i = 0; i < sim.tab.n; i++) {
		struct nrt_tensor *t = sim.tab.v[i];

		if (t->placement == NRT_TENSOR_PLACEMENT_DEVICE)
			mprotect((void *)t->va, t->span, PROT_NONE);
	}
	pthread_mutex_unlock(&sim.lock);
}

/* Called once, with the configuration. */
void sim_fork_hooks(void)
{
	pthread_atfork(sim_fork_prepare, sim_fork_parent, sim_fork_child);
}

/* One reservation for every core's window, kept for the process's life. */
int sim_reserve_windows(void)
{
	size_t len = (size_t)sim_cfg.cores * SIM_NC_WINDOW;
	void *p;

	if (sim.win_len)
		return 0;
	p = sim_reserve(len);
	if (!p)
		return -1;
	sim.win_base = (uintptr_t)p;
	sim.win_len = len;
	return 0;
}

static int sim_in_windows(uintptr_t va)
{
	return va >= sim.win_base && va - sim.win_base < sim.win_len;
}

SIM_API void hmr_sim_neuron_next_device_va(const void *va)
{
	pthread_mutex_lock(&sim.lock);
	sim.next_va = (uintptr_t)va;
	pthread_mutex_unlock(&sim.lock);
}

/* The Neuron device (/dev/neuron<D>) that holds logical core nc. */
int sim_device_of(int nc)
{
	return nc < 0 ? 0 : nc / sim_cfg.cores_per_device;
}

/* The live tensor whose [va, va + size) holds p. */
struct nrt_tensor *sim_find_va(uintptr_t p)
{
	struct nrt_tensor *t = sim_table_floor(&sim.tab, p);

	return t && p - t->va < t->size ? t : NULL;
}

/* Tensors may overlap: a test's next_device_va goes where it says. */
static int sim_insert(struct nrt_tensor *t)
{
	if (sim_table_put(&sim.tab, t))
		return -1;
	t->in_table = 1;
	return 0;
}

static void sim_remove(struct nrt_tensor *t)
{
	if (t->in_table && sim_table_remove(&sim.tab, t) == 0)
		t->in_table = 0;
}

/*
 * First fit in core nc's window: the lowest page where span bytes meet
 * no tensor, so a freed VA is handed out again.
 */
static int sim_slot_find(int nc, size_t span, uintptr_t *addr)
{
	uint64_t lo = sim.win_base + (uint64_t)nc * SIM_NC_WINDOW, at;

	if (sim_table_first_fit(&sim.tab, lo, lo + SIM_NC_WINDOW, span,
	                        sim.page, &at))
		return -1;
	*addr = (uintptr_t)at;
	return 0;
}

/* A memfd named so /proc/self/maps reads "/memfd:/dev/neuron<D>". */
static int sim_tensor_memfd(struct nrt_tensor *t)
{
	char name[32];

	snprintf(name, sizeof(name), "/dev/neuron%d", sim_device_of(t->nc));
	t->fd = sim_memfd(name, t->span);
	return t->fd < 0 ? -1 : 0;
}

/* The device mapping at a window slot, as the driver's mmap of HBM. */
static NRT_STATUS sim_back_device_va(struct nrt_tensor *t)
{
	int prot = sim_cfg.host_accessible ? PROT_READ | PROT_WRITE : PROT_NONE;
	uintptr_t va = sim.next_va;

	sim.next_va = 0;
	if (va) { /* Where the test asked, if nothing is mapped there. */
		if (mmap((void *)va, t->span, prot,
		         MAP_SHARED | MAP_FIXED_NOREPLACE, t->fd,
		         0) != (void *)va)
			return NRT_RESOURCE;
	} else if (sim_slot_find(t->nc, t->span, &va) ||
	           sim_map_fixed(va, t->span, prot, t->fd, 0)) {
		return NRT_RESOURCE;
	}
	t->va = va;
	return sim_insert(t) == 0 ? NRT_SUCCESS : NRT_RESOURCE;
}

static NRT_STATUS sim_back_device(struct nrt_tensor *t)
{
	void *p;

	if (sim.used[t->nc] + t->span > SIM_NC_MEMORY)
		return NRT_RESOURCE;
	if (sim_tensor_memfd(t))
		return NRT_RESOURCE;
	/* An asked-for VA first: the shadow could take that free address. */
	if (sim.next_va && sim_cfg.device_va &&
	    sim_back_device_va(t) != NRT_SUCCESS)
		return NRT_RESOURCE;
	p = sim_map_shadow(t->fd, t->span);
	if (!p)
		return NRT_RESOURCE;
	t->shadow = p;
	sim.used[t->nc] += t->span;
	/* Device-only (no host VA at all), or mapped above. */
	if (!sim_cfg.device_va || t->va)
		return NRT_SUCCESS;
	return sim_back_device_va(t);
}

/* Driver DMA memory, mapped through the device node: one read/write view. */
static NRT_STATUS sim_back_host(struct nrt_tensor *t)
{
	void *p;

	if (sim_tensor_memfd(t))
		return NRT_RESOURCE;
	p = sim_map_shadow(t->fd, t->span);
	if (!p)
		return NRT_RESOURCE;
	t->shadow = p;
	t->va = (uintptr_t)p;
	return sim_insert(t) == 0 ? NRT_SUCCESS : NRT_RESOURCE;
}

static NRT_STATUS sim_back_virtual(struct nrt_tensor *t)
{
	void *p;

	if (posix_memalign(&p, sim.page, t->span))
		return NRT_RESOURCE;
	memset(p, 0, t->span);
	t->shadow = p;
	t->va = (uintptr_t)p;
	return NRT_SUCCESS;
}

/* Gives t its memory; on failure t holds nothing. */
NRT_STATUS sim_tensor_back(struct nrt_tensor *t)
{
	NRT_STATUS rc;

	t->fd = -1;
	t->span = sim_round_up(t->size, sim.page);
	switch (t->placement) {
	case NRT_TENSOR_PLACEMENT_DEVICE:
		rc = sim_back_device(t);
		break;
	case NRT_TENSOR_PLACEMENT_HOST:
		rc = sim_back_host(t);
		break;
	default:
		rc = sim_back_virtual(t);
		break;
	}
	if (rc != NRT_SUCCESS)
		sim_tensor_release(t);
	return rc;
}

/* Frees t's memory; a device VA goes back to the PROT_NONE window. */
void sim_tensor_release(struct nrt_tensor *t)
{
	sim_remove(t);
	switch (t->placement) {
	case NRT_TENSOR_PLACEMENT_DEVICE:
		if (t->va && !sim_in_windows(t->va))
			munmap((void *)t->va, t->span);
		else if (t->va) /* back to the reservation, PROT_NONE again */
			sim_unmap_fixed(t->va, t->span);
		if (t->shadow) {
			munmap(t->shadow, t->span);
			sim.used[t->nc] -= t->span;
		}
		break;
	case NRT_TENSOR_PLACEMENT_HOST:
		if (t->shadow)
			munmap(t->shadow, t->span);
		break;
	default:
		free(t->shadow);
		break;
	}
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	t->shadow = NULL;
	t->va = 0;
	t->alive = 0;
}

/* t if it is a tensor not yet freed (a stale handle finds nothing). */
struct nrt_tensor *sim_lookup(const nrt_tensor_t *handle)
{
	for (struct nrt_tensor *t = sim.all; t; t = t->next)
		if (t == handle)
			return t->magic == SIM_TENSOR_MAGIC ? t : NULL;
	return NULL;
}

void sim_unlink(struct nrt_tensor *t)
{
	for (struct nrt_tensor **pp = &sim.all; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			return;
		}
	}
}

/* nrt_close: every tensor loses its memory, its handle stays. */
void sim_release_all(void)
{
	for (struct nrt_tensor *t = sim.all; t; t = t->next)
		if (t->alive)
			sim_tensor_release(t);
}
