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

static double one_raw(struct ibv_pd *pd, void *buf, size_t len)
{
	uint64_t t0 = bench_now_ns();
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, ibv_access);

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

static double one_hmr(struct fid_domain *domain, void *buf, size_t len)
{
	uint64_t t0 = bench_now_ns();
	struct fid_mr *mr;

	if (fi_mr_reg(domain, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0,
	              0, &mr, NULL) ||
	    fi_close(&mr->fid))
		return -1;
	return (double)(bench_now_ns() - t0) / 1000.0;
}

int bench_verbs(int argc, char **argv)
{
	static const size_t sizes[] = {4096, 65536, 1 << 20, 16 << 20,
	                               64 << 20};
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct fid_domain *domain, *sw;
	struct ibv_pd *pd;
	static double raw[MAX_PAIRS], hmr[MAX_PAIRS], rsw[MAX_PAIRS];
	size_t s;
	int n = 0, r, ret = 0;

	(void)argc, (void)argv;
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		fprintf(stderr, "verbs: no RDMA device here (run it in the VM: "
		                "tests/vm)\n");
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
	printf("verbs: register+deregister on %s, median over interleaved "
	       "pairs (us per pair)\n",
	       ibv_get_device_name(list[0]));
	printf("  %10s %10s %10s %8s %14s\n", "size", "ibv", "hmr", "hmr/ibv",
	       "ibv+hmr-sw/ibv");
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t len = sizes[s];
		int pairs = len <= 65536 ? 2000 : len <= (1 << 20) ? 200 : 20;
		char *buf = malloc(len);
		double mr_, mh, ms;

		memset(buf, 1, len); /* Backed before registering. */
		for (r = 0; r < pairs; r++) {
			/* Alternate which goes first: no order bias. */
			if (r % 2)
				hmr[r] = one_hmr(domain, buf, len);
			raw[r] = one_raw(pd, buf, len);
			if (!(r % 2))
				hmr[r] = one_hmr(domain, buf, len);
			rsw[r] = one_raw_plus_sw(pd, sw, buf, len);
			if (raw[r] < 0 || hmr[r] < 0 || rsw[r] < 0) {
				fprintf(stderr, "verbs: registration failed\n");
				ret = 1;
				break;
			}
		}
		mr_ = bench_median(raw, (size_t)r);
		mh = bench_median(hmr, (size_t)r);
		ms = bench_median(rsw, (size_t)r);
		printf("  %10zu %10.2f %10.2f %8.3f %14.3f%s\n", len, mr_, mh,
		       mh / mr_, ms / mr_,
		       len == 4096 ? "  (goal <= 1.05)" : "");
		free(buf);
	}
	fi_close(&domain->fid);
	fi_close(&sw->fid);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return ret;
}
