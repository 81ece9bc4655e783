/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* syn_memory.c: device allocations (first fit in HBM) and host mappings. */
#include "syn.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/*
 * synDeviceMalloc places a buffer at the lowest page-aligned address of
 * HBM, after the runtime's own SIM_SYN_RESERVED bytes, where its
 * page-rounded size meets no live buffer: a freed address comes back to
 * the next allocation that fits.  reqAddr is ignored, as Synapse's
 * global-HBM allocator ignores it (the API calls it a hint).  Return
 * codes follow Synapse: flags != 0 is synFail, size 0 succeeds with a 0
 * buffer, an exhausted HBM is synFail, freeing 0 or freeing with no
 * device acquired succeeds, freeing anything but a buffer's base is
 * synFail.
 *
 * The device can only reach host memory that synHostMalloc returned or
 * synHostMap mapped: a copy from or to other host memory fails with
 * synMappingNotFound, as on hardware.
 */

/* Index of the first allocation whose base is above addr. */
static size_t syn_alloc_index(uint64_t addr)
{
	size_t lo = 0, hi = syn.nallocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syn.allocs[mid].base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Where [addr, addr + len) lies inside ONE live buffer: its shadow. */
unsigned char *syn_device_view(uint64_t addr, uint64_t len)
{
	size_t i = syn_alloc_index(addr);
	const struct syn_alloc *a;

	if (!syn.acquired || i == 0)
		return NULL;
	a = &syn.allocs[i - 1];
	if (addr - a->base >= a->size || len > a->size - (addr - a->base))
		return NULL;
	return syn.hl.view + (addr - syn.hl.hbm_base);
}

static size_t syn_map_index(uintptr_t p)
{
	size_t lo = 0, hi = syn.nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syn.maps[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The mapping holding all of [addr, addr + len), or NULL. */
static struct syn_hmap *syn_map_find(uint64_t addr, uint64_t len)
{
	size_t i = syn_map_index((uintptr_t)addr);
	struct syn_hmap *m;

	if (i == 0)
		return NULL;
	m = &syn.maps[i - 1];
	if (addr - m->base >= m->size || len > m->size - (addr - m->base))
		return NULL;
	return m;
}

int syn_host_mapped(uint64_t addr, uint64_t len)
{
	return syn_map_find(addr, len) != NULL;
}

/* Any mapping meeting [addr, addr + len). */
static int syn_map_overlaps(uintptr_t addr, uint64_t len)
{
	size_t i = syn_map_index(addr);

	if (i > 0 && addr - syn.maps[i - 1].base < syn.maps[i - 1].size)
		return 1;
	return i < syn.nmaps && syn.maps[i].base - addr < len;
}

static int syn_grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 32;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -1;
	*arr = p;
	*cap = ncap;
	return 0;
}

static synStatus syn_map_insert(const struct syn_hmap *m)
{
	size_t i;

	if (syn_grow((void **)&syn.maps, &syn.capmaps, syn.nmaps,
	             sizeof(*syn.maps)))
		return synOutOfHostMemory;
	i = syn_map_index(m->base);
	memmove(&syn.maps[i + 1], &syn.maps[i],
	        (syn.nmaps - i) * sizeof(*syn.maps));
	syn.maps[i] = *m;
	syn.nmaps++;
	return synSuccess;
}

static void syn_map_remove(struct syn_hmap *m)
{
	size_t i = (size_t)(m - syn.maps);

	if (m->owned)
		munmap((void *)m->base, m->span);
	memmove(&syn.maps[i], &syn.maps[i + 1],
	        (syn.nmaps - i - 1) * sizeof(*syn.maps));
	syn.nmaps--;
}

/* First fit after the runtime's reserved start of HBM. */
static synStatus syn_alloc_locked(uint64_t size, uint64_t *out)
{
	uint64_t span, cand = syn.hl.hbm_base + SIM_SYN_RESERVED;
	uint64_t end = syn.hl.hbm_base + syn.hl.hbm_size;
	size_t i;

	if (size > syn.hl.hbm_size)
		return synFail;
	span = sim_round_up(size, syn.page);
	for (i = 0; i < syn.nallocs; i++) {
		const struct syn_alloc *a = &syn.allocs[i];

		if (a->base >= cand + span)
			break;
		if (a->base + a->span > cand)
			cand = a->base + a->span;
	}
	if (cand > end || span > end - cand)
		return synFail; /* the pool allocator's answer to exhaustion */
	if (syn_grow((void **)&syn.allocs, &syn.capallocs, syn.nallocs,
	             sizeof(*syn.allocs)))
		return synOutOfHostMemory;
	memmove(&syn.allocs[i + 1], &syn.allocs[i],
	        (syn.nallocs - i) * sizeof(*syn.allocs));
	syn.allocs[i] = (struct syn_alloc){cand, size, span};
	syn.nallocs++;
	syn.used += span;
	*out = cand;
	return synSuccess;
}

SIM_API synStatus synDeviceMalloc(const synDeviceId deviceId,
                                  const uint64_t size, uint64_t reqAddr,
                                  const uint32_t flags, uint64_t *buffer)
{
	synStatus rc;

	(void)deviceId;
	(void)reqAddr;
	SYN_ENTER("synDeviceMalloc");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(0, synSuccess);
	if (rc == synSuccess && flags != 0)
		rc = synFail;
	if (rc == synSuccess)
		rc = syn_ready(1, synFail);
	if (rc == synSuccess && !buffer)
		rc = synInvalidArgument;
	if (rc == synSuccess && size == 0)
		*buffer = 0;
	else if (rc == synSuccess)
		rc = syn_alloc_locked(size, buffer);
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

SIM_API synStatus synDeviceFree(const synDeviceId deviceId,
                                const uint64_t buffer, const uint32_t flags)
{
	synStatus rc;
	size_t i;

	(void)deviceId;
	SYN_ENTER("synDeviceFree");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(0, synSuccess);
	if (rc == synSuccess && flags != 0)
		rc = synFail;
	if (rc != synSuccess || !syn.acquired || buffer == 0)
		goto out;
	i = syn_alloc_index(buffer);
	if (i == 0 || syn.allocs[i - 1].base != buffer) {
		rc = synFail; /* "Can not delete an unrecognized pointer" */
		goto out;
	}
	syn.used -= syn.allocs[i - 1].span;
	memmove(&syn.allocs[i - 1], &syn.allocs[i],
	        (syn.nallocs - i) * sizeof(*syn.allocs));
	syn.nallocs--;
out:
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

static synStatus syn_host_malloc_locked(uint64_t size, void **buffer)
{
	struct syn_hmap m = {0};
	void *p;

	m.span = sim_round_up(size, syn.page);
	p = mmap(NULL, m.span, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return synOutOfHostMemory;
	m.base = (uintptr_t)p;
	m.size = size;
	m.owned = 1;
	if (syn_map_insert(&m) != synSuccess) {
		munmap(p, m.span);
		return synOutOfHostMemory;
	}
	*buffer = p;
	return synSuccess;
}

/* Page-aligned host memory the device can reach. */
SIM_API synStatus synHostMalloc(const synDeviceId deviceId, const uint64_t size,
                                const uint32_t flags, void **buffer)
{
	synStatus rc;

	(void)deviceId;
	SYN_ENTER("synHostMalloc");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(0, synSuccess);
	if (rc == synSuccess && flags != 0)
		rc = synFail;
	if (rc == synSuccess)
		rc = syn_ready(1, synFail);
	if (rc == synSuccess && !buffer)
		rc = synInvalidArgument;
	if (rc == synSuccess && size == 0)
		*buffer = NULL;
	else if (rc == synSuccess)
		rc = syn_host_malloc_locked(size, buffer);
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

SIM_API synStatus synHostFree(const synDeviceId deviceId, const void *buffer,
                              const uint32_t flags)
{
	struct syn_hmap *m;
	synStatus rc;

	(void)deviceId;
	SYN_ENTER("synHostFree");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(0, synSuccess);
	if (rc == synSuccess && flags != 0)
		rc = synFail;
	if (rc == synSuccess && syn.acquired && buffer) {
		m = syn_map_find((uintptr_t)buffer, 1);
		if (!m || !m->owned || m->base != (uintptr_t)buffer)
			rc = synInvalidArgument;
		else
			syn_map_remove(m);
	}
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

/* Mapping a range already inside a mapping succeeds and adds nothing. */
SIM_API synStatus synHostMap(const synDeviceId deviceId, const uint64_t size,
                             const void *buffer)
{
	struct syn_hmap m = {(uintptr_t)buffer, size, size, 0};
	synStatus rc;

	(void)deviceId;
	SYN_ENTER("synHostMap");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(1, synInvalidArgument);
	if (rc == synSuccess &&
	    (!buffer || size == 0 || size > UINTPTR_MAX - (uintptr_t)buffer))
		rc = synInvalidArgument;
	if (rc == synSuccess && !syn_map_find(m.base, size)) {
		if (syn_map_overlaps(m.base, size))
			rc = synInvalidArgument;
		else
			rc = syn_map_insert(&m);
	}
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

SIM_API synStatus synHostUnmap(const synDeviceId deviceId, const void *buffer)
{
	struct syn_hmap *m;
	synStatus rc;

	(void)deviceId;
	SYN_ENTER("synHostUnmap");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(1, synInvalidArgument);
	if (rc == synSuccess) {
		m = buffer ? syn_map_find((uintptr_t)buffer, 1) : NULL;
		if (!m || m->owned || m->base != (uintptr_t)buffer)
			rc = synInvalidArgument;
		else
			syn_map_remove(m);
	}
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

/* The device's release: every buffer and mapping goes. */
void syn_memory_reset(void)
{
	while (syn.nmaps > 0)
		syn_map_remove(&syn.maps[syn.nmaps - 1]);
	free(syn.maps);
	free(syn.allocs);
	syn.maps = NULL;
	syn.allocs = NULL;
	syn.nmaps = syn.capmaps = 0;
	syn.nallocs = syn.capallocs = 0;
	syn.used = 0;
}
