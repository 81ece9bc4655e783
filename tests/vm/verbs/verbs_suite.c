/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_suite.c: hmr's verbs domain on soft-RoCE: real RDMA through hmr keys.
 */
#include <dlfcn.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "dmabuf_src.h"
#include "rc_pair.h"
#include "verbs_vm.h"
#include "vm_case.h"

/*
 * Every case registers memory through hmr's API on a verbs domain over
 * rxe0 and lets the NIC use the key, desc and address hmr handed out: QP A
 * (local side) posts RDMA WRITE/READ against memory registered on the
 * target side, in loopback on one device.
 */
#define LEN 8192

static struct fid_domain *domain;
static struct rc_pair pair;
static char *src, *dst;
static struct fid_mr *src_mr;

static uint32_t lkey_of(struct fid_mr *mr)
{
	return ((struct hmr_verbs_desc *)fi_mr_desc(mr))->lkey;
}

static int open_verbs(struct fid_domain **d, const char *nic, uint64_t caps)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = nic;
	attr.caps = caps;
	return hmr_domain_open(&attr, d);
}

static int reg(void *buf, size_t len, uint64_t access, struct fid_mr **mr)
{
	return fi_mr_reg(domain, buf, len, access, 0, 0, 0, mr, NULL);
}

/* RDMA op from src (len bytes) to/from target address+key. */
static int rdma(enum ibv_wr_opcode op, uint32_t len, uint64_t raddr,
                uint64_t key)
{
	return rc_rdma(&pair, op, src, len, lkey_of(src_mr), raddr,
	               (uint32_t)key);
}

static void case_write_read(const char *name, int use_regattr)
{
	struct fid_mr *mr;
	struct iovec iov = {dst, LEN};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_WRITE | FI_REMOTE_READ};
	int ret, st;

	ret = use_regattr ? fi_mr_regattr(domain, &attr, 0, &mr)
	                  : reg(dst, LEN, attr.access, &mr);
	if (ret) {
		vm_case_fail(name, "registration: %s", hmr_strerror(ret));
		return;
	}
	memset(src, 0x5a, LEN);
	memset(dst, 0, LEN);
	st = rdma(IBV_WR_RDMA_WRITE, LEN, (uintptr_t)dst, fi_mr_key(mr));
	if (st != IBV_WC_SUCCESS || memcmp(src, dst, LEN) != 0) {
		vm_case_fail(name, "write: %s, bytes %s", rc_status_str(st),
		             memcmp(src, dst, LEN) ? "differ" : "arrived");
		goto out;
	}
	memset(dst + 100, 0x77, 64);
	memset(src, 0, LEN);
	st = rdma(IBV_WR_RDMA_READ, 64, (uintptr_t)dst + 100, fi_mr_key(mr));
	vm_case(name, st == IBV_WC_SUCCESS && src[0] == 0x77 && src[63] == 0x77,
	        "read: %s, byte %#x", rc_status_str(st), src[0] & 0xff);
out:
	fi_close(&mr->fid);
}

/* The NIC refuses, and the target is untouched. */
static void expect_refused(const char *name, struct fid_mr *mr,
                           enum ibv_wr_opcode op, uint32_t len, uint64_t raddr,
                           uint64_t key)
{
	int st, untouched;

	memset(src, 0x33, LEN);
	memset(dst, 0, LEN);
	st = rdma(op, len, raddr, key);
	untouched = dst[0] == 0 && dst[LEN - 1] == 0;
	vm_case(name, st == IBV_WC_REM_ACCESS_ERR && untouched,
	        "status %s, target %s", rc_status_str(st),
	        untouched ? "untouched" : "modified");
	(void)mr;
}

static void case_access(void)
{
	struct fid_mr *ro, *rw, *lw;
	uint64_t key;

	ro = rw = lw = NULL;
	if (reg(dst, LEN, FI_REMOTE_READ, &ro) ||
	    reg(dst, LEN, FI_REMOTE_WRITE | FI_REMOTE_READ, &rw) ||
	    reg(dst, LEN, FI_WRITE | FI_READ, &lw)) {
		vm_case_fail("verbs_access_setup", "registration failed");
		if (ro)
			fi_close(&ro->fid);
		if (rw)
			fi_close(&rw->fid);
		return;
	}
	/* fi_mr: F77 V3 */
	expect_refused("verbs_write_without_remote_write_refused", ro,
	               IBV_WR_RDMA_WRITE, 64, (uintptr_t)dst, fi_mr_key(ro));
	/* fi_mr: F75 V3 */
	expect_refused("verbs_local_only_mr_refuses_remote_write", lw,
	               IBV_WR_RDMA_WRITE, 64, (uintptr_t)dst, fi_mr_key(lw));
	expect_refused("verbs_write_past_end_refused", rw, IBV_WR_RDMA_WRITE,
	               64, (uintptr_t)dst + LEN - 32, fi_mr_key(rw));
	/* fi_mr: F2 F16 */
	expect_refused("verbs_wrong_key_refused", rw, IBV_WR_RDMA_WRITE, 64,
	               (uintptr_t)dst, fi_mr_key(rw) ^ 0x5500);
	fi_close(&ro->fid);
	fi_close(&lw->fid);
	/* Never more rights than asked: a write-only MR refuses reads. */
	if (!reg(dst, LEN, FI_REMOTE_WRITE, &ro)) {
		int st = rdma(IBV_WR_RDMA_READ, 64, (uintptr_t)dst,
		              fi_mr_key(ro));

		/* fi_mr: F76 F79 V4 */
		vm_case("verbs_read_without_remote_read_refused",
		        st == IBV_WC_REM_ACCESS_ERR, "status %s",
		        rc_status_str(st));
		fi_close(&ro->fid);
	}
	key = fi_mr_key(rw);
	fi_close(&rw->fid);
	/* fi_mr: F16 F22 V19 */
	expect_refused("verbs_closed_mr_key_refused", NULL, IBV_WR_RDMA_WRITE,
	               64, (uintptr_t)dst, key);
}

/* A peer maps our raw key and writes with what it got. */
static void case_raw_key(void)
{
	struct fid_domain *peer;
	struct fid_mr *mr;
	uint8_t raw[128];
	size_t size = sizeof(raw);
	uint64_t base, key = 0;
	int ret, st;

	if (reg(dst, LEN, FI_REMOTE_WRITE, &mr)) {
		vm_case_fail("verbs_raw_key_maps_to_rkey", "reg");
		return;
	}
	memset(src, 0x33, LEN);
	ret = open_verbs(&peer, "rxe0", 0);
	if (!ret)
		ret = fi_mr_raw_attr(mr, &base, raw, &size, 0);
	if (!ret)
		ret = fi_mr_map_raw(peer, base, raw, size, &key, 0);
	memset(dst, 0, LEN);
	st = ret ? -1 : rdma(IBV_WR_RDMA_WRITE, 64, base, key);
	/* fi_mr: F41 F58 V21 */
	vm_case("verbs_raw_key_maps_to_rkey",
	        !ret && key == fi_mr_key(mr) && base == (uintptr_t)dst &&
	                st == IBV_WC_SUCCESS && dst[0] == 0x33,
	        "ret %s, key %#llx vs rkey %#llx, status %s", hmr_strerror(ret),
	        (unsigned long long)key, (unsigned long long)fi_mr_key(mr),
	        rc_status_str(st));
	if (!ret) {
		fi_mr_unmap_key(peer, key);
		fi_close(&peer->fid);
	}
	fi_close(&mr->fid);
}

static bool device_odp(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex a;
	uint32_t rc = IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ;

	memset(&a, 0, sizeof(a));
	return ctx && !ibv_query_device_ex(ctx, NULL, &a) &&
	       (a.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
	       (a.odp_caps.per_transport_caps.rc_odp_caps & rc) == rc;
}

static void case_modes(void)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct ibv_context *ctx = rc_open_device("rxe0");
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct fid_domain *d;
	uint64_t mode = 0;
	int ret;

	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = "rxe0";
	ret = hmr_domain_open(&attr, &d);
	if (!ret) {
		hmr_domain_mr_mode(d, &mode);
		fi_close(&d->fid);
	}
	/* fi_mr: F10 F30 */
	vm_case("verbs_mr_mode_keeps_local_virt_allocated_prov_key",
	        !ret && mode == (FI_MR_LOCAL | FI_MR_VIRT_ADDR |
	                         FI_MR_ALLOCATED | FI_MR_PROV_KEY),
	        "ret %d mode %#llx", ret, (unsigned long long)mode);
	/* FI_MR_ALLOCATED stays needed where the device has no ODP (rxe
	 * before 6.15); with ODP (7.3) the domain opens without it. */
	attr.mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
	ret = hmr_domain_open(&attr, &d);
	if (device_odp(ctx))
		vm_case("verbs_with_odp_opens_without_allocated", ret == 0,
		        "ret %d", ret);
	else
		/* fi_mr: F11 F39 */
		vm_case("verbs_without_odp_needs_allocated", ret == -FI_ENODATA,
		        "ret %d", ret);
	if (!ret)
		fi_close(&d->fid);
	/* Relaxed ordering on request: an optional access flag the NIC may
	 * ignore (rxe does), never a failure. */
	attr.mr_mode = HMR_MR_MODE_DEFAULT;
	attr.flags = HMR_DOMAIN_RELAXED_ORDERING;
	ret = hmr_domain_open(&attr, &d);
	if (!ret) {
		struct fid_mr *mr;

		ret = fi_mr_reg(d, dst, LEN, FI_REMOTE_WRITE, 0, 0, 0, &mr,
		                NULL);
		if (!ret)
			fi_close(&mr->fid);
		fi_close(&d->fid);
	}
	/* fi_mr: V12 */
	vm_case("verbs_relaxed_ordering_registers", ret == 0, "ret %s",
	        hmr_strerror(ret));
	attr.flags = 0;
	/* A caller-owned pd is used and never freed. */
	attr.mr_mode = HMR_MR_MODE_DEFAULT;
	attr.nic_name = NULL;
	attr.pd = pd;
	ret = pd ? hmr_domain_open(&attr, &d) : -1;
	if (!ret) {
		ret = hmr_verbs_pd(d) == pd ? 0 : -2;
		fi_close(&d->fid);
	}
	/* fi_mr: V1 */
	vm_case("verbs_caller_pd_used_and_not_freed",
	        !ret && pd && ibv_dealloc_pd(pd) == 0, "ret %d", ret);
	if (ctx)
		ibv_close_device(ctx);
}

static void case_vgem(void)
{
	struct fi_mr_dmabuf buf = {.offset = 0, .len = 1 << 20};
	struct fi_mr_attr attr = {.dmabuf = &buf,
	                          .access = FI_REMOTE_WRITE | FI_REMOTE_READ};
	struct fid_domain *hd;
	struct fid_mr *mr;
	int fds, ret;

	if (open_verbs(&hd, "rxe0", FI_HMEM)) {
		vm_case_fail("verbs_vgem_dmabuf_refused_cleanly",
		             "cannot open an FI_HMEM verbs domain");
		return;
	}
	/* A real dma-buf of memory that is no memfd of ours. */
	buf.fd = vm_vgem_dmabuf(buf.len);
	if (buf.fd < 0) {
		fi_close(&hd->fid);
		vm_case_fail("verbs_vgem_dmabuf_refused_cleanly",
		             "no vgem dma-buf (%s)", strerror(errno));
		return;
	}
	fds = vm_open_fds();
	ret = fi_mr_regattr(hd, &attr, FI_MR_DMABUF, &mr);
	/* fi_mr: V16 V20 */
	vm_case("verbs_vgem_dmabuf_refused_cleanly",
	        ret == -FI_EOPNOTSUPP && vm_open_fds() == fds,
	        "ret %s, fds %d -> %d", hmr_strerror(ret), fds, vm_open_fds());
	if (!ret)
		fi_close(&mr->fid);
	close(buf.fd);
	fi_close(&hd->fid);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	int ret;

	hmr_vm_cuda_env();
	if (argc > 1)
		return hmr_vm_child(argc, argv);
	src = aligned_alloc(4096, LEN);
	dst = aligned_alloc(4096, LEN);
	ret = open_verbs(&domain, "rxe0", 0);
	if (ret) {
		vm_case_fail("verbs_domain_open_rxe0", "%s", hmr_strerror(ret));
		return vm_case_exit();
	}
	vm_case_pass("verbs_domain_open_rxe0");
	ctx = hmr_verbs_pd(domain)->context;
	if (rc_wait_gid(ctx, 0, 10000) ||
	    rc_pair_create(&pair, hmr_verbs_pd(domain), hmr_verbs_pd(domain),
	                   0)) {
		vm_case_fail("verbs_rc_pair", "%s", pair.err);
		return vm_case_exit();
	}
	if (reg(src, LEN, FI_WRITE | FI_READ, &src_mr)) {
		vm_case_fail("verbs_src_mr", "registration failed");
		return vm_case_exit();
	}
	/* fi_mr: F12 F15 F24 F25 F30 F35 F75 V1 V2 V21 */
	case_write_read("verbs_fi_mr_reg_host_write_read", 0);
	/* fi_mr: F12 */
	case_write_read("verbs_fi_mr_regattr_host_write_read", 1);
	case_access();
	case_raw_key();
	case_modes();
	case_vgem();
	hmr_vm_cuda_cases(&pair, src_mr, src);
	fi_close(&src_mr->fid);
	rc_pair_destroy(&pair);
	ret = fi_close(&domain->fid);
	/* fi_mr: V19 V22 */
	vm_case("verbs_domain_closes_clean", ret == 0, "%s", hmr_strerror(ret));
	free(src);
	free(dst);
	return vm_case_exit();
}
