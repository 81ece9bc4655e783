/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* sim_rocr.h: the ROCr simulator's shared state and internal API. */
#ifndef HMR_SIM_ROCR_H
#define HMR_SIM_ROCR_H

/*
 * libhsa-runtime64.so.1 simulator.  No GPU and no /dev/kfd are needed: the
 * library exports the ROCr entry points an hmr backend calls, with the
 * prototypes of Debian's libhsa-runtime-dev headers (ROCm 5.2.3), so a
 * backend that dlopens it cannot tell it from ROCr, while tests can reach
 * every corner (no dma-buf, old runtime, failures).
 *
 * Agents
 *   One CPU agent (node 0) and HMR_SIM_ROCR_DEVICES GPU agents (nodes
 *   1..N).  hsa_agent_t, hsa_amd_memory_pool_t and hsa_signal_t handles
 *   are addresses of the simulator's own objects, as in ROCr.
 *
 * Memory model
 * - hsa_init reserves one PROT_NONE, MAP_NORESERVE address window per GPU
 *   (SIM_DEV_WINDOW bytes each).  Nothing else is ever mapped there, so
 *   device addresses never alias host memory.
 * - Every allocation from a GPU's coarse-grained pool owns a memfd named
 *   "sim-rocr:gpu<N>:buf<id>", mapped twice: at the device address with
 *   PROT_NONE, so a host dereference faults as on a GPU without a large
 *   BAR, and read/write elsewhere: the "shadow" that the copy calls use.
 *   HMR_SIM_ROCR_HOST_ACCESSIBLE=1 maps the device address read/write.
 *   Placement is first fit (2 MiB aligned from 2 MiB up, else a page):
 *   a freed address is reused by the next allocation, with a new id.
 * - The CPU agent's fine-grained pool hands out memfd-backed host memory
 *   ("sim-rocr:cpu:buf<id>"): the CPU can touch it, and yet it is ROCr
 *   memory (HSA_EXT_POINTER_TYPE_HSA, owner the CPU agent).
 * - hsa_amd_memory_lock records a locked range (overlaps allowed, the
 *   same range locked twice is counted); the agent pointer is host_ptr.
 * - hsa_amd_ipc_memory_attach maps the exporter's memfd, opened through
 *   /proc/<pid>/fd, in the importing process (a new address each time).
 *
 * dma-buf (ROCm 5.6 variant only)
 *   hsa_amd_portable_export_dmabuf returns a dup of the allocation's
 *   memfd, not a real dma-buf: offset 0 of the fd is the allocation's
 *   first byte, and *offset = ptr - allocation base, so (fd, *offset) is
 *   where ptr's bytes are.  ROCr reports the offset within the KFD buffer
 *   object instead, which is the allocation base except for small
 *   allocations sub-allocated from a larger block: callers must use the
 *   reported offset, never compute it.  See README.md.
 *
 * Configuration: environment, read once at the first call; see init.c.
 * Test hooks: hmr_sim_rocr_calls(), hmr_sim_rocr_buffer_id().
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sim_common.h"

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* 50203 (Debian's ROCm 5.2.3) or 50600 (dma-buf calls, ROCm 5.6). */
#ifndef SIM_ROCM_VERSION
#define SIM_ROCM_VERSION 50600
#endif
#define SIM_HAS_DMABUF (SIM_ROCM_VERSION >= 50600)

#if SIM_HAS_DMABUF
/*
 * Absent from Debian's 5.2.3 headers.  Both prototypes are those of
 * ROCm/ROCR-Runtime src/inc/hsa_ext_amd.h at tag rocm-5.6.0 (lines 2638
 * and 2662), unchanged in runtime/hsa-runtime/inc/hsa_ext_amd.h today.
 */
hsa_status_t hsa_amd_portable_export_dmabuf(const void *ptr, size_t size,
                                            int *dmabuf, uint64_t *offset);
hsa_status_t hsa_amd_portable_close_dmabuf(int dmabuf);
#endif

/*
 * hsa_system_info_t value added by ROCm 5.6 (ROCR-Runtime src/inc/hsa.h at
 * rocm-5.6.0: HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED = 0x204, type bool).
 */
#define SIM_SYSTEM_INFO_DMABUF_SUPPORTED ((hsa_system_info_t)0x204)
/* ROCm 5.6 hsa_amd_memory_pool_flag_s: HSA_AMD_MEMORY_POOL_PCIE_FLAG. */
#define SIM_POOL_PCIE_FLAG 1u

#define SIM_API __attribute__((visibility("default")))

#define SIM_MAX_GPUS   16
#define SIM_MAX_AGENTS (SIM_MAX_GPUS + 1)
#define SIM_DEV_WINDOW (64ULL << 30) /* address window per GPU */
#define SIM_DEV_MEMORY (16ULL << 30) /* GPU pool size */
#define SIM_SYS_MEMORY (64ULL << 30) /* CPU pool size */
#define SIM_LARGE      (2ULL << 20)  /* large allocations align to this */

struct sim_pool {
	struct sim_agent *owner;
};

/* agents[0] is the CPU; agents[1 + i] is GPU i. */
struct sim_agent {
	int index;
	hsa_device_type_t type;
	uintptr_t win_base; /* GPU: address window */
	size_t used;        /* bytes allocated from the pool */
	struct sim_pool pool;
};

struct sim_config {
	int ngpu;
	int host_accessible;
	int dmabuf;
};

enum sim_kind {
	SIM_KIND_GPU, /* GPU pool allocation */
	SIM_KIND_SYS, /* CPU pool allocation */
	SIM_KIND_IPC, /* hsa_amd_ipc_memory_attach */
};

struct sim_notifier {
	void *ptr;
	hsa_amd_deallocation_callback_t callback;
	void *user_data;
	struct sim_notifier *next;
};

/* One entry of the address table. */
struct sim_alloc {
	uintptr_t base;
	size_t size;  /* requested (IPC: the attach length) */
	size_t span;  /* bytes backed at base (page multiple) */
	int fd;       /* memfd */
	void *shadow; /* read/write view of the memfd (SYS: == base) */
	enum sim_kind kind;
	int owner;                   /* agent index */
	uint32_t access;             /* bit per agent index */
	unsigned long long id;       /* allocation id, new for each */
	int dying;                   /* being freed: gone, address held */
	void *user_data;             /* hsa_amd_pointer_info_set_userdata */
	struct sim_notifier *notify; /* deallocation callbacks */
};

SIM_TABLE_FIELDS_OK(struct sim_alloc, base, span);

/* One hsa_amd_memory_lock'ed range. */
struct sim_lock {
	uintptr_t host;
	size_t size;
	int refs;
	uint32_t access; /* GPU agents */
	struct sim_lock *next;
};

struct sim_state {
	pthread_mutex_t lock; /* everything below, and refs */
	int refs;             /* hsa_init minus hsa_shut_down */
	size_t page;
	struct sim_agent agents[SIM_MAX_AGENTS];
	int nagents;
	void *window; /* the reservation holding every GPU window */
	size_t window_len;
	struct sim_table tab; /* of struct sim_alloc */
	struct sim_lock *locks;
	unsigned long long next_id;
};

extern struct sim_state sim;
extern struct sim_config sim_cfg;

/* init.c */
void sim_config_load(void);
hsa_status_t sim_fail_check(const char *name);
hsa_status_t sim_check_init(void);
SIM_API unsigned long hmr_sim_rocr_calls(const char *name);

/* memory.c */
SIM_API unsigned long long hmr_sim_rocr_buffer_id(const void *ptr);

/* status.c */
int sim_status_by_name(const char *name, hsa_status_t *out);

/*
 * Every entry point starts with SIM_ENTER: it counts the call, loads the
 * configuration, applies HMR_SIM_ROCR_FAIL, then requires hsa_init.
 */
#define SIM_ENTER_NOINIT(name)                                                 \
	do {                                                                   \
		hsa_status_t sim_rc_ = sim_fail_check(name);                   \
		if (sim_rc_ != HSA_STATUS_SUCCESS)                             \
			return sim_rc_;                                        \
	} while (0)
#define SIM_ENTER(name)                                                        \
	do {                                                                   \
		hsa_status_t sim_rc_ = sim_fail_check(name);                   \
		if (sim_rc_ == HSA_STATUS_SUCCESS)                             \
			sim_rc_ = sim_check_init();                            \
		if (sim_rc_ != HSA_STATUS_SUCCESS)                             \
			return sim_rc_;                                        \
	} while (0)

/* agent.c; callers hold sim.lock. */
struct sim_agent *sim_agent_from(hsa_agent_t a);
hsa_agent_t sim_agent_handle(int index);
uint32_t sim_agent_mask(uint32_t num, const hsa_agent_t *agents);
struct sim_agent *sim_pool_owner(hsa_amd_memory_pool_t h);

/* alloc.c: address table, windows, memfds; callers hold sim.lock. */
int sim_windows_reserve(void);
void sim_windows_release(void);
int sim_map_device(uintptr_t addr, int fd, size_t span);
int sim_slot_find(int gpu, size_t span, uintptr_t *addr);
int sim_in_window(uintptr_t p);
struct sim_alloc *sim_find(uintptr_t p);
void sim_destroy_alloc(struct sim_alloc *a);
void sim_free_everything(void);
struct sim_lock *sim_lock_find(uintptr_t p);

/* signal.c */
void sim_signals_destroy_all(void);
hsa_status_t sim_signal_check(hsa_signal_t s);
void sim_signal_wait_zero(hsa_signal_t s);
void sim_signal_add(hsa_signal_t s, hsa_signal_value_t delta);

#endif /* HMR_SIM_ROCR_H */
