/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* syn.h: state shared by the files of the simulated libSynapse.so. */
#ifndef HMR_SIM_SYN_RUNTIME_H
#define HMR_SIM_SYN_RUNTIME_H

/*
 * The runtime as Synapse has it (Intel_Gaudi3_Software synapse/src/
 * runtime/common): one instance per process between synInitialize and
 * synDestroy, at most ONE acquired device per process, whose id is always
 * 0 (the deviceId argument of later calls is not looked at), and whose
 * release drops its streams and memory.  Before synInitialize every call
 * but synDriverGetVersion, synStatusGetBriefDescription and synDestroy
 * returns synUninitialized.
 *
 * Streams run nothing until synchronized: synMemCopyAsync and
 * synMemsetD8Async check their arguments and queue the work, which
 * synStreamSynchronize (or synDeviceSynchronize, or the device's release)
 * performs in order.  A caller that reads a copy's destination before
 * synchronizing sees the old bytes, as it may on hardware.
 */

#include "sim_syn.h"

#include <pthread.h>

/* A synDeviceMalloc allocation. */
struct syn_alloc {
	uint64_t base;
	uint64_t size; /* as requested */
	uint64_t span; /* page-rounded: what first fit keeps free */
};

/* Host memory the device can reach: synHostMalloc or synHostMap. */
struct syn_hmap {
	uintptr_t base;
	uint64_t size;
	uint64_t span; /* owned: bytes mapped */
	int owned;     /* 1: synHostMalloc memory, freed by synHostFree */
};

/* Queued stream work; dir DIRECTION_ENUM_MAX is a memset. */
struct syn_op {
	struct syn_op *next;
	synDmaDir dir;
	uint64_t src, dst, size;
	unsigned char value;
};

#define SYN_STREAM_MAGIC 0x5354524du /* "STRM" */

struct InternalStreamHandle {
	uint32_t magic;
	struct syn_op *head, **tail;
	struct InternalStreamHandle *next;
};

struct syn_state {
	pthread_mutex_t lock; /* protects every field below */
	int initialized;
	int acquired;
	int fd;                   /* the device node, valid when acquired */
	struct sim_hl_info hl;    /* HBM of the acquired device */
	int hccl_fd;              /* gaudi-direct dma-buf, -1: none yet */
	uint64_t used;            /* bytes of user allocations */
	struct syn_alloc *allocs; /* sorted by base */
	size_t nallocs, capallocs;
	struct syn_hmap *maps; /* sorted by base */
	size_t nmaps, capmaps;
	struct InternalStreamHandle *streams;
	size_t page;
};

extern struct syn_state syn;

/* Counts the call and applies HMR_SIM_SYNAPSEAI_FAIL (synFail default). */
#define SYN_ENTER(name)                                                        \
	do {                                                                   \
		long syn_st_;                                                  \
		if (hmr_sim_synapseai__fail(name, synFail, &syn_st_))          \
			return (synStatus)syn_st_;                             \
	} while (0)

/*
 * With syn.lock held: synUninitialized before synInitialize, then
 * no_device when a device is needed and none is acquired.
 */
static inline synStatus syn_ready(int need_device, synStatus no_device)
{
	if (!syn.initialized)
		return synUninitialized;
	if (need_device && !syn.acquired)
		return no_device;
	return synSuccess;
}

/* syn_memory.c (syn.lock held) */
unsigned char *syn_device_view(uint64_t addr, uint64_t len);
int syn_host_mapped(uint64_t addr, uint64_t len);
void syn_memory_reset(void);

/* syn_stream.c (syn.lock held) */
void syn_streams_reset(void);

/* syn_hccl.c (syn.lock held) */
void syn_hccl_reset(void);

#endif /* HMR_SIM_SYN_RUNTIME_H */
