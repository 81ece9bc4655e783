/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_cache.c: which verbs registrations the cache serves; its settings. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/config.h"
#include "base/hash.h"
#include "base/log.h"
#include "cache/cache.h"
#include "hmem/hmem.h"
#include "verbs/verbs.h"

HMR_CONFIG_VAR(FI_MR_CACHE_MAX_SIZE, NULL,
               "Bytes of registrations a verbs domain's cache holds before "
               "it evicts idle ones; unset: physical memory / CPUs / 2, as "
               "libfabric");
HMR_CONFIG_VAR(FI_MR_CACHE_MAX_COUNT, "1024",
               "Registrations (in use or idle) a verbs domain's cache "
               "holds before it evicts idle ones; 0 turns the cache off");
HMR_CONFIG_VAR(FI_MR_CACHE_MERGE_REGIONS, "0",
               "1: the cache merges overlapping and adjacent registrations "
               "into one (fi_mr(3), 1.8 edition)");

/*
 * What the cache may serve.  A shared registration lives on after one of
 * its MRs is closed, and so does its rkey: a registration with remote
 * rights is never cached, so that once fi_close returns the rkey an
 * application handed out works no more (libfabric's and UCX's caches keep
 * it alive).  Local rights (a send, a receive, the local end of an RDMA
 * READ or WRITE) are what a NIC uses through the lkey of an MR that the
 * application still holds: those are cached.  Memory windows and FLUSH
 * are remote features.
 */
#define CACHEABLE_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING)

static size_t setting_size(const char *name, size_t dflt)
{
	const char *v = hmr__config_get(name, NULL);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return dflt;
	errno = 0;
	n = strtoull(v, &end, 0);
	if (errno || *end || v[0] == '-') {
		hmr_warn("%s=%s is not a number; %zu used", name, v, dflt);
		return dflt;
	}
	return (size_t)n;
}

static size_t default_max_size(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (pages <= 0 || page <= 0 || cpus <= 0)
		return (size_t)1 << 30;
	return (size_t)pages / (size_t)cpus / 2 * (size_t)page;
}

/* The identity of the memory at r: 0 for host memory; for device memory
 * its interface, device and buffer id (a freed and reallocated address
 * gets a new id, so it misses), or false when it has no buffer id. */
static bool memory_id(const struct hmr_verbs_range *r, uint64_t *id)
{
	struct hmr_hmem_info info;

	if (!r->device_memory) {
		*id = 0;
		return true;
	}
	if (hmr_hmem_query(r->p, r->len, &info) || !info.buffer_id)
		return false;
	*id = hmr__hash64(((uint64_t)r->iface << 56) ^ info.device ^
	                  hmr__hash64(info.buffer_id)) |
	      1;
	return true;
}

/* The NIC address e is registered at: that of its own first byte, which
 * may lie before the buffer of the MR it serves. */
static int entry_iova(struct hmr_domain *d, const struct hmr_cache_entry *e,
                      uint64_t *iova)
{
	return hmr__verbs_nic_addr(hmr__virt_addr(d), (int)e->access, e->start,
	                           e->start, e->end - e->start, iova);
}

static int cache_reg(void *ctx, struct hmr_cache_entry *e)
{
	struct hmr_domain *d = ctx;
	struct hmr_hmem_info info = {.iface = FI_HMEM_SYSTEM};
	struct hmr_verbs_range r = {
	        .p = (void *)e->start,
	        .len = (size_t)(e->end - e->start),
	};
	struct ibv_mr *imr;
	int ret;

	ret = entry_iova(d, e, &r.iova);
	if (ret)
		return ret;
	if (e->id) {
		ret = hmr_hmem_query(r.p, r.len, &info);
		if (ret)
			return ret;
		r.iface = info.iface;
		r.device = info.device;
		r.device_memory = true;
	}
	ret = hmr__verbs_reg_range(d, &r, (int)e->access, &imr);
	if (!ret)
		e->handle = imr;
	return ret;
}

static void cache_dereg(void *ctx, struct hmr_cache_entry *e)
{
	int err = ibv_dereg_mr(e->handle);

	(void)ctx;
	if (err)
		hmr_warn("ibv_dereg_mr of a cached registration [%#llx, "
		         "%#llx): %s",
		         (unsigned long long)e->start,
		         (unsigned long long)e->end, strerror(err));
}

static const struct hmr_cache_ops cache_ops = {
        .reg = cache_reg,
        .dereg = cache_dereg,
};

int hmr__verbs_cache_open(struct hmr_domain *d)
{
	struct hmr_verbs *v = hmr__verbs(d);
	struct hmr_cache_attr attr = {
	        .ops = &cache_ops,
	        .ctx = d,
	        .monitored = true,
	        .name = ibv_get_device_name(v->ctx->device),
	};
	enum fi_hmem_iface i;

	if (d->attr.flags & HMR_DOMAIN_CACHE_OFF)
		return 0;
	attr.max_size = d->attr.cache_max_size
	                        ? d->attr.cache_max_size
	                        : setting_size("FI_MR_CACHE_MAX_SIZE",
	                                       default_max_size());
	attr.max_count = d->attr.cache_max_count
	                         ? d->attr.cache_max_count
	                         : setting_size("FI_MR_CACHE_MAX_COUNT", 1024);
	attr.merge_regions = (d->attr.flags & HMR_DOMAIN_CACHE_MERGE) ||
	                     hmr__config_true("FI_MR_CACHE_MERGE_REGIONS");
	if (!attr.max_count) {
		hmr_info("verbs domain on %s: FI_MR_CACHE_MAX_COUNT=0, no "
		         "registration cache",
		         attr.name);
		return 0;
	}
	/* Device memory is cached where its backend's monitor setting
	 * (FI_MR_<VENDOR>_CACHE_MONITOR_ENABLED) allows it. */
	for (i = FI_HMEM_SYSTEM; i <= FI_HMEM_SYNAPSEAI; i++)
		v->cache_device[i] = hmr__hmem_cache_monitor_enabled(i);
	return hmr__cache_open(&attr, &d->cache);
}

void hmr__verbs_cache_close(struct hmr_domain *d)
{
	if (d->cache && !hmr__cache_close(d->cache))
		d->cache = NULL;
}

bool hmr__verbs_cacheable(struct hmr_domain *d, const struct hmr_verbs_range *r,
                          int access)
{
	if (!d->cache || (access & ~CACHEABLE_ACCESS))
		return false;
	if (!r->device_memory)
		return true;
	return (unsigned)r->iface <= FI_HMEM_SYNAPSEAI &&
	       hmr__verbs(d)->cache_device[r->iface];
}

int hmr__verbs_cache_get(struct hmr_domain *d, const struct hmr_verbs_range *r,
                         int access, struct hmr_cache_entry **entry,
                         struct ibv_mr **out, uint64_t *iova)
{
	uint64_t id;
	int ret;

	*iova = r->iova;
	if (!memory_id(r, &id))
		return hmr__verbs_reg_range(d, r, access, out);
	ret = hmr__cache_get(d->cache, (uintptr_t)r->p, r->len,
	                     (uint64_t)access, id, entry);
	if (ret)
		return ret;
	/* cache_reg registered the entry at this address (it cannot fail
	 * now); the entry may start before r. */
	ret = entry_iova(d, *entry, iova);
	if (ret) {
		hmr__cache_put(d->cache, *entry);
		*entry = NULL;
		return ret;
	}
	*out = (*entry)->handle;
	return 0;
}

void hmr__verbs_cache_put(struct hmr_domain *d, struct hmr_cache_entry *entry)
{
	hmr__cache_put(d->cache, entry);
}
