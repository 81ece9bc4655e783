/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* synapseai_host.c: host memory the Gaudi reaches: mappings and copies. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <hmr/fi_mr.h>

#include "base/log.h"
#include "base/range.h"
#include "synapseai/synapseai_api.h"

/*
 * The Gaudi reaches host memory only through its MMU: memory from
 * synHostMalloc, or mapped with synHostMap.  A copy's host side must be
 * such memory (synMemCopyAsync fails with synMappingNotFound otherwise).
 *
 * host_register is synHostMap.  hmr remembers what it mapped, so that
 * classification reports it (FI_HMEM_SYNAPSEAI, a host allocation) and a
 * copy from or to it goes straight through the DMA engine.
 *
 * Other host memory is copied through a staging buffer from
 * synHostMalloc, STAGE_SIZE bytes at a time.  hmr does NOT synHostMap the
 * caller's buffer around each copy:
 * - the application may have mapped that range itself; mapping a range
 *   inside an existing mapping "succeeds" without adding one, so hmr's
 *   synHostUnmap afterwards would remove the APPLICATION's mapping, and
 *   Synapse cannot be asked what is mapped;
 * - synHostMap pins the pages and writes the device MMU on every call,
 *   which costs more than a memcpy at the sizes copies are used for.
 *
 * Synapse streams are not thread-safe ([S1] synStreamDestroy,
 * synStreamSynchronize): one stream, created at the first copy, and the
 * staging buffer are used under `lock`.  When a synchronize fails the
 * stream may still hold work that reads or writes the staging buffer:
 * hmr abandons both instead of reusing them, and frees them only if the
 * stream can be destroyed (Synapse refuses to destroy a busy stream).
 */

#define STAGE_SIZE ((size_t)1 << 20)

struct mapping {
	uintptr_t base;
	uint64_t size;
};

/* Protects every field of `host`.  No other hmr lock is taken under it
 * (the runtime's own locks are, inside its calls). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	hmr_synStreamHandle stream; /* NULL until the first copy */
	void *stage;                /* STAGE_SIZE bytes from synHostMalloc */
	struct mapping *maps;       /* hmr's synHostMap ranges, by base */
	size_t nmaps, capmaps;
} host;

/* Index of the first mapping whose base is above p (lock held). */
static size_t map_index(uintptr_t p)
{
	size_t lo = 0, hi = host.nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (host.maps[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The mapping holding p, or NULL (lock held). */
static const struct mapping *map_find(uintptr_t p)
{
	size_t i = map_index(p);

	if (i == 0 || p - host.maps[i - 1].base >= host.maps[i - 1].size)
		return NULL;
	return &host.maps[i - 1];
}

/* Any of hmr's mappings meets [p, p + len) (lock held). */
static bool map_overlaps(uintptr_t p, size_t len)
{
	size_t i = map_index(p);

	return (i > 0 && hmr__range_overlap(p, len, host.maps[i - 1].base,
	                                    host.maps[i - 1].size)) ||
	       (i < host.nmaps && hmr__range_overlap(p, len, host.maps[i].base,
	                                             host.maps[i].size));
}

int hmr__synapseai_host_query(uintptr_t p, uint64_t *base, uint64_t *size)
{
	const struct mapping *m;
	int ret = -FI_ENOENT;

	pthread_mutex_lock(&lock);
	m = map_find(p);
	if (m) {
		*base = m->base;
		*size = m->size;
		ret = 0;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

/* Room for one more mapping (lock held); before synHostMap, so that
 * nothing can fail once the range is mapped. */
static int map_reserve(void)
{
	struct mapping *grown;
	size_t cap = host.capmaps ? 2 * host.capmaps : 8;

	if (host.nmaps < host.capmaps)
		return 0;
	grown = realloc(host.maps, cap * sizeof(*grown));
	if (!grown)
		return -FI_ENOMEM;
	host.maps = grown;
	host.capmaps = cap;
	return 0;
}

int hmr__synapseai_host_register(void *ptr, size_t len)
{
	const struct hmr_synapseai *s = &hmr__synapseai;
	uintptr_t p = (uintptr_t)ptr;
	size_t i;
	int ret;

	if (!s->synHostMap || !s->synHostUnmap) {
		hmr_info("synapseai: libSynapse lacks synHostMap/synHostUnmap");
		return -FI_ENOSYS;
	}
	ret = hmr__synapseai_need("hmr_hmem_host_register");
	if (ret)
		return ret;
	pthread_mutex_lock(&lock);
	if (map_overlaps(p, len)) {
		/* Synapse would "map" it without adding a mapping, and the
		 * unregister of either would unmap both. */
		hmr_warn("[%p, +%zu) overlaps host memory hmr already mapped "
		         "for the Gaudi",
		         ptr, len);
		ret = -FI_EALREADY;
		goto out;
	}
	ret = map_reserve();
	if (!ret)
		ret = HMR_SYN(synHostMap, s->device, len, ptr);
	if (ret)
		goto out;
	i = map_index(p);
	memmove(&host.maps[i + 1], &host.maps[i],
	        (host.nmaps - i) * sizeof(host.maps[0]));
	host.maps[i] = (struct mapping){p, len};
	host.nmaps++;
out:
	pthread_mutex_unlock(&lock);
	return ret;
}

int hmr__synapseai_host_unregister(void *ptr)
{
	const struct hmr_synapseai *s = &hmr__synapseai;
	uintptr_t p = (uintptr_t)ptr;
	size_t i;
	int ret;

	if (!s->synHostUnmap)
		return -FI_ENOSYS;
	pthread_mutex_lock(&lock);
	i = map_index(p);
	if (i == 0 || host.maps[i - 1].base != p) {
		hmr_warn("%p is not the start of host memory hmr mapped for "
		         "the Gaudi",
		         ptr);
		ret = -FI_EINVAL;
		goto out;
	}
	ret = HMR_SYN(synHostUnmap, s->device, ptr);
	if (ret)
		goto out; /* Still mapped: still remembered. */
	memmove(&host.maps[i - 1], &host.maps[i],
	        (host.nmaps - i) * sizeof(host.maps[0]));
	host.nmaps--;
out:
	pthread_mutex_unlock(&lock);
	return ret;
}

/* The stream and staging buffer can no longer be trusted (lock held). */
static void abandon(bool quiet)
{
	const struct hmr_synapseai *s = &hmr__synapseai;

	if (s->synStreamDestroy(host.stream) == HMR_synSuccess) {
		if (host.stage &&
		    s->synHostFree(s->device, host.stage, 0) != HMR_synSuccess)
			hmr_info("synapseai: staging buffer not freed");
	} else if (!quiet) {
		hmr_warn(
		        "synapseai: the copy stream cannot be destroyed; it is "
		        "abandoned with its staging buffer, which the device "
		        "may still use");
	}
	host.stream = NULL;
	host.stage = NULL;
}

/* One DMA, waited for (lock held). */
static int dma(uint64_t src, uint64_t len, uint64_t dst, hmr_synDmaDir dir)
{
	int ret = HMR_SYN(synMemCopyAsync, host.stream, src, len, dst, dir);

	if (ret)
		return ret; /* Nothing was queued. */
	ret = HMR_SYN(synStreamSynchronize, host.stream);
	if (ret)
		abandon(false);
	return ret;
}

/* Through the staging buffer, STAGE_SIZE bytes a DMA (lock held). */
static int staged(uint64_t dev, unsigned char *hst, size_t len, bool to_dev)
{
	const struct hmr_synapseai *s = &hmr__synapseai;
	void *stage = NULL;
	size_t off, n;
	int ret = 0;

	if (!host.stage) {
		ret = HMR_SYN(synHostMalloc, s->device, STAGE_SIZE, 0, &stage);
		if (ret)
			return ret;
		host.stage = stage;
	}
	for (off = 0; !ret && off < len; off += n) {
		n = len - off < STAGE_SIZE ? len - off : STAGE_SIZE;
		if (to_dev) {
			memcpy(host.stage, hst + off, n);
			ret = dma((uintptr_t)host.stage, n, dev + off,
			          HMR_SYN_HOST_TO_DRAM);
		} else {
			ret = dma(dev + off, n, (uintptr_t)host.stage,
			          HMR_SYN_DRAM_TO_HOST);
			if (!ret)
				memcpy(hst + off, host.stage, n);
		}
	}
	return ret;
}

/* dev is inside the HBM (classification checked the whole range). */
static int copy(uint64_t dev, unsigned char *hst, size_t len, bool to_dev)
{
	const struct hmr_synapseai *s = &hmr__synapseai;
	hmr_synStreamHandle stream = NULL;
	const struct mapping *m;
	int ret = 0;

	if (!s->synStreamCreateGeneric || !s->synStreamDestroy ||
	    !s->synStreamSynchronize || !s->synMemCopyAsync ||
	    !s->synHostMalloc || !s->synHostFree) {
		hmr_info("synapseai: libSynapse lacks the stream calls copies "
		         "need");
		return -FI_ENOSYS;
	}
	pthread_mutex_lock(&lock);
	if (!host.stream) {
		ret = HMR_SYN(synStreamCreateGeneric, &stream, s->device, 0);
		if (!ret)
			host.stream = stream;
	}
	m = map_find((uintptr_t)hst);
	if (!ret && m &&
	    hmr__range_inside((uintptr_t)hst, len, m->base, m->size))
		ret = to_dev ? dma((uintptr_t)hst, len, dev,
		                   HMR_SYN_HOST_TO_DRAM)
		             : dma(dev, len, (uintptr_t)hst,
		                   HMR_SYN_DRAM_TO_HOST);
	else if (!ret)
		ret = staged(dev, hst, len, to_dev);
	pthread_mutex_unlock(&lock);
	return ret;
}

int hmr__synapseai_copy_to(void *dev, const void *src, size_t len)
{
	/* The host side is only read when to_dev. */
	return copy((uintptr_t)dev, (unsigned char *)(uintptr_t)src, len, true);
}

int hmr__synapseai_copy_from(void *dst, const void *dev, size_t len)
{
	return copy((uintptr_t)dev, dst, len, false);
}

/* At exit the runtime may be gone already: failures are not reported. */
void hmr__synapseai_host_fini(void)
{
	const struct hmr_synapseai *s = &hmr__synapseai;
	size_t i;

	pthread_mutex_lock(&lock);
	if (host.stream)
		abandon(true);
	for (i = 0; i < host.nmaps && s->synHostUnmap; i++)
		s->synHostUnmap(s->device, (void *)host.maps[i].base);
	free(host.maps);
	host.maps = NULL;
	host.nmaps = host.capmaps = 0;
	pthread_mutex_unlock(&lock);
}
