/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* mr_check.h: argument checks shared by every registration call. */
#ifndef HMR_CORE_MR_CHECK_H
#define HMR_CORE_MR_CHECK_H

#include "core/domain.h"

/* Checks flags, access, offset, iovs or dmabuf, hmem_data, page_size and
 * auth key against the domain; logs and returns -FI_E* on the first
 * violation (see doc/software-domain.md). */
int hmr__mr_check(struct hmr_domain *d, struct hmr_mr_req *req);

/* [v] lies inside one iov of mr (an empty or wrapping v never does). */
bool hmr__mr_covers(const struct hmr_mr *mr, const struct iovec *v);

/* Checks a sub-MR request against its base (takes the base's shard lock). */
int hmr__mr_check_sub(struct hmr_domain *d, const struct hmr_mr_req *req);

#endif /* HMR_CORE_MR_CHECK_H */
