/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* hmem.h: the backend interface and the classification entry points. */
#ifndef HMR_HMEM_HMEM_H
#define HMR_HMEM_HMEM_H

#include <stdbool.h>

#include <hmr/hmr.h>

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
void hmr__memtype_insert(uintptr_t start, uintptr_t end,
                         const struct hmr_hmem_info *info);
/* An allocation or mapping ended: forget everything in [start, end). */
void hmr__memtype_remove(uintptr_t start, uintptr_t end);

#endif /* HMR_HMEM_HMEM_H */
