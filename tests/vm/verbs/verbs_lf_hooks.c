/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_lf_hooks.c: hmr's memory hooks and libfabric's in one process. */
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <hmr/hmr.h>

#include "vm_case.h"

/*
 * libfabric's verbs provider keeps a registration cache of its own, kept
 * correct by its own memhooks, which patch the same libc functions as
 * hmr's (../shared/lab/peer-caches.md: libfabric's patch silently turned
 * UCX's off).  Here both caches run on rxe0 in one process, the hooks
 * installed in either order (argv[1]: "hmr-first" or "lf-first"), and
 * each must still hear an munmap: after unmapping a registered buffer and
 * mapping new memory at its address, neither cache hands out its old
 * registration (libfabric's key changes; hmr counts an invalidation and
 * registers anew).
 */
#define LEN 65536

static struct fid_domain *hmr_dom, *lf_dom;
static struct fid_fabric *lf_fab;

static int open_lf(void)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA;
	hints->fabric_attr->prov_name = strdup("verbs");
	hints->domain_attr->name = strdup("rxe0");
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
	                              FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (ret)
		return ret;
	ret = fi_fabric(info->fabric_attr, &lf_fab, NULL);
	if (!ret && (ret = fi_domain(lf_fab, info, &lf_dom, NULL)))
		fi_close(&lf_fab->fid);
	fi_freeinfo(info);
	return ret;
}

static int open_hmr(void)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = "rxe0";
	return hmr_domain_open(&attr, &hmr_dom);
}

/* Register and close once, so the cache holds an idle registration (and
 * its monitor is installed); the registration's identity goes to *id. */
static int touch(struct fid_domain *d, void *buf, uint64_t *id)
{
	struct fid_mr *mr;
	int ret = fi_mr_reg(d, buf, LEN, FI_SEND | FI_RECV, 0, 0, 0, &mr, NULL);

	if (ret)
		return ret;
	*id = d == hmr_dom ? (uint64_t)(uintptr_t)hmr_verbs_mr(mr)
	                   : fi_mr_key(mr);
	return fi_close(&mr->fid);
}

static struct hmr_mr_cache_stats stats(void)
{
	struct hmr_mr_cache_stats st = HMR_MR_CACHE_STATS_INIT;

	hmr_mr_cache_stats(hmr_dom, &st);
	return st;
}

int main(int argc, char **argv)
{
	int hmr_first = argc > 1 && !strcmp(argv[1], "hmr-first");
	const char *order = hmr_first ? "hmr_first" : "lf_first";
	char name[96];
	uint64_t h1 = 0, h2 = 0, h3 = 0, l1 = 0, l2 = 0, l3 = 0;
	struct hmr_mr_cache_stats st0, st1;
	char *p, *q;
	int ret;

	/* Both libraries read FI_MR_CACHE_MONITOR: memhooks for both. */
	setenv("FI_MR_CACHE_MONITOR", "memhooks", 1);
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	         -1, 0);
	memset(p, 1, LEN);
	if (open_hmr() || open_lf()) {
		vm_case_fail("verbs_lf_hooks_setup", "a domain did not open");
		return vm_case_exit();
	}
	ret = hmr_first ? touch(hmr_dom, p, &h1) || touch(lf_dom, p, &l1)
	                : touch(lf_dom, p, &l1) || touch(hmr_dom, p, &h1);
	ret = ret || touch(hmr_dom, p, &h2) || touch(lf_dom, p, &l2);
	snprintf(name, sizeof(name), "verbs_lf_hooks_%s_both_cache", order);
	vm_case(name, !ret && h1 == h2 && l1 == l2,
	        "hmr %#llx %#llx, libfabric key %#llx %#llx",
	        (unsigned long long)h1, (unsigned long long)h2,
	        (unsigned long long)l1, (unsigned long long)l2);
	st0 = stats();
	munmap(p, LEN);
	st1 = stats();
	q = mmap(p, LEN, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (q != p) {
		vm_case_fail(name, "could not map %p again", (void *)p);
		return vm_case_exit();
	}
	memset(q, 2, LEN);
	ret = touch(hmr_dom, q, &h3) || touch(lf_dom, q, &l3);
	snprintf(name, sizeof(name), "verbs_lf_hooks_%s_hmr_hears_munmap",
	         order);
	vm_case(name,
	        !ret && st1.invalidations > st0.invalidations && st1.active,
	        "invalidations %llu -> %llu, active %d (%s), monitor %s",
	        (unsigned long long)st0.invalidations,
	        (unsigned long long)st1.invalidations, st1.active, st1.why,
	        st1.monitor);
	snprintf(name, sizeof(name), "verbs_lf_hooks_%s_libfabric_hears_munmap",
	         order);
	vm_case(name, !ret && l3 != l1, "libfabric key %#llx, then %#llx",
	        (unsigned long long)l1, (unsigned long long)l3);
	fi_close(&lf_dom->fid);
	fi_close(&lf_fab->fid);
	ret = fi_close(&hmr_dom->fid);
	munmap(q, LEN);
	return vm_case_exit();
}
