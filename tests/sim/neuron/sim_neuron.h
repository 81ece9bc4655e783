/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* sim_neuron.h: the Neuron runtime simulator's shared state and internals. */
#ifndef HMR_SIM_NEURON_H
#define HMR_SIM_NEURON_H

/*
 * libnrt.so.1 simulator: the subset of the Neuron runtime's C API that
 * libfabric and hmr call, with nrt.h's own prototypes (nrt_decl.h), so a
 * backend that dlopens it cannot tell it from the runtime.  README.md says
 * what the real runtime does and where the simulator departs from it.
 *
 * Memory model
 * - nrt_init reserves one PROT_NONE, MAP_NORESERVE window per NeuronCore
 *   (SIM_NC_WINDOW bytes each); nothing else is ever mapped there.
 * - A DEVICE tensor owns a memfd named "/dev/neuron<D>" (D = the Neuron
 *   device holding the core), so /proc/self/maps shows
 *   "/memfd:/dev/neuron<D> (deleted)" where the runtime shows the
 *   device node "/dev/neuron<D>".  It is mapped at the tensor's VA, first
 *   fit in the core's window, PROT_NONE (HMR_SIM_NEURON_HOST_ACCESSIBLE=1:
 *   read/write, as the real BAR mapping is), and read/write elsewhere as
 *   the shadow that nrt_tensor_read/write and nrt_memcpy_to_device use.
 *   A fork child finds its device VAs PROT_NONE (the driver sets
 *   VM_DONTCOPY on its mappings).
 * - A HOST tensor is a read/write memfd mapping of the same name outside
 *   the windows (the runtime maps driver DMA memory through /dev/neuron);
 *   a VIRTUAL tensor is plain page-aligned heap memory.
 * - A freed VA is reused first fit, by a tensor with a new id
 *   (hmr_sim_neuron_alloc_id).
 * - hmr_sim_neuron_next_device_va places the next device tensor at a
 *   given free address outside the windows, as the real driver's mmap may
 *   (at a former host address, say); freeing it unmaps it.
 *
 * Locking: sim.lock protects sim (tensors, table, windows, state);
 * tests/sim/common's hooks locks protect the call counters and failure
 * rules.  No code takes one while holding another, except fork, whose
 * atfork handlers take sim.lock and then the hooks locks.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "nrt_decl.h"
#include "sim_common.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#ifndef SIM_NRT_DMABUF_V2
#define SIM_NRT_DMABUF_V2 1 /* 0: the nrt_v1 variant, no _v2 export */
#endif

#define SIM_API __attribute__((visibility("default")))

#define SIM_MAX_CORES     128
#define SIM_NC_WINDOW     (32ULL << 30) /* address window per NeuronCore */
#define SIM_NC_MEMORY     (16ULL << 30) /* HBM per NeuronCore */
#define SIM_HOST_MAX      (4UL << 20)   /* NRT_TENSOR_PLACEMENT_HOST limit */
#define SIM_TENSOR_MAGIC  0x4e525453u   /* "NRTS" */
#define SIM_FRAMEWORK_MAX NRT_FRAMEWORK_TYPE_PRECHECK

/* Every entry point, for the call counters and failure rules. */
#define SIM_ENTRY_POINTS(X)                                                    \
	X(nrt_init)                                                            \
	X(nrt_close)                                                           \
	X(nrt_get_total_nc_count)                                              \
	X(nrt_get_total_vnc_count)                                             \
	X(nrt_get_visible_nc_count)                                            \
	X(nrt_get_visible_vnc_count)                                           \
	X(nrt_tensor_allocate)                                                 \
	X(nrt_tensor_free)                                                     \
	X(nrt_tensor_read)                                                     \
	X(nrt_tensor_write)                                                    \
	X(nrt_tensor_get_size)                                                 \
	X(nrt_tensor_get_va)                                                   \
	X(nrt_get_dmabuf_fd)                                                   \
	X(nrt_get_dmabuf_fd_v2)                                                \
	X(nrt_get_attached_efa_bdf)                                            \
	X(nrt_memcpy_to_device)                                                \
	X(nrt_get_status_as_str)

#define SIM_EP_ENUM(name) SIM_EP_##name,
enum sim_entry { SIM_ENTRY_POINTS(SIM_EP_ENUM) SIM_EP_COUNT };
#undef SIM_EP_ENUM

struct sim_config {
	int cores;                 /* HMR_SIM_NEURON_CORES: total NeuronCores */
	int visible;               /* HMR_SIM_NEURON_VISIBLE_CORES */
	int cores_per_device;      /* HMR_SIM_NEURON_CORES_PER_DEVICE */
	int host_accessible;       /* HMR_SIM_NEURON_HOST_ACCESSIBLE */
	int device_va;             /* HMR_SIM_NEURON_DEVICE_VA */
	int dmabuf[SIM_MAX_CORES]; /* HMR_SIM_NEURON_DMABUF */
};

enum sim_state_kind { SIM_START, SIM_INITED, SIM_CLOSED };

struct nrt_tensor {
	uint32_t magic;
	nrt_tensor_placement_t placement;
	int nc;                  /* logical NeuronCore, -1 for host memory */
	size_t size;             /* as allocated */
	size_t span;             /* bytes backed: size rounded up to a page */
	uintptr_t va;            /* what nrt_tensor_get_va says; 0 if none */
	unsigned long long id;   /* new for every allocation */
	int alive;               /* 0 once nrt_close released the memory */
	int in_table;            /* listed in sim.tab (has a Neuron VA) */
	int fd;                  /* memfd, -1 for VIRTUAL */
	unsigned char *shadow;   /* the simulator's view of the bytes */
	struct nrt_tensor *next; /* sim.all */
};

SIM_TABLE_FIELDS_OK(struct nrt_tensor, va, span);

struct sim_state {
	pthread_mutex_t lock;
	enum sim_state_kind state;
	size_t page;
	uintptr_t win_base; /* core c's window: win_base + c * SIM_NC_WINDOW */
	size_t win_len;     /* 0 until reserved (once, never released) */
	size_t used[SIM_MAX_CORES];
	struct sim_table tab;   /* tensors with a Neuron VA, sorted by va */
	struct nrt_tensor *all; /* every tensor not yet freed */
	unsigned long long next_id;
	uintptr_t next_va; /* hmr_sim_neuron_next_device_va; 0: a window */
};

extern struct sim_state sim;
extern struct sim_config sim_cfg;

/* init.c: configuration, counters, failure injection, state checks. */
void sim_config_load(void);
int sim_fail_check(enum sim_entry ep, NRT_STATUS *status);
NRT_STATUS sim_check_init(void);
SIM_API unsigned long hmr_sim_neuron_calls(const char *name);

/* dmabuf.c: test hook. */
SIM_API unsigned long long hmr_sim_neuron_alloc_id(const void *va);
/* mem.c: test hook: the next device tensor is mapped at va, wherever
 * that is (the real driver's mmap of /dev/neuron lands anywhere). */
SIM_API void hmr_sim_neuron_next_device_va(const void *va);

/*
 * Every NRT_STATUS entry point starts with SIM_ENTER: it counts the call,
 * loads the configuration, applies HMR_SIM_NEURON_FAIL, then requires
 * the state between nrt_init and nrt_close.
 */
#define SIM_ENTER_NOINIT(ep)                                                   \
	do {                                                                   \
		NRT_STATUS sim_rc_;                                            \
		if (sim_fail_check(SIM_EP_##ep, &sim_rc_))                     \
			return sim_rc_;                                        \
	} while (0)
#define SIM_ENTER(ep)                                                          \
	do {                                                                   \
		NRT_STATUS sim_rc_;                                            \
		if (sim_fail_check(SIM_EP_##ep, &sim_rc_))                     \
			return sim_rc_;                                        \
		sim_rc_ = sim_check_init();                                    \
		if (sim_rc_ != NRT_SUCCESS)                                    \
			return sim_rc_;                                        \
	} while (0)

/* mem.c: windows, memfds and the VA table; callers hold sim.lock. */
void sim_fork_hooks(void);
int sim_reserve_windows(void);
int sim_device_of(int nc);
NRT_STATUS sim_tensor_back(struct nrt_tensor *t);
void sim_tensor_release(struct nrt_tensor *t);
struct nrt_tensor *sim_find_va(uintptr_t p);
struct nrt_tensor *sim_lookup(const nrt_tensor_t *t);
void sim_unlink(struct nrt_tensor *t);
void sim_release_all(void);

#endif /* HMR_SIM_NEURON_H */
