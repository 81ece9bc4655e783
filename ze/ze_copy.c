/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ze_copy.c: copies through one immediate command list per device. */
#include <stdlib.h>

#include <hmr/hmr.h>

#include "base/log.h"
#include "ze/ze_api.h"

/*
 * The queue group to copy on: the first copy-only one (a blitter engine,
 * which leaves the compute engines alone), else the first that copies at
 * all, else group 0.
 */
static int copy_ordinal(struct hmr_ze_device *dev, uint32_t *ordinal)
{
	struct hmr_ze_command_queue_group_properties *p;
	uint32_t n = 0, i, flags;
	bool copies = false, copy_only = false;
	int ret;

	ret = HMR_ZE(zeDeviceGetCommandQueueGroupProperties, dev->handle, &n,
	             NULL);
	if (ret || !n) {
		*ordinal = 0;
		return ret;
	}
	p = calloc(n, sizeof(*p));
	if (!p)
		return -FI_ENOMEM;
	for (i = 0; i < n; i++)
		p[i].stype =
		        HMR_ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
	ret = HMR_ZE(zeDeviceGetCommandQueueGroupProperties, dev->handle, &n,
	             p);
	*ordinal = 0;
	for (i = 0; !ret && i < n && !copy_only; i++) {
		flags = p[i].flags;
		if (!(flags & HMR_ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY))
			continue;
		copy_only = !(flags &
		              HMR_ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE);
		if (copy_only ||
		    !copies) /* The first copy-only, else the first. */
			*ordinal = i;
		copies = true;
	}
	free(p);
	return ret;
}

/* The device's list, created at its first use; under dev->lock. */
static int ensure_list(struct hmr_ze_driver *drv, struct hmr_ze_device *dev)
{
	struct hmr_ze_command_queue_desc desc = {
	        .stype = HMR_ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
	        .mode = HMR_ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
	        .priority = HMR_ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
	};
	hmr_ze_command_list_handle_t list = NULL;
	int ret;

	if (dev->list)
		return 0;
	ret = copy_ordinal(dev, &desc.ordinal);
	if (!ret)
		ret = HMR_ZE(zeCommandListCreateImmediate, drv->ctx,
		             dev->handle, &desc, &list);
	if (ret)
		return ret; /* Tried again at the next copy. */
	dev->list = list;
	return 0;
}

/*
 * A synchronous immediate list has finished the copy when the append
 * returns, so the caller's buffer may be reused at once.  Appends to one
 * list are serialised: Level Zero command lists are not thread-safe.
 */
int hmr__ze_copy(struct hmr_ze_driver *drv, struct hmr_ze_device *dev,
                 void *dst, const void *src, size_t len)
{
	int ret;

	pthread_mutex_lock(&dev->lock);
	ret = ensure_list(drv, dev);
	if (!ret)
		ret = HMR_ZE(zeCommandListAppendMemoryCopy, dev->list, dst, src,
		             len, NULL, 0, NULL);
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

void hmr__ze_copy_fini(struct hmr_ze_device *dev)
{
	if (dev->list)
		HMR_ZE(zeCommandListDestroy, dev->list);
	dev->list = NULL;
}
