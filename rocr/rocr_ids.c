/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rocr_ids.c: buffer ids for ROCr allocations, kept by the free event. */
#include <pthread.h>
#include <stdlib.h>

#include <hmr/fi_mr.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/range.h"
#include "hmem/hmem.h"
#include "rocr/rocr_api.h"

/*
 * ROCr has no buffer id (CUDA's CU_POINTER_ATTRIBUTE_BUFFER_ID): a freed
 * address comes back from the next allocation with nothing to tell the
 * two apart.  hmr numbers each pool allocation the first time it
 * classifies it (a process-unique serial, never 0) and registers
 * hsa_amd_register_deallocation_callback on it.  ROCr calls back after
 * the allocation has left its map and before its address can be reused
 * (runtime.cpp FreeMemory), so the entry is gone, and the range dropped
 * from hmem's memtype cache, before a new allocation can appear there:
 * a reallocated address is always a new id.
 *
 * IPC mappings cannot carry a callback (ROCr refuses imports); those hmr
 * attached itself are numbered at ipc_open and forgotten at ipc_close.
 * Locked host memory has no id (0): host memory is the monitors' business.
 */
struct entry {
	uintptr_t base;
	size_t size;
	uint64_t id;
	bool import; /* An IPC mapping (no callback registered). */
	struct entry *next;
};

#define BUCKETS 1024

/*
 * `lock` protects table[] and next_id.  It is held across the runtime
 * calls of tracking (register, then pointer_info again) so that a free
 * racing with them finds the entry inserted: the callback waits for the
 * lock.  This cannot deadlock, because ROCr runs deallocation callbacks
 * without its own lock held (runtime.cpp: "Notifiers can't run while
 * holding the lock").
 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *table[BUCKETS];
static uint64_t next_id = 1;

static size_t bucket(uintptr_t base)
{
	return (size_t)(((uint64_t)(base >> 12) * 0x9e3779b97f4a7c15ULL) >> 54);
}

/* Locked: the link pointing at base's entry of that kind, or at NULL. */
static struct entry **slot(uintptr_t base, bool import)
{
	struct entry **pp = &table[bucket(base)];

	while (*pp && ((*pp)->base != base || (*pp)->import != import))
		pp = &(*pp)->next;
	return pp;
}

/* Locked: a new entry at the end of its bucket. */
static int insert(uintptr_t base, size_t size, bool import, uint64_t *id)
{
	struct entry **pp = slot(base, import), *e = hmr__calloc(1, sizeof(*e));

	if (!e)
		return -FI_ENOMEM;
	e->base = base;
	e->size = size;
	e->import = import;
	e->id = next_id++;
	*pp = e;
	*id = e->id;
	return 0;
}

/* ROCr's free event: the allocation at `ptr` (its base, as registered)
 * is gone; forget it and every classification of its range. */
static void freed(void *ptr, void *user_data)
{
	struct entry **pp, *e;
	uint64_t end;

	(void)user_data;
	pthread_mutex_lock(&lock);
	pp = slot((uintptr_t)ptr, false);
	e = *pp;
	if (e)
		*pp = e->next;
	pthread_mutex_unlock(&lock);
	if (!e)
		return;
	if (hmr__range_end(e->base, e->size, &end))
		hmr__memtype_remove(e->base, end);
	hmr_dbg("rocr: allocation %#lx (id %llu) freed", (unsigned long)e->base,
	        (unsigned long long)e->id);
	free(e);
}

/* Locked: register the callback on base, then read the allocation again
 * (it may have been freed, and another put there, since the caller's
 * read), and number it. */
static int track_new(uintptr_t base, hmr_hsa_pointer_info_t *info, uint64_t *id)
{
	hmr_hsa_pointer_info_t now = {.size = sizeof(now)};
	void *p = (void *)base;
	hmr_hsa_status_t s;
	int ret;

	s = hmr__rocr.hsa_amd_register_deallocation_callback(p, freed, NULL);
	if (s == HMR_HSA_STATUS_ERROR_INVALID_ALLOCATION)
		return -FI_ENOENT; /* Freed since the caller's read. */
	ret = hmr__rocr_check("hsa_amd_register_deallocation_callback", s);
	if (ret)
		return ret;
	ret = HMR_HSA(hsa_amd_pointer_info, p, &now, NULL, NULL, NULL);
	if (!ret && (now.type != HMR_HSA_POINTER_HSA ||
	             (uintptr_t)now.agentBaseAddress != base))
		ret = -FI_ENOENT;
	if (!ret)
		ret = insert(base, now.sizeInBytes, false, id);
	if (ret) {
		HMR_HSA(hsa_amd_deregister_deallocation_callback, p, freed);
		return ret;
	}
	*info = now;
	return 0;
}

int hmr__rocr_track(hmr_hsa_pointer_info_t *info, uint64_t *id)
{
	uintptr_t base = (uintptr_t)info->agentBaseAddress;
	struct entry *e;
	int ret = 0;

	pthread_mutex_lock(&lock);
	e = *slot(base, false);
	if (e)
		*id = e->id;
	else
		ret = track_new(base, info, id);
	pthread_mutex_unlock(&lock);
	return ret;
}

int hmr__rocr_track_import(void *ptr, size_t len, uint64_t *id)
{
	int ret;

	pthread_mutex_lock(&lock);
	ret = insert((uintptr_t)ptr, len, true, id);
	pthread_mutex_unlock(&lock);
	return ret;
}

uint64_t hmr__rocr_import_id(const void *ptr)
{
	struct entry *e;
	uint64_t id;

	pthread_mutex_lock(&lock);
	e = *slot((uintptr_t)ptr, true);
	id = e ? e->id : 0;
	pthread_mutex_unlock(&lock);
	return id;
}

size_t hmr__rocr_untrack_import(void *ptr)
{
	struct entry **pp, *e;
	size_t len = 0;

	pthread_mutex_lock(&lock);
	pp = slot((uintptr_t)ptr, true);
	e = *pp;
	if (e) {
		*pp = e->next;
		len = e->size;
	}
	pthread_mutex_unlock(&lock);
	free(e);
	return len;
}

/* At fini: a callback left registered would call into an unloaded hmr
 * when an application that keeps ROCr running frees the memory. */
void hmr__rocr_untrack_all(void)
{
	struct entry *e, *next;
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < BUCKETS; i++) {
		for (e = table[i]; e; e = next) {
			next = e->next;
			if (!e->import)
				HMR_HSA(hsa_amd_deregister_deallocation_callback,
				        (void *)e->base, freed);
			free(e);
		}
		table[i] = NULL;
	}
	pthread_mutex_unlock(&lock);
}
