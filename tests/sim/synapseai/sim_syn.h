/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* sim_syn.h: what the simulated libSynapse.so and libhl-thunk.so share. */
#ifndef HMR_SIM_SYN_H
#define HMR_SIM_SYN_H

/*
 * Simulated Habana Gaudi stack: libhl-thunk.so plays the driver (device
 * nodes, device memory, dma-buf export) and libSynapse.so the runtime
 * (device acquisition, allocation, streams, hcclLookupDMABuff).  As with
 * the real pair, libSynapse.so links libhl-thunk.so; it reaches the
 * "driver" through the hmr_sim_synapseai__* hooks below, which are NOT
 * counted as calls and never fail by injection.  README.md explains the
 * model; the environment is described at the top of thunk_config.c.
 *
 * Memory model (per simulated Gaudi2)
 * - One memfd covers the device's whole HBM (HMR_SIM_SYNAPSEAI_HBM_MIB).
 *   It is mapped PROT_NONE (read/write with ..._HOST_ACCESSIBLE=1) at the
 *   device's HBM base, inside a PROT_NONE MAP_NORESERVE window reserved
 *   for all devices at the first device open, and read/write at a
 *   "shadow" address that the runtime's copies use.
 * - The HBM base is synDeviceInfoV2.globalHbmBaseAddress: the start of
 *   the one mapped device-memory area (the runtime maps all of HBM when a
 *   device is acquired, as Synapse maps its global_hbm pool).  The first
 *   SIM_SYN_RESERVED bytes hold the runtime's own buffers; synDeviceMalloc
 *   places user buffers first fit after them.
 * - The memfd is created when the device node is opened and dropped when
 *   it is closed: a released device's memory does not survive.
 *
 * Lock order: libSynapse's runtime lock, then the driver lock in
 * libhl-thunk (the driver never calls the runtime).
 */

#include "sim_common.h"
#include "syn_decl.h"

#include <stddef.h>
#include <stdint.h>

#define SIM_API __attribute__((visibility("default")))

#define SIM_MAX_DEVICES  MAX_NUM_OF_DEVICES_PER_HOST
#define SIM_SYN_RESERVED (2ULL << 20) /* runtime's own HBM at the base */

/* Gaudi2 constants (hl-thunk-open include/specs: gaudi2.h, pci_ids.h). */
#define SIM_GAUDI2_SRAM_BASE 0x1000FFFFFD000000ULL
#define SIM_GAUDI2_SRAM_SIZE 0x3000000U            /* 48 MiB */
#define SIM_GAUDI2_DRAM_PHYS 0x1001000000000000ULL /* DRAM_PHYS_BASE */
#define SIM_GAUDI2_PCI_ID    0x1020U
#define SIM_GAUDI2_TPC_MASK  0xFFFFFFULL /* 24 TPC engines */

/* What the runtime learns about an open device (a "driver" answer). */
struct sim_hl_info {
	int module;          /* module id, 0..devices-1 */
	char busid[16];      /* "0000:%02x:00.0" */
	uint64_t hbm_base;   /* device address of HBM byte 0 */
	uint64_t hbm_size;   /* bytes */
	unsigned char *view; /* read/write shadow of HBM byte 0 */
	int dmabuf;          /* HMR_SIM_SYNAPSEAI_DMABUF for the device */
};

/* Hooks libhl-thunk.so exports for libSynapse.so (thunk_*.c). */
SIM_API int hmr_sim_synapseai__devices(void);
SIM_API int hmr_sim_synapseai__module_of_bus(const char *busid);
SIM_API int hmr_sim_synapseai__fail(const char *name, long dflt, long *status);
SIM_API void hmr_sim_synapseai__log(const char *fmt, ...)
        __attribute__((format(printf, 1, 2)));
SIM_API int hmr_sim_synapseai__open(int module);
SIM_API int hmr_sim_synapseai__close(int fd);
SIM_API int hmr_sim_synapseai__map_hbm(int fd, struct sim_hl_info *info);
SIM_API int hmr_sim_synapseai__export(int fd, uint64_t addr, uint64_t size,
                                      uint64_t offset, uint32_t flags);

/* The test hook: calls so far of the entry point with this exact name. */
SIM_API unsigned long hmr_sim_synapseai_calls(const char *name);

/* status.c (compiled into both libraries) */
const char *sim_syn_status_name(long status);
const char *sim_syn_status_text(long status);
int sim_syn_status_parse(const char *word, long *out);

#endif /* HMR_SIM_SYN_H */
