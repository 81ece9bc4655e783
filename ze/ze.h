/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ze.h: what the Level Zero backend's files share beyond the vendor ABI. */
#ifndef HMR_ZE_ZE_H
#define HMR_ZE_ZE_H

#include "hmem/hmem.h"
#include "ze/ze_api.h"

/* Which driver allocated a pointer, and what it said about it. */
struct hmr_ze_owner {
	uint32_t index; /* In zeDriverGet's order. */
	struct hmr_ze_driver *drv;
	struct hmr_ze_memory_allocation_properties props;
	hmr_ze_device_handle_t device_handle; /* NULL: no device. */
};

/* ze.c: the owner of ptr (-FI_ENOENT: no driver's memory), and with it
 * the hmem description (device number, base, size, buffer id, flags). */
int hmr__ze_owner(const void *ptr, struct hmr_ze_owner *o);
int hmr__ze_query(const void *ptr, struct hmr_ze_owner *o,
                  struct hmr_hmem_info *info);

/* ze_dmabuf.c: the backend's dmabuf_get and dmabuf_put slots. */
int hmr__ze_dmabuf_get(const void *ptr, size_t len, uint64_t flags, int *fd,
                       uint64_t *offset);
int hmr__ze_dmabuf_put(int fd);

/* ze_info.c: the describe, device, alloc and free slots. */
int hmr__ze_describe(struct hmr_hmem_backend_info *info);
int hmr__ze_device(uint32_t index, struct hmr_hmem_device_info *info);
int hmr__ze_alloc(uint64_t device, size_t len, void **ptr);
int hmr__ze_free(void *ptr);

#endif /* HMR_ZE_ZE_H */
