/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* bench_verbs.c: registration cost: hmr on verbs vs raw ibv_reg_mr. */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hmr/hmr.h>

#include "bench.h"
#include "bench_util.h"

/*
 * Per size, `pairs` register+deregister pairs of raw ibv_reg_mr/ibv_dereg_mr
 * and of hmr's fi_mr_reg/fi_close on the same protection domain (the NIC
 * work is identical; the difference is hmr's), interleaved one by one so
 * both see the same machine (TCG in the VM is noisy).  Each pair is timed
 * alone; printed are the medians in microseconds and hmr / raw.  Goal: at
 * most 1.05 at 4 KiB.
 */
enum { MAX_PAIRS = 2000 };

static const int ibv_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                              IBV_ACCESS_REMOTE_READ;
/* What hmr registers against each: with remote rights (never cached),
 * and local only (what the cache serves). */
static const uint64_t remote = FI_REMOTE_READ | FI_REMOTE_WRITE;
static const uint64_t local = FI_SEND | FI_RECV | FI_READ | FI_WRITE;

/* ibv_reg_mr + ibv_dereg_mr with `access`, in us. */
static double one_raw(struct ibv_pd *pd, void *buf, size_t len, int access)
{
	uint64_t t0 = bench_now_ns();
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, access);

	if (!mr || ibv_dereg_mr(mr))
		return -1;
	return (double)(bench_now_ns() - t0) / 1000.0;
}

/*
 * The raw pair plus hmr's own bookkeeping without a NIC (a software-domain
 * fi_mr_reg+fi_close right after the NIC's calls): what hmr's code costs
 * when it runs just after the NIC's system calls, as it does inside
 * fi_mr_reg.  Under QEMU's TCG each system call leaves code cold, so
 * this shows how much of hmr/ibv is hmr's code and how much the place it
 * runs in.
 */
static double one_raw_plus_sw(struct ibv_pd *pd, struct fid_domain *sw,
                              void *buf, size_t len)
{
	uint64_t t0 = bench_now_ns();
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, ibv_access);
	struct fid_mr *smr;

	if (!mr || fi_mr_reg(sw, buf, len, FI_REMOTE_READ, 0, 1, 0, &smr, NULL))
		return -1;
	if (ibv_dereg_mr(mr) || fi_close(&smr->fid))
		return -1;
	return (double)(bench_now_ns() - t0) / 1000.0;
}

/* fi_mr_reg + fi_close with `access`, in us. */
static double one_hmr(struct fid_domain *domain, void *buf, size_t len,
                      uint64_t access)
{
	uint64_t t0 = bench_now_ns();
	struct fid_mr *mr;

	if (fi_mr_reg(domain, buf, len, access, 0, 0, 0, &mr, NULL) ||
	    fi_close(&mr->fid))
		return -1;
	return (double)(bench_now_ns() - t0) / 1000.0;
}

struct series {
	double raw[MAX_PAIRS], hmr[MAX_PAIRS], lf[MAX_PAIRS], ctl[MAX_PAIRS];
};

/* One size: `pairs` rounds, each timing every contender once, in an order
 * that rotates so none always goes first. */
static int run_size(struct ibv_pd *pd, struct fid_domain *hmr,
                    struct fid_domain *lf, struct fid_domain *sw, size_t len,
                    int pairs, struct series *t)
{
	char *buf = malloc(len);
	int r, k;

	memset(buf, 1, len); /* Backed before registering. */
	for (r = 0; r < pairs; r++) {
		for (k = 0; k < 4; k++) {
			switch ((r + k) % 4) {
			case 0:
				t->raw[r] = one_raw(pd, buf, len, ibv_access);
				break;
			case 1:
				t->hmr[r] = one_hmr(hmr, buf, len, remote);
				break;
			case 2:
				t->lf[r] =
				        lf ? one_hmr(lf, buf, len, remote) : 1;
				break;
			case 3:
				t->ctl[r] = one_raw_plus_sw(pd, sw, buf, len);
				break;
			}
		}
		if (t->raw[r] < 0 || t->hmr[r] < 0 || t->lf[r] < 0 ||
		    t->ctl[r] < 0) {
			free(buf);
			return -1;
		}
	}
	free(buf);
	return 0;
}

/*
 * The registration cache: fi_mr_reg + fi_close of memory without remote
 * rights (what the cache serves; doc/cache.md) against raw ibv_reg_mr +
 * ibv_dereg_mr with local write, interleaved one by one.
 */
static int run_cached(struct ibv_pd *pd, struct fid_domain *domain,
                      struct series *t)
{
	static const size_t sizes[] = {4096, 1 << 20};
	struct hmr_mr_cache_stats st = HMR_MR_CACHE_STATS_INIT;
	size_t s;
	int r, pairs = 1000;

	printf("verbs cache: local-only fi_mr_reg+fi_close through the "
	       "cache vs ibv_reg_mr+ibv_dereg_mr (us per pair, medians)\n");
	printf("  %9s %9s %9s %10s\n", "size", "ibv", "cached", "cached/ibv");
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		char *buf = malloc(sizes[s]);

		memset(buf, 1, sizes[s]);
		for (r = 0; r < pairs; r++) {
			t->raw[r] = one_raw(pd, buf, sizes[s],
			                    IBV_ACCESS_LOCAL_WRITE);
			t->hmr[r] = one_hmr(domain, buf, sizes[s], local);
			if (t->raw[r] < 0 || t->hmr[r] < 0) {
				free(buf);
				return -1;
			}
		}
		free(buf);
		printf("  %9zu %9.2f %9.3f %10.4f\n", sizes[s],
		       bench_median(t->raw, (size_t)pairs),
		       bench_median(t->hmr, (size_t)pairs),
		       bench_median(t->hmr, (size_t)pairs) /
		               bench_median(t->raw, (size_t)pairs));
	}
	if (!hmr_mr_cache_stats(domain, &st))
		printf("  cache: %llu hits, %llu misses, monitor %s%s%s\n",
		       (unsigned long long)st.hits,
		       (unsigned long long)st.misses, st.monitor,
		       st.active ? "" : ", inactive: ",
		       st.active ? "" : st.why);
	return 0;
}

int bench_verbs(int argc, char **argv)
{
	static const size_t sizes[] = {4096, 65536, 1 << 20, 16 << 20,
	                               64 << 20};
	static struct series t;
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain, *sw, *lf = NULL;
	void *lf_domain = NULL, *lf_fabric = NULL;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char why[256];
	size_t s;
	int n = 0, ret = 0;

	(void)argc, (void)argv;
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		fprintf(stderr, "verbs: no RDMA device here (run it in the VM: "
		                "ctest -L bench)\n");
		if (list)
			ibv_free_device_list(list);
		return 77;
	}
	ctx = ibv_open_device(list[0]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd)
		return fprintf(stderr, "verbs: cannot open %s\n",
		               ibv_get_device_name(list[0])),
		       1;
	attr.kind = HMR_DOMAIN_VERBS;
	attr.pd = pd;
	if (hmr_domain_open(&attr, &domain) || hmr_domain_open(NULL, &sw))
		return fprintf(stderr, "verbs: hmr_domain_open failed\n"), 1;
	if (bench_lf_open(ibv_get_device_name(list[0]), &lf_domain, &lf_fabric,
	                  why, sizeof(why)) == 0)
		lf = lf_domain;
	else
		printf("verbs: libfabric column left out: %s\n", why);
	printf("verbs: register+deregister on %s, medians over rounds that "
	       "time each once (us per pair)\n"
	       "  ibv: ibv_reg_mr+ibv_dereg_mr; hmr: fi_mr_reg+fi_close on an "
	       "hmr verbs domain (same pd);\n"
	       "  libfabric: the same calls on libfabric %s's verbs domain, "
	       "MR cache off;\n"
	       "  ctl: ibv plus hmr's bookkeeping alone (a software-domain "
	       "fi_mr_reg+fi_close) right after;\n"
	       "  paired: the median of hmr/ibv within each round\n",
	       ibv_get_device_name(list[0]), lf ? "1.17" : "(absent)");
	printf("  %9s %9s %9s %9s %8s %8s %8s %8s\n", "size", "ibv", "hmr",
	       "libfabric", "hmr/ibv", "paired", "hmr/lf", "ctl/ibv");
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t len = sizes[s];
		int pairs = len <= 65536 ? 1000 : len <= (1 << 20) ? 100 : 12;
		double mr_, mh, ml, mc, mp;
		int r;

		if (run_size(pd, domain, lf, sw, len, pairs, &t)) {
			fprintf(stderr, "verbs: registration failed\n");
			ret = 1;
			break;
		}
		mr_ = bench_median(t.raw, (size_t)pairs);
		mh = bench_median(t.hmr, (size_t)pairs);
		ml = bench_median(t.lf, (size_t)pairs);
		mc = bench_median(t.ctl, (size_t)pairs);
		/* The rounds pair the contenders: the median of the per-round
		 * ratio cancels the machine's drift between rounds. */
		for (r = 0; r < pairs; r++)
			t.ctl[r] = t.hmr[r] / t.raw[r];
		mp = bench_median(t.ctl, (size_t)pairs);
		printf("  %9zu %9.2f %9.2f %9.2f %8.3f %8.3f %8.3f %8.3f%s\n",
		       len, mr_, mh, lf ? ml : 0.0, mh / mr_, mp,
		       lf ? mh / ml : 0.0, mc / mr_,
		       len == 4096 ? "  (goal hmr/ibv <= 1.05)" : "");
	}
	if (!ret && run_cached(pd, domain, &t)) {
		fprintf(stderr, "verbs: cached registration failed\n");
		ret = 1;
	}
	if (lf)
		bench_lf_close(lf_domain, lf_fabric);
	fi_close(&domain->fid);
	fi_close(&sw->fid);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return ret;
}
