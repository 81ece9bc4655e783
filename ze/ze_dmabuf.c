/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ze_dmabuf.c: dma-buf export of Level Zero memory, and whose fd it is. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/oserr.h"
#include "base/range.h"
#include "ze/ze.h"

/*
 * Level Zero exports a dma-buf through zeMemGetAllocProperties with a
 * chained ze_external_memory_export_fd_t.  API 1.4 does not say who owns
 * the fd, and drivers differ:
 *
 *   - compute-runtime today keeps one fd per allocation, returns it again
 *     at every export and closes it in zeMemFree.  A caller that closes
 *     it breaks the next export of that allocation (the driver hands out
 *     a number that is gone, or that names another file by then).
 *   - compute-runtime before that made a new fd at every export and
 *     never closed it: unless the caller does, each export leaks one.
 *
 * hmr asks twice and compares.  The same number twice is the driver's
 * fd (a new one could not get the number of an fd still open).  Two
 * numbers are two new fds the driver made for this caller; API 1.4 has
 * no call to give them back, so close() is the only release, and hmr
 * closes both.  Whatever the case, what hmr hands out is its own dup,
 * which dmabuf_put closes, and a driver's fd is never closed.
 */
static int export_once(const struct hmr_ze_owner *o, const void *base, int *fd)
{
	struct hmr_ze_external_memory_export_fd ex = {
	        .stype = HMR_ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_FD,
	        .flags = HMR_ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF,
	        .fd = -1,
	};
	struct hmr_ze_memory_allocation_properties props = {
	        .stype = HMR_ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES,
	        .pNext = &ex,
	};
	hmr_ze_device_handle_t dev = NULL;
	hmr_ze_result_t r;
	char name[64];

	r = hmr__ze.zeMemGetAllocProperties(o->drv->ctx, base, &props, &dev);
	if (r == HMR_ZE_RESULT_ERROR_UNSUPPORTED_FEATURE ||
	    r == HMR_ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION) {
		/* Expected where the device or memory type cannot export. */
		hmr_info("ze driver %u cannot export %p as a dma-buf: %s",
		         o->index, base,
		         hmr__ze_result_name(r, name, sizeof(name)));
		return -FI_EOPNOTSUPP;
	}
	if (r)
		return hmr__ze_check("zeMemGetAllocProperties", r);
	if (ex.fd < 0) {
		hmr_warn("ze driver %u exported %p as fd %d", o->index, base,
		         ex.fd);
		return -FI_EIO;
	}
	*fd = ex.fd;
	return 0;
}

static int export_owned(const struct hmr_ze_owner *o, const void *base, int *fd)
{
	int first, second, ret;

	ret = export_once(o, base, &first);
	if (ret)
		return ret;
	ret = export_once(o, base, &second);
	if (ret) {
		/* Whose `first` is cannot be told: leaving it open leaks at
		 * worst one fd; closing it could break the driver. */
		hmr_warn("ze driver %u: second export failed; fd %d is left "
		         "to the driver",
		         o->index, first);
		return ret;
	}
	*fd = fcntl(first, F_DUPFD_CLOEXEC, 0);
	ret = *fd < 0 ? hmr__os_error(errno) : 0;
	if (second != first) { /* Both are this caller's. */
		close(second);
		close(first);
	}
	if (ret)
		hmr_warn("dup of the dma-buf fd %d: %s", first,
		         hmr_strerror(ret));
	return ret;
}

/* The fd covers the whole allocation, from its base (offset 0 is the
 * base whatever pointer is asked about): *offset = ptr - base. */
int hmr__ze_dmabuf_get(const void *ptr, size_t len, uint64_t flags, int *fd,
                       uint64_t *offset)
{
	struct hmr_hmem_info info;
	struct hmr_ze_owner o;
	int ret = hmr__ze_query(ptr, &o, &info);

	(void)flags; /* No PCIe mapping choice in Level Zero. */
	if (ret)
		return ret == -FI_ENOENT ? -FI_EINVAL : ret;
	if (!hmr__range_inside((uintptr_t)ptr, len, info.base, info.size)) {
		hmr_warn("[%p, +%zu) runs past its ze allocation [%#llx, "
		         "+%llu): a dma-buf covers one allocation",
		         ptr, len, (unsigned long long)info.base,
		         (unsigned long long)info.size);
		return -FI_EINVAL;
	}
	ret = export_owned(&o, (const void *)(uintptr_t)info.base, fd);
	if (ret)
		return ret;
	*offset = (uintptr_t)ptr - info.base;
	return 0;
}

int hmr__ze_dmabuf_put(int fd)
{
	return close(fd) == 0 ? 0 : -FI_EBADF;
}
