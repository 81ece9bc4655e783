/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* no_verbs.c: the verbs kind in a build without rdma-core headers. */
#include <stdio.h>

#include "core/domain.h"

static int nv_probe(char *why, size_t why_len)
{
	snprintf(why, why_len,
	         "hmr was built without rdma-core (install libibverbs-dev "
	         "and rebuild)");
	return -FI_ENOSYS;
}

static int nv_open(struct hmr_domain *d)
{
	(void)d;
	return -FI_ENOSYS;
}

/* reg, dereg and close are the stubs' (domain.c fills them): open never
 * succeeds, so they are never reached. */
const struct hmr_registrar_ops hmr__verbs_registrar = {
        .probe = nv_probe,
        .open = nv_open,
};

struct ibv_mr *hmr_verbs_mr(struct fid_mr *mr)
{
	(void)mr;
	return NULL;
}

struct ibv_pd *hmr_verbs_pd(struct fid_domain *domain)
{
	(void)domain;
	return NULL;
}
