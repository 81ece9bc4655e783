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

/* "munmap patch; ...; free relocation": one line for the cache stats. */
static void monitor_how(char *buf, size_t len)
{
	struct hmr__monitor_func f[HMR_MONITOR_MAX_FUNCS];
	size_t n = hmr__monitor_describe(f, HMR_MONITOR_MAX_FUNCS), i, used;

	buf[0] = '\0';
	for (i = 0, used = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s %s",
		                         i ? "; " : "", f[i].name,
		                         f[i].mechanism);
}

int hmr_monitor_info(struct hmr_monitor_info *info)
{
	struct hmr_monitor_info out = HMR_MONITOR_INFO_INIT;
	struct hmr__monitor_func f[HMR_MONITOR_MAX_FUNCS];
	char why[256] = "";
	size_t n, i;

	if (!info || info->size < offsetof(struct hmr_monitor_info, nfuncs))
		return -FI_EINVAL;
	out.caching = !hmr__monitor_start(why, sizeof(why));
	snprintf(out.kind, sizeof(out.kind), "%s",
	         hmr__monitor_kind_name(hmr__monitor_kind()));
	snprintf(out.why, sizeof(out.why), "%s", hmr__monitor_why());
	out.before_unmap = hmr__monitor_reports_before();
	n = hmr__monitor_describe(f, HMR_MONITOR_MAX_FUNCS);
	for (i = 0; i < n; i++) {
		struct hmr_monitor_func_info *o = &out.funcs[i];

		snprintf(o->name, sizeof(o->name), "%s", f[i].name);
		snprintf(o->mechanism, sizeof(o->mechanism), "%s",
		         f[i].mechanism);
		snprintf(o->how, sizeof(o->how), "%s", f[i].how);
	}
	out.nfuncs = (unsigned)n;
	/* The caller's size, read before the copy overwrites it. */
	n = info->size < sizeof(out) ? info->size : sizeof(out);
	out.size = n;
	memcpy(info, &out, n);
	return 0;
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
	monitor_how(out.monitor_how, sizeof(out.monitor_how));
	/* The caller's size, read before the copy overwrites it. */
	out.size = stats->size < sizeof(out) ? stats->size : sizeof(out);
	memcpy(stats, &out, out.size);
	return 0;
}
