/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* info.c: what a backend is and has, and its allocations for self-checks. */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "hmem/hmem.h"

/* Backends fill a full struct of this library's size; the caller gets
 * what fits in the size it gave. */
static int present(enum fi_hmem_iface iface, const struct hmr_backend_ops **b)
{
	if ((unsigned)iface > FI_HMEM_SYNAPSEAI)
		return -FI_EINVAL;
	*b = hmr__hmem_backend(iface);
	return *b ? 0 : -FI_ENOSYS;
}

/* "a,b" from the backend's NULL-terminated list of module names. */
static void peermem_names(const struct hmr_backend_ops *b, char *buf,
                          size_t len)
{
	const char *const *m;
	size_t n = 0;

	buf[0] = '\0';
	for (m = b->peermem_modules; m && *m && n < len; m++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "",
		                      *m);
}

/* Copy what fits of `full` (this library's size, `ours`) into `out`, a
 * caller's struct that starts with its own size; the size stays. */
static void give(void *out, const void *full, size_t ours)
{
	size_t caller = *(const size_t *)out;
	size_t n = (caller < ours ? caller : ours) - sizeof(size_t);

	memcpy((char *)out + sizeof(size_t),
	       (const char *)full + sizeof(size_t), n);
}

int hmr_hmem_backend_info(enum fi_hmem_iface iface,
                          struct hmr_hmem_backend_info *info)
{
	struct hmr_hmem_backend_info full;
	const struct hmr_backend_ops *b;
	int ret;

	if (!info || info->size < sizeof(info->size))
		return -FI_EINVAL;
	ret = present(iface, &b);
	if (ret)
		return ret;
	memset(&full, 0, sizeof(full));
	full.size = sizeof(full);
	ret = iface == FI_HMEM_SYSTEM ? 0 : b->describe(&full);
	if (ret)
		return ret;
	peermem_names(b, full.peermem, sizeof(full.peermem));
	give(info, &full, sizeof(full));
	return 0;
}

int hmr_hmem_device_info(enum fi_hmem_iface iface, uint32_t index,
                         struct hmr_hmem_device_info *info)
{
	struct hmr_hmem_device_info full;
	const struct hmr_backend_ops *b;
	int ret;

	if (!info || info->size < sizeof(info->size))
		return -FI_EINVAL;
	ret = present(iface, &b);
	if (ret)
		return ret;
	if (iface == FI_HMEM_SYSTEM)
		return -FI_ENOENT; /* Host memory has no devices. */
	memset(&full, 0, sizeof(full));
	full.size = sizeof(full);
	ret = b->device(index, &full);
	if (ret)
		return ret;
	give(info, &full, sizeof(full));
	return 0;
}

int hmr_hmem_alloc(enum fi_hmem_iface iface, uint64_t device, size_t len,
                   void **ptr)
{
	const struct hmr_backend_ops *b;
	int ret;

	if (!ptr || !len)
		return -FI_EINVAL;
	*ptr = NULL;
	ret = present(iface, &b);
	return ret ? ret : b->alloc(device, len, ptr);
}

int hmr_hmem_free(enum fi_hmem_iface iface, void *ptr)
{
	const struct hmr_backend_ops *b;
	int ret;

	if (!ptr)
		return -FI_EINVAL;
	ret = present(iface, &b);
	return ret ? ret : b->free(ptr);
}
