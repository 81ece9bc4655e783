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
 * - Allocations under a host page share pages, as the driver's do
 *   (lab/gpu.md: a 1-byte one at ...e00000, the next at ...e00200): they
 *   are placed at 512-byte granularity and are not mapped at their device
 *   address (the window is PROT_NONE already); their bytes live in their
 *   own memfd's shadow.  Not with HMR_SIM_CUDA_HOST_ACCESSIBLE, which
 *   needs every allocation mapped.
 * - VMM (lab/gpu.md): RANGE_START_ADDR/RANGE_SIZE are the whole
 *   reservation, BUFFER_ID and cuMemGetAddressRange the mapped segment
 *   (one cuMemMap); an unmapped hole answers memory type 0 and fails
 *   BUFFER_ID.  HMR_SIM_CUDA_EXPANDABLE=1 lays cuMemAlloc out as
 *   PyTorch's expandable segments (expandable.c).
 *
 * dma-buf (cuMemGetHandleForAddressRange, dmabuf.c)
 *   As the driver: any range whose start and length are page multiples
 *   exports, across allocations and VMM segments, unless a page of it
 *   is unmapped (CUDA_ERROR_INVALID_VALUE).  cuMemAllocHost memory
 *   exports only where CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED
 *   (146) is 1 (HMR_SIM_CUDA_HOST_DMABUF; 0 by default, as the H200's).
 *   The fd is NOT a real dma-buf.  Where the range starts at the first
 *   byte of one allocation's (VMM segment's) memfd and stays in it, the
 *   fd is a dup of that memfd: offset 0 is dptr, as a real dma-buf's,
 *   and the CPU may map it.  Any other range gives an O_PATH fd of a
 *   memfd named "sim-cuda:dmabuf:dev<N>:<dptr>+<size>" (size bytes):
 *   it aliases nothing and refuses mmap (EBADF), as the real driver's
 *   fds refuse it (ENOTSUPP).  Under HMR_SIM_DMABUF=udmabuf (the test
 *   VM's importing rxe) a range inside one memfd, wherever it starts,
 *   gives a real dma-buf of exactly the range (a udmabuf, sim_dmabuf_fd);
 *   a range over several allocations or VMM chunks, one udmabuf of each
 *   one's memfd piece end to end (UDMABUF_CREATE_LIST,
 *   sim_dmabuf_list_fd), as the driver's one fd of them; a range meeting
 *   a page that small allocations share, the O_PATH fd.
 *   hmr_sim_cuda_last_export() tells tests which range was exported.
 *   The caller owns the fd and closes it.
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

/* HMR_SIM_CUDA_EXPANDABLE: one reservation per device, grown by
 * SIM_EXPAND_CHUNK segments (expandable.c). */
#define SIM_EXPAND_RESV  (8ULL << 30)
#define SIM_EXPAND_CHUNK (20ULL << 20)
#define SIM_SMALL_ALIGN  512 /* placement of allocations under a page */

struct sim_expand {
	CUdeviceptr base;  /* the reservation, 0 until the first alloc */
	size_t mapped;     /* bytes mapped from base */
	size_t top;        /* bump pointer, from base */
	CUdeviceptr *live; /* allocation starts not yet freed */
	size_t nlive, caplive;
};

struct sim_device {
	int dmabuf;      /* HMR_SIM_CUDA_DMABUF switch */
	int host_dmabuf; /* HMR_SIM_CUDA_HOST_DMABUF switch (146) */
	struct sim_expand expand;
	CUdeviceptr win_base; /* address window */
	size_t used;          /* bytes of device memory allocated */
	struct CUctx_st primary;
};

struct sim_config {
	int ndev;
	int driver_version;
	int host_accessible;
	int pcie_mapping;
	int expandable;
	int dmabuf[SIM_MAX_DEVICES];
	int host_dmabuf[SIM_MAX_DEVICES];
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
	int shared_page;       /* under a page: not mapped at base */
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
	CUdeviceptr last_export;   /* hmr_sim_cuda_last_export */
	size_t last_export_size;
	unsigned long exports;
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

/* vmm.c: what the API calls do, for callers holding sim.lock. */
struct sim_resv *sim_resv_holding(CUdeviceptr p, size_t len);
CUresult sim_resv_add(size_t size, size_t alignment, CUdeviceptr hint,
                      CUdeviceptr *out);
CUresult sim_phys_create(const CUmemAllocationProp *prop, size_t size,
                         struct sim_phys **out);
CUresult sim_vmm_map(CUdeviceptr ptr, size_t size, size_t offset,
                     struct sim_phys *p);

/* expandable.c (callers hold sim.lock). */
CUresult sim_expand_alloc(int device, size_t size, CUdeviceptr *out);
/* 1: p is in an expandable reservation (*rc: how its free went). */
int sim_expand_free(CUdeviceptr p, CUresult *rc);

/* dmabuf.c: test hook, not a driver symbol. */
SIM_API unsigned long hmr_sim_cuda_last_export(CUdeviceptr *dptr, size_t *size);

#endif /* HMR_SIM_CUDA_H */
