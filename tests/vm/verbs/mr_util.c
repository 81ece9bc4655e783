/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* mr_util.c: what verbs_offset, verbs_flags and verbs_odp share. */
#include "mr_util.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vm_case.h"

#define FLUSH_PERSISTENT_CAP (1ULL << 39) /* IB_UVERBS_DEVICE_FLUSH_... */

int mt_init(struct mt *t, const char *nic)
{
	memset(t, 0, sizeof(*t));
	t->ctx = rc_open_device(nic);
	t->pd = t->ctx ? ibv_alloc_pd(t->ctx) : NULL;
	if (!t->pd || ibv_query_device_ex(t->ctx, NULL, &t->dev)) {
		vm_case_fail("mt_setup", "%s: %s", nic, strerror(errno));
		return -1;
	}
	t->src = aligned_alloc(4096, MT_SRC_LEN);
	t->src_mr = t->src ? ibv_reg_mr(t->pd, t->src, MT_SRC_LEN,
	                                IBV_ACCESS_LOCAL_WRITE)
	                   : NULL;
	if (!t->src_mr || rc_wait_gid(t->ctx, 0, 10000) ||
	    rc_pair_create(&t->pair, t->pd, t->pd, 0)) {
		vm_case_fail("mt_setup", "source MR or RC pair: %s %s",
		             strerror(errno), t->pair.err);
		return -1;
	}
	return 0;
}

void mt_fini(struct mt *t)
{
	rc_pair_destroy(&t->pair);
	if (t->src_mr)
		ibv_dereg_mr(t->src_mr);
	free(t->src);
	if (t->pd)
		ibv_dealloc_pd(t->pd);
	if (t->ctx)
		ibv_close_device(t->ctx);
}

bool mt_dev_odp(const struct mt *t)
{
	uint32_t rc = IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ;

	return (t->dev.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
	       (t->dev.odp_caps.per_transport_caps.rc_odp_caps & rc) == rc;
}

bool mt_dev_odp_implicit(const struct mt *t)
{
	return mt_dev_odp(t) &&
	       (t->dev.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT);
}

bool mt_dev_flush_persistent(const struct mt *t)
{
	return t->dev.device_cap_flags_ex & FLUSH_PERSISTENT_CAP;
}

int mt_domain(struct mt *t, uint64_t mr_mode, uint64_t caps, uint64_t flags,
              struct fid_domain **d)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.kind = HMR_DOMAIN_VERBS;
	attr.pd = t->pd;
	attr.mr_mode = mr_mode;
	attr.caps = caps;
	attr.flags = flags;
	*d = NULL;
	return hmr_domain_open(&attr, d);
}

uint64_t mt_mr_mode(struct fid_domain *d)
{
	uint64_t mode = 0;

	return hmr_domain_mr_mode(d, &mode) ? 0 : mode;
}

int mt_reg(struct fid_domain *d, void *p, size_t len, uint64_t access,
           uint64_t flags, struct fid_mr **mr)
{
	*mr = NULL;
	return fi_mr_reg(d, p, len, access, 0, 0, flags, mr, NULL);
}

int mt_rdma(struct mt *t, enum ibv_wr_opcode op, size_t src_off, uint32_t len,
            uint64_t raddr, uint32_t rkey)
{
	return rc_rdma(&t->pair, op, t->src + src_off, len, t->src_mr->lkey,
	               raddr, rkey);
}

static int tg_get(const struct mt_target *tg, size_t off, void *out, size_t n)
{
	if (!tg->device) {
		memcpy(out, tg->p + off, n);
		return 0;
	}
	return hmr_hmem_copy_from(out, tg->p + off, n);
}

static int tg_set(const struct mt_target *tg, size_t off, const void *in,
                  size_t n)
{
	if (!tg->device) {
		memcpy(tg->p + off, in, n);
		return 0;
	}
	return hmr_hmem_copy_to(tg->p + off, in, n);
}

/* The window [lo, hi) around off that must hold only the write. */
#define WINDOW 32

int mt_write_read_at(struct mt *t, const struct mt_target *tg, size_t off,
                     char *why, size_t why_len)
{
	size_t lo = off > 8 ? off - 8 : 0;
	size_t hi = off + 16 < tg->len ? off + 16 : tg->len;
	char zero[WINDOW] = {0}, got[WINDOW], pat[8];
	int st, i;

	for (i = 0; i < 8; i++)
		pat[i] = (char)(0xa0 + i + (off & 0xf));
	memcpy(t->src, pat, 8);
	if (tg_set(tg, lo, zero, hi - lo))
		return snprintf(why, why_len, "cannot clear the target"), -1;
	st = mt_rdma(t, IBV_WR_RDMA_WRITE, 0, 8, tg->base + off, tg->rkey);
	if (st != IBV_WC_SUCCESS || tg_get(tg, lo, got, hi - lo))
		return snprintf(why, why_len, "write at %zu: %s", off,
		                rc_status_str(st)),
		       -1;
	if (memcmp(got + (off - lo), pat, 8) || memcmp(got, zero, off - lo) ||
	    memcmp(got + (off - lo) + 8, zero, hi - off - 8))
		return snprintf(why, why_len,
		                "write at %zu landed elsewhere: byte %#x there",
		                off, got[off - lo] & 0xff),
		       -1;
	for (i = 0; i < 8; i++)
		pat[i] = (char)(0x30 + i);
	memset(t->src + 64, 0, 8);
	if (tg_set(tg, off, pat, 8))
		return snprintf(why, why_len, "cannot fill the target"), -1;
	st = mt_rdma(t, IBV_WR_RDMA_READ, 64, 8, tg->base + off, tg->rkey);
	if (st != IBV_WC_SUCCESS || memcmp(t->src + 64, pat, 8))
		return snprintf(why, why_len, "read at %zu: %s, byte %#x", off,
		                rc_status_str(st), t->src[64] & 0xff),
		       -1;
	return 0;
}

int mt_write_refused(struct mt *t, const struct mt_target *tg, uint64_t raddr,
                     char *why, size_t why_len)
{
	char *snap = malloc(tg->len), *after = malloc(tg->len);
	int st = -1, ok = -1;

	if (!snap || !after || tg_get(tg, 0, snap, tg->len)) {
		snprintf(why, why_len, "cannot read the target");
		goto out;
	}
	memset(t->src, 0x5c, 8);
	st = mt_rdma(t, IBV_WR_RDMA_WRITE, 0, 8, raddr, tg->rkey);
	if (tg_get(tg, 0, after, tg->len)) {
		snprintf(why, why_len, "cannot read the target");
		goto out;
	}
	if (st == IBV_WC_REM_ACCESS_ERR && !memcmp(snap, after, tg->len))
		ok = 0;
	else
		snprintf(why, why_len, "write at %#llx: %s, target %s",
		         (unsigned long long)raddr, rc_status_str(st),
		         memcmp(snap, after, tg->len) ? "modified"
		                                      : "untouched");
out:
	free(snap);
	free(after);
	return ok;
}

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_retain_fn)(void **, int);
typedef int (*cu_set_fn)(void *);
typedef int (*cu_alloc_fn)(unsigned long long *, size_t);
typedef int (*cu_free_fn)(unsigned long long);
typedef unsigned long (*calls_fn)(const char *);

static cu_alloc_fn cu_alloc;
static cu_free_fn cu_free;
static calls_fn sim_calls;

void mt_sim_env(void)
{
	setenv("HMR_CUDA_LIBRARY", MT_SIM_CUDA, 0);
	setenv("HMR_SIM_CUDA_HOST_ACCESSIBLE", "1", 0);
}

int mt_load_sim(void)
{
	void *h = dlopen(getenv("HMR_CUDA_LIBRARY"), RTLD_NOW), *ctx;
	cu_init_fn init = h ? (cu_init_fn)dlsym(h, "cuInit") : NULL;
	cu_retain_fn retain =
	        h ? (cu_retain_fn)dlsym(h, "cuDevicePrimaryCtxRetain") : NULL;
	cu_set_fn set = h ? (cu_set_fn)dlsym(h, "cuCtxSetCurrent") : NULL;

	cu_alloc = h ? (cu_alloc_fn)dlsym(h, "cuMemAlloc_v2") : NULL;
	cu_free = h ? (cu_free_fn)dlsym(h, "cuMemFree_v2") : NULL;
	sim_calls = h ? (calls_fn)dlsym(h, "hmr_sim_cuda_calls") : NULL;
	if (!init || !retain || !set || !cu_alloc || !cu_free || !sim_calls)
		return -1;
	return init(0) || retain(&ctx, 0) || set(ctx) ? -1 : 0;
}

int mt_cu_alloc(unsigned long long *dev, size_t len)
{
	return cu_alloc ? cu_alloc(dev, len) : -1;
}

int mt_cu_free(unsigned long long dev)
{
	return cu_free ? cu_free(dev) : -1;
}

unsigned long mt_sim_calls(const char *name)
{
	return sim_calls ? sim_calls(name) : 0;
}

void mt_peermem(int loaded)
{
	mkdir("/tmp/mt-sysfs", 0755);
	mkdir("/tmp/mt-sysfs/module", 0755);
	if (loaded)
		mkdir("/tmp/mt-sysfs/module/nvidia_peermem", 0755);
	else
		rmdir("/tmp/mt-sysfs/module/nvidia_peermem");
	setenv("HMR_SYSFS_ROOT", "/tmp/mt-sysfs", 1);
}
