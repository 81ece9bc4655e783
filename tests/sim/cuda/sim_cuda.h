/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* sim_cuda.h: the CUDA driver simulator's shared state and internal API. */
#ifndef HMR_SIM_CUDA_H
#define HMR_SIM_CUDA_H

/*
 * libcuda.so.1 simulator.  No GPU is needed: the library exports the
 * driver's versioned entry points with cuda.h's own prototypes, so a
 * backend that dlopens it cannot tell it from a driver, while tests can
 * reach every corner (devices without dma-buf, old drivers, failures).
 *
 * Memory model
 * - cuInit reserves one PROT_NONE, MAP_NORESERVE address window per device
 *   (SIM_DEV_WINDOW bytes each) plus one window for cuMemAddressReserve.
 *   Nothing else is ever mapped there, so device addresses never alias
 *   host memory and the windows are disjoint.
 * - Every cuMemAlloc (and every cuMemCreate handle) owns a memfd, named
 *   "sim-cuda:dev<N>:buf<id>".  It is mapped twice: at the device address
 *   with PROT_NONE, so a host dereference faults as on real hardware, and
 *   read/write elsewhere: the "shadow" that cuMemcpy* and cuMemset* use.
 *   HMR_SIM_CUDA_HOST_ACCESSIBLE=1 maps the device address read/write
 *   instead (for soft-RoCE, which pins it as plain memory).
 * - cuMemAlloc places allocations first fit in the device window, aligned
 *   to 2 MiB when the size is >= 2 MiB and to a host page otherwise; a
 *   freed address is reused, with a new CU_POINTER_ATTRIBUTE_BUFFER_ID.
 * - cuMemAllocHost/cuMemHostAlloc memory is memfd-backed host memory;
 *   cuMemAllocManaged memory lives in the device window, read/write.
 *
 * dma-buf (cuMemGetHandleForAddressRange)
 *   The returned fd is a dup of the allocation's memfd, NOT a real
 *   dma-buf: offset 0 of the fd is the first byte of the allocation (of
 *   the cuMemCreate handle for VMM memory), not dptr.  A caller that maps
 *   or imports the fd must add (dptr - allocation base) (for VMM: dptr -
 *   segment base + the cuMemMap offset) to its fd offset.  Exporting from
 *   the page-aligned allocation base, as libfabric does, gives offset 0
 *   and the same bytes as a real driver.  dptr and size must be page
 *   aligned, the range must lie inside ONE allocation (page-rounded) or
 *   ONE mapped VMM segment.  The caller owns the fd and closes it.
 *
 * Configuration (environment, read once at the first driver call, which
 * is normally cuInit): see the top of init.c.
 *
 * Test hook: besides cu* symbols the library exports
 * unsigned long hmr_sim_cuda_calls(const char *base_name), the number of
 * calls so far of the entry points with that base name ("cuMemAlloc"
 * counts cuMemAlloc_v2, its v1 stub and calls through cuGetProcAddress).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sim_common.h"

#include <cuda.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef SIM_CUDA_DRIVER
#define SIM_CUDA_DRIVER 13000
#endif
/* Entry points introduced after the simulated build's driver are absent. */
#define SIM_HAS(version) (SIM_CUDA_DRIVER >= (version))

#define SIM_API __attribute__((visibility("default")))

#define SIM_MAX_DEVICES 16
#define SIM_DEV_WINDOW  (64ULL << 30)  /* address window per device */
#define SIM_VMM_WINDOW  (256ULL << 30) /* cuMemAddressReserve window */
#define SIM_DEV_MEMORY  (16ULL << 30)  /* cuDeviceTotalMem */
#define SIM_GRANULARITY (2ULL << 20)   /* VMM granularity, large alignment */
#define SIM_CTX_MAGIC   0x43545853u    /* "SXTC" */

struct CUctx_st {
	uint32_t magic;
	int device;
	int primary;
	int refs;  /* primary: retain count; others: 1 until destroyed */
	int alive; /* 0 once destroyed (or primary released to 0) */
	unsigned int flags;
	struct CUctx_st *next; /* all non-primary contexts ever created */
};

struct sim_device {
	int dmabuf;           /* HMR_SIM_CUDA_DMABUF switch */
	CUdeviceptr win_base; /* address window */
	size_t used;          /* bytes of device memory allocated */
	struct CUctx_st primary;
};

struct sim_config {
	int ndev;
	int driver_version;
	int host_accessible;
	int pcie_mapping;
	int dmabuf[SIM_MAX_DEVICES];
};

enum sim_kind {
	SIM_KIND_DEVICE,     /* cuMemAlloc */
	SIM_KIND_MANAGED,    /* cuMemAllocManaged */
	SIM_KIND_HOST,       /* cuMemAllocHost, cuMemHostAlloc */
	SIM_KIND_REGISTERED, /* cuMemHostRegister */
	SIM_KIND_IPC,        /* cuIpcOpenMemHandle */
	SIM_KIND_VMM,        /* one cuMemMap segment */
};

/* A cuMemCreate physical allocation (CUmemGenericAllocationHandle). */
struct sim_phys {
	CUmemGenericAllocationHandle handle;
	struct sim_mem mem;
	CUmemAllocationProp prop;
	int handle_refs; /* cuMemCreate/Retain/Import minus cuMemRelease */
	int map_refs;    /* live cuMemMap segments */
	unsigned long long block_id;
	struct sim_phys *next;
};

/* One entry of the address table: an allocation or a VMM segment. */
struct sim_alloc {
	CUdeviceptr base;
	size_t size; /* reported by cuMemGetAddressRange */
	size_t span; /* bytes backed at base (page-rounded size) */
	enum sim_kind kind;
	int device;
	CUcontext ctx;
	unsigned long long id; /* CU_POINTER_ATTRIBUTE_BUFFER_ID */
	struct sim_mem mem;    /* own memfd (not for REGISTERED, VMM) */
	struct sim_phys *phys; /* VMM backing */
	size_t offset;         /* VMM: offset into phys */
	unsigned int flags;    /* host alloc/register flags */
	int sync_memops;
	int ipc_refs;                          /* IPC: open count */
	pid_t ipc_pid;                         /* IPC: exporting process */
	unsigned long long ipc_id;             /* IPC: exporter's buffer id */
	unsigned char access[SIM_MAX_DEVICES]; /* VMM: CUmemAccess_flags */
};

SIM_TABLE_FIELDS_OK(struct sim_alloc, base, span);

/* Reservation made by cuMemAddressReserve. */
struct sim_resv {
	CUdeviceptr base;
	size_t size;
};

struct sim_state {
	pthread_mutex_t lock;
	int initialized;
	size_t page;
	struct sim_device dev[SIM_MAX_DEVICES];
	CUdeviceptr vmm_base;
	struct sim_table tab;  /* of struct sim_alloc */
	struct sim_resv *resv; /* sorted by base */
	size_t nresv, capresv;
	struct sim_phys *phys; /* live physical handles */
	unsigned long long next_id;
	CUmemGenericAllocationHandle next_handle;
	struct CUctx_st *contexts; /* non-primary, never freed */
};

extern struct sim_state sim;
extern struct sim_config sim_cfg;

/* errors.c */
int sim_error_by_name(const char *name, CUresult *out);

/* init.c */
void sim_config_load(void);
CUresult sim_fail_check(const char *name);
SIM_API unsigned long hmr_sim_cuda_calls(const char *name);
SIM_API int hmr_sim_cuda_fail(const char *spec);
CUresult sim_check_init(void);

/*
 * Every entry point starts with SIM_ENTER: it loads the configuration,
 * applies HMR_SIM_CUDA_FAIL for its base name, then requires cuInit.
 */
#define SIM_ENTER_NOINIT(name)                                                 \
	do {                                                                   \
		CUresult sim_rc_ = sim_fail_check(name);                       \
		if (sim_rc_ != CUDA_SUCCESS)                                   \
			return sim_rc_;                                        \
	} while (0)
#define SIM_ENTER(name)                                                        \
	do {                                                                   \
		CUresult sim_rc_ = sim_fail_check(name);                       \
		if (sim_rc_ == CUDA_SUCCESS)                                   \
			sim_rc_ = sim_check_init();                            \
		if (sim_rc_ != CUDA_SUCCESS)                                   \
			return sim_rc_;                                        \
	} while (0)

/* device.c: contexts (the caller holds no lock). */
CUcontext sim_ctx_current(void);
CUresult sim_ctx_require(CUcontext *ctx);
int sim_ctx_valid(CUcontext ctx);
CUresult sim_ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev);

/* alloc.c: address table, windows and memfds; callers hold sim.lock. */
static inline struct sim_alloc *sim_at(size_t i)
{
	return sim.tab.v[i];
}
int sim_map_device(CUdeviceptr addr, const struct sim_mem *m, size_t off,
                   size_t len, int host_rw);
int sim_slot_find(int device, size_t span, size_t align, CUdeviceptr *addr);
int sim_in_window(CUdeviceptr p);
struct sim_alloc *sim_find(CUdeviceptr p);
unsigned char *sim_view(const struct sim_alloc *a, CUdeviceptr p);
void sim_free_alloc(struct sim_alloc *a);
void sim_free_ctx_allocs(CUcontext ctx);
struct sim_phys *sim_phys_find(CUmemGenericAllocationHandle h);
void sim_phys_put(struct sim_phys *p);

#endif /* HMR_SIM_CUDA_H */
