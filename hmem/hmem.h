/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* hmem.h: the backend interface and the classification entry points. */
#ifndef HMR_HMEM_HMEM_H
#define HMR_HMEM_HMEM_H

#include <stdatomic.h>
#include <stdbool.h>

#include <hmr/hmr.h>

#include "base/range.h"

/*
 * One const table per interface, indexed by enum fi_hmem_iface; the host
 * ("system") backend is one of them.  Backends fill what they support;
 * hmem.c copies each table once over a table of -FI_ENOSYS stubs, so
 * callers never test for NULL.  Slots take and return 0 or -FI_E*.
 * The stubs table (stubs.c) is written positionally: a slot added here
 * and not there fails the build.
 *
 * A backend whose runtime is missing, or has no device, answers init with
 * -FI_ENOSYS and a reason: "absent", not an error.  Other init failures are
 * logged as warnings.
 */
struct hmr_backend_ops {
	/* Data first, then only function slots (HMR_BACKEND_SLOTS). */
	enum fi_hmem_iface iface;
	/* Kernel modules that let a NIC pin this interface's memory with
	 * plain ibv_reg_mr (peer memory), NULL-terminated; NULL if none. */
	const char *const *peermem_modules;
	/* The setting that lets the registration cache keep registrations
	 * of this interface's device memory (FI_MR_<VENDOR>_CACHE_MONITOR_
	 * ENABLED, declared in the backend's folder); NULL: never cached
	 * (the backend has no buffer ids to tell a reallocation). */
	const char *cache_setting;

	int (*init)(char *why, size_t why_len);
	void (*fini)(void);

	/* What ptr is.  -FI_ENOENT: not this interface's memory. */
	int (*query)(const void *ptr, size_t len, struct hmr_hmem_info *info);

	int (*host_register)(void *ptr, size_t len);
	int (*host_unregister)(void *ptr);
	int (*copy_to)(void *dev, const void *host, size_t len);
	int (*copy_from)(void *host, const void *dev, size_t len);

	/* dma-buf for [ptr, ptr + len): *fd, and *offset of ptr in it. */
	int (*dmabuf_get)(const void *ptr, size_t len, uint64_t flags, int *fd,
	                  uint64_t *offset);
	int (*dmabuf_put)(int fd);

	int (*ipc_get)(const void *ptr, void *handle, size_t *handle_size);
	int (*ipc_open)(uint64_t device, const void *handle, size_t handle_size,
	                void **ptr);
	int (*ipc_close)(void *ptr);

	/* What hmr_hmem_backend_info and hmr_hmem_device_info answer (the
	 * caller zeroed *info; size is the library's own). */
	int (*describe)(struct hmr_hmem_backend_info *info);
	int (*device)(uint32_t index, struct hmr_hmem_device_info *info);
	int (*alloc)(uint64_t device, size_t len, void **ptr);
	int (*free)(void *ptr);
};

/* Every function slot, in order; hmem.c fills a backend's NULL slots from
 * the stubs with it, and a static assert there checks that the list and
 * the struct have the same number of slots. */
#define HMR_BACKEND_SLOTS(X)                                                   \
	X(init)                                                                \
	X(fini)                                                                \
	X(query)                                                               \
	X(host_register)                                                       \
	X(host_unregister)                                                     \
	X(copy_to)                                                             \
	X(copy_from)                                                           \
	X(dmabuf_get)                                                          \
	X(dmabuf_put)                                                          \
	X(ipc_get)                                                             \
	X(ipc_open)                                                            \
	X(ipc_close)                                                           \
	X(describe)                                                            \
	X(device)                                                              \
	X(alloc)                                                               \
	X(free)

/* hmem/stubs.c: a table whose every slot answers -FI_ENOSYS. */
extern const struct hmr_backend_ops hmr__backend_stubs;

/* The tables the build has; hmem.c lists them by iface. */
extern const struct hmr_backend_ops hmr__system_backend;
extern const struct hmr_backend_ops hmr__cuda_backend;
extern const struct hmr_backend_ops hmr__ze_backend;
extern const struct hmr_backend_ops hmr__neuron_backend;
extern const struct hmr_backend_ops hmr__rocr_backend;
extern const struct hmr_backend_ops hmr__synapseai_backend;

/* The merged ops of a present backend, or NULL when absent. */
const struct hmr_backend_ops *hmr__hmem_backend(enum fi_hmem_iface iface);
/* Whether the registration cache may keep registrations of iface's device
 * memory: its backend names a cache setting and the setting is true. */
bool hmr__hmem_cache_monitor_enabled(enum fi_hmem_iface iface);

/* A backend other than the host one is present (has a device). */
bool hmr__hmem_any_device(void);

/* FI_HMEM_DISABLE_P2P (or HMR_HMEM_DISABLE_P2P) is set. */
bool hmr__hmem_p2p_disabled(void);

/*
 * The memory of a registration: with an iface hint (not FI_HMEM_SYSTEM)
 * the truth must match it, iface and device (-FI_EINVAL, logged; an
 * absent backend is -FI_ENOSYS); without, the truth.  Every iov must be
 * the same memory.  FI_HMEM_DEVICE_ONLY and FI_HMEM_HOST_ALLOC in flags
 * must match the allocation's type.
 */
int hmr__hmem_resolve(enum fi_hmem_iface hint, uint64_t device_hint,
                      const struct iovec *iov, size_t count, uint64_t flags,
                      struct hmr_hmem_info *info);

/*
 * The memtype cache (memtype.c).  Ranges of device memory that backends
 * reported, and host ranges already classified.  Lookups take no lock.
 */
/* 1: found (*info filled); 0: unknown. */
int hmr__memtype_lookup(uintptr_t addr, size_t len, struct hmr_hmem_info *info);
/* Where an iov starts in device memory the CPU cannot reach (a backend
 * reported it; not host-allocated or managed): 1 with *info.  Cheap: one
 * load when no device memory is known.  For domains without FI_HMEM,
 * which classify nothing, to refuse what they would dereference. */
int hmr__memtype_device_at(const struct iovec *iov, size_t n,
                           struct hmr_hmem_info *info);

/*
 * The cheapest question, inline so that classifying known host memory
 * makes no call: host ranges again, by their start address, in a
 * direct-mapped table (a registration path asks about buffers by their
 * start).  A slot is overwritten on collision; memtype.c's sorted array
 * still has every range.  Written only by memtype.c, under its seqlock:
 * `hmr__memtype_seq` is odd while a writer works.
 */
#define HMR_MEMTYPE_HOST_SLOTS 1024
extern _Atomic uintptr_t hmr__memtype_host_start[HMR_MEMTYPE_HOST_SLOTS];
extern _Atomic uintptr_t hmr__memtype_host_end[HMR_MEMTYPE_HOST_SLOTS];
extern _Atomic unsigned hmr__memtype_seq;

static inline size_t hmr__memtype_host_slot(uintptr_t start)
{
	return (size_t)(((start >> 6) * 0x9e3779b97f4a7c15ULL) >> 54);
}

/* [addr, aend) is known host memory that starts at addr. */
static inline bool hmr__memtype_host_hit(uintptr_t addr, uint64_t aend)
{
	unsigned s1 =
	        atomic_load_explicit(&hmr__memtype_seq, memory_order_acquire);
	size_t h = hmr__memtype_host_slot(addr);
	uintptr_t end;

	if ((s1 & 1) || atomic_load_explicit(&hmr__memtype_host_start[h],
	                                     memory_order_relaxed) != addr)
		return false;
	end = atomic_load_explicit(&hmr__memtype_host_end[h],
	                           memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&hmr__memtype_seq, memory_order_relaxed) ==
	               s1 &&
	       aend <= end;
}
void hmr__memtype_insert(uintptr_t start, uintptr_t end,
                         const struct hmr_hmem_info *info);
/* An allocation or mapping ended: forget everything in [start, end). */
void hmr__memtype_remove(uintptr_t start, uintptr_t end);
/* The allocation at `p` ended (its size unknown): every entry holding p
 * forgotten.  The last byte of the address space holds no allocation. */
static inline void hmr__memtype_remove_at(uintptr_t p)
{
	uint64_t end;

	if (hmr__range_end(p, 1, &end))
		hmr__memtype_remove(p, (uintptr_t)end);
}

/*
 * Host answers go through these two (the rules: memtype.c).  Take the
 * ticket before asking the backends; the insert then remembers
 * [start, end) as host memory only if no monitor event ran since, the
 * monitor is one that reports before the kernel acts, and every page is
 * mapped readable.  The first insert starts the monitor (lazily).
 */
#define HMR_MEMTYPE_NO_TICKET UINT64_MAX
uint64_t hmr__memtype_host_ticket(void);
void hmr__memtype_insert_host(uintptr_t start, uintptr_t end, uint64_t ticket);

/* hostmap.c: every page of [start, end) is mapped and readable now. */
bool hmr__hmem_host_accessible(uintptr_t start, uintptr_t end);

#endif /* HMR_HMEM_HMEM_H */
