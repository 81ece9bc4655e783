/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* bench_libfabric.c: libfabric's domains (verbs, shm, tcp) for hmr_bench. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "bench.h"

/*
 * Only opening and closing need libfabric's own calls; the domain it
 * returns is driven with the same inline fi_mr_reg/fi_close as hmr's (the
 * layouts are the same), from bench_verbs.c.  Its registration cache is
 * turned off (FI_MR_CACHE_MAX_COUNT=0) so that both sides register for
 * real every time.
 */
int bench_lf_open(const char *nic, void **domain, void **fabric, char *why,
                  size_t why_len)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	setenv("FI_MR_CACHE_MAX_COUNT", "0", 1);
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA;
	hints->fabric_attr->prov_name = strdup("verbs");
	hints->domain_attr->name = strdup(nic);
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
	                              FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (ret) {
		snprintf(why, why_len, "fi_getinfo(verbs, %s): %s", nic,
		         fi_strerror(-ret));
		return ret;
	}
	ret = fi_fabric(info->fabric_attr, &fab, NULL);
	if (!ret) {
		ret = fi_domain(fab, info, &dom, NULL);
		if (ret)
			fi_close(&fab->fid);
	}
	fi_freeinfo(info);
	if (ret) {
		snprintf(why, why_len, "fi_fabric/fi_domain: %s",
		         fi_strerror(-ret));
		return ret;
	}
	*domain = dom;
	*fabric = fab;
	return 0;
}

int bench_lf_open_prov(const char *prov, void **domain, void **fabric,
                       char *why, size_t why_len)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	/* tcp is a MSG provider, shm an RDM one; both take requested keys
	 * (mr_mode 0, FI_MR_SCALABLE's meaning), as hmr's software domain. */
	hints->ep_attr->type = strcmp(prov, "tcp") ? FI_EP_RDM : FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA;
	hints->fabric_attr->prov_name = strdup(prov);
	hints->domain_attr->mr_mode = 0;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (ret) {
		snprintf(why, why_len, "fi_getinfo(%s): %s", prov,
		         fi_strerror(-ret));
		return ret;
	}
	ret = fi_fabric(info->fabric_attr, &fab, NULL);
	if (!ret) {
		ret = fi_domain(fab, info, &dom, NULL);
		if (ret)
			fi_close(&fab->fid);
	}
	fi_freeinfo(info);
	if (ret) {
		snprintf(why, why_len, "%s: fi_fabric/fi_domain: %s", prov,
		         fi_strerror(-ret));
		return ret;
	}
	*domain = dom;
	*fabric = fab;
	return 0;
}

const char *bench_lf_version(void)
{
	static char v[32];

	snprintf(v, sizeof(v), "libfabric %u.%u", FI_MAJOR(fi_version()),
	         FI_MINOR(fi_version()));
	return v;
}

void bench_lf_close(void *domain, void *fabric)
{
	fi_close(&((struct fid_domain *)domain)->fid);
	fi_close(&((struct fid_fabric *)fabric)->fid);
}
