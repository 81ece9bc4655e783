/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_odp.c: on-demand paging (7.3's rxe): unbacked and remapped memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "mr_util.h"
#include "vm_case.h"

/*
 * A verbs domain on a device with ODP, whose caller does not offer
 * FI_MR_ALLOCATED, registers host memory with IBV_ACCESS_ON_DEMAND: the
 * NIC faults pages in when it touches them and follows the process's page
 * tables when they change.  Each ODP case has its pinned counterpart, so
 * the difference is seen, not assumed.
 *
 * rxe's ODP (7.3.4) drops the offset within a page (a WRITE to p + 4104
 * lands at p + 4096, a READ likewise) and resolves the NIC address as the
 * virtual address (so offset addressing, hca_va 0, gets remote access
 * errors): these cases address whole pages, by virtual address.
 */
#define LEN  (64 * 1024)
#define HUGE (2 * 1024 * 1024)
#define RW   (FI_REMOTE_WRITE | FI_REMOTE_READ)
#define PIN  HMR_MR_MODE_DEFAULT
#define ODP  (HMR_MR_MODE_DEFAULT & ~(uint64_t)FI_MR_ALLOCATED)

static struct mt t;
static char why[256];

static char *map(void *at, size_t len, int flags)
{
	char *p = mmap(at, len, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Pages of [p, p + len) resident in memory. */
static size_t resident(char *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 0, i;
	unsigned char vec[LEN / 4096];

	if (len / page > sizeof(vec) || mincore(p, len, vec))
		return (size_t)-1;
	for (i = 0; i < len / page; i++)
		n += vec[i] & 1;
	return n;
}

static void case_modes(void)
{
	struct fid_domain *d;
	uint64_t m = 0;
	int ret = mt_domain(&t, ODP, 0, 0, &d);

	if (!ret) {
		m = mt_mr_mode(d);
		fi_close(&d->fid);
	}
	/* fi_mr: V9 */
	vm_case("verbs_odp_domain_opens_without_allocated",
	        !ret && !(m & FI_MR_ALLOCATED), "ret %s, mr_mode %#llx",
	        hmr_strerror(ret), (unsigned long long)m);
	ret = mt_domain(&t, PIN, 0, 0, &d);
	if (!ret) {
		m = mt_mr_mode(d);
		fi_close(&d->fid);
	}
	vm_case("verbs_odp_device_keeps_allocated_when_offered",
	        !ret && (m & FI_MR_ALLOCATED), "ret %s, mr_mode %#llx",
	        hmr_strerror(ret), (unsigned long long)m);
}

/* An RDMA WRITE of 8 bytes at page-aligned offset off of a never-touched
 * range: the NIC faults in exactly that page, and the bytes are there. */
static int nic_faults_in(char *p, uint64_t base, uint32_t rkey, size_t off)
{
	size_t pages;
	int st;

	memset(t.src, 0x7e, 8);
	st = mt_rdma(&t, IBV_WR_RDMA_WRITE, 0, 8, base + off, rkey);
	pages = resident(p, LEN);
	if (st == IBV_WC_SUCCESS && pages == 1 && !memcmp(p + off, t.src, 8) &&
	    !p[off - 1] && !p[off + 8])
		return 0;
	snprintf(why, sizeof(why),
	         "write %s, then %zu pages resident, byte %#x",
	         rc_status_str(st), pages, p[off] & 0xff);
	return -1;
}

/*
 * A never-touched range: an on-demand registration leaves it unbacked and
 * an RDMA WRITE into it lands; a pinned one faults every page in first.
 */
static void case_unbacked(const char *name, uint64_t mode, bool odp)
{
	char *p = map(NULL, LEN, 0), *q = odp ? "odp" : "pinned";
	struct fid_domain *d;
	struct fid_mr *mr;
	size_t before, after;
	uint64_t base;
	int ret;

	if (!p || mt_domain(&t, mode, 0, 0, &d)) {
		vm_case_fail(name, "set-up");
		return;
	}
	before = resident(p, LEN);
	ret = mt_reg(d, p, LEN, RW, 0, &mr);
	after = resident(p, LEN);
	if (ret) {
		vm_case_fail(name, "%s registration: %s", q, hmr_strerror(ret));
		goto out;
	}
	base = mt_mr_mode(d) & FI_MR_VIRT_ADDR ? (uintptr_t)p : 0;
	why[0] = '\0';
	if (odp)
		vm_case(name,
		        before == 0 && after == 0 &&
		                !nic_faults_in(p, base, (uint32_t)fi_mr_key(mr),
		                               4096),
		        "resident pages %zu, then %zu; %s", before, after, why);
	else
		vm_case(name, before == 0 && after == LEN / 4096,
		        "resident pages %zu, then %zu", before, after);
	fi_close(&mr->fid);
out:
	fi_close(&d->fid);
	munmap(p, LEN);
}

/*
 * Register, unmap, map fresh memory at the same address, fill it: an
 * on-demand MR reads and writes the new pages; a pinned MR still reads
 * the old ones (which is why FI_MR_ALLOCATED forbids this).
 */
static void case_remap(const char *name, uint64_t mode, bool odp)
{
	char *p = map(NULL, LEN, 0);
	struct fid_domain *d;
	struct fid_mr *mr;
	int st, wst = -1;
	char got = 0;

	if (!p || mt_domain(&t, mode, 0, 0, &d)) {
		vm_case_fail(name, "set-up");
		return;
	}
	memset(p, 0x11, LEN);
	if (mt_reg(d, p, LEN, RW, 0, &mr)) {
		vm_case_fail(name, "registration");
		goto out;
	}
	if (munmap(p, LEN) || map(p, LEN, MAP_FIXED) != p) {
		vm_case_fail(name, "remap: %s", strerror(errno));
		goto out_mr;
	}
	memset(p, 0x22, LEN);
	t.src[0] = 0;
	st = mt_rdma(&t, IBV_WR_RDMA_READ, 0, 8, (uintptr_t)p + 4096,
	             (uint32_t)fi_mr_key(mr));
	got = t.src[0];
	if (odp) {
		memset(t.src, 0x33, 8);
		wst = mt_rdma(&t, IBV_WR_RDMA_WRITE, 0, 8, (uintptr_t)p + 8192,
		              (uint32_t)fi_mr_key(mr));
		vm_case(name,
		        st == IBV_WC_SUCCESS && got == 0x22 &&
		                wst == IBV_WC_SUCCESS && p[8192] == 0x33 &&
		                p[8199] == 0x33 && p[8200] == 0x22,
		        "read %s byte %#x, write %s byte %#x",
		        rc_status_str(st), got & 0xff, rc_status_str(wst),
		        p[8192] & 0xff);
	} else {
		vm_case(name, st == IBV_WC_SUCCESS && got == 0x11,
		        "read %s byte %#x", rc_status_str(st), got & 0xff);
	}
out_mr:
	fi_close(&mr->fid);
out:
	fi_close(&d->fid);
	munmap(p, LEN);
}

/*
 * HMR_DOMAIN_HUGETLB on an on-demand domain, over MAP_HUGETLB memory: the
 * flag reaches the NIC.  rxe (7.3) refuses it (EOPNOTSUPP) where the same
 * registration without it succeeds; a NIC that takes it gets a write.
 */
static void case_hugetlb(void)
{
	/* fi_mr: V11 */
	const char *name = "verbs_odp_hugetlb_flag_reaches_the_nic";
	FILE *f = fopen("/proc/sys/vm/nr_hugepages", "w");
	struct fid_domain *d, *plain;
	struct fid_mr *mr;
	struct mt_target tg;
	int ret, rp;
	char *p;

	if (f) {
		fputs("4\n", f);
		fclose(f);
	}
	p = map(NULL, HUGE, MAP_HUGETLB);
	if (!p || mt_domain(&t, ODP, 0, HMR_DOMAIN_HUGETLB, &d) ||
	    mt_domain(&t, ODP, 0, 0, &plain)) {
		vm_case_fail(name, "huge page %s, or domains",
		             p ? "mapped" : strerror(errno));
		return;
	}
	rp = mt_reg(plain, p, HUGE, RW, 0, &mr);
	if (!rp)
		fi_close(&mr->fid);
	ret = mt_reg(d, p, HUGE, RW, 0, &mr);
	snprintf(why, sizeof(why), "with %s, without %s", hmr_strerror(ret),
	         hmr_strerror(rp));
	if (!ret) {
		tg = (struct mt_target){.p = p,
		                        .len = HUGE,
		                        .base = (uintptr_t)p,
		                        .rkey = (uint32_t)fi_mr_key(mr)};
		ret = mt_write_read_at(&t, &tg, HUGE / 2, why, sizeof(why));
		fi_close(&mr->fid);
		vm_case(name, !ret, "%s", why);
	} else {
		vm_case(name, ret == -FI_EOPNOTSUPP && !rp, "%s", why);
	}
	fi_close(&plain->fid);
	fi_close(&d->fid);
	munmap(p, HUGE);
}

int main(void)
{
	if (mt_init(&t, "rxe0"))
		return vm_case_exit();
	if (!mt_dev_odp(&t)) {
		vm_case_fail("verbs_odp_device", "rxe0 reports no ODP for RC "
		                                 "WRITE and READ (kernel 6.15 "
		                                 "or later has it)");
		return vm_case_exit();
	}
	case_modes();
	/* fi_mr: F39 V9 */
	case_unbacked("verbs_odp_unbacked_range_registers_and_write_lands", ODP,
	              true);
	case_unbacked("verbs_pinned_registration_faults_pages_in", PIN, false);
	/* fi_mr: F39 V9 */
	case_remap("verbs_odp_remapped_memory_seen_by_the_nic", ODP, true);
	case_remap("verbs_pinned_mr_reads_old_pages_after_remap", PIN, false);
	case_hugetlb();
	mt_fini(&t);
	return vm_case_exit();
}
