/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* mr_util.h: what verbs_offset, verbs_flags and verbs_odp share. */
#ifndef HMR_VM_MR_UTIL_H
#define HMR_VM_MR_UTIL_H

#include <stdbool.h>

#include <hmr/hmr.h>

#include "rc_pair.h"

/*
 * One device (rxe0), one protection domain that the hmr domains under
 * test share (hmr_domain_attr.pd), and a loopback RC pair on it: QP A
 * posts from `src` (a plain ibv MR, so the initiator's side owes nothing
 * to hmr) against memory registered through hmr on the target side.  The
 * device's own answers (ibv_query_device_ex) say what to expect where
 * kernels differ, so one program runs on 6.1 and 7.3.
 */
#define MT_SRC_LEN (1 << 16)

struct mt {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct rc_pair pair;
	char *src;
	struct ibv_mr *src_mr;
	struct ibv_device_attr_ex dev;
};

/* Open rxe0 and connect the pair; prints a FAIL case and returns -1. */
int mt_init(struct mt *t, const char *nic);
void mt_fini(struct mt *t);

/* What the device reports. */
bool mt_dev_odp(const struct mt *t);
bool mt_dev_odp_implicit(const struct mt *t);
bool mt_dev_flush_persistent(const struct mt *t);

/* A verbs domain on t->pd asking mr_mode, caps and HMR_DOMAIN_* flags. */
int mt_domain(struct mt *t, uint64_t mr_mode, uint64_t caps, uint64_t flags,
              struct fid_domain **d);

/* The effective mr_mode (0 if it cannot be read). */
uint64_t mt_mr_mode(struct fid_domain *d);

/* fi_mr_reg of one range. */
int mt_reg(struct fid_domain *d, void *p, size_t len, uint64_t access,
           uint64_t flags, struct fid_mr **mr);

/* RDMA op of len bytes between src + src_off and raddr under rkey. */
int mt_rdma(struct mt *t, enum ibv_wr_opcode op, size_t src_off, uint32_t len,
            uint64_t raddr, uint32_t rkey);

/*
 * A registered target: where its bytes are (host, or device memory read
 * and written through hmr_hmem_copy_*), how long it is, and the address
 * of its offset 0 for the NIC (virtual address or 0).
 */
struct mt_target {
	char *p;
	size_t len;
	bool device;
	uint64_t base;
	uint32_t rkey;
};

/*
 * An RDMA WRITE of 8 bytes at offset off lands at p + off and nowhere
 * else, and an RDMA READ of those bytes returns what is there: 0, or -1
 * with the reason in why.
 */
int mt_write_read_at(struct mt *t, const struct mt_target *tg, size_t off,
                     char *why, size_t why_len);

/* An RDMA WRITE of 8 bytes at raddr completes with a remote access error
 * and leaves the target as it was: 0, or -1 with why. */
int mt_write_refused(struct mt *t, const struct mt_target *tg, uint64_t raddr,
                     char *why, size_t why_len);

/*
 * The simulated libcuda (HMR_CUDA_LIBRARY, set before hmr's first memory
 * query) from the application's side: device 0's context made current,
 * cuMemAlloc/cuMemFree, and the simulator's call counter.  Device memory
 * is host-accessible in the VM (HMR_SIM_CUDA_HOST_ACCESSIBLE=1): rxe pins
 * peer memory as plain pages.
 */
#define MT_SIM_CUDA "/payload/libcuda.so.1"
void mt_sim_env(void);
int mt_load_sim(void);
int mt_cu_alloc(unsigned long long *dev, size_t len);
int mt_cu_free(unsigned long long dev);
unsigned long mt_sim_calls(const char *name);

/* HMR_SYSFS_ROOT pointed at a fake sysfs with or without nvidia_peermem
 * (the peer-memory path for CUDA memory). */
void mt_peermem(int loaded);

#endif
