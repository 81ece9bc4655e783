/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_offset.c: offset addressing (no FI_MR_VIRT_ADDR) on a real NIC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "mr_util.h"
#include "vm_case.h"

/*
 * A domain whose caller does not offer FI_MR_VIRT_ADDR registers with
 * hca_va 0, so a peer's RDMA names a byte by its offset from the region's
 * start and the NIC resolves it.  Each case posts real RDMA on rxe0
 * against host memory and against simulated CUDA memory (the peer-memory
 * path: a fake sysfs says nvidia_peermem is loaded, and the simulator's
 * device memory is host-accessible, as rxe pins it as plain pages).
 */
#define LEN  8192
#define DLEN (1 << 16)
#define RW   (FI_REMOTE_WRITE | FI_REMOTE_READ)
#define MODE HMR_MR_MODE_DEFAULT
#define OFFS (HMR_MR_MODE_DEFAULT & ~(uint64_t)FI_MR_VIRT_ADDR)

static struct mt t;
static char why[256];

static int reg_on(struct fid_domain *d, void *p, size_t len, bool device,
                  struct fid_mr **mr)
{
	struct iovec iov = {p, len};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = RW,
	                          .iface = device ? FI_HMEM_CUDA
	                                          : FI_HMEM_SYSTEM};

	*mr = NULL;
	return fi_mr_regattr(d, &attr, 0, mr);
}

static void case_modes(void)
{
	struct fid_domain *d;
	uint64_t m = 0;
	int ret = mt_domain(&t, OFFS, 0, 0, &d);

	if (!ret) {
		m = mt_mr_mode(d);
		fi_close(&d->fid);
	}
	/* fi_mr: V8 */
	vm_case("verbs_offset_domain_opens_without_virt_addr",
	        !ret && !(m & FI_MR_VIRT_ADDR) && (m & FI_MR_PROV_KEY) &&
	                (m & FI_MR_LOCAL),
	        "ret %s, mr_mode %#llx", hmr_strerror(ret),
	        (unsigned long long)m);
	ret = mt_domain(&t, MODE, 0, 0, &d);
	if (!ret) {
		m = mt_mr_mode(d);
		fi_close(&d->fid);
	}
	/* fi_mr: V15 */
	vm_case("verbs_virt_addr_kept_when_offered",
	        !ret && (m & FI_MR_VIRT_ADDR), "ret %s, mr_mode %#llx",
	        hmr_strerror(ret), (unsigned long long)m);
}

/* Offsets 0, 1 and len - 8 land; offset len (and, under offsets, the
 * virtual address) is a remote access error. */
static void offsets(const char *what, struct fid_domain *d, char *p, size_t len,
                    bool device, bool virt)
{
	static const char *at[] = {"0", "1", "len_minus_8"};
	size_t off[] = {0, 1, len - 8};
	struct mt_target tg = {.p = p, .len = len, .device = device};
	struct fid_mr *mr;
	char name[128];
	int ret = reg_on(d, p, len, device, &mr), i, bad = 0;

	if (ret) {
		vm_case_fail(what, "registration: %s", hmr_strerror(ret));
		return;
	}
	tg.base = virt ? (uintptr_t)p : 0;
	tg.rkey = (uint32_t)fi_mr_key(mr);
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%s_write_read_at_%s", what,
		         at[i]);
		if (virt) /* One case for the three under VIRT_ADDR. */
			bad |= mt_write_read_at(&t, &tg, off[i], why,
			                        sizeof(why));
		else
			vm_case(name,
			        !mt_write_read_at(&t, &tg, off[i], why,
			                          sizeof(why)),
			        "%s", why);
	}
	snprintf(name, sizeof(name), "%s_write_read_at_0_1_len_minus_8", what);
	if (virt)
		vm_case(name, !bad, "%s", why);
	snprintf(name, sizeof(name), "%s_at_len_is_remote_access_error", what);
	vm_case(name,
	        !mt_write_refused(&t, &tg, tg.base + len, why, sizeof(why)),
	        "%s", why);
	if (!virt) {
		snprintf(name, sizeof(name),
		         "%s_virtual_address_is_not_an_offset", what);
		vm_case(name,
		        !mt_write_refused(&t, &tg, (uintptr_t)p, why,
		                          sizeof(why)),
		        "%s", why);
	}
	fi_close(&mr->fid);
}

static void case_host(void)
{
	char *buf = aligned_alloc(4096, 2 * LEN);
	struct fid_domain *off, *virt;

	if (mt_domain(&t, OFFS, 0, 0, &off) ||
	    mt_domain(&t, MODE, 0, 0, &virt)) {
		vm_case_fail("verbs_offset_host", "domains");
		return;
	}
	memset(buf, 0, 2 * LEN);
	offsets("verbs_offset_host", off, buf, LEN, false, false);
	offsets("verbs_virt_addr_host", virt, buf, LEN, false, true);
	fi_close(&off->fid);
	fi_close(&virt->fid);
	free(buf);
}

static void case_cuda(void)
{
	unsigned long long dev = 0;
	struct fid_domain *off, *virt;

	mt_peermem(1);
	if (mt_load_sim() || mt_cu_alloc(&dev, DLEN) ||
	    mt_domain(&t, OFFS, FI_HMEM, 0, &off) ||
	    mt_domain(&t, MODE, FI_HMEM, 0, &virt)) {
		vm_case_fail("verbs_offset_cuda", "simulator %s or domains",
		             getenv("HMR_CUDA_LIBRARY"));
		return;
	}
	offsets("verbs_offset_cuda", off, (char *)(uintptr_t)dev, DLEN, true,
	        false);
	offsets("verbs_virt_addr_cuda", virt, (char *)(uintptr_t)dev, DLEN,
	        true, true);
	fi_close(&off->fid);
	fi_close(&virt->fid);
	mt_cu_free(dev);
}

/*
 * The kernel gives a region only a NIC address with its own page offset
 * (ib_uverbs_reg_mr, ibv_reg_dmabuf_mr(3)), so a buffer 100 bytes into a
 * page cannot be addressed from 0: hmr refuses with -FI_EINVAL rather
 * than shift the peer's offsets, for host memory and, before exporting
 * anything, for device memory (with the peer-memory module loaded and
 * dma-buf import forced on, both paths are open).
 */
static void case_mid_page(void)
{
	/* fi_mr: V17 */
	const char *name = "verbs_offset_mid_page_region_is_einval";
	char *buf = aligned_alloc(4096, LEN);
	unsigned long long dev = 0;
	unsigned long c0, c1;
	struct fid_domain *d, *hd;
	struct fid_mr *mr;
	int rh, rd;

	mt_peermem(1);
	setenv("HMR_VERBS_DMABUF", "on", 1);
	if (mt_cu_alloc(&dev, DLEN) || mt_domain(&t, OFFS, 0, 0, &d) ||
	    mt_domain(&t, OFFS, FI_HMEM, 0, &hd)) {
		vm_case_fail(name, "set-up");
		unsetenv("HMR_VERBS_DMABUF");
		return;
	}
	unsetenv("HMR_VERBS_DMABUF");
	rh = reg_on(d, buf + 100, 4096, false, &mr);
	c0 = mt_sim_calls("cuMemGetHandleForAddressRange");
	rd = reg_on(hd, (char *)(uintptr_t)dev + 100, 4096, true, &mr);
	c1 = mt_sim_calls("cuMemGetHandleForAddressRange");
	vm_case(name, rh == -FI_EINVAL && rd == -FI_EINVAL && c1 == c0,
	        "host %s, cuda %s, exports %lu", hmr_strerror(rh),
	        hmr_strerror(rd), c1 - c0);
	fi_close(&hd->fid);
	fi_close(&d->fid);
	mt_cu_free(dev);
	free(buf);
}

/* The caller's own dma-buf (FI_MR_DMABUF) at an offset into a page: hmr
 * refuses before any NIC call, whatever the fd is (a memfd here). */
static void case_caller_dmabuf(void)
{
	/* fi_mr: V17 */
	const char *name = "verbs_offset_caller_dmabuf_mid_page_is_einval";
	struct fi_mr_dmabuf buf = {.offset = 1, .len = 4096};
	struct fi_mr_attr attr = {.dmabuf = &buf, .access = RW};
	struct fid_domain *d;
	struct fid_mr *mr = NULL;
	int ret;

	buf.fd = memfd_create("offset-dmabuf", 0);
	if (buf.fd < 0 || ftruncate(buf.fd, 3 * 4096) ||
	    mt_domain(&t, OFFS, FI_HMEM, 0, &d)) {
		vm_case_fail(name, "set-up");
		return;
	}
	ret = fi_mr_regattr(d, &attr, FI_MR_DMABUF, &mr);
	vm_case(name, ret == -FI_EINVAL, "ret %s", hmr_strerror(ret));
	if (mr)
		fi_close(&mr->fid);
	fi_close(&d->fid);
	close(buf.fd);
}

/* fi_mr_raw_attr's base is 0 under offsets; a peer domain maps the raw
 * key to the rkey and addresses base + offset. */
static void case_raw_key(void)
{
	/* fi_mr: V8 V15 */
	const char *name = "verbs_offset_raw_key_base_0_maps_to_rkey";
	char *buf = aligned_alloc(4096, LEN);
	struct fid_domain *d, *peer;
	struct fid_mr *mr;
	struct mt_target tg = {.p = buf, .len = LEN};
	uint8_t raw[128];
	size_t size = sizeof(raw);
	uint64_t base = 1, key = 0;
	int ret;

	if (mt_domain(&t, OFFS, 0, 0, &d) || mt_domain(&t, OFFS, 0, 0, &peer) ||
	    reg_on(d, buf, LEN, false, &mr)) {
		vm_case_fail(name, "set-up");
		return;
	}
	ret = fi_mr_raw_attr(mr, &base, raw, &size, 0);
	if (!ret)
		ret = fi_mr_map_raw(peer, base, raw, size, &key, 0);
	tg.base = base;
	tg.rkey = (uint32_t)key;
	vm_case(name,
	        !ret && base == 0 && key == fi_mr_key(mr) &&
	                !mt_write_read_at(&t, &tg, 1, why, sizeof(why)),
	        "ret %s, base %#llx, key %#llx vs %#llx: %s", hmr_strerror(ret),
	        (unsigned long long)base, (unsigned long long)key,
	        (unsigned long long)fi_mr_key(mr), ret ? "" : why);
	if (!ret)
		fi_mr_unmap_key(peer, key);
	fi_close(&mr->fid);
	fi_close(&peer->fid);
	fi_close(&d->fid);
	free(buf);
}

/* The lkey of an offset-addressed region takes offsets too: an ibv_sge
 * built with hmr_verbs_sge_addr works, the virtual address does not. */
static void case_local_sge(void)
{
	/* fi_mr: V8 V15 */
	const char *name = "verbs_offset_lkey_addresses_by_offset_too";
	char *buf = aligned_alloc(4096, LEN), *dst = aligned_alloc(4096, LEN);
	const struct hmr_verbs_desc *desc;
	struct fid_domain *d;
	struct fid_mr *src, *tgt;
	uint32_t rkey;
	int st, va;

	if (mt_domain(&t, OFFS, 0, 0, &d) ||
	    mt_reg(d, buf, LEN, FI_WRITE | FI_READ, 0, &src) ||
	    reg_on(d, dst, LEN, false, &tgt)) {
		vm_case_fail(name, "set-up");
		return;
	}
	desc = fi_mr_desc(src);
	rkey = (uint32_t)fi_mr_key(tgt);
	memset(dst, 0, LEN);
	memset(buf + 64, 0x6c, 8);
	st = rc_rdma(&t.pair, IBV_WR_RDMA_WRITE,
	             (void *)(uintptr_t)hmr_verbs_sge_addr(desc, buf + 64), 8,
	             desc->lkey, 8, rkey);
	va = rc_rdma(&t.pair, IBV_WR_RDMA_WRITE, buf + 64, 8, desc->lkey, 16,
	             rkey);
	vm_case(name,
	        desc->iova == 0 && desc->start == (uintptr_t)buf &&
	                st == IBV_WC_SUCCESS && dst[8] == 0x6c &&
	                va != IBV_WC_SUCCESS && dst[16] == 0,
	        "sge at the offset: %s, byte %#x; at the address: %s",
	        rc_status_str(st), dst[8] & 0xff, rc_status_str(va));
	fi_close(&src->fid);
	fi_close(&tgt->fid);
	fi_close(&d->fid);
	free(buf);
	free(dst);
}

/* A sub-MR is a region of its own: its offsets start at its own start. */
static void case_sub_mr(void)
{
	/* fi_mr: V8 */
	const char *name = "verbs_offset_sub_mr_counts_from_its_own_start";
	char *buf = aligned_alloc(4096, LEN);
	struct iovec iov = {buf + 4096, 4096};
	struct fid_domain *d;
	struct fid_mr *base, *sub = NULL;
	struct fi_mr_attr attr = {.mr_iov = &iov, .iov_count = 1, .access = RW};
	struct mt_target tg = {.p = buf + 4096, .len = 4096};
	int ret, bad;

	memset(buf, 0, LEN);
	if (mt_domain(&t, OFFS, 0, 0, &d) ||
	    reg_on(d, buf, LEN, false, &base)) {
		vm_case_fail(name, "set-up");
		return;
	}
	attr.base_mr = base;
	ret = fi_mr_regattr(d, &attr, 0, &sub);
	if (!ret) {
		tg.rkey = (uint32_t)fi_mr_key(sub);
		bad = mt_write_read_at(&t, &tg, 0, why, sizeof(why)) ||
		      mt_write_refused(&t, &tg, 4096, why, sizeof(why));
		ret = bad ? -1 : 0;
		fi_close(&sub->fid);
	} else {
		snprintf(why, sizeof(why), "%s", hmr_strerror(ret));
	}
	vm_case(name, !ret, "%s", why);
	fi_close(&base->fid);
	fi_close(&d->fid);
	free(buf);
}

int main(void)
{
	mt_sim_env(); /* Before hmr's first memory query. */
	if (mt_init(&t, "rxe0"))
		return vm_case_exit();
	case_modes();
	case_host();
	case_raw_key();
	case_sub_mr();
	case_local_sge();
	case_caller_dmabuf();
	case_cuda();
	case_mid_page();
	mt_fini(&t);
	return vm_case_exit();
}
