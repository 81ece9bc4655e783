/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dmabuf_nic_cache.c: the registration cache on the dma-buf path, for any
 * backend's device memory (dmabuf_nic.h says what each case checks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include <hmr/hmr.h>

#include "dmabuf_nic.h"
#include "rc_pair.h"
#include "reg_dmabuf.h"
#include "vm_case.h"

#define CLEN (1 << 16) /* what each case allocates and registers */
#define SENT 256       /* bytes moved from device memory by RDMA */

/* Local rights only: what the registration cache serves. */
static int reg_local(const struct vm_nic_dev *dev, struct fid_domain *d,
                     uint64_t p, struct fid_mr **mr)
{
	struct iovec iov = {(void *)(uintptr_t)p, CLEN};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_READ | FI_WRITE,
	                          .iface = (enum fi_hmem_iface)dev->iface};

	attr.device.reserved = dev->device;
	return fi_mr_regattr(d, &attr, 0, mr);
}

/* An RDMA WRITE of SENT bytes of device memory at p, through mr's lkey,
 * into the host buffer dst (its MR dst_mr); 1 when dst then holds only
 * `want`. */
static int device_bytes_sent(const struct vm_nic_src *s, struct fid_mr *mr,
                             uint64_t p, struct fid_mr *dst_mr,
                             unsigned char *dst, int want)
{
	const struct hmr_verbs_desc *desc = fi_mr_desc(mr);
	int st, i;

	memset(dst, 0, SENT);
	st = rc_rdma(s->pair, IBV_WR_RDMA_WRITE,
	             (void *)(uintptr_t)hmr_verbs_sge_addr(
	                     desc, (void *)(uintptr_t)p),
	             SENT, desc->lkey, (uintptr_t)dst,
	             (uint32_t)fi_mr_key(dst_mr));
	for (i = 0; i < SENT && dst[i] == want; i++)
		;
	return st == IBV_WC_SUCCESS && i == SENT;
}

static struct hmr_mr_cache_stats cache_stats(struct fid_domain *d)
{
	struct hmr_mr_cache_stats st = HMR_MR_CACHE_STATS_INIT;

	hmr_mr_cache_stats(d, &st);
	return st;
}

/* A fresh allocation of the runtime's, its first SENT bytes `byte`; 0. */
static uint64_t filled(const struct vm_nic_dev *dev, int byte)
{
	unsigned char buf[SENT];
	uint64_t p = dev->alloc(dev, CLEN);

	memset(buf, byte, sizeof(buf));
	if (p && hmr_hmem_copy_to((void *)(uintptr_t)p, buf, sizeof(buf))) {
		dev->free(dev, p);
		return 0;
	}
	return p;
}

/* The second case, on p (registered once, idle in the cache): freed,
 * allocated again, registered. */
static void misses_after_free(const struct vm_nic_dev *dev,
                              struct fid_domain *d, const struct vm_nic_src *s,
                              uint64_t p, struct fid_mr *dst_mr,
                              unsigned char *dst)
{
	struct hmr_mr_cache_stats a = cache_stats(d), b;
	unsigned imports = vm_kernel_imports;
	struct fid_mr *mr = NULL;
	char name[96];
	uint64_t q;
	int ok, ret;

	unsigned miss = !dev->free_keeps_pages;

	snprintf(name, sizeof(name), "%s_cache_%s", dev->name,
	         miss ? "misses_after_free"
	              : "serves_the_same_pages_after_free");
	dev->free(dev, p);
	q = filled(dev, 0x42);
	ret = q ? reg_local(dev, d, q, &mr) : -FI_ENOMEM;
	b = cache_stats(d);
	ok = !ret && device_bytes_sent(s, mr, q, dst_mr, dst, 0x42);
	vm_case(name,
	        q == p && ok && b.misses == a.misses + miss &&
	                b.hits == a.hits + !miss &&
	                vm_kernel_imports == imports + miss &&
	                b.entries == a.entries &&
	                b.invalidations == a.invalidations + miss,
	        "%s, same address %s, bytes %s, misses %llu, hits %llu, "
	        "imports %u, entries %zu -> %zu, invalidations %llu",
	        hmr_strerror(ret), q == p ? "yes" : "no",
	        ok ? "new" : "stale or lost",
	        (unsigned long long)(b.misses - a.misses),
	        (unsigned long long)(b.hits - a.hits),
	        vm_kernel_imports - imports, a.entries, b.entries,
	        (unsigned long long)(b.invalidations - a.invalidations));
	if (mr)
		fi_close(&mr->fid);
	if (q)
		dev->free(dev, q);
}

/* A verbs domain on rxe0 opened with dev's cache setting at 0: two local
 * registrations of fresh memory, each imported, none cached. */
static void off_by_setting(const struct vm_nic_dev *dev)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct hmr_mr_cache_stats a, b;
	unsigned imports = vm_kernel_imports;
	struct fid_domain *d = NULL;
	struct fid_mr *mr[2] = {NULL, NULL};
	uint64_t p = 0;
	char name[96];
	int ret, i;

	/* fi_mr: F119 F120 */
	snprintf(name, sizeof(name), "%s_cache_off_by_setting", dev->name);
	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = "rxe0";
	attr.caps = FI_HMEM;
	ret = hmr_config_set(dev->cache_setting, "0");
	if (!ret)
		ret = hmr_domain_open(&attr, &d);
	if (!ret)
		ret = (p = filled(dev, 0x33)) ? 0 : -FI_ENOMEM;
	a = d ? cache_stats(d) : (struct hmr_mr_cache_stats){0};
	for (i = 0; i < 2 && !ret; i++) {
		ret = reg_local(dev, d, p, &mr[i]);
		if (!ret)
			fi_close(&mr[i]->fid);
	}
	b = d ? cache_stats(d) : a;
	vm_case(name,
	        !ret && vm_kernel_imports == imports + 2 && b.hits == a.hits &&
	                b.misses == a.misses,
	        "%s=0: %s, imports %u, hits %llu, misses %llu",
	        dev->cache_setting, hmr_strerror(ret),
	        vm_kernel_imports - imports,
	        (unsigned long long)(b.hits - a.hits),
	        (unsigned long long)(b.misses - a.misses));
	if (p)
		dev->free(dev, p);
	if (d)
		fi_close(&d->fid);
	hmr_config_set(dev->cache_setting, NULL);
}

void vm_nic_cache_cases(const struct vm_nic_dev *dev, struct fid_domain *d,
                        const struct vm_nic_src *s)
{
	unsigned char *dst = aligned_alloc(4096, 4096);
	struct fid_mr *dst_mr = NULL, *mr = NULL;
	struct hmr_mr_cache_stats a, b;
	unsigned imports = vm_kernel_imports;
	uint64_t p = filled(dev, 0x21);
	char hit[96];
	int ok, ret;

	snprintf(hit, sizeof(hit), "%s_cache_serves_device_memory", dev->name);
	ret = !p || !dst ? -FI_ENOMEM
	                 : fi_mr_reg(d, dst, 4096, FI_REMOTE_WRITE, 0, 0, 0,
	                             &dst_mr, NULL);
	if (!ret)
		ret = reg_local(dev, d, p, &mr);
	if (ret) {
		vm_case_fail(hit, "setup: %s", hmr_strerror(ret));
		goto out;
	}
	fi_close(&mr->fid);
	a = cache_stats(d);
	ret = reg_local(dev, d, p, &mr);
	b = cache_stats(d);
	ok = !ret && device_bytes_sent(s, mr, p, dst_mr, dst, 0x21);
	vm_case(hit,
	        ok && b.hits == a.hits + 1 && vm_kernel_imports == imports + 1,
	        "%s, bytes %s, hits %llu, imports %u, cache %s",
	        hmr_strerror(ret), ok ? "moved" : "wrong",
	        (unsigned long long)(b.hits - a.hits),
	        vm_kernel_imports - imports, b.active ? "on" : b.why);
	if (ret)
		goto out;
	fi_close(&mr->fid);
	/* From before the free: a simulator's free unmaps, so the memory
	 * monitor may drop the entry there; a real driver may keep the
	 * range reserved, and then the next miss at the address drops it. */
	misses_after_free(dev, d, s, p, dst_mr, dst);
	p = 0;
out:
	if (p)
		dev->free(dev, p);
	if (dst_mr)
		fi_close(&dst_mr->fid);
	free(dst);
	if (dev->cache_setting)
		off_by_setting(dev);
}
