/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* mpi_rdma.c: two MPI ranks RDMA-WRITE into each other's registered memory. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hmr/hmr.h>

#include "rc_qp.h"

/*
 * What a collective library does with hmr on a NIC:
 *
 *   1. each rank opens an hmr verbs domain on its NIC and registers two
 *      regions with FI_REMOTE_WRITE: host memory, and GPU memory when a
 *      CUDA driver is there (host memory again otherwise);
 *   2. it publishes each region as a raw key with its base address
 *      (fi_mr_raw_attr), and its QP's address, through MPI;
 *   3. it maps the peer's raw keys to keys (fi_mr_map_raw: on verbs, the
 *      rkey) and RDMA-WRITEs a line into both of the peer's regions;
 *   4. after a barrier, each rank reads what its peer wrote.
 *
 * Usage: mpirun -np 2 mpi_rdma NIC-OF-RANK-0 NIC-OF-RANK-1
 *
 * Two "hosts" in one machine (tests/vm/mpi/run.sh does this): two network
 * namespaces joined by a veth pair, an rxe device on each end.  With no
 * ssh, mpirun starts its daemons through an agent that enters the host's
 * namespace:  mpirun --host hosta,hostb --mca plm_rsh_agent ns-agent.sh,
 * where ns-agent.sh runs `ip netns exec "$1" sh -c "$*"` (after shift).
 * mpirun itself runs inside hosta, so both daemons reach it over the veth.
 */
#define LEN     4096
#define RAW_MAX 64

struct region {
	uint64_t base; /* What fi_mr_raw_attr says to address it by. */
	uint8_t raw[RAW_MAX];
	size_t raw_size;
};

struct card { /* What a rank tells its peer. */
	struct rc_addr qp;
	struct region r[2];
};

static int fail(int rank, const char *what, int ret)
{
	fprintf(stderr, "rank %d: %s: %s\n", rank, what, hmr_strerror(ret));
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

/* Register buf as what it is, and describe it for the peer. */
static int reg(struct fid_domain *d, void *buf, struct fid_mr **mr,
               struct region *r, const char **kind)
{
	struct fi_mr_attr attr = {.iov_count = 1, .access = FI_REMOTE_WRITE};
	struct iovec iov = {buf, LEN};
	struct hmr_hmem_info info;
	int ret = hmr_hmem_query(buf, LEN, &info);

	attr.mr_iov = &iov;
	attr.iface = info.iface;
	attr.device.reserved = info.device;
	*kind = hmr_hmem_iface_name(info.iface);
	if (!ret)
		ret = fi_mr_regattr(d, &attr, 0, mr);
	r->raw_size = RAW_MAX;
	return ret ? ret
	           : fi_mr_raw_attr(*mr, &r->base, r->raw, &r->raw_size, 0);
}

int main(int argc, char **argv)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_mr *mr[2], *src_mr;
	struct fid_domain *domain;
	struct card me, peer;
	const char *kind[2];
	char *src = calloc(1, LEN), back[LEN], want[LEN];
	void *buf[2] = {calloc(1, LEN), NULL};
	int rank, size, k, st, ok = 1, gpu;
	struct rc_qp q;
	uint64_t key;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || argc < 3)
		return fail(rank, "usage", -FI_EINVAL);
	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = argv[1 + rank];
	attr.caps = FI_HMEM;
	if ((st = hmr_domain_open(&attr, &domain)))
		return fail(rank, "hmr_domain_open", st);
	gpu = !hmr_hmem_alloc(FI_HMEM_CUDA, 0, LEN, &buf[1]);
	if (!gpu)
		buf[1] = calloc(1, LEN);
	for (k = 0; k < 2; k++)
		if ((st = reg(domain, buf[k], &mr[k], &me.r[k], &kind[k])))
			return fail(rank, "register", st);
	if ((st = fi_mr_reg(domain, src, LEN, FI_WRITE, 0, 0, 0, &src_mr,
	                    NULL)))
		return fail(rank, "fi_mr_reg (source)", st);
	if (rc_qp_create(hmr_verbs_pd(domain), &q))
		return fail(rank, "rc_qp_create", -FI_EIO);
	me.qp = q.self;
	printf("rank %d: on %s, registered %s and %s memory; raw keys of %zu "
	       "bytes\n",
	       rank, attr.nic_name, kind[0], kind[1], me.r[0].raw_size);

	/* The exchange a collective library does at communicator setup. */
	MPI_Sendrecv(&me, sizeof(me), MPI_BYTE, 1 - rank, 0, &peer,
	             sizeof(peer), MPI_BYTE, 1 - rank, 0, MPI_COMM_WORLD,
	             MPI_STATUS_IGNORE);
	if (rc_qp_connect(&q, &peer.qp))
		return fail(rank, "rc_qp_connect", -FI_EIO);
	MPI_Barrier(MPI_COMM_WORLD); /* Both QPs accept writes now. */
	for (k = 0; k < 2; k++) {
		st = fi_mr_map_raw(domain, peer.r[k].base, peer.r[k].raw,
		                   peer.r[k].raw_size, &key, 0);
		if (st)
			return fail(rank, "fi_mr_map_raw", st);
		snprintf(src, LEN, "rank %d wrote this over RDMA", rank);
		st = rc_qp_write(
		        &q, src, LEN,
		        ((struct hmr_verbs_desc *)fi_mr_desc(src_mr))->lkey,
		        peer.r[k].base, (uint32_t)key);
		printf("rank %d: RDMA WRITE into rank %d's region %d, key "
		       "%#llx: %s\n",
		       rank, 1 - rank, k, (unsigned long long)key,
		       st < 0 ? "not posted" : ibv_wc_status_str(st));
		ok &= st == IBV_WC_SUCCESS;
		fi_mr_unmap_key(domain, key);
	}
	MPI_Barrier(MPI_COMM_WORLD); /* The peer's writes have completed. */
	snprintf(want, LEN, "rank %d wrote this over RDMA", 1 - rank);
	for (k = 0; k < 2; k++) {
		if (k == 1 && gpu)
			hmr_hmem_copy_from(back, buf[k], LEN);
		else
			memcpy(back, buf[k], LEN);
		printf("rank %d: my %s memory says \"%s\"\n", rank, kind[k],
		       back);
		ok &= !strcmp(back, want);
	}
	rc_qp_destroy(&q);
	for (k = 0; k < 2; k++)
		fi_close(&mr[k]->fid);
	fi_close(&src_mr->fid);
	fi_close(&domain->fid);
	MPI_Finalize();
	return !ok;
}
