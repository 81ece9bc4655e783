/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_flags.c: ibv_reg_mr(3)'s access flags, as hmr maps them, on rxe. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hmr/hmr.h>

#include "mr_util.h"
#include "vm_case.h"

/*
 * Each case registers through hmr on rxe0 and lets the NIC judge: what
 * lands, what completes with a remote access error, what the kernel
 * refuses.  Where 6.1 and 7.3 differ (FLUSH, ODP), the device's own
 * answer says which outcome is right.  verbs_offset covers ZERO_BASED
 * (offset addressing) and verbs_odp ON_DEMAND and HUGETLB on 7.3.
 */
#define LEN  8192
#define DLEN (1 << 16)
#define RW   (FI_REMOTE_WRITE | FI_REMOTE_READ)
#define MODE HMR_MR_MODE_DEFAULT

static struct mt t;
static char *dst;
static char why[256];

static struct mt_target target(struct fid_mr *mr)
{
	struct mt_target tg = {.p = dst,
	                       .len = LEN,
	                       .base = (uintptr_t)dst,
	                       .rkey = (uint32_t)fi_mr_key(mr)};
	return tg;
}

/* A region registered with FI_REMOTE_WRITE alone takes remote writes:
 * hmr adds the LOCAL_WRITE the kernel demands, as the raw call shows. */
static void case_local_write_rule(void)
{
	struct ibv_mr *raw =
	        ibv_reg_mr(t.pd, dst, LEN, IBV_ACCESS_REMOTE_WRITE);
	struct fid_domain *d;
	struct fid_mr *mr;
	struct mt_target tg;
	int ret;

	/* fi_mr: V13 */
	vm_case("verbs_kernel_refuses_remote_write_without_local_write",
	        !raw && errno == EINVAL, "ibv_reg_mr: %s",
	        raw ? "registered" : strerror(errno));
	if (raw)
		ibv_dereg_mr(raw);
	ret = mt_domain(&t, MODE, 0, 0, &d);
	if (!ret)
		ret = mt_reg(d, dst, LEN, FI_REMOTE_WRITE, 0, &mr);
	if (ret) {
		vm_case_fail("verbs_remote_write_only_region_takes_writes",
		             "%s", hmr_strerror(ret));
		return;
	}
	tg = target(mr);
	/* fi_mr: V13 */
	vm_case("verbs_remote_write_only_region_takes_writes",
	        !mt_rdma(&t, IBV_WR_RDMA_WRITE, 0, 8, tg.base + 8, tg.rkey) &&
	                !memcmp(dst + 8, t.src, 8),
	        "the write did not land");
	fi_close(&mr->fid);
	fi_close(&d->fid);
}

/* A fetch-and-add of 5 on the value 100 at dst: the status, and whether
 * the old value came back and the new one is there. */
static int fetch_add(struct fid_domain *d, uint64_t access, bool *done)
{
	uint64_t *val = (uint64_t *)dst, *old = (uint64_t *)t.src;
	struct fid_mr *mr;
	int st, ret = mt_reg(d, dst, LEN, access, 0, &mr);

	*done = false;
	if (ret)
		return snprintf(why, sizeof(why), "reg: %s", hmr_strerror(ret)),
		       -2;
	*val = 100;
	*old = 0;
	st = rc_atomic(&t.pair, IBV_WR_ATOMIC_FETCH_AND_ADD, old,
	               t.src_mr->lkey, (uintptr_t)dst, (uint32_t)fi_mr_key(mr),
	               5, 0);
	*done = *old == 100 && *val == 105;
	snprintf(why, sizeof(why), "status %s, old %llu, value %llu",
	         rc_status_str(st), (unsigned long long)*old,
	         (unsigned long long)*val);
	fi_close(&mr->fid);
	return st;
}

static void case_atomics(void)
{
	struct fid_domain *plain, *atomic;
	bool done;
	int st;

	if (mt_domain(&t, MODE, 0, 0, &plain) ||
	    mt_domain(&t, MODE, FI_ATOMIC | FI_RMA, 0, &atomic)) {
		vm_case_fail("verbs_atomics", "domains");
		return;
	}
	st = fetch_add(atomic, FI_REMOTE_WRITE, &done);
	/* fi_mr: F77 V5 */
	vm_case("verbs_fi_atomic_domain_write_region_takes_atomics",
	        st == IBV_WC_SUCCESS && done, "%s", why);
	st = fetch_add(atomic, FI_REMOTE_READ, &done);
	/* fi_mr: V5 */
	vm_case("verbs_fi_atomic_domain_read_only_region_refuses_atomics",
	        st == IBV_WC_REM_ACCESS_ERR && !done, "%s", why);
	st = fetch_add(plain, FI_REMOTE_WRITE, &done);
	/* fi_mr: F77 V5 */
	vm_case("verbs_without_fi_atomic_remote_atomics_refused",
	        st == IBV_WC_REM_ACCESS_ERR && !done, "%s", why);
	fi_close(&plain->fid);
	fi_close(&atomic->fid);
}

/* FI_RMA_PMEM maps to FLUSH_PERSISTENT: only where the device flushes,
 * and rxe then checks that the pages are persistent (DRAM is not). */
static void case_pmem(void)
{
	struct fid_domain *d;
	struct fid_mr *mr;
	int ret = mt_domain(&t, MODE, FI_RMA | FI_RMA_PMEM, 0, &d), reg;

	if (!mt_dev_flush_persistent(&t)) {
		/* fi_mr: F107 V6 */
		vm_case("verbs_rma_pmem_without_device_flush_is_enodata",
		        ret == -FI_ENODATA, "ret %s", hmr_strerror(ret));
		if (!ret)
			fi_close(&d->fid);
		return;
	}
	if (ret) {
		vm_case_fail("verbs_rma_pmem_dram_refused_by_the_nic",
		             "domain: %s", hmr_strerror(ret));
		return;
	}
	reg = mt_reg(d, dst, LEN, RW, FI_RMA_PMEM, &mr);
	if (!reg)
		fi_close(&mr->fid);
	ret = mt_reg(d, dst, LEN, RW, 0, &mr);
	if (!ret)
		fi_close(&mr->fid);
	/* fi_mr: F107 V6 */
	vm_case("verbs_rma_pmem_dram_refused_by_the_nic",
	        reg == -FI_EINVAL && !ret, "FI_RMA_PMEM %s, plain %s",
	        hmr_strerror(reg), hmr_strerror(ret));
	fi_close(&d->fid);
}

/* Bind a type 1 window over the first 4 KiB of the region (remote write);
 * returns the completion status, or -1. */
static int bind_window(struct fid_mr *mr, struct ibv_mw *mw)
{
	struct ibv_mw_bind bind = {
	        .wr_id = 3,
	        .send_flags = IBV_SEND_SIGNALED,
	        .bind_info = {.mr = hmr_verbs_mr(mr),
	                      .addr = (uintptr_t)dst,
	                      .length = 4096,
	                      .mw_access_flags = IBV_ACCESS_REMOTE_WRITE},
	};
	int ret;

	if (rc_ready(&t.pair))
		return -1;
	ret = ibv_bind_mw(t.pair.qp_a, mw, &bind);
	if (ret) {
		snprintf(why, sizeof(why), "ibv_bind_mw: %s", strerror(ret));
		return -1;
	}
	return rc_wait(&t.pair);
}

/* A window bound over an MW_BIND region takes remote writes, and keeps
 * its MR open until the window is freed. */
static void case_mw_bind(void)
{
	struct fid_domain *d;
	struct ibv_mw *mw = ibv_alloc_mw(t.pd, IBV_MW_TYPE_1);
	struct fid_mr *mr;
	int st, closed;

	if (!mw || mt_domain(&t, MODE, 0, HMR_DOMAIN_MW_BIND, &d) ||
	    mt_reg(d, dst, LEN, RW, 0, &mr)) {
		vm_case_fail("verbs_mw_bind", "set-up: %s", strerror(errno));
		return;
	}
	memset(dst, 0, LEN);
	memset(t.src, 0x4d, 8);
	st = bind_window(mr, mw);
	if (st == IBV_WC_SUCCESS)
		st = mt_rdma(&t, IBV_WR_RDMA_WRITE, 0, 8, (uintptr_t)dst + 16,
		             mw->rkey);
	/* fi_mr: V7 */
	vm_case("verbs_mw_bind_domain_window_binds_and_write_lands",
	        st == IBV_WC_SUCCESS && dst[16] == 0x4d, "status %s, byte %#x",
	        rc_status_str(st), dst[16] & 0xff);
	/* ibv_dereg_mr(3): not while a window is bound. */
	closed = fi_close(&mr->fid);
	st = closed ? mt_rdma(&t, IBV_WR_RDMA_WRITE, 0, 8, (uintptr_t)dst,
	                      (uint32_t)fi_mr_key(mr))
	            : -1;
	/* fi_mr: V22 V23 */
	vm_case("verbs_close_with_bound_window_is_ebusy_and_mr_stays",
	        closed == -FI_EBUSY && st == IBV_WC_SUCCESS,
	        "fi_close %s, write %s", hmr_strerror(closed),
	        rc_status_str(st));
	ibv_dealloc_mw(mw);
	closed = closed ? fi_close(&mr->fid) : 0;
	/* fi_mr: V19 V23 */
	vm_case("verbs_close_after_window_freed_succeeds", closed == 0,
	        "fi_close %s", hmr_strerror(closed));
	fi_close(&d->fid);
}

/* Without HMR_DOMAIN_MW_BIND the NIC refuses to bind a window. */
static void case_mw_bind_refused(void)
{
	struct fid_domain *d;
	struct ibv_mw *mw = ibv_alloc_mw(t.pd, IBV_MW_TYPE_1);
	struct fid_mr *mr;
	int st;

	if (!mw || mt_domain(&t, MODE, 0, 0, &d) ||
	    mt_reg(d, dst, LEN, RW, 0, &mr)) {
		vm_case_fail("verbs_without_mw_bind_window_bind_fails",
		             "set-up: %s", strerror(errno));
		return;
	}
	st = bind_window(mr, mw);
	/* fi_mr: V7 */
	vm_case("verbs_without_mw_bind_window_bind_fails", st != IBV_WC_SUCCESS,
	        "bind %s", rc_status_str(st));
	ibv_dealloc_mw(mw);
	fi_close(&mr->fid);
	fi_close(&d->fid);
}

/* MW_BIND device memory: a dma-buf MR cannot have it, so hmr goes to
 * peer memory without exporting (dma-buf import forced on). */
static void case_mw_bind_device(void)
{
	/* fi_mr: V18 */
	const char *name = "verbs_mw_bind_device_memory_skips_dmabuf";
	unsigned long long dev = 0;
	struct iovec iov;
	struct fi_mr_attr attr = {
	        .iov_count = 1, .access = RW, .iface = FI_HMEM_CUDA};
	struct fid_domain *d;
	struct fid_mr *mr = NULL;
	unsigned long c0;
	int ret;

	mt_peermem(1);
	setenv("HMR_VERBS_DMABUF", "on", 1);
	if (mt_load_sim() || mt_cu_alloc(&dev, DLEN) ||
	    mt_domain(&t, MODE, FI_HMEM, HMR_DOMAIN_MW_BIND, &d)) {
		vm_case_fail(name, "set-up");
		unsetenv("HMR_VERBS_DMABUF");
		return;
	}
	unsetenv("HMR_VERBS_DMABUF");
	iov.iov_base = (void *)(uintptr_t)dev;
	iov.iov_len = DLEN;
	attr.mr_iov = &iov;
	c0 = mt_sim_calls("cuMemGetHandleForAddressRange");
	ret = fi_mr_regattr(d, &attr, 0, &mr);
	vm_case(name,
	        !ret && mt_sim_calls("cuMemGetHandleForAddressRange") == c0,
	        "ret %s, exports %lu", hmr_strerror(ret),
	        mt_sim_calls("cuMemGetHandleForAddressRange") - c0);
	if (mr)
		fi_close(&mr->fid);
	fi_close(&d->fid);
	mt_cu_free(dev);
}

static void case_relaxed_ordering(void)
{
	struct fid_domain *d;
	struct fid_mr *mr;
	struct mt_target tg;
	int ret = mt_domain(&t, MODE, 0, HMR_DOMAIN_RELAXED_ORDERING, &d);

	if (!ret)
		ret = mt_reg(d, dst, LEN, RW, 0, &mr);
	if (ret) {
		vm_case_fail("verbs_relaxed_ordering_write_read_land", "%s",
		             hmr_strerror(ret));
		return;
	}
	tg = target(mr);
	/* fi_mr: V12 */
	vm_case("verbs_relaxed_ordering_write_read_land",
	        !mt_write_read_at(&t, &tg, 100, why, sizeof(why)), "%s", why);
	fi_close(&mr->fid);
	fi_close(&d->fid);
}

/* HUGETLB and the implicit MR are refused where they cannot apply. */
static void case_refused_flags(void)
{
	struct fid_domain *d;
	int ret = mt_domain(&t, MODE, 0, HMR_DOMAIN_HUGETLB, &d);

	/* fi_mr: V11 */
	vm_case("verbs_hugetlb_on_pinned_domain_is_eopnotsupp",
	        ret == -FI_EOPNOTSUPP, "ret %s", hmr_strerror(ret));
	if (!ret)
		fi_close(&d->fid);
	ret = mt_domain(&t, MODE & ~(uint64_t)FI_MR_VIRT_ADDR, 0,
	                HMR_DOMAIN_ODP_IMPLICIT, &d);
	vm_case("verbs_odp_implicit_needs_virt_addr", ret == -FI_ENODATA,
	        "ret %s", hmr_strerror(ret));
	if (!ret)
		fi_close(&d->fid);
	if (mt_dev_odp_implicit(&t))
		return; /* verbs_odp registers through it. */
	ret = mt_domain(&t, MODE, 0, HMR_DOMAIN_ODP_IMPLICIT, &d);
	vm_case("verbs_odp_implicit_without_device_support_is_eopnotsupp",
	        ret == -FI_EOPNOTSUPP, "ret %s", hmr_strerror(ret));
	if (!ret)
		fi_close(&d->fid);
}

int main(void)
{
	mt_sim_env();
	if (mt_init(&t, "rxe0"))
		return vm_case_exit();
	dst = aligned_alloc(4096, LEN);
	memset(dst, 0, LEN);
	case_local_write_rule();
	case_atomics();
	case_pmem();
	case_mw_bind();
	case_mw_bind_refused();
	case_mw_bind_device();
	case_relaxed_ordering();
	case_refused_flags();
	free(dst);
	mt_fini(&t);
	return vm_case_exit();
}
