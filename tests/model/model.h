/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* model.h: an executable model of fi_mr(3)'s rules for the software domain. */
#ifndef HMR_TESTS_MODEL_H
#define HMR_TESTS_MODEL_H

/*
 * The model is written from fi_mr(3) and doc/software-domain.md, not from
 * core/: it keeps its own registrations (iovs, access bits, keys, sub-MRs,
 * single-use state, enable state, bindings, counters, mapped raw keys) and
 * answers what the library must answer.  It makes no system call: the
 * caller says which host ranges are mapped and which page sizes exist.
 *
 * Every predicting call returns 0 (the library must succeed), a negative
 * -FI_E* code (the library must fail; the code is the likeliest one, but
 * callers compare only success against failure), or MODEL_UNKNOWN where
 * fi_mr(3) and the project's rules leave the outcome open: the caller then
 * follows the library.  The *_commit calls apply a success to the model.
 *
 * A "rogue" MR is one the library accepted although the model refuses it:
 * it holds its key (so later key conflicts stay predictable) but the model
 * grants nothing through it.  A grant through a rogue MR is a library bug.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hmr/hmr.h>

#define MODEL_UNKNOWN  1    /* The rules leave the answer open. */
#define MODEL_MAX_IOV  16   /* iovs per request the model holds. */
#define MODEL_MAX_MRS  64   /* MR ids: 0 .. MODEL_MAX_MRS - 1. */
#define MODEL_MAX_RES  8    /* Counters and endpoints per domain. */
#define MODEL_MAX_KEYS 64   /* Distinct mapped raw keys. */
#define MODEL_FOREIGN  (-2) /* base_mr / resource of another domain. */
#define MODEL_ISSUED   2048 /* Provider keys remembered per domain. */

struct model_iov {
	uint64_t addr;
	uint64_t len;
};

/* Environment facts the model cannot know by itself. */
struct model_env {
	/* Every page of [addr, addr + len) is mapped (len > 0, no wrap). */
	bool (*mapped)(uint64_t addr, uint64_t len, void *arg);
	/* page_size is a page size of this system (not 0). */
	bool (*page_size_ok)(size_t page_size, void *arg);
	void *arg;
};

enum model_api { MODEL_REG, MODEL_REGV, MODEL_REGATTR };

/* One fi_mr_reg / fi_mr_regv / fi_mr_regattr call, as the caller made it. */
struct model_req {
	enum model_api api;
	bool out_null; /* The fid_mr ** argument is NULL. */
	bool iov_null; /* mr_iov (or iov) is NULL. */
	size_t iov_count;
	struct model_iov iov[MODEL_MAX_IOV]; /* The first min(count, max). */
	uint64_t access, offset, requested_key, flags;
	enum fi_hmem_iface iface; /* regattr. */
	bool hmem_data;           /* regattr: hmem_data != NULL. */
	size_t page_size;         /* regattr. */
	bool auth_null;           /* regattr: auth_key == NULL. */
	size_t auth_key_size;
	uint8_t auth_key[HMR_AUTH_KEY_MAX]; /* The first auth_key_size. */
	int base; /* regattr base_mr: an MR id, -1 none, MODEL_FOREIGN. */
};

enum model_state { MODEL_FREE, MODEL_LIVE, MODEL_CLOSED };

struct model_bind {
	int res;
	uint64_t flags;
};

struct model_mr {
	enum model_state state;
	bool rogue;
	bool oversized; /* Its iovs add up to 2^64 bytes or more. */
	uint64_t key;
	uint64_t access, flags;
	size_t iov_count;
	struct model_iov iov[MODEL_MAX_IOV];
	int base; /* -1 or the base MR's id. */
	int subs; /* Live sub-MRs. */
	bool enabled, created_disabled, used;
	size_t nbinds;
	struct model_bind binds[MODEL_MAX_RES];
	size_t auth_key_size;
	uint8_t auth_key[HMR_AUTH_KEY_MAX];
};

enum model_res_kind { MODEL_CNTR, MODEL_EP };

struct model_res {
	bool used, open;
	enum model_res_kind kind;
	uint64_t count; /* Counters: accesses counted. */
};

/* Where a raw key handed to fi_mr_map_raw came from. */
enum model_raw_kind {
	MODEL_RAW_OWN,    /* fi_mr_raw_attr of MR `mr` here, unchanged. */
	MODEL_RAW_PEER,   /* Of another domain, unchanged; carries `key`. */
	MODEL_RAW_FORGED, /* Changed bytes: the model cannot tell. */
};

struct model_raw {
	enum model_raw_kind kind;
	int mr;        /* MODEL_RAW_OWN: the MR id when it was taken. */
	uint64_t key;  /* The key it carries (OWN and PEER). */
	uint64_t base; /* The base address fi_mr_raw_attr gave with it. */
	bool stale;    /* OWN: that MR has been closed since. */
};

struct model_mapped {
	uint64_t key;
	unsigned count;
};

struct model {
	struct model_env env;
	bool software; /* A software domain: the rest is modelled. */
	uint64_t mr_mode, caps;
	uint64_t key_max;
	size_t iov_limit;
	uint32_t fi_version;
	size_t auth_key_size;
	uint8_t auth_key[HMR_AUTH_KEY_MAX];
	size_t raw_size; /* Bytes of a raw key, once learnt (0 before). */
	struct model_mr mr[MODEL_MAX_MRS];
	struct model_res res[MODEL_MAX_RES];
	struct model_mapped mapped[MODEL_MAX_KEYS];
	size_t nmapped;
	/* Provider keys handed out so far: none may come back before the
	 * key space wraps. */
	uint64_t issued[MODEL_ISSUED];
	size_t nissued;
};

/* Domains. */
int model_domain_open(struct model *m, const struct hmr_domain_attr *attr,
                      const struct model_env *env);
bool model_virt_addr(const struct model *m);
bool model_allocated(const struct model *m);
bool model_prov_key(const struct model *m);
int model_domain_close(const struct model *m);

/* Registration: check, then add what the library accepted (rogue when
 * the model refused it).  model_mr_key_ok: may the library have given
 * this key to a new MR? */
int model_reg_check(const struct model *m, const struct model_req *r);
bool model_mr_key_ok(const struct model *m, const struct model_req *r,
                     uint64_t key);
void model_reg_add(struct model *m, int id, const struct model_req *r,
                   uint64_t key, bool rogue);
/* The request makes a sub-MR (base_mr set, and read at this API version);
 * model_reg_check answers MODEL_UNKNOWN for one whose base is rogue. */
bool model_sub_req(const struct model *m, const struct model_req *r);
/* The live MR (rogue or not) holding key, or -1. */
int model_find_key(const struct model *m, uint64_t key);
/* The key fi_mr_key() must return. */
uint64_t model_public_key(const struct model *m, int id);

/* hmr_mr_access_auth; domain_auth: hmr_mr_access (the domain's auth
 * key).  On 0, *ptr is where the bytes are and *id the MR; on
 * MODEL_UNKNOWN too, and a grant is allowed only there. */
int model_access(const struct model *m, bool domain_auth, const uint8_t *auth,
                 size_t auth_size, uint64_t key, uint64_t addr, uint64_t len,
                 uint64_t access, uint64_t *ptr, int *id);
void model_access_commit(struct model *m, int id, uint64_t access);

/* fi_close of an MR, fi_mr_bind, fi_mr_enable. */
int model_close(const struct model *m, int id);
void model_close_commit(struct model *m, int id);
int model_bind(const struct model *m, int id, int res, uint64_t flags);
void model_bind_commit(struct model *m, int id, int res, uint64_t flags);
int model_enable(const struct model *m, int id);
void model_enable_commit(struct model *m, int id);

/* Counters and endpoints (hmr_cntr_open, hmr_ep_open, fi_close). */
int model_res_open(struct model *m, enum model_res_kind kind);
int model_res_close(const struct model *m, int res);
/* What fi_cntr_read answers: the count, 0 once the counter is closed. */
uint64_t model_cntr_read(const struct model *m, int res);
void model_res_close_commit(struct model *m, int res);

/* fi_mr_refresh: iov NULL or count 0 means the whole region. */
int model_refresh(const struct model *m, int id, const struct model_iov *iov,
                  size_t count, uint64_t flags);

/* fi_mr_raw_attr, with the caller's buffer size (*key_size). */
int model_raw_attr(const struct model *m, int id, uint64_t flags,
                   bool key_size_null, bool base_null, bool raw_null,
                   size_t key_size, uint64_t *base);
/* fi_mr_map_raw; on 0, *key is the key it must give. */
int model_map_raw(const struct model *m, const struct model_raw *raw,
                  uint64_t base_addr, size_t key_size, bool raw_null,
                  bool key_null, uint64_t flags, uint64_t *key);
void model_map_commit(struct model *m, uint64_t key);
int model_unmap(const struct model *m, uint64_t key);
void model_unmap_commit(struct model *m, uint64_t key);

#endif /* HMR_TESTS_MODEL_H */
