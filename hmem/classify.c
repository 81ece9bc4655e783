/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* classify.c: what memory a pointer is, and the public hmem calls. */
#include <stdatomic.h>
#include <string.h>

#include "base/range.h"
#include "hmem/hmem.h"
#include "base/log.h"

#define IFACES (FI_HMEM_SYNAPSEAI + 1)

static void host_info(struct hmr_hmem_info *info)
{
	memset(info, 0, sizeof(*info));
	info->iface = FI_HMEM_SYSTEM;
}

/* Ask the present device backends, in iface order. */
static int ask_backends(const void *ptr, size_t len, struct hmr_hmem_info *info)
{
	const struct hmr_backend_ops *b;
	int i, ret;

	for (i = FI_HMEM_SYSTEM + 1; i < IFACES; i++) {
		b = hmr__hmem_backend((enum fi_hmem_iface)i);
		if (!b)
			continue;
		ret = b->query(ptr, len, info);
		if (ret == 0)
			return 0;
		if (ret != -FI_ENOENT)
			return ret;
	}
	host_info(info);
	return 0;
}

/*
 * Host answers come from the memtype cache without any vendor call, for
 * as long as the cache may keep them (memtype.c: a monitor event ends
 * them; unmapped or unreadable ranges are never kept).  A device answer is
 * always fresh from its backend, since buffer ids and the allocation may have
 * changed since it was cached; the cache then only saves asking the other
 * backends.
 *
 * Classify [ptr, ptr + len): the memtype cache first, then the present
 * backends in iface order; remembers the answer.  Host memory is
 * FI_HMEM_SYSTEM with the other fields 0.
 */
static int classify(const void *ptr, size_t len, struct hmr_hmem_info *info)
{
	const struct hmr_backend_ops *b;
	uintptr_t a = (uintptr_t)ptr;
	uint64_t end, dev_end, ticket;
	int ret;

	if (!hmr__range_end(a, len, &end)) {
		hmr_warn("[%p, +%zu) wraps", ptr, len);
		return -FI_EINVAL;
	}
	/* O(1) while no backend has a device: everything is host. */
	if (!hmr__hmem_any_device()) {
		host_info(info);
		return 0;
	}
	if (hmr__memtype_lookup(a, len, info)) {
		if (info->iface == FI_HMEM_SYSTEM)
			return 0;
		b = hmr__hmem_backend(info->iface);
		ret = b ? b->query(ptr, len, info) : -FI_ENOENT;
		if (ret != -FI_ENOENT)
			return ret;
		/* Freed since: forget it and ask everyone. */
		hmr__memtype_remove(a, end);
	}
	/* Before the backends answer: an unmap after this voids the answer
	 * (memtype.c). */
	ticket = hmr__memtype_host_ticket();
	ret = ask_backends(ptr, len, info);
	if (ret)
		return ret;
	if (info->iface != FI_HMEM_SYSTEM) {
		if (hmr__range_end(info->base, info->size, &dev_end) &&
		    info->size)
			hmr__memtype_insert(info->base, dev_end, info);
	} else {
		hmr__memtype_insert_host(a, end, ticket);
	}
	return 0;
}

int hmr_hmem_query(const void *ptr, size_t len, struct hmr_hmem_info *info)
{
	uint64_t end;

	if (!ptr || !info || !len || !hmr__range_end((uintptr_t)ptr, len, &end))
		return -FI_EINVAL;
	/* Known host memory asked about by its start: no call at all. */
	if (hmr__memtype_host_hit((uintptr_t)ptr, end)) {
		host_info(info);
		return 0;
	}
	return classify(ptr, len, info);
}

/* The backend owning ptr, for the calls that act on device memory. */
static int owner(const void *ptr, size_t len, const struct hmr_backend_ops **b)
{
	struct hmr_hmem_info info;
	int ret = classify(ptr, len ? len : 1, &info);

	if (ret)
		return ret;
	*b = hmr__hmem_backend(info.iface);
	return *b ? 0 : -FI_ENOSYS;
}

/*
 * The backend whose memory a dma-buf call names.  Host memory has no
 * dma-buf to give: the call exists, the argument is wrong (-FI_EINVAL),
 * where the system backend's empty slot would answer -FI_ENOSYS, "not
 * implemented".  A runtime's host memory it cannot export is its
 * backend's to refuse (-FI_EOPNOTSUPP).
 */
static int exporter(const void *ptr, size_t len, const char *call,
                    const struct hmr_backend_ops **b)
{
	int ret = owner(ptr, len, b);

	if (ret || (*b)->iface != FI_HMEM_SYSTEM)
		return ret;
	hmr_warn("%s: [%p, +%zu) is host memory: only device memory is "
	         "exported as a dma-buf (register host memory as it is)",
	         call, ptr, len);
	return -FI_EINVAL;
}

/*
 * Which backend exported each open dma-buf fd (iface + 1; 0: none), so
 * that hmr_hmem_dmabuf_put releases it through that backend without
 * classifying the pointer again: a classification that fails at release
 * (the runtime erred, the memory was freed) must not leak the fd.  fds
 * past the table are released through the pointer's owner, as before.
 */
#define FD_TABLE 65536
static _Atomic unsigned char fd_owner[FD_TABLE];

int hmr_hmem_dmabuf_get(const void *ptr, size_t len, uint64_t flags, int *fd,
                        uint64_t *offset)
{
	const struct hmr_backend_ops *b;
	int ret;

	if (!ptr || !len || !fd || !offset || (flags & ~HMR_DMABUF_PCIE))
		return -FI_EINVAL;
	ret = exporter(ptr, len, "hmr_hmem_dmabuf_get", &b);
	if (ret)
		return ret;
	ret = b->dmabuf_get(ptr, len, flags, fd, offset);
	if (!ret && *fd >= 0 && *fd < FD_TABLE)
		atomic_store(&fd_owner[*fd], (unsigned char)(b->iface + 1));
	return ret;
}

int hmr_hmem_dmabuf_put(const void *ptr, int fd)
{
	const struct hmr_backend_ops *b;
	unsigned char iface = 0;
	int ret;

	if (!ptr || fd < 0)
		return -FI_EINVAL;
	if (fd < FD_TABLE)
		iface = atomic_exchange(&fd_owner[fd], 0);
	if (iface) {
		b = hmr__hmem_backend((enum fi_hmem_iface)(iface - 1));
		return b ? b->dmabuf_put(fd) : -FI_ENOSYS;
	}
	ret = exporter(ptr, 1, "hmr_hmem_dmabuf_put", &b);
	if (ret)
		return ret;
	return b->dmabuf_put(fd);
}

/* The backend that page-locks host memory for `iface`. */
static int locking_backend(enum fi_hmem_iface iface, void *ptr, size_t len,
                           const struct hmr_backend_ops **b, uint64_t *end)
{
	if (!ptr || iface == FI_HMEM_SYSTEM ||
	    !hmr__range_end((uintptr_t)ptr, len, end) || !len)
		return -FI_EINVAL;
	*b = hmr__hmem_backend(iface);
	return *b ? 0 : -FI_ENOSYS;
}

/* The memtype cache knew [ptr, ptr + len) as host memory: forget it, so
 * the next classification asks the backends (both ways). */
int hmr_hmem_host_register(enum fi_hmem_iface iface, void *ptr, size_t len)
{
	const struct hmr_backend_ops *b;
	uint64_t end;
	int ret = locking_backend(iface, ptr, len, &b, &end);

	if (!ret)
		ret = b->host_register(ptr, len);
	if (!ret)
		hmr__memtype_remove((uintptr_t)ptr, end);
	return ret;
}

int hmr_hmem_host_unregister(enum fi_hmem_iface iface, void *ptr, size_t len)
{
	const struct hmr_backend_ops *b;
	uint64_t end;
	int ret = locking_backend(iface, ptr, len, &b, &end);

	if (ret)
		return ret;
	ret = b->host_unregister(ptr);
	hmr__memtype_remove((uintptr_t)ptr, end);
	return ret;
}

int hmr_hmem_ipc_get(const void *ptr, void *handle, size_t *handle_size)
{
	const struct hmr_backend_ops *b;
	int ret;

	if (!ptr || !handle_size || (!handle && *handle_size))
		return -FI_EINVAL;
	ret = owner(ptr, 1, &b);
	return ret ? ret : b->ipc_get(ptr, handle, handle_size);
}

int hmr_hmem_ipc_open(enum fi_hmem_iface iface, uint64_t device,
                      const void *handle, size_t handle_size, void **ptr)
{
	const struct hmr_backend_ops *b = hmr__hmem_backend(iface);
	struct hmr_hmem_info info;
	uint64_t end;
	int ret;

	if (!handle || !ptr || iface == FI_HMEM_SYSTEM)
		return -FI_EINVAL;
	if (!b)
		return -FI_ENOSYS;
	ret = b->ipc_open(device, handle, handle_size, ptr);
	if (ret)
		return ret;
	/* The mapping may sit where the cache knew something else: learn
	 * it now (the insert replaces what overlaps), or forget its start. */
	if (!b->query(*ptr, 1, &info) && info.size &&
	    hmr__range_end(info.base, info.size, &end))
		hmr__memtype_insert(info.base, end, &info);
	else if (hmr__range_end((uintptr_t)*ptr, 1, &end))
		hmr__memtype_remove((uintptr_t)*ptr, end);
	return 0;
}

int hmr_hmem_ipc_close(enum fi_hmem_iface iface, void *ptr)
{
	const struct hmr_backend_ops *b = hmr__hmem_backend(iface);
	uint64_t end;

	if (!ptr || iface == FI_HMEM_SYSTEM)
		return -FI_EINVAL;
	if (!b)
		return -FI_ENOSYS;
	/* Whatever the close answers, the range it held is not known. */
	if (hmr__range_end((uintptr_t)ptr, 1, &end))
		hmr__memtype_remove((uintptr_t)ptr, end);
	return b->ipc_close(ptr);
}

/* The backend owning `dev`, for a copy of len bytes (0 when len is 0). */
static int copy_owner(const void *dev, const void *host, size_t len,
                      const struct hmr_backend_ops **b)
{
	if (!dev || !host)
		return -FI_EINVAL;
	*b = NULL;
	return len ? owner(dev, len, b) : 0;
}

int hmr_hmem_copy_to(void *dev, const void *host, size_t len)
{
	const struct hmr_backend_ops *b;
	int ret = copy_owner(dev, host, len, &b);

	return ret || !b ? ret : b->copy_to(dev, host, len);
}

int hmr_hmem_copy_from(void *host, const void *dev, size_t len)
{
	const struct hmr_backend_ops *b;
	int ret = copy_owner(dev, host, len, &b);

	return ret || !b ? ret : b->copy_from(host, dev, len);
}

static int check_hint(enum fi_hmem_iface hint, uint64_t device_hint,
                      uint64_t flags, const struct hmr_hmem_info *info)
{
	char why[192];

	if (hmr_hmem_status(hint, why, sizeof(why))) {
		hmr_warn("iface %s: backend absent, because %s",
		         hmr_hmem_iface_name(hint), why);
		return -FI_ENOSYS;
	}
	if (info->iface != hint) {
		hmr_warn("iface %s given, but the memory is %s",
		         hmr_hmem_iface_name(hint),
		         hmr_hmem_iface_name(info->iface));
		return -FI_EINVAL;
	}
	/* FI_HMEM_HOST_ALLOC: "the field device is ignored". */
	if (!(flags & FI_HMEM_HOST_ALLOC) &&
	    !(info->flags &
	      (HMR_HMEM_HOST_ALLOC | HMR_HMEM_DEVICE_UNCHECKED)) &&
	    info->device != device_hint) {
		hmr_warn("%s device %llu given, but the memory is on device "
		         "%llu",
		         hmr_hmem_iface_name(hint),
		         (unsigned long long)device_hint,
		         (unsigned long long)info->device);
		return -FI_EINVAL;
	}
	return 0;
}

int hmr__hmem_resolve(enum fi_hmem_iface hint, uint64_t device_hint,
                      const struct iovec *iov, size_t count, uint64_t flags,
                      struct hmr_hmem_info *info)
{
	struct hmr_hmem_info other;
	size_t i;
	int ret;

	ret = classify(iov[0].iov_base, iov[0].iov_len, info);
	if (!ret && hint != FI_HMEM_SYSTEM)
		ret = check_hint(hint, device_hint, flags, info);
	for (i = 1; !ret && i < count; i++) {
		ret = classify(iov[i].iov_base, iov[i].iov_len, &other);
		if (!ret && (other.iface != info->iface ||
		             other.device != info->device)) {
			hmr_warn("iov[%zu] is %s memory of device %llu, iov[0] "
			         "%s of device %llu",
			         i, hmr_hmem_iface_name(other.iface),
			         (unsigned long long)other.device,
			         hmr_hmem_iface_name(info->iface),
			         (unsigned long long)info->device);
			ret = -FI_EINVAL;
		}
	}
	if (ret)
		return ret;
	if ((flags & FI_HMEM_DEVICE_ONLY) &&
	    !(info->flags & HMR_HMEM_DEVICE_ONLY)) {
		hmr_warn("FI_HMEM_DEVICE_ONLY, but the memory is %s%s",
		         hmr_hmem_iface_name(info->iface),
		         info->iface == FI_HMEM_SYSTEM ? ""
		                                       : " (not device-only)");
		return -FI_EINVAL;
	}
	if ((flags & FI_HMEM_HOST_ALLOC) &&
	    !(info->flags & HMR_HMEM_HOST_ALLOC)) {
		hmr_warn("FI_HMEM_HOST_ALLOC, but the memory is not a %s host "
		         "allocation",
		         hmr_hmem_iface_name(info->iface));
		return -FI_EINVAL;
	}
	return 0;
}
