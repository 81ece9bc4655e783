/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* domain.h: the internal domain, MR, counter and endpoint objects. */
#ifndef HMR_CORE_DOMAIN_H
#define HMR_CORE_DOMAIN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <hmr/hmr.h>

#include "core/keymap.h"

/*
 * Locks.  A domain's keys are split into HMR_SHARDS shards (hmr__key_shard:
 * a hash of a requested key, a provider key's low bits), each shard with its
 * own mutex (hmr_shard.lock), so that threads registering, closing and checking
 * MRs of different shards share no lock and no written cache line: the software
 * domain scales across threads (one domain-wide write lock made two threads
 * slower than one).
 * - An MR belongs to one shard (hmr_mr.shard): its key's, or, for a NIC's
 *   keys, the registering thread's.  Its publication, close, bindings and
 *   enabled state change under that shard's lock, taken as a writer
 *   (hmr__shard_lock: the shard's sequence count is odd meanwhile).
 * - hmr_mr_access reads without a lock (core/access.c): it copies what it
 *   needs, then checks that the sequence count did not move.  So what it
 *   reads stays readable memory while the domain is open: key map tables
 *   are retired, not freed (keymap.h), and closed MRs stay MR shells,
 *   reused but never freed before the domain closes.  When the count
 *   moved, the MR has state an access changes (single-use, bound
 *   counters), or its iovs live outside it (more than one), it takes the
 *   lock instead.
 * - A mapped raw key lives in its key's shard, under that shard's lock.
 * - Order: shards in ascending index (a sub-MR's and its base's), then
 *   hmr_domain.bind_lock (the domain's counters and endpoints).
 */

struct hmr_domain;
struct hmr_mr;
struct hmr_cache;

/* A registration request after the fi_mr_attr of the caller's API version
 * has been copied into this header's layout. */
struct hmr_mr_req {
	struct fi_mr_attr attr;
	uint64_t flags;
	struct hmr_mr *base_mr; /* attr.base_mr, checked. */
};

/*
 * What a domain kind does to register memory, after core/ has checked the
 * arguments.  One const table per kind (software here, verbs in verbs/).
 * Data first, then only the function slots HMR_REGISTRAR_SLOTS lists;
 * domain.c fills a kind's NULL slots from hmr__registrar_stubs (core/
 * stubs.c, positional: a slot added here and not there fails the build).
 */
struct hmr_registrar_ops {
	/* mr_mode bits this kind needs; the rest are cleared. */
	uint64_t needed_mr_mode;
	/* mr_mode bits this kind can honour when asked to keep them. */
	uint64_t supported_mr_mode;
	/* The kind makes its own keys (a NIC's rkeys) under PROV_KEY. */
	bool provides_keys;
	/* The kind refuses unbacked host ranges itself (a NIC pins the pages
	 * while registering), so core/ need not look first. */
	bool checks_backing;

	/* 0 when this kind can run here; otherwise why not, in `why`. */
	int (*probe)(char *why, size_t why_len);
	/* Set up the kind's state (open the NIC...) in a new domain. */
	int (*open)(struct hmr_domain *domain);
	/* Make the registration real: fill mr->key when the domain hands
	 * keys out (FI_MR_PROV_KEY), and mr->mr_fid.mem_desc. */
	int (*reg)(struct hmr_domain *domain, struct hmr_mr *mr,
	           const struct hmr_mr_req *req);
	/* Undo reg, including whatever the registrar keeps per MR.  A NIC
	 * may refuse (ibv_dereg_mr(3): a memory window is still bound): then
	 * nothing is undone, and fi_close fails with what dereg returned. */
	int (*dereg)(struct hmr_domain *domain, struct hmr_mr *mr);
	void (*close)(struct hmr_domain *domain);
};

#define HMR_REGISTRAR_SLOTS(X)                                                 \
	X(probe)                                                               \
	X(open)                                                                \
	X(reg)                                                                 \
	X(dereg)                                                               \
	X(close)

/* core/stubs.c: probe and open say "not available"; reg -FI_ENOSYS. */
extern const struct hmr_registrar_ops hmr__registrar_stubs;

/* What core/ knows of a resource that can be bound to an MR. */
struct hmr_bindable {
	struct fid *fid; /* The public object (first in owner). */
	struct hmr_domain *domain;
	atomic_bool open;
	struct hmr_bindable *next; /* The domain's list, freed at close. */
};

struct hmr_cntr {
	struct fid_cntr cntr_fid; /* First: what hmr_cntr_open hands out. */
	struct hmr_bindable b;
	_Atomic uint64_t value;
	_Atomic uint64_t err;
};

struct hmr_ep {
	struct fid fid; /* First: what hmr_ep_open hands out. */
	struct hmr_bindable b;
};

struct hmr_mr_binding {
	struct hmr_bindable *res;
	uint64_t flags;
};

struct hmr_mr {
	struct fid_mr mr_fid; /* First: fid_mr * and hmr_mr * convert. */
	struct hmr_domain *domain;
	uint64_t key;    /* The key peers use (mapped raw key too). */
	uint64_t access; /* FI_* access bits. */
	uint64_t flags;  /* Registration flags. */
	uint64_t base;   /* The address of offset 0 under VIRT_ADDR. */
	size_t len;      /* Total bytes over all iovs. */
	size_t iov_count;
	struct iovec *iov; /* Host-visible segments. */
	enum fi_hmem_iface iface;
	uint64_t device;
	uint32_t hmem_flags;     /* HMR_HMEM_* of the allocation. */
	struct hmr_mr *base_mr;  /* Parent when this is a sub-MR. */
	atomic_size_t sub_count; /* Live sub-MRs (changed under the lock). */
	bool enabled;            /* (shard lock) */
	uint8_t shard;           /* The shard whose lock guards this MR. */
	bool in_keymap;          /* Reachable through its key. */
	bool created_disabled;   /* Bindings end at fi_mr_enable. */
	atomic_bool used;        /* FI_MR_SINGLE_USE spent. */
	atomic_int refreshing;   /* FI_MR_MMU_NOTIFY refresh running. */
	struct hmr_mr_binding *binds;
	size_t nbinds;
	size_t auth_key_size;
	void *registrar_data;     /* The registrar's own state. */
	struct hmr_mr *next_free; /* A shell on its shard's free list. */
	struct iovec iov_one;     /* iov storage when iov_count == 1. */
	/* Not cleared for a new MR (see mr_new): only auth_key_size bytes of
	 * auth_key are ever read, and the registrar writes its own space. */
	uint8_t auth_key[HMR_AUTH_KEY_MAX];
	/* Room for the registrar's per-MR state (the verbs desc), saving an
	 * allocation per registration. */
	_Alignas(8) unsigned char registrar_space[40];
};

/* How many closed MR shells a shard keeps before reusing the oldest: a
 * call through an MR handle within its shard's next 256 MR closes returns
 * -FI_EBADF; after that the memory may hold a new MR (doc/software-
 * domain.md states the window). */
#define HMR_MR_SHELLS 256
/* Shards of a domain's key space: a power of two (hmr__key_shard). */
#define HMR_SHARD_BITS 4
#define HMR_SHARDS     (1 << HMR_SHARD_BITS)
/* How many closed domains the process keeps as shells (domain.c). */
#define HMR_DOMAIN_SHELLS 64

struct hmr_shard {
	pthread_mutex_t lock;
	/* Odd while a writer holds the lock (hmr__shard_lock). */
	atomic_ulong seq;
	struct hmr_keymap mrs;    /* key -> struct hmr_mr * (lock) */
	struct hmr_keymap mapped; /* mapped key -> count as a pointer (lock) */
	size_t mapped_count;      /* (lock) */
	uint64_t next_key;        /* FI_MR_PROV_KEY: next of this shard's. */
	size_t mr_count;          /* Published MRs (lock). */
	atomic_size_t nic_count;  /* A NIC's plain MRs, counted unlocked. */
	/* Closed MRs (lock): a ring of the last HMR_MR_SHELLS; the one the
	 * ring pushes out becomes the spare, which the next registration in
	 * this shard takes without the lock, so a register/close loop
	 * allocates nothing; beyond one spare, shells wait on `free`. */
	struct hmr_mr *shells[HMR_MR_SHELLS];
	size_t shell_next;
	struct hmr_mr *free; /* Through hmr_mr.next_free (lock). */
	atomic_size_t nfree; /* How many: read unlocked. */
	_Atomic(struct hmr_mr *) spare;
} __attribute__((aligned(64))); /* No cache line shared by two shards. */

struct hmr_domain {
	struct fid_domain domain_fid; /* First. */
	const struct hmr_registrar_ops *registrar;
	void *registrar_data;
	/* The registrar's registration cache, when it keeps one (verbs):
	 * hmr_mr_cache_flush and _stats reach it here. */
	struct hmr_cache *cache;
	struct hmr_domain_attr attr; /* Normalised copy. */
	uint64_t mr_mode;            /* Effective. */
	uint64_t needed_mr_mode;     /* The registrar's; open may change it. */
	uint64_t key_max;            /* Largest key that fits mr_key_size. */
	uint64_t tag;                /* Identifies this domain's raw keys. */
	uint64_t secret;             /* Checks them; never leaves the domain. */
	uint8_t auth_key[HMR_AUTH_KEY_MAX];
	/* Apart from the domain: a closed domain's shell keeps only the rest
	 * (NULL once closed). */
	struct hmr_shard *shards;
	pthread_mutex_t bind_lock;
	struct hmr_bindable *bindables; /* (bind_lock) */
};

/* core/closed.c: the ops of closed objects; every call is -FI_EBADF. */
extern struct fi_ops hmr__closed_ops;
extern struct fi_ops_mr hmr__closed_mr_ops;
extern struct fi_ops_domain hmr__closed_domain_ops;
extern struct fi_ops_cntr hmr__closed_cntr_ops;

static inline struct hmr_domain *hmr__domain(struct fid *fid)
{
	return (struct hmr_domain *)fid;
}

/* What a public call that takes a domain answers about it: 0 for an open
 * domain of hmr's, -FI_EBADF for one already closed (a shell with closed
 * ops), -FI_EINVAL for NULL or another object. */
static inline int hmr__domain_usable(const struct fid_domain *domain)
{
	if (!domain || domain->fid.fclass != FI_CLASS_DOMAIN)
		return -FI_EINVAL;
	return domain->fid.ops == &hmr__closed_ops ? -FI_EBADF : 0;
}

static inline struct hmr_shard *hmr__shard(struct hmr_domain *d, size_t i)
{
	return &d->shards[i & (HMR_SHARDS - 1)];
}

/* core/shard.c: the shard for the next MR this thread registers when no
 * key decides it before registration (provider keys, a NIC's keys): each
 * call moves on to the next shard, from a start spread over threads. */
size_t hmr__thread_shard(void);

static inline bool hmr__virt_addr(const struct hmr_domain *d)
{
	return (d->mr_mode & FI_MR_VIRT_ADDR) || d->mr_mode == FI_MR_BASIC;
}

static inline bool hmr__allocated(const struct hmr_domain *d)
{
	return (d->mr_mode & FI_MR_ALLOCATED) || d->mr_mode == FI_MR_BASIC;
}

static inline bool hmr__prov_key(const struct hmr_domain *d)
{
	return (d->mr_mode & FI_MR_PROV_KEY) || d->mr_mode == FI_MR_BASIC;
}

/*
 * The shard of a key: where its MR, or its mapped raw key, lives.
 * - A requested key is the application's choice, and a common choice
 *   numbers each thread's keys with the thread in the high bits and a
 *   counter in the low ones.  Low bits alone would put two such threads in
 *   the same shard at every step, on one lock (4.1x one thread's cost in a
 *   two-thread benchmark).  So the shard comes from a hash of the whole
 *   key: splitmix64's mixer (two xor-shift-multiply rounds), whose top
 *   bits depend on every bit of the key.  One multiply is not enough: keys
 *   (t << 16) + c of two threads then differ by a constant product, and
 *   met in one shard at 1/4 of the steps.  Nor is the key map's constant
 *   (keymap.h): a shard's keys would share the top bits of their key-map
 *   hash and crowd 1/16 of each table.
 * - A provider key is hmr's choice, made per shard (core/mr.c alloc_key:
 *   i, i + HMR_SHARDS, ...): its low bits name its shard.
 */
static inline size_t hmr__key_shard(const struct hmr_domain *d, uint64_t key)
{
	uint64_t h;

	if (hmr__prov_key(d))
		return (size_t)(key & (HMR_SHARDS - 1));
	h = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return (size_t)(h >> (64 - HMR_SHARD_BITS));
}

/* core/mr.c */
extern struct fi_ops_mr hmr__mr_ops;

/* core/rawkey.c */
int hmr__mr_raw_attr(struct hmr_mr *mr, struct fi_mr_raw_attr *attr);
int hmr__domain_map_raw(struct hmr_domain *d, struct fi_mr_map_raw *map);
int hmr__domain_unmap_key(struct hmr_domain *d, uint64_t key);

/* core/bind.c: counters, endpoints, fi_mr_bind, fi_mr_enable. */
int hmr__mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int hmr__mr_enable(struct hmr_mr *mr);
bool hmr__mr_bound_busy(const struct hmr_mr *mr);
void hmr__mr_count_access(struct hmr_mr *mr, uint64_t access);
void hmr__domain_free_bindables(struct hmr_domain *d);

/* core/refresh.c */
int hmr__mr_refresh(struct hmr_mr *mr, const struct fi_mr_modify *modify);

/* core/software.c; verbs/ provides hmr__verbs_registrar when built. */
extern const struct hmr_registrar_ops hmr__software_registrar;
extern const struct hmr_registrar_ops hmr__verbs_registrar;

/* core/stubs.c: -FI_ENOSYS for the ops slots hmr leaves out. */
int hmr__fid_enosys_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int hmr__fid_enosys_control(struct fid *fid, int command, void *arg);
int hmr__fid_enosys_ops_open(struct fid *fid, const char *name, uint64_t flags,
                             void **ops, void *context);
int hmr__fid_enosys_tostr(const struct fid *fid, char *buf, size_t len);
int hmr__fid_enosys_ops_set(struct fid *fid, const char *name, uint64_t flags,
                            void *ops, void *context);

#endif /* HMR_CORE_DOMAIN_H */
