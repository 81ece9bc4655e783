/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* driver.h: drive the library and the model side by side, compare answers. */
#ifndef HMR_TESTS_MODEL_DRIVER_H
#define HMR_TESTS_MODEL_DRIVER_H

/*
 * The driver opens a software domain from a configuration it draws, then
 * makes calls (registrations valid and invalid, sub-MRs, single-use keys,
 * binds, enables, refreshes, raw keys, closes, accesses) in the order its
 * choice source dictates, asks the model what each must answer, and
 * compares.  It never dereferences a registered address.
 *
 * The choice source is a seeded PRNG (tests/model) or a fuzzer's input
 * (tests/fuzz): the same generators serve both, so a crash input and a
 * failing seed describe the same kind of sequence.  With fuzz bytes,
 * drv_pick(n) takes one byte for n <= 256, two for n <= 65536, eight
 * otherwise (little endian) and answers value % n; drv_u64 takes eight.
 * An exhausted input answers 0 and ends the episode.
 *
 * A grant the model refuses, or a pointer other than the model's, always
 * fails.  The DRV_CHECK_* bits in drv_opts.checks add the other answers;
 * where a class is not checked the driver follows the library.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct drv_src {
	bool fuzz;
	uint64_t state; /* PRNG (splitmix64) state. */
	const uint8_t *data;
	size_t size, pos;
	bool done; /* Fuzz input exhausted. */
	/* When rec is set, every choice is also appended to it in the
	 * fuzz encoding: a PRNG episode recorded so is a fuzz input that
	 * replays it (drv_src_record; the caller frees rec). */
	uint8_t *rec;
	size_t rec_len, rec_cap;
};

void drv_src_seed(struct drv_src *s, uint64_t seed);
void drv_src_bytes(struct drv_src *s, const uint8_t *data, size_t size);
uint64_t drv_pick(struct drv_src *s, uint64_t n); /* In [0, n), n >= 1. */
uint64_t drv_u64(struct drv_src *s);
/* Start recording choices (again from empty); false without memory. */
bool drv_src_record(struct drv_src *s);

/* The answers compared besides grants and pointers. */
#define DRV_CHECK_ACCESS  (1u << 0) /* A refusal the model would grant. */
#define DRV_CHECK_REG     (1u << 1) /* Registrations, keys, *mr. */
#define DRV_CHECK_OBJ     (1u << 2) /* Domains, close, bind, enable. */
#define DRV_CHECK_RAW     (1u << 3) /* Raw attr, map, unmap. */
#define DRV_CHECK_REFRESH (1u << 4) /* fi_mr_refresh. */
#define DRV_CHECK_CNTR    (1u << 5) /* Counter values. */
#define DRV_CHECK_ALL     0x3fu

enum drv_op {
	DRV_OP_REG,
	DRV_OP_REGV,
	DRV_OP_REGATTR,
	DRV_OP_SUB,
	DRV_OP_ACCESS,
	DRV_OP_ACCESS_AUTH,
	DRV_OP_CLOSE,
	DRV_OP_BIND,
	DRV_OP_ENABLE,
	DRV_OP_REFRESH,
	DRV_OP_RAW_ATTR,
	DRV_OP_MAP_RAW,
	DRV_OP_UNMAP,
	DRV_OP_RES_OPEN,
	DRV_OP_RES_CLOSE,
	DRV_OP_CNTR_CHECK,
	DRV_OP_DOMAIN_CLOSE, /* Only while something keeps it busy. */
	DRV_OPS
};

/* How often each operation is drawn (weights summing to <= 256). */
struct drv_profile {
	const char *name;
	unsigned char weight[DRV_OPS];
};

extern const struct drv_profile drv_profile_mixed;
extern const struct drv_profile drv_profile_reg;
extern const struct drv_profile drv_profile_single_use;
extern const struct drv_profile drv_profile_objects;
extern const struct drv_profile drv_profile_raw;
extern const struct drv_profile drv_profile_refresh;
extern const struct drv_profile drv_profile_auth;
extern const struct drv_profile drv_profile_shared;

struct drv_opts {
	unsigned checks; /* DRV_CHECK_* */
	const struct drv_profile *profile;
	/* Called with a report (the trace, then the mismatch); must not
	 * return: exit (tests) or abort (fuzz targets). */
	void (*fail)(const char *report, void *arg);
	void *fail_arg;
	bool quiet_trace; /* Do not keep the trace (speed). */
	bool echo;        /* Print every trace line to stderr as well. */
	/* A domain shared with other threads, opened with domain_attr: the
	 * episode neither opens nor closes it, and leaves closed MRs alone
	 * (other threads' closes recycle their shells).  Keys must not
	 * collide between threads: FI_MR_PROV_KEY; a thread maps raw keys
	 * of its own MRs and unmaps only keys it mapped (mapped keys are
	 * the domain's, not the thread's). */
	struct fid_domain *domain;
	const struct hmr_domain_attr *domain_attr;
};

struct drv_stats {
	unsigned long steps, episodes;
	unsigned long regs, regs_refused, rogue, subs;
	unsigned long grants, refusals, single_use_refused;
	unsigned long closes, busy, binds, enables, refreshes;
	unsigned long raw_maps, raw_refused, unmaps;
};

#define DRV_TRACE   32
#define DRV_RAWS    16
#define DRV_RAW_MAX 128
#define DRV_PEER    2

struct drv_rawkey {
	uint8_t bytes[DRV_RAW_MAX];
	size_t size;
	struct model_raw prov;
};

struct drv {
	struct drv_opts opts;
	struct drv_src *src;
	struct model m;
	struct fid_domain *dom;
	struct fid_mr *mr[MODEL_MAX_MRS];
	unsigned long closed_at[MODEL_MAX_MRS]; /* MR closes before it. */
	unsigned long closes;                   /* MR closes in dom. */
	struct fid *res[MODEL_MAX_RES];
	struct drv_rawkey raw[DRV_RAWS];
	size_t nraw;
	/* A second domain: its raw keys are a peer's, its counter and MR
	 * are another domain's objects. */
	struct fid_domain *peer;
	struct fid_mr *peer_mr[DRV_PEER];
	struct fid_cntr *peer_cntr;
	struct drv_stats stats;
	uint8_t auth_buf[HMR_AUTH_KEY_MAX]; /* A changed auth key. */
	unsigned long step;
	char trace[DRV_TRACE][200];
	unsigned trace_next;
};

void drv_init(struct drv *d, const struct drv_opts *opts);
/* One episode: open a domain, run at most max_steps operations (until a
 * fuzz input ends), close everything.  Returns the operations run. */
long drv_episode(struct drv *d, struct drv_src *src, long max_steps);

/* The arena every registration draws addresses from: mapped pages with
 * one unmapped page inside.  Never dereferenced. */
void drv_arena(uint64_t *base, uint64_t *len, uint64_t *hole);
/* The environment facts the model needs, from the running process. */
extern const struct model_env drv_env;

/* Internal to the driver's files. */
void drv_trace(struct drv *d, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
void drv_fail(struct drv *d, const char *fmt, ...)
        __attribute__((format(printf, 2, 3), noreturn));
void drv_op_reg(struct drv *d, enum drv_op op);
void drv_op_access(struct drv *d, bool auth);
void drv_op_close(struct drv *d);
void drv_op_bind(struct drv *d);
void drv_op_enable(struct drv *d);
void drv_op_refresh(struct drv *d);
void drv_op_res_open(struct drv *d);
void drv_op_res_close(struct drv *d);
void drv_op_cntr_check(struct drv *d);
void drv_op_domain_close(struct drv *d);
void drv_op_raw_attr(struct drv *d);
void drv_op_map_raw(struct drv *d);
void drv_op_unmap(struct drv *d);
/* After a successful close of MR id: its raw keys are stale. */
void drv_raw_closed(struct drv *d, int id);
/* The key the library gave MR id (via raw keys under FI_MR_RAW). */
uint64_t drv_learn_key(struct drv *d, int id, struct fid_mr *mr);
/* Generators shared by the operations. */
int drv_pick_mr(struct drv *d, bool closed_ok);
void drv_gen_iov(struct drv *d, struct model_iov *v);
uint64_t drv_gen_key(struct drv *d);
uint64_t drv_gen_access(struct drv *d);
uint64_t drv_gen_flags(struct drv *d);
const uint8_t *drv_auth_pool(unsigned i, size_t *size);
void drv_gen_target(struct drv *d, int id, uint64_t *addr, uint64_t *len);
bool drv_recently_closed(const struct drv *d, int id);

#endif /* HMR_TESTS_MODEL_DRIVER_H */
