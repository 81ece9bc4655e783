/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_faults.c: every libibverbs call of a verbs registration, failed. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hmr/hmr.h>

#include "vm_case.h"

/* fault_shim.c, linked ahead of libibverbs. */
void vm_fault_arm(long k);
int vm_fault_fired(void);

/*
 * The fault walk: for k = 1, 2, ... the k-th libibverbs call of one
 * operation fails (ENOMEM, as the real call does when the kernel is out
 * of resources) until an operation completes without reaching call k: then
 * every call has been failed once.  Each failure must come back as a
 * negative -FI_E* code with nothing left behind (no fd, and the next
 * attempt, unfailed, works), never a crash.
 */
#define LEN       8192
#define MAX_STEPS 64

static int open_domain(struct fid_domain **d)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = "rxe0";
	return hmr_domain_open(&attr, d);
}

/* A failed probe (the dma-buf import probe) is a documented fallback:
 * the domain opens without what it probes.  Anything else fails open. */
static void walk_open(void)
{
	struct fid_domain *d;
	int k, ret = 0, fds = vm_open_fds(), bad = 0, fallbacks = 0;

	for (k = 1; k < MAX_STEPS; k++) {
		vm_fault_arm(k);
		ret = open_domain(&d);
		vm_fault_arm(0);
		if (!ret)
			fi_close(&d->fid);
		if (!vm_fault_fired())
			break;
		fallbacks += ret == 0;
		if (ret > 0 || vm_open_fds() != fds) {
			bad = 1;
			break;
		}
	}
	vm_case("verbs_fault_walk_domain_open", !bad && k < MAX_STEPS && k > 1,
	        "%d calls failed one by one (%d fell back and opened); last: "
	        "%s, fds %d -> %d",
	        k - 1, fallbacks, hmr_strerror(ret), fds, vm_open_fds());
}

static void walk_reg(const char *name, uint64_t access)
{
	struct fid_domain *d;
	struct fid_mr *mr;
	char *buf = aligned_alloc(4096, LEN);
	int k, ret = 0, fds, bad = 0;

	memset(buf, 1, LEN);
	if (open_domain(&d)) {
		vm_case_fail(name, "domain open failed");
		free(buf);
		return;
	}
	fds = vm_open_fds();
	for (k = 1; k < MAX_STEPS; k++) {
		hmr_mr_cache_flush(d); /* Each attempt a miss. */
		vm_fault_arm(k);
		ret = fi_mr_reg(d, buf, LEN, access, 0, 0, 0, &mr, NULL);
		vm_fault_arm(0);
		if (!vm_fault_fired()) {
			if (!ret)
				fi_close(&mr->fid);
			break;
		}
		if (ret >= 0 || mr != NULL || vm_open_fds() != fds) {
			bad = 1;
			break;
		}
	}
	/* Unfailed, it works, and the domain closes with nothing left. */
	if (!bad && !fi_mr_reg(d, buf, LEN, access, 0, 0, 0, &mr, NULL))
		fi_close(&mr->fid);
	else
		bad = 1;
	ret = fi_close(&d->fid);
	vm_case(name, !bad && !ret && k > 1 && k < MAX_STEPS,
	        "%d calls failed one by one; domain close %s", k - 1,
	        hmr_strerror(ret));
	free(buf);
}

/* ibv_dereg_mr failing: fi_close says so and the MR stays open, to be
 * closed again (ibv_dereg_mr(3): a bound memory window makes it fail). */
static void dereg_fails(void)
{
	struct fid_domain *d;
	struct fid_mr *mr;
	char *buf = aligned_alloc(4096, LEN);
	int first = 0, second = -1;

	if (!open_domain(&d) &&
	    !fi_mr_reg(d, buf, LEN, FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL)) {
		vm_fault_arm(1);
		first = fi_close(&mr->fid);
		vm_fault_arm(0);
		second = fi_close(&mr->fid);
		fi_close(&d->fid);
	}
	/* fi_mr: V22 */
	vm_case("verbs_fault_dereg_keeps_mr_open",
	        first == -FI_EBUSY && second == 0, "first close %s, second %s",
	        hmr_strerror(first), hmr_strerror(second));
	free(buf);
}

int main(void)
{
	walk_open();
	walk_reg("verbs_fault_walk_reg_remote",
	         FI_REMOTE_WRITE | FI_REMOTE_READ);
	walk_reg("verbs_fault_walk_reg_cached", FI_SEND | FI_RECV);
	dereg_fails();
	return vm_case_exit();
}
