/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ipc.c: hsa_amd_ipc_memory_create, _attach and _detach across processes. */
#include "sim_rocr.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A handle names the exporter's memfd by pid and fd number; the importer
 * opens /proc/<pid>/fd/<fd> and checks the memfd's name, which carries
 * the allocation id, so a freed (and reused) fd number is refused.  The
 * handle therefore works while the exporter's allocation lives (hsa.h
 * asks importers to attach before the exporter frees it); a mapping, once
 * attached, keeps the memory alive by itself.
 */
struct sim_ipc_handle {
	uint32_t magic;
	int32_t pid;
	int32_t fd;
	uint32_t owner; /* agent index: 0 the CPU, 1 + i GPU i */
	uint64_t id;
	uint64_t size;
};

_Static_assert(sizeof(struct sim_ipc_handle) == sizeof(hsa_amd_ipc_memory_t),
               "IPC handle must fill hsa_amd_ipc_memory_t");

#define SIM_IPC_MAGIC 0x43504953u /* "SIPC" */

/* ROCr refuses lengths past the thunk's limit (runtime.cpp IPCCreate). */
#define SIM_IPC_MAX_LEN 0x7FFFFFFF000ull

/* The length ROCr accepts: the size, or the size rounded to 4 KiB. */
static int sim_ipc_len_ok(size_t len, size_t size)
{
	return len == size || len == sim_round_up(size, 4096);
}

SIM_API hsa_status_t HSA_API
hsa_amd_ipc_memory_create(void *ptr, size_t len, hsa_amd_ipc_memory_t *handle)
{
	struct sim_ipc_handle h;
	struct sim_alloc *a;
	hsa_status_t rc = HSA_STATUS_ERROR_INVALID_ARGUMENT;

	SIM_ENTER("hsa_amd_ipc_memory_create");
	if (!ptr || !handle || len > SIM_IPC_MAX_LEN)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	memset(handle, 0, sizeof(*handle));
	memset(&h, 0, sizeof(h));
	pthread_mutex_lock(&sim.lock);
	a = sim_find((uintptr_t)ptr);
	if (a && a->base == (uintptr_t)ptr && a->kind != SIM_KIND_IPC &&
	    sim_ipc_len_ok(len, a->size)) {
		h.magic = SIM_IPC_MAGIC;
		h.pid = (int32_t)getpid();
		h.fd = a->fd;
		h.owner = (uint32_t)a->owner;
		h.id = a->id;
		h.size = a->size;
		rc = HSA_STATUS_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	if (rc == HSA_STATUS_SUCCESS)
		memcpy(handle, &h, sizeof(h));
	return rc;
}

/* Opens the exporter's memfd; -1 if it is gone or is not the buffer. */
static int sim_ipc_open_fd(const struct sim_ipc_handle *h, size_t span)
{
	char path[64], want[96], link[128];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", h->pid, h->fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	if (h->owner == 0)
		snprintf(want, sizeof(want), "/memfd:sim-rocr:cpu:buf%llu ",
		         (unsigned long long)h->id);
	else
		snprintf(want, sizeof(want), "/memfd:sim-rocr:gpu%u:buf%llu ",
		         h->owner - 1, (unsigned long long)h->id);
	if (strncmp(link, want, strlen(want)) != 0 || fstat(fd, &st) ||
	    (uint64_t)st.st_size < span) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Caller holds sim.lock.  Maps the import: a new address every time. */
static hsa_status_t sim_ipc_map(const struct sim_ipc_handle *h, size_t len,
                                uint32_t access, void **out)
{
	size_t span = sim_round_up(h->size, sim.page);
	struct sim_alloc *a = calloc(1, sizeof(*a));

	if (!a)
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	a->fd = sim_ipc_open_fd(h, span);
	if (a->fd < 0) {
		free(a);
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	}
	a->id = sim.next_id++;
	a->size = len; /* ROCr records the attach length */
	a->span = span;
	a->kind = SIM_KIND_IPC;
	a->owner = (int)h->owner;
	a->access = access;
	a->shadow = sim_map_shadow(a->fd, span);
	if (a->shadow && h->owner == 0)
		a->base = (uintptr_t)a->shadow;
	else if (!a->shadow ||
	         sim_slot_find((int)h->owner - 1, span, &a->base) ||
	         sim_map_device(a->base, a->fd, span))
		goto fail;
	if (sim_table_insert(&sim.tab, a))
		goto fail;
	*out = (void *)a->base;
	return HSA_STATUS_SUCCESS;
fail:
	sim_destroy_alloc(a);
	return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
}

SIM_API hsa_status_t HSA_API hsa_amd_ipc_memory_attach(
        const hsa_amd_ipc_memory_t *handle, size_t len, uint32_t num_agents,
        const hsa_agent_t *mapping_agents, void **mapped_ptr)
{
	struct sim_ipc_handle h;
	hsa_status_t rc;
	uint32_t access;

	SIM_ENTER("hsa_amd_ipc_memory_attach");
	if (!handle || !mapped_ptr || (num_agents != 0 && !mapping_agents))
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	memcpy(&h, handle, sizeof(h));
	if (h.magic != SIM_IPC_MAGIC || !sim_ipc_len_ok(len, h.size) ||
	    h.size == 0)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim.lock);
	access = num_agents ? sim_agent_mask(num_agents, mapping_agents)
	                    : (uint32_t)((1ull << sim.nagents) - 1);
	if (!access)
		rc = HSA_STATUS_ERROR_INVALID_AGENT;
	else if (h.owner >= (uint32_t)sim.nagents) /* no such GPU here */
		rc = HSA_STATUS_ERROR_INVALID_ARGUMENT;
	else
		rc = sim_ipc_map(&h, len, access, mapped_ptr);
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API hsa_status_t HSA_API hsa_amd_ipc_memory_detach(void *mapped_ptr)
{
	hsa_status_t rc = HSA_STATUS_ERROR_INVALID_ARGUMENT;
	struct sim_alloc *a;

	SIM_ENTER("hsa_amd_ipc_memory_detach");
	if (!mapped_ptr)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim.lock);
	a = sim_find((uintptr_t)mapped_ptr);
	if (a && a->base == (uintptr_t)mapped_ptr && a->kind == SIM_KIND_IPC) {
		(void)sim_table_remove(&sim.tab, a);
		sim_destroy_alloc(a);
		rc = HSA_STATUS_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}
