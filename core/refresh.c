/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* refresh.c: fi_mr_refresh, as fi_mr(3) rules it per mr_mode. */
#include "core/domain.h"
#include "base/host.h"
#include "base/log.h"
#include "core/mr_check.h"

int hmr__mr_refresh(struct hmr_mr *mr, const struct fi_mr_modify *modify)
{
	struct hmr_domain *d = mr->domain;
	const struct iovec *iov = modify->attr.mr_iov;
	size_t count = modify->attr.iov_count, i;
	bool notify = d->mr_mode & FI_MR_MMU_NOTIFY;
	int ret;

	if (modify->flags) {
		hmr_warn("fi_mr_refresh: flags must be 0");
		return -FI_EBADFLAGS;
	}
	/* MMU_NOTIFY takes precedence over ALLOCATED unset (fi_mr(3)). */
	if (!notify && hmr__allocated(d)) {
		hmr_info("fi_mr_refresh needs FI_MR_MMU_NOTIFY or "
		         "FI_MR_ALLOCATED unset");
		return -FI_ENOSYS;
	}
	if (!iov || !count) {
		iov = mr->iov;
		count = mr->iov_count;
	}
	for (i = 0; i < count; i++) {
		if (!hmr__mr_covers(mr, &iov[i])) {
			hmr_warn("fi_mr_refresh: iov[%zu] is empty, wraps or "
			         "is outside the MR",
			         i);
			return -FI_EINVAL;
		}
	}
	/* Peers fail while an MMU_NOTIFY refresh runs (hmr_mr_access sees
	 * `refreshing`); with ALLOCATED unset the MR stays enabled. */
	if (notify)
		atomic_fetch_add(&mr->refreshing, 1);
	ret = mr->iface == FI_HMEM_SYSTEM ? hmr__host_range_mapped(iov, count)
	                                  : 0;
	if (notify)
		atomic_fetch_sub(&mr->refreshing, 1);
	if (ret)
		hmr_warn("fi_mr_refresh: a range is not backed by pages");
	return ret;
}
