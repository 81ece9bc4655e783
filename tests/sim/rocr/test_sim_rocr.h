/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_rocr.h: what the ROCr simulator's test files share. */
#ifndef HMR_TEST_SIM_ROCR_H
#define HMR_TEST_SIM_ROCR_H

#include "harness.h"

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * HMR_SIM_ROCR_LIB names the simulator (rocm56/libhsa-runtime64.so.1) and
 * HMR_SIM_ROCR52_LIB its ROCm 5.2.3 variant; without them a case skips.
 * Each case runs in its own process, so it may set the simulator's
 * environment before loading it.
 */

/* Not in Debian's 5.2.3 headers: ROCR-Runtime src/inc/hsa_ext_amd.h 5.6. */
typedef hsa_status_t (*export_dmabuf_fn)(const void *ptr, size_t size,
                                         int *dmabuf, uint64_t *offset);
typedef hsa_status_t (*close_dmabuf_fn)(int dmabuf);
#define DMABUF_SUPPORTED ((hsa_system_info_t)0x204) /* ROCm 5.6 hsa.h */

/* Field, symbol: the header's own prototypes give the pointer types. */
#define SIM_SYMS(X)                                                            \
	X(init, hsa_init)                                                      \
	X(shut_down, hsa_shut_down)                                            \
	X(status_string, hsa_status_string)                                    \
	X(system_get_info, hsa_system_get_info)                                \
	X(iterate_agents, hsa_iterate_agents)                                  \
	X(agent_get_info, hsa_agent_get_info)                                  \
	X(iterate_pools, hsa_amd_agent_iterate_memory_pools)                   \
	X(pool_get_info, hsa_amd_memory_pool_get_info)                         \
	X(agent_pool_get_info, hsa_amd_agent_memory_pool_get_info)             \
	X(pool_allocate, hsa_amd_memory_pool_allocate)                         \
	X(pool_free, hsa_amd_memory_pool_free)                                 \
	X(allow_access, hsa_amd_agents_allow_access)                           \
	X(pointer_info, hsa_amd_pointer_info)                                  \
	X(lock, hsa_amd_memory_lock)                                           \
	X(unlock, hsa_amd_memory_unlock)                                       \
	X(memory_copy, hsa_memory_copy)                                        \
	X(async_copy, hsa_amd_memory_async_copy)                               \
	X(signal_create, hsa_signal_create)                                    \
	X(signal_destroy, hsa_signal_destroy)                                  \
	X(signal_wait, hsa_signal_wait_scacquire)                              \
	X(signal_load, hsa_signal_load_scacquire)                              \
	X(signal_store, hsa_signal_store_screlease)                            \
	X(ipc_create, hsa_amd_ipc_memory_create)                               \
	X(ipc_attach, hsa_amd_ipc_memory_attach)                               \
	X(ipc_detach, hsa_amd_ipc_memory_detach)                               \
	X(reg_dealloc, hsa_amd_register_deallocation_callback)                 \
	X(dereg_dealloc, hsa_amd_deregister_deallocation_callback)

#define SIM_FIELD(field, symbol) __typeof__(&symbol) field;

struct sim_hsa {
	void *dl;
	SIM_SYMS(SIM_FIELD)
	export_dmabuf_fn export_dmabuf; /* absent from the 5.2.3 variant */
	close_dmabuf_fn close_dmabuf;
	unsigned long (*calls)(const char *name);
	unsigned long long (*buffer_id)(const void *ptr);
};
extern struct sim_hsa hsa;

/* The agents and pools of the simulated system. */
struct sim_sys {
	hsa_agent_t cpu, gpu[16];
	int ngpu;
	hsa_amd_memory_pool_t cpu_pool, gpu_pool[16];
};
extern struct sim_sys sys;

#define HSA_OK(expr) ASSERT_EQ((expr), HSA_STATUS_SUCCESS)

void load_lib(const char *var);
hsa_status_t collect_agent(hsa_agent_t agent, void *data);
void setup(void);
size_t page(void);
void fill(unsigned char *buf, size_t len, unsigned seed);
void *gpu_alloc(int gpu, size_t size);
hsa_agent_t bogus_agent(void);
hsa_amd_pointer_info_t ptr_info(const void *p);

#endif /* HMR_TEST_SIM_ROCR_H */
