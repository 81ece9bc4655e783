/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* system.c: the host backend: plain memory, no runtime. */
#include <stdlib.h>
#include <string.h>

#include "base/host.h"
#include "base/range.h"

#include "hmem/hmem.h"

static int sys_init(char *why, size_t why_len)
{
	(void)why;
	(void)why_len;
	return 0;
}

static int sys_query(const void *ptr, size_t len, struct hmr_hmem_info *info)
{
	(void)ptr;
	(void)len;
	memset(info, 0, sizeof(*info));
	info->iface = FI_HMEM_SYSTEM;
	return 0;
}

static int sys_copy(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return 0;
}

static int sys_alloc(uint64_t device, size_t len, void **ptr)
{
	size_t page = hmr__host_page_size();
	uint64_t rounded;

	(void)device;
	if (!hmr__align_up(len, page, &rounded))
		return -FI_EINVAL;
	*ptr = aligned_alloc(page, (size_t)rounded);
	return *ptr ? 0 : -FI_ENOMEM;
}

static int sys_free(void *ptr)
{
	free(ptr);
	return 0;
}

const struct hmr_backend_ops hmr__system_backend = {
        .iface = FI_HMEM_SYSTEM,
        .init = sys_init,
        .query = sys_query,
        .copy_to = sys_copy,
        .copy_from = sys_copy,
        .alloc = sys_alloc,
        .free = sys_free,
};
