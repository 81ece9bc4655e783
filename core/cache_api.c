/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cache_api.c: hmr's public registration cache calls. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/range.h"
#include "cache/cache.h"
#include "core/domain.h"
#include "monitor/monitor.h"

/* The import monitor's entry: an allocator (or a cache layered above)
 * says memory is going away.  Every subscriber hears it: each domain's
 * cache and hmem's memtype cache. */
int hmr_mr_cache_invalidate(const void *addr, size_t len)
{
	if (!hmr__range_valid((uint64_t)(uintptr_t)addr, len)) {
		hmr_warn("hmr_mr_cache_invalidate(%p, %zu): an empty range or "
		         "one past the end of the address space",
		         addr, len);
		return -FI_EINVAL;
	}
	hmr__monitor_notify((uintptr_t)addr, len);
	return 0;
}

/* The cache of an open domain: -FI_EBADF closed, -FI_EINVAL not a
 * domain, -FI_ENOSYS a domain without one (software domains). */
static int cache_of(struct fid_domain *domain, struct hmr_cache **cache)
{
	int ret = hmr__domain_usable(domain);

	if (ret)
		return ret;
	*cache = hmr__domain(&domain->fid)->cache;
	return *cache ? 0 : -FI_ENOSYS;
}

int hmr_mr_cache_flush(struct fid_domain *domain)
{
	struct hmr_cache *c;
	int ret;

	if (!domain) {
		hmr__cache_flush_all();
		return 0;
	}
	ret = cache_of(domain, &c);
	if (!ret)
		hmr__cache_flush(c);
	return ret;
}

int hmr_mr_cache_stats(struct fid_domain *domain,
                       struct hmr_mr_cache_stats *stats)
{
	struct hmr_mr_cache_stats out = HMR_MR_CACHE_STATS_INIT;
	struct hmr_cache_stats st;
	struct hmr_cache *c;
	int ret;

	if (!stats || stats->size < offsetof(struct hmr_mr_cache_stats, why))
		return -FI_EINVAL;
	ret = cache_of(domain, &c);
	if (ret)
		return ret;
	hmr__cache_stats(c, &st);
	out.hits = st.hits;
	out.misses = st.misses;
	out.evictions = st.evictions;
	out.invalidations = st.invalidations;
	out.merges = st.merges;
	out.uncached = st.uncached;
	out.entries = st.entries;
	out.idle = st.idle;
	out.bytes = st.bytes;
	out.active = hmr__cache_active(c, out.why, sizeof(out.why));
	snprintf(out.monitor, sizeof(out.monitor), "%s",
	         hmr__monitor_kind_name(hmr__monitor_kind()));
	memcpy(stats, &out,
	       stats->size < sizeof(out) ? stats->size : sizeof(out));
	stats->size = stats->size < sizeof(out) ? stats->size : sizeof(out);
	return 0;
}
