/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* sim_ze.h: the Level Zero driver simulator's shared state and internals. */
#ifndef HMR_SIM_ZE_H
#define HMR_SIM_ZE_H

/*
 * A Level Zero DRIVER (not a loader): the real loader (Debian libze1,
 * libze_loader.so.1) loads it through ZE_ENABLE_ALT_DRIVERS=/abs/path.so.
 * The library exports only the loader's table getters (ze*, zet*, zes*
 * Get*ProcAddrTable, with ze_ddi.h's prototypes) and the hmr_sim_ze_*
 * test hooks.  Every API call is a static function reached through the
 * tables: a driver defining zeMemAllocDevice itself would bind the table
 * entry to the loader's export and recurse forever.  Slots the simulator
 * does not implement stay NULL (the loader then answers
 * ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, or ZE_RESULT_ERROR_UNINITIALIZED
 * when it wraps handles).
 *
 * The same sources build two drivers, "a" and "b" (SIM_ZE_ID), with their
 * own state and UUIDs, so that ZE_ENABLE_ALT_DRIVERS=A,B gives a real
 * driver index 1.
 *
 * Memory model
 * - The driver's pfnInit (zeInit) reserves one PROT_NONE, MAP_NORESERVE
 *   window of SIM_DEV_WINDOW bytes per device.  Nothing else is mapped
 *   there, so device addresses never alias host memory.
 * - zeMemAllocDevice memory is a memfd ("sim-ze-<id>:dev<N>:buf<alloc
 *   id>") mapped twice: PROT_NONE at the device address (a CPU
 *   dereference faults, as on a discrete GPU) and read/write elsewhere,
 *   the "shadow" that command-list copies use.
 *   HMR_SIM_ZE_HOST_ACCESSIBLE=1 maps the device address read/write.
 * - Placement is first fit in the device's window, aligned to the
 *   requested alignment, to 2 MiB for sizes >= 2 MiB and to a host page
 *   otherwise; a freed address is reused with a NEW allocation id.
 * - zeMemAllocShared memory lives in the window of its device (device 0
 *   when none is given), mapped read/write; zeMemAllocHost memory is a
 *   memfd mapped read/write at an ordinary host address.
 * - zeMemGetAllocProperties answers ZE_MEMORY_TYPE_UNKNOWN (and
 *   ZE_RESULT_SUCCESS) for any other pointer, leaving id, pageSize and
 *   *phDevice untouched, as Intel's compute-runtime does.
 *
 * dma-buf export (zeMemGetAllocProperties with a chained
 * ze_external_memory_export_fd_t asking for ZE_EXTERNAL_MEMORY_TYPE_FLAG_
 * DMA_BUF)
 *   The fd refers to the allocation's memfd, NOT a real dma-buf: offset 0
 *   of the fd is the allocation's base (what zeMemGetAddressRange
 *   reports), whatever pointer inside the allocation was queried, as
 *   with the real driver's buffer object.  A caller exporting an interior
 *   pointer adds (ptr - base) to its fd offset itself.  Device, host and
 *   IPC-opened memory export; shared memory does not
 *   (ZE_RESULT_ERROR_UNSUPPORTED_FEATURE).  Who owns the fd depends on
 *   HMR_SIM_ZE_FD_MODE, see export.c.
 *
 * Locking: one mutex, sim.lock, protects everything in struct sim_state,
 * the devices and the context list; the call counters and failure rules
 * (tests/sim/common) have a lock each, never held with sim.lock.  Command
 * lists are the caller's to serialize, as the API says.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sim_common.h"

#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef SIM_ZE_ID
#define SIM_ZE_ID "a" /* which copy of the driver this build is */
#endif
#ifndef SIM_ZE_INDEX
#define SIM_ZE_INDEX 0
#endif

#define SIM_API __attribute__((visibility("default")))

#define SIM_MAX_DEVICES 8
#define SIM_DEV_WINDOW  (64ULL << 30) /* address window per device */
#define SIM_DEV_MEMORY  (16ULL << 30) /* totalSize of each device */
#define SIM_MAX_ALLOC   (4ULL << 30)  /* maxMemAllocSize */
#define SIM_LARGE_PAGE  (2ULL << 20)  /* alignment of large allocations */

/* Handle magics: "ZDRV", "ZDEV", "ZCTX", "ZCQ_", "ZCL_" */
#define SIM_DRV_MAGIC 0x5a445256u
#define SIM_DEV_MAGIC 0x5a444556u
#define SIM_CTX_MAGIC 0x5a435458u
#define SIM_CQ_MAGIC  0x5a43515fu
#define SIM_CL_MAGIC  0x5a434c5fu

struct _ze_driver_handle_t {
	uint32_t magic;
};

struct _ze_device_handle_t {
	uint32_t magic;
	int index;
	uintptr_t win_base; /* address window */
	size_t used;        /* bytes of device memory allocated */
	int dmabuf;         /* HMR_SIM_ZE_DMABUF switch */
};

struct _ze_context_handle_t {
	uint32_t magic;
	struct _ze_context_handle_t *next; /* live contexts */
};

struct _ze_command_queue_handle_t {
	uint32_t magic;
	ze_device_handle_t dev;
	ze_context_handle_t ctx;
};

/* One recorded zeCommandListAppendMemoryCopy of a regular list. */
struct sim_copy_op {
	void *dst;
	const void *src;
	size_t size;
};

struct _ze_command_list_handle_t {
	uint32_t magic;
	ze_device_handle_t dev;
	ze_context_handle_t ctx;
	int immediate;
	int closed;
	struct sim_copy_op *ops;
	size_t nops, capops;
};

struct sim_config {
	int ndev;
	int host_accessible;
	int fd_caller;   /* HMR_SIM_ZE_FD_MODE=caller */
	int host_dmabuf; /* host allocations export */
	int p2p;
	int dmabuf[SIM_MAX_DEVICES];
};

enum sim_kind {
	SIM_KIND_DEVICE, /* zeMemAllocDevice */
	SIM_KIND_HOST,   /* zeMemAllocHost */
	SIM_KIND_SHARED, /* zeMemAllocShared */
	SIM_KIND_IPC,    /* zeMemOpenIpcHandle */
	SIM_KIND_IMPORT, /* zexDriverImportExternalPointer: not USM */
};

/* One entry of the address table. */
struct sim_alloc {
	uintptr_t base;
	size_t size; /* reported by zeMemGetAddressRange */
	size_t span; /* bytes reserved at base (page-rounded size) */
	size_t page_size;
	enum sim_kind kind;
	ze_device_handle_t dev; /* NULL for host memory and unbound shared */
	uint64_t id;            /* ze_memory_allocation_properties_t.id */
	struct sim_mem mem;     /* no memfd for IMPORT */
	int drv_fd;             /* driver-owned export fd, -1 before */
	int drv_ref;            /* udmabuf: our dup of drv_fd's file, or -1 */
	int drv_fd_broken;      /* the caller closed it */
};

SIM_TABLE_FIELDS_OK(struct sim_alloc, base, span);

struct sim_state {
	pthread_mutex_t lock;
	int initialized;
	size_t page;
	struct _ze_driver_handle_t driver;
	struct _ze_device_handle_t dev[SIM_MAX_DEVICES];
	struct _ze_context_handle_t *contexts;
	struct sim_table tab; /* of struct sim_alloc */
	uint64_t next_id;
	unsigned long drv_fds;   /* driver-owned export fds open */
	unsigned long fd_errors; /* driver-owned fds the caller closed */
};

extern struct sim_state sim;
extern struct sim_config sim_cfg;

/* init.c */
void sim_config_load(void);
ze_result_t sim_fail_check(const char *name);

/* errors.c */
int sim_result_by_name(const char *name, ze_result_t *out);
ze_result_t sim_default_failure(const char *name);

/*
 * Every entry point starts with SIM_ENTER: it counts the call, applies
 * HMR_SIM_ZE_FAIL for its name, then requires the driver's init.
 */
#define SIM_ENTER(name)                                                        \
	do {                                                                   \
		ze_result_t sim_rc_ = sim_fail_check(name);                    \
		if (sim_rc_ == ZE_RESULT_SUCCESS &&                            \
		    !__atomic_load_n(&sim.initialized, __ATOMIC_ACQUIRE))      \
			sim_rc_ = ZE_RESULT_ERROR_UNINITIALIZED;               \
		if (sim_rc_ != ZE_RESULT_SUCCESS)                              \
			return sim_rc_;                                        \
	} while (0)

/* Handle checks; the caller holds sim.lock for contexts. */
int sim_driver_ok(ze_driver_handle_t h);
int sim_device_ok(ze_device_handle_t h);
int sim_context_ok(ze_context_handle_t h);
int sim_queue_ok(uint32_t ordinal, uint32_t index);

/* alloc.c: address table, windows and memfds; callers hold sim.lock. */
int sim_map_device(uintptr_t addr, const struct sim_mem *m, int host_rw);
int sim_slot_find(ze_device_handle_t dev, size_t span, size_t align,
                  uintptr_t *addr);
int sim_in_window(uintptr_t p);
struct sim_alloc *sim_find(uintptr_t p);
struct sim_alloc *sim_alloc_new(enum sim_kind kind, ze_device_handle_t dev);
void sim_free_alloc(struct sim_alloc *a);
int sim_is_usm(const struct sim_alloc *a);

/* export.c: the driver-owned fd; callers hold sim.lock. */
ze_result_t sim_driver_fd(struct sim_alloc *a, int *fd);
ze_result_t sim_export_fd(struct sim_alloc *a, int *fd);
void sim_release_driver_fd(struct sim_alloc *a);

/* copy.c */
ze_result_t sim_copy(void *dst, const void *src, size_t size);
ze_result_t sim_copy_check(void *dst, const void *src, size_t size);

/* Table fillers, one per file that implements the slots. */
void sim_fill_global(ze_global_dditable_t *t);
void sim_fill_driver(ze_driver_dditable_t *t);
void sim_fill_device(ze_device_dditable_t *t);
void sim_fill_context(ze_context_dditable_t *t);
void sim_fill_mem(ze_mem_dditable_t *t);
void sim_fill_ipc(ze_mem_dditable_t *t);
void sim_fill_command_queue(ze_command_queue_dditable_t *t);
void sim_fill_command_list(ze_command_list_dditable_t *t);

/* Test hooks (exported). */
SIM_API unsigned long hmr_sim_ze_calls(const char *name);
SIM_API int hmr_sim_ze_fail(const char *spec);
SIM_API unsigned long hmr_sim_ze_open_fds(void);
SIM_API unsigned long hmr_sim_ze_fd_errors(void);
SIM_API unsigned long hmr_sim_ze_live_allocs(void);

#endif /* HMR_SIM_ZE_H */
