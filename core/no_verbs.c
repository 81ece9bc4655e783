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

/* The NIC queries (verbs/verbs_info.c in a build with rdma-core). */
int hmr_verbs_device_count(uint32_t *count, char *why, size_t why_len)
{
	if (!count)
		return -FI_EINVAL;
	*count = 0;
	if (why && why_len)
		nv_probe(why, why_len);
	return -FI_ENOSYS;
}

int hmr_verbs_device_info(uint32_t index, struct hmr_verbs_device_info *info)
{
	(void)index;
	return info ? -FI_ENOSYS : -FI_EINVAL;
}

int hmr_verbs_reg_path(enum fi_hmem_iface iface, uint64_t device, uint32_t nic,
                       enum hmr_verbs_path *path, char *why, size_t why_len)
{
	(void)iface;
	(void)device;
	(void)nic;
	if (!path)
		return -FI_EINVAL;
	*path = HMR_VERBS_PATH_NONE;
	return hmr_verbs_device_count(&nic, why, why_len);
}
