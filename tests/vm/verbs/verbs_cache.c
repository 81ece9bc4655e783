/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_cache.c: the verbs domain's registration cache on rxe, for real. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "rc_pair.h"
#include "vm_case.h"

/*
 * The cache shares NIC registrations between MRs without remote rights
 * and keeps them after fi_close; registrations with remote rights are
 * never shared, so a closed MR's rkey stops working.  Each case checks
 * what the NIC does, not only what hmr says: data moved through lkeys of
 * cached registrations must be the memory's current bytes.
 */
#define LEN   8192
#define LOCAL (FI_SEND | FI_RECV | FI_READ | FI_WRITE)

static struct fid_domain *domain;
static struct rc_pair pair;
static char *dst;

static uint32_t lkey_of(struct fid_mr *mr)
{
	return ((struct hmr_verbs_desc *)fi_mr_desc(mr))->lkey;
}

static int reg(void *buf, size_t len, uint64_t access, struct fid_mr **mr)
{
	return fi_mr_reg(domain, buf, len, access, 0, 0, 0, mr, NULL);
}

static struct hmr_mr_cache_stats stats(void)
{
	struct hmr_mr_cache_stats st = HMR_MR_CACHE_STATS_INIT;

	hmr_mr_cache_stats(domain, &st);
	return st;
}

/* RDMA WRITE from buf (through mr's lkey) into dst (through dst_mr's rkey);
 * true when dst then holds buf's bytes. */
static int write_from(struct fid_mr *mr, char *buf, size_t len,
                      struct fid_mr *dst_mr)
{
	const struct hmr_verbs_desc *desc = fi_mr_desc(mr);
	int st;

	memset(dst, 0, LEN);
	st = rc_rdma(&pair, IBV_WR_RDMA_WRITE,
	             (void *)(uintptr_t)hmr_verbs_sge_addr(desc, buf),
	             (uint32_t)len, lkey_of(mr), (uintptr_t)dst,
	             (uint32_t)fi_mr_key(dst_mr));
	return st == IBV_WC_SUCCESS && !memcmp(buf, dst, len);
}

static void case_shared_and_kept(struct fid_mr *dst_mr)
{
	char *buf = aligned_alloc(4096, LEN);
	struct fid_mr *a = NULL, *b = NULL, *c = NULL;
	struct hmr_mr_cache_stats st0 = stats(), st;

	if (reg(buf, LEN, LOCAL, &a) || reg(buf + 64, 128, FI_SEND, &b)) {
		vm_case_fail("verbs_cache_local_registration_shared",
		             "registration failed");
		goto out;
	}
	memset(buf, 0x42, LEN);
	/* fi_mr: F114 */
	vm_case("verbs_cache_local_registration_shared",
	        hmr_verbs_mr(a) == hmr_verbs_mr(b) &&
	                write_from(b, buf + 64, 128, dst_mr),
	        "ibv_mr %p and %p; a sub-range's lkey moves its bytes",
	        (void *)hmr_verbs_mr(a), (void *)hmr_verbs_mr(b));
	fi_close(&b->fid);
	fi_close(&a->fid);
	a = b = NULL;
	if (reg(buf, LEN, FI_SEND, &c)) {
		vm_case_fail("verbs_cache_keeps_closed_local_registration",
		             "registration failed");
		goto out;
	}
	st = stats();
	/* fi_mr: F114 */
	vm_case("verbs_cache_keeps_closed_local_registration",
	        st.hits >= st0.hits + 2 && st.active &&
	                write_from(c, buf, LEN, dst_mr),
	        "hits %llu -> %llu, active %d (%s)",
	        (unsigned long long)st0.hits, (unsigned long long)st.hits,
	        st.active, st.why);
out:
	if (c)
		fi_close(&c->fid);
	free(buf);
}

/* fi_close of an MR with remote rights: its rkey no longer works, even
 * while a cached local registration of the same memory lives on. */
static void case_closed_rkey(struct fid_mr *src_mr, char *src)
{
	struct fid_mr *remote = NULL, *local = NULL, *again = NULL;
	uint64_t key;
	int st, untouched;

	if (reg(dst, LEN, LOCAL, &local) ||
	    reg(dst, LEN, FI_REMOTE_WRITE | FI_REMOTE_READ, &remote) ||
	    reg(dst, LEN, FI_REMOTE_WRITE, &again)) {
		vm_case_fail("verbs_closed_mr_rkey_refused",
		             "registration failed");
		goto out;
	}
	/* fi_mr: F114 */
	vm_case("verbs_cache_remote_registration_not_shared",
	        hmr_verbs_mr(remote) != hmr_verbs_mr(again) &&
	                hmr_verbs_mr(remote) != hmr_verbs_mr(local),
	        "ibv_mr %p %p %p", (void *)hmr_verbs_mr(remote),
	        (void *)hmr_verbs_mr(again), (void *)hmr_verbs_mr(local));
	key = fi_mr_key(remote);
	fi_close(&remote->fid);
	remote = NULL;
	memset(src, 0x6b, LEN);
	memset(dst, 0, LEN);
	st = rc_rdma(&pair, IBV_WR_RDMA_WRITE, src, LEN, lkey_of(src_mr),
	             (uintptr_t)dst, (uint32_t)key);
	untouched = dst[0] == 0 && dst[LEN - 1] == 0;
	/* fi_mr: F22 */
	vm_case("verbs_closed_mr_rkey_refused",
	        st == IBV_WC_REM_ACCESS_ERR && untouched,
	        "status %s, target %s", rc_status_str(st),
	        untouched ? "untouched" : "modified");
out:
	if (remote)
		fi_close(&remote->fid);
	if (again)
		fi_close(&again->fid);
	if (local)
		fi_close(&local->fid);
}

/* An idle cached registration of memory that is unmapped goes with it: a
 * new mapping at the same address is registered anew, and the NIC reads
 * the new pages, not the old ones it had pinned. */
static void case_unmap(struct fid_mr *dst_mr)
{
	struct hmr_mr_cache_stats st0, st;
	struct fid_mr *mr = NULL;
	char *p, *q;

	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	         -1, 0);
	memset(p, 0x11, LEN);
	if (reg(p, LEN, LOCAL, &mr)) {
		vm_case_fail("verbs_cache_unmap_drops_registration",
		             "registration failed");
		return;
	}
	fi_close(&mr->fid);
	st0 = stats();
	munmap(p, LEN);
	st = stats();
	q = mmap(p, LEN, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (q != p) {
		vm_case_fail("verbs_cache_unmap_drops_registration",
		             "could not map %p again", (void *)p);
		return;
	}
	memset(q, 0x22, LEN);
	if (reg(q, LEN, LOCAL, &mr)) {
		vm_case_fail("verbs_cache_unmap_drops_registration",
		             "registration failed");
		munmap(q, LEN);
		return;
	}
	/* fi_mr: F114 */
	vm_case("verbs_cache_unmap_drops_registration",
	        st.invalidations > st0.invalidations &&
	                st.entries < st0.entries &&
	                strstr(st.monitor_how, "munmap ") &&
	                write_from(mr, q, LEN, dst_mr),
	        "invalidations %llu -> %llu, entries %zu -> %zu, monitor %s "
	        "(%s)",
	        (unsigned long long)st0.invalidations,
	        (unsigned long long)st.invalidations, st0.entries, st.entries,
	        st.monitor, st.monitor_how);
	fi_close(&mr->fid);
	munmap(q, LEN);
}

/* After fork the child neither crashes nor gets the parent's cached
 * registration; the parent's keeps working. */
static void case_fork(struct fid_mr *dst_mr)
{
	char *buf = aligned_alloc(4096, LEN);
	struct fid_mr *mr = NULL, *warm = NULL;
	int status = -1;
	pid_t pid;

	memset(buf, 0x5c, LEN);
	if (reg(buf, LEN, LOCAL, &warm)) {
		vm_case_fail("verbs_cache_fork_child_bypasses",
		             "registration failed");
		free(buf);
		return;
	}
	pid = fork();
	if (pid == 0) {
		int ret = reg(buf, LEN, LOCAL, &mr);

		/* A clean error is fine; the parent's ibv_mr is not. */
		if (!ret && hmr_verbs_mr(mr) == hmr_verbs_mr(warm))
			_exit(3);
		if (!ret)
			fi_close(&mr->fid);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	vm_case("verbs_cache_fork_child_bypasses",
	        WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	                write_from(warm, buf, LEN, dst_mr),
	        "child status %#x; parent's registration %s", status,
	        "checked by an RDMA WRITE");
	fi_close(&warm->fid);
	free(buf);
}

static void case_off(void)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct hmr_mr_cache_stats st = HMR_MR_CACHE_STATS_INIT;
	struct fid_domain *d;
	struct fid_mr *a = NULL, *b = NULL;
	char *buf = aligned_alloc(4096, LEN);
	int ret;

	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = "rxe0";
	attr.flags = HMR_DOMAIN_CACHE_OFF;
	ret = hmr_domain_open(&attr, &d);
	if (ret) {
		vm_case_fail("verbs_cache_off_flag", "%s", hmr_strerror(ret));
		free(buf);
		return;
	}
	fi_mr_reg(d, buf, LEN, LOCAL, 0, 0, 0, &a, NULL);
	fi_mr_reg(d, buf, LEN, LOCAL, 0, 0, 0, &b, NULL);
	ret = hmr_mr_cache_stats(d, &st);
	vm_case("verbs_cache_off_flag",
	        a && b && hmr_verbs_mr(a) != hmr_verbs_mr(b) &&
	                ret == -FI_ENOSYS,
	        "stats %s", hmr_strerror(ret));
	if (a)
		fi_close(&a->fid);
	if (b)
		fi_close(&b->fid);
	fi_close(&d->fid);
	free(buf);
}

int main(void)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_mr *src_mr = NULL, *dst_mr = NULL;
	char *src = aligned_alloc(4096, LEN);
	int ret;

	dst = aligned_alloc(4096, LEN);
	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = "rxe0";
	ret = hmr_domain_open(&attr, &domain);
	if (ret) {
		vm_case_fail("verbs_cache_domain_open", "%s",
		             hmr_strerror(ret));
		return vm_case_exit();
	}
	if (rc_wait_gid(hmr_verbs_pd(domain)->context, 0, 10000) ||
	    rc_pair_create(&pair, hmr_verbs_pd(domain), hmr_verbs_pd(domain),
	                   0) ||
	    reg(src, LEN, LOCAL, &src_mr) ||
	    reg(dst, LEN, FI_REMOTE_WRITE, &dst_mr)) {
		vm_case_fail("verbs_cache_setup", "%s", pair.err);
		return vm_case_exit();
	}
	case_shared_and_kept(dst_mr);
	case_closed_rkey(src_mr, src);
	case_unmap(dst_mr);
	case_fork(dst_mr);
	case_off();
	fi_close(&dst_mr->fid);
	fi_close(&src_mr->fid);
	rc_pair_destroy(&pair);
	ret = fi_close(&domain->fid);
	vm_case("verbs_cache_domain_closes_clean", ret == 0, "%s",
	        hmr_strerror(ret));
	free(src);
	free(dst);
	return vm_case_exit();
}
