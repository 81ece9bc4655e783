/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* hmr.h: hmr's own calls: domains, counters, endpoints, the access check. */
#ifndef HMR_HMR_H
#define HMR_HMR_H

/* A program built on libfabric's own headers may include them first: they
 * declare the same names, with the same layouts and values. */
#if defined(_FABRIC_H_) || defined(FI_DOMAIN_H)
#include <rdma/fi_domain.h>
#else
#include <hmr/fi_mr.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HMR_BUILDING_LIBRARY)
#define HMR_EXPORT __attribute__((visibility("default")))
#else
#define HMR_EXPORT
#endif

/* HMR_VERSION_MAJOR, _MINOR, _PATCH and HMR_VERSION_STRING, generated
 * from CMake's project(VERSION): the one place the version is stated. */
#include <hmr/version.h>
#define HMR_VERSION                                                            \
	((HMR_VERSION_MAJOR << 16) | (HMR_VERSION_MINOR << 8) |                \
	 HMR_VERSION_PATCH)

/* The version of the library in use, encoded as HMR_VERSION is; compare it
 * with HMR_VERSION to detect a header/library mismatch. */
HMR_EXPORT unsigned hmr_version(void);
HMR_EXPORT const char *hmr_version_string(void);

/* Like fi_strerror(): a message for 0 or a negative -FI_E* code (the sign
 * is ignored).  Never NULL. */
HMR_EXPORT const char *hmr_strerror(int err);

/* Which registrar a domain uses. */
enum hmr_domain_kind {
	/* Keys from a key map and remote access checked in software by
	 * hmr_mr_access(): for shared-memory and TCP transports, and the
	 * default that runs anywhere. */
	HMR_DOMAIN_SOFTWARE = 0,
	/* Registration through rdma-core on a NIC: host memory with
	 * ibv_reg_mr, device memory as a dma-buf or through peer memory. */
	HMR_DOMAIN_VERBS = 1,
};

/* hmr_domain_attr.flags */
/*
 * Keep every requested mr_mode bit the software domain can honour instead
 * of clearing the ones it does not need.  The software domain then behaves
 * like the strictest provider the application says it supports: test an
 * application's FI_MR_RAW, FI_MR_ENDPOINT or FI_MR_PROV_KEY handling on a
 * machine without that hardware.
 */
#define HMR_DOMAIN_EMULATE_MR_MODE (1ULL << 0)
/* Verbs domains: register with IBV_ACCESS_RELAXED_ORDERING (PCIe relaxed
 * ordering for NIC writes; see ibv_reg_mr(3) for what it gives up). */
#define HMR_DOMAIN_RELAXED_ORDERING (1ULL << 1)
/* Verbs domains: register with IBV_ACCESS_MW_BIND, so memory windows
 * (ibv_alloc_mw, ibv_bind_mw) can be bound to the regions.  While a window
 * is bound, fi_close of its MR fails with -FI_EBUSY and the MR stays open
 * (ibv_dereg_mr(3)).  Device memory then takes the peer-memory path: a
 * dma-buf MR cannot have MW_BIND. */
#define HMR_DOMAIN_MW_BIND (1ULL << 2)
/* Verbs domains that register on demand (a device with ODP, mr_mode
 * without FI_MR_ALLOCATED): add IBV_ACCESS_HUGETLB, promising that every
 * registered host range is and stays backed by huge pages (hugetlbfs,
 * MAP_HUGETLB; ibv_reg_mr(3)).  Elsewhere hmr_domain_open fails with
 * -FI_EOPNOTSUPP: the flag applies to on-demand registrations only. */
#define HMR_DOMAIN_HUGETLB (1ULL << 3)
/*
 * Verbs domains on a device with implicit on-demand paging: at open, one
 * MR is registered over the whole address space (addr 0, length SIZE_MAX,
 * IBV_ACCESS_ON_DEMAND) with the remote rights of the caps (FI_REMOTE_READ
 * and/or FI_REMOTE_WRITE; both when the caps name neither), and every host
 * registration it covers returns its keys without a call to the NIC.  The
 * NIC then checks no region's bounds or rights: the key reaches the whole
 * process.  Needs FI_MR_VIRT_ADDR (-FI_ENODATA otherwise); -FI_EOPNOTSUPP
 * on a device without implicit ODP (rxe has none).
 */
#define HMR_DOMAIN_ODP_IMPLICIT (1ULL << 4)
/* Verbs domains: no registration cache (see cache_max_size below). */
#define HMR_DOMAIN_CACHE_OFF (1ULL << 5)
/* Verbs domains: the cache merges overlapping and adjacent registrations
 * into one (FI_MR_CACHE_MERGE_REGIONS of fi_mr(3), 1.8 edition). */
#define HMR_DOMAIN_CACHE_MERGE (1ULL << 6)

struct ibv_pd;

/*
 * Domain attributes.  Zero-initialise, then set `size` to sizeof(struct
 * hmr_domain_attr) (HMR_DOMAIN_ATTR_INIT does both); the library reads
 * only the fields that fit in `size`, so the struct can grow at its end
 * without breaking callers built against an older header.
 */
struct hmr_domain_attr {
	size_t size;               /* sizeof(struct hmr_domain_attr). */
	enum hmr_domain_kind kind; /* Which registrar. */
	/*
	 * The libfabric API version the caller's fi_mr_attr comes from
	 * (FI_VERSION(major, minor)); 0 means this header's, 2.1.
	 * HMR_DOMAIN_ATTR_INIT sets it to the version of the fi_domain.h the
	 * caller compiled against (libfabric's, when included first, or
	 * hmr's).  hmr reads a field of struct fi_mr_attr only from the
	 * version that added it: iface and device from 1.9, hmem_data from
	 * 1.19, dmabuf (and FI_MR_DMABUF) from 1.20, page_size from 1.22,
	 * base_mr and sub_mr_cnt from 2.0.  The rest is taken as 0, so an
	 * older caller's struct is never read past its end.
	 */
	uint32_t fi_version;
	/*
	 * The mr_mode bits the caller supports, as the input to fi_getinfo.
	 * The domain clears the bits it does not need and keeps those it
	 * does; if it needs a bit the caller did not offer, hmr_domain_open
	 * fails with -FI_ENODATA (as fi_getinfo finds no provider).
	 * FI_MR_BASIC must be used alone and means VIRT_ADDR | ALLOCATED |
	 * PROV_KEY, kept as required.  FI_MR_SCALABLE means 0.
	 * HMR_MR_MODE_DEFAULT is what a NULL attr asks for.  A verbs domain
	 * keeps FI_MR_VIRT_ADDR and FI_MR_ALLOCATED when offered (virtually
	 * addressed, pinned registrations) and works without them: without
	 * VIRT_ADDR peers address a region by offset and the NIC resolves it
	 * (ibv_reg_mr_iova, hca_va 0); without ALLOCATED host memory is
	 * registered on demand (IBV_ACCESS_ON_DEMAND), on a device with ODP.
	 */
	uint64_t mr_mode;
	/* Capabilities: FI_HMEM, FI_RMA_EVENT, FI_RMA_PMEM, FI_COLLECTIVE,
	 * FI_RMA, FI_ATOMIC, FI_MSG, FI_TAGGED, FI_READ, FI_WRITE, FI_SEND,
	 * FI_RECV, FI_REMOTE_READ, FI_REMOTE_WRITE.  Others: -FI_EINVAL. */
	uint64_t caps;
	/* Bytes a key may use, 1..8; 0 means 8.  Requested keys that do not
	 * fit are refused with -FI_EKEYREJECTED. */
	size_t mr_key_size;
	/* Most iovs per registration; 0 means HMR_MR_IOV_LIMIT_DEFAULT. */
	size_t mr_iov_limit;
	uint64_t flags; /* HMR_DOMAIN_* */
	/* The domain's authorization key (copied), used by registrations
	 * with auth_key_size 0.  At most HMR_AUTH_KEY_MAX bytes. */
	const void *auth_key;
	size_t auth_key_size;
	/* Verbs domains: the NIC by name (NULL: the first device), or a
	 * protection domain the caller owns and hmr never frees. */
	const char *nic_name;
	struct ibv_pd *pd;
	/*
	 * The registration cache of a verbs domain (fi_mr(3) MEMORY
	 * REGISTRATION CACHE; doc/cache.md).  0 in a field means: the
	 * setting decides (FI_MR_CACHE_MAX_SIZE, FI_MR_CACHE_MAX_COUNT,
	 * FI_MR_CACHE_MERGE_REGIONS), as libfabric reads them.
	 * HMR_DOMAIN_CACHE_OFF turns the cache off for this domain whatever
	 * the settings say; FI_MR_CACHE_MAX_COUNT=0 does it for all.  Past
	 * either limit, the least recently used idle registrations are
	 * deregistered.  Both count every registration held, in use or idle,
	 * as libfabric's cached_max_cnt and cached_max_size do.
	 */
	size_t cache_max_size;  /* Bytes of registrations held. */
	size_t cache_max_count; /* Registrations held. */
};

#define HMR_MR_MODE_DEFAULT                                                    \
	(FI_MR_LOCAL | FI_MR_RAW | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |         \
	 FI_MR_PROV_KEY | FI_MR_HMEM)
#define HMR_MR_IOV_LIMIT_DEFAULT 4
#define HMR_MR_IOV_LIMIT_MAX     256
#define HMR_AUTH_KEY_MAX         64

#define HMR_DOMAIN_ATTR_INIT                                                   \
	{                                                                      \
		.size = sizeof(struct hmr_domain_attr),                        \
		.fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),  \
		.mr_mode = HMR_MR_MODE_DEFAULT,                                \
	}

/*
 * Open a domain.  NULL attr: a software domain asking HMR_MR_MODE_DEFAULT.
 * Close it with fi_close(&domain->fid); that fails with -FI_EBUSY while
 * MRs, counters, endpoints or mapped raw keys of the domain remain.
 */
HMR_EXPORT int hmr_domain_open(const struct hmr_domain_attr *attr,
                               struct fid_domain **domain);

/* The effective mr_mode (what fi_getinfo would report) and caps. */
HMR_EXPORT int hmr_domain_mr_mode(struct fid_domain *domain, uint64_t *mr_mode);
HMR_EXPORT int hmr_domain_caps(struct fid_domain *domain, uint64_t *caps);

/*
 * Is a domain kind usable on this machine?  0 if it is; otherwise a
 * negative code and, in `why`, the reason ("no RDMA device: ...").
 */
HMR_EXPORT int hmr_domain_probe(enum hmr_domain_kind kind, char *why,
                                size_t why_len);
HMR_EXPORT const char *hmr_domain_kind_name(enum hmr_domain_kind kind);

/*
 * RDMA devices (NICs), before any domain opens: what a verbs domain on
 * each would find (what hmr_info prints).  NICs are numbered in
 * ibv_get_device_list(3) order; hmr_domain_attr.nic_name takes `name`.
 *
 * hmr_verbs_device_count: 0 and the number of NICs (at least 1); or
 * -FI_ENODEV, *count 0 and, in `why`, "no RDMA device: ..." with what
 * libibverbs said; -FI_ENOSYS in a build without rdma-core.
 */
HMR_EXPORT int hmr_verbs_device_count(uint32_t *count, char *why,
                                      size_t why_len);

/* Grows at its end: set `size` (HMR_VERBS_DEVICE_INFO_INIT does). */
struct hmr_verbs_device_info {
	size_t size;
	char name[64];       /* ibv_get_device_name(3). */
	char link_layer[16]; /* Port 1's: "Ethernet" (RoCE), "InfiniBand". */
	char netdev[32];     /* The network device under port 1, or "". */
	int odp;             /* 1: on-demand paging for RC; 0: none. */
	/* Whether a verbs domain on it registers dma-bufs
	 * (ibv_reg_dmabuf_mr): 1 yes, 0 no, as the probe a domain makes at
	 * open answers (or HMR_VERBS_DMABUF decides); dmabuf_why says how
	 * that was found. */
	int dmabuf;
	char dmabuf_why[128];
	/* Peer-memory modules loaded for the present memory interfaces,
	 * as "module (iface)" comma list, or "". */
	char peermem[128];
};
#define HMR_VERBS_DEVICE_INFO_INIT                                             \
	{                                                                      \
		.size = sizeof(struct hmr_verbs_device_info)                   \
	}
/* The index-th NIC; -FI_ENOENT past the last (or when there is none). */
HMR_EXPORT int hmr_verbs_device_info(uint32_t index,
                                     struct hmr_verbs_device_info *info);

/* How a verbs domain registers memory (hmr_verbs_reg_path). */
enum hmr_verbs_path {
	HMR_VERBS_PATH_NONE = 0, /* It cannot: the registration fails. */
	HMR_VERBS_PATH_HOST,     /* Host memory: ibv_reg_mr. */
	HMR_VERBS_PATH_DMABUF,   /* Exported as a dma-buf: ibv_reg_dmabuf_mr. */
	HMR_VERBS_PATH_PEERMEM,  /* ibv_reg_mr of the device address, which a
	                            peer-memory module lets the NIC pin. */
};

/*
 * The path a registration of `iface` memory on `device` (the
 * fi_mr_attr.device value; ignored for FI_HMEM_SYSTEM) takes in a new
 * verbs domain on NIC `nic`, with default access flags, and in `why`
 * the reason, naming what decided it.  0 with *path set (NONE included:
 * then `why` says what is missing); -FI_ENOENT: no such NIC or device;
 * -FI_ENODEV: no RDMA device (`why` says why); -FI_EINVAL: bad arguments;
 * -FI_ENOSYS: built without rdma-core.  A domain asking MW_BIND or FLUSH
 * access cannot use a dma-buf; one whose first dma-buf registration is
 * refused demotes that device to peer memory from then on.
 */
HMR_EXPORT int hmr_verbs_reg_path(enum fi_hmem_iface iface, uint64_t device,
                                  uint32_t nic, enum hmr_verbs_path *path,
                                  char *why, size_t why_len);

/*
 * A completion counter that fi_mr_bind() accepts (FI_REMOTE_WRITE and/or
 * FI_REMOTE_READ).  hmr_mr_access() adds one per matching access.  The
 * domain must have FI_RMA_EVENT in its caps, or fi_mr_bind returns
 * -FI_ENOSYS.  Close with fi_close(&cntr->fid); an MR bound to an open
 * counter cannot be closed (-FI_EBUSY).  The ops table's read and set
 * slots work too, so libfabric's fi_cntr_read() reads it.
 */
HMR_EXPORT int hmr_cntr_open(struct fid_domain *domain, struct fid_cntr **cntr);
HMR_EXPORT uint64_t hmr_cntr_read(struct fid_cntr *cntr);

/*
 * A software endpoint, for FI_MR_ENDPOINT: MRs are bound to it with
 * fi_mr_bind(mr, ep, 0) and then enabled.  Close with fi_close(ep).
 */
HMR_EXPORT int hmr_ep_open(struct fid_domain *domain, struct fid **ep);

/*
 * The target side of a software RMA: may a peer access [addr, addr + len)
 * through `key` with `access` (FI_REMOTE_READ or FI_REMOTE_WRITE; an
 * atomic is a write)?  addr is a virtual address under FI_MR_VIRT_ADDR and
 * an offset into the region otherwise.  On success *ptr is where the bytes
 * are.  The range must lie within one iov of a vectored region; a
 * transport splits an access that crosses iovs.
 *
 *   -FI_ENOKEY      no live MR has this key (never issued, closed, or a
 *                   single-use key already used)
 *   -FI_EOPBADSTATE the MR is not enabled yet, or is being refreshed
 *   -FI_EFAULT      the range is not inside the region (or spans iovs)
 *   -FI_EACCES      the MR lacks the right, or the auth key differs
 *   -FI_EINVAL      bad arguments (len 0, access not exactly one of the
 *                   two remote bits, NULL pointers)
 *
 * Software domains only: on a verbs domain the NIC checks accesses, and
 * hmr_mr_access finds no key (-FI_ENOKEY).
 *
 * A successful FI_REMOTE_WRITE adds 1 to every open counter bound with
 * FI_REMOTE_WRITE (reads likewise).  A FI_MR_SINGLE_USE key stops working
 * after its first successful access.  Keys returned by fi_mr_map_raw()
 * work here as well.  The initiator is assumed to hold the domain's auth
 * key; hmr_mr_access_auth() names the initiator's key explicitly.
 */
HMR_EXPORT int hmr_mr_access(struct fid_domain *domain, uint64_t key,
                             uint64_t addr, size_t len, uint64_t access,
                             void **ptr);
HMR_EXPORT int hmr_mr_access_auth(struct fid_domain *domain,
                                  const void *auth_key, size_t auth_key_size,
                                  uint64_t key, uint64_t addr, size_t len,
                                  uint64_t access, void **ptr);

/*
 * Verbs domains.  fi_mr_key() is the rkey, and fi_mr_desc() points at a
 * struct hmr_verbs_desc: the lkey for an ibv_sge is
 * ((struct hmr_verbs_desc *)fi_mr_desc(mr))->lkey.  Raw keys carry the
 * rkey, and fi_mr_map_raw() on the peer's domain gives it back; a peer
 * addresses byte `off` of the region as base_addr + off, with the
 * base_addr fi_mr_raw_attr() returned (0 under offset addressing).
 *
 * The NIC addresses a region's bytes the same way for the lkey as for the
 * rkey: by virtual address under FI_MR_VIRT_ADDR, by offset otherwise
 * (a region with remote rights is registered at NIC address 0, and must
 * start on a page; a local-only one at its first byte's offset in its
 * page, so it may start anywhere).  So a local ibv_sge's addr is
 * hmr_verbs_sge_addr(desc, buf), for any buf inside the MR, which is buf
 * itself only under FI_MR_VIRT_ADDR.
 */
struct hmr_verbs_desc {
	uint32_t lkey;
	uint32_t rkey;
	struct ibv_mr *mr;
	uint64_t start; /* The registration's first byte in this process. */
	uint64_t iova;  /* Its NIC address: start, or under offsets 0 (remote
	                 * rights) or start's page offset (local only). */
};
static inline uint64_t hmr_verbs_sge_addr(const struct hmr_verbs_desc *desc,
                                          const void *buf)
{
	return desc->iova + ((uint64_t)(uintptr_t)buf - desc->start);
}
/* The verbs MR behind an hmr MR (NULL on other domains). */
HMR_EXPORT struct ibv_mr *hmr_verbs_mr(struct fid_mr *mr);
/* The protection domain of a verbs domain, to create QPs on (NULL on
 * other domains).  Owned by hmr unless the caller passed it in. */
HMR_EXPORT struct ibv_pd *hmr_verbs_pd(struct fid_domain *domain);

/*
 * Memory classification.  hmr_hmem_query tells what memory [ptr, ptr +
 * len) is: which interface allocated it, on which device, the allocation
 * it lies in, and the allocation's buffer id (which changes when the
 * address is freed and allocated again: a registration cache compares it).
 * Backends (CUDA, ...) load lazily at the first call that needs them:
 * HMR_HMEM (or libfabric's FI_HMEM) = "cuda,rocr,..." restricts which.
 * Host pointers are answered from a memtype cache without calling any
 * vendor runtime once they are known, and at once while no backend has a
 * device.
 */
#define HMR_HMEM_DEVICE_ONLY (1u << 0) /* Device-only allocation. */
#define HMR_HMEM_HOST_ALLOC  (1u << 1) /* The runtime's AllocHost. */
#define HMR_HMEM_MANAGED     (1u << 2) /* Unified/managed memory. */
/* Callers name this interface's devices in more than one way (Neuron:
 * /dev/neuron<N> or a NeuronCore; aws-ofi-nccl passes -1), so a
 * registration's device hint is not checked against `device`. */
#define HMR_HMEM_DEVICE_UNCHECKED (1u << 3)

struct hmr_hmem_info {
	enum fi_hmem_iface iface;
	uint64_t device;    /* CUdevice, ze encoding, ... (0 for host). */
	uint64_t base;      /* The allocation holding ptr (0 if unknown). */
	uint64_t size;      /* Its length. */
	uint64_t buffer_id; /* 0 when the interface has none. */
	uint32_t flags;     /* HMR_HMEM_* */
};

HMR_EXPORT int hmr_hmem_query(const void *ptr, size_t len,
                              struct hmr_hmem_info *info);

/* 0 when the interface's backend is loaded and has a device; otherwise a
 * negative code and, in `why`, the reason it is absent. */
HMR_EXPORT int hmr_hmem_status(enum fi_hmem_iface iface, char *why,
                               size_t why_len);
HMR_EXPORT const char *hmr_hmem_iface_name(enum fi_hmem_iface iface);

/*
 * What a present backend is and has, before anything is registered (what
 * hmr_info prints).  Both structs grow at their end: set `size` to
 * sizeof(the struct) (the _INIT macros do); the library fills only what
 * fits.  -FI_ENOSYS: the backend is absent (hmr_hmem_status says why).
 */
struct hmr_hmem_backend_info {
	size_t size;
	char library[256]; /* The runtime library loaded ("" for host). */
	char version[64];  /* Its version, as the runtime reports it. */
	uint32_t devices;  /* Devices it drives (0 for host memory). */
	char peermem[128]; /* Peer-memory kernel modules for it, or "". */
};
#define HMR_HMEM_BACKEND_INFO_INIT                                             \
	{                                                                      \
		.size = sizeof(struct hmr_hmem_backend_info)                   \
	}
HMR_EXPORT int hmr_hmem_backend_info(enum fi_hmem_iface iface,
                                     struct hmr_hmem_backend_info *info);

struct hmr_hmem_device_info {
	size_t size;
	uint64_t device; /* The fi_mr_attr.device value that names it. */
	char name[64];
	/* Whether its memory can be exported as a dma-buf: 1 yes, 0 no,
	 * -1 unknown until a registration tries; dmabuf_why says why not
	 * or why unknown. */
	int dmabuf;
	char dmabuf_why[128];
};
#define HMR_HMEM_DEVICE_INFO_INIT                                              \
	{                                                                      \
		.size = sizeof(struct hmr_hmem_device_info)                    \
	}
/* The index-th device (0 .. devices - 1); -FI_ENOENT past the last. */
HMR_EXPORT int hmr_hmem_device_info(enum fi_hmem_iface iface, uint32_t index,
                                    struct hmr_hmem_device_info *info);

/*
 * Allocate and free device memory of a backend through its runtime
 * (cuMemAlloc, hsa_amd_memory_pool_allocate, zeMemAllocDevice, ...), for
 * self-checks, samples and tests; an application allocates with its own
 * runtime.  FI_HMEM_SYSTEM gives page-aligned host memory.
 */
HMR_EXPORT int hmr_hmem_alloc(enum fi_hmem_iface iface, uint64_t device,
                              size_t len, void **ptr);
HMR_EXPORT int hmr_hmem_free(enum fi_hmem_iface iface, void *ptr);

/* A dma-buf fd and the offset of ptr in it, for [ptr, ptr + len) of device
 * memory, exported by the owning backend; give it back with
 * hmr_hmem_dmabuf_put (never close() it yourself: some runtimes track
 * their fds).  flags: HMR_DMABUF_PCIE asks for a PCIe mapping where the
 * runtime offers one (CUDA), falling back to the default when refused.
 * -FI_EINVAL for host memory no runtime owns (only device memory has a
 * dma-buf), -FI_EOPNOTSUPP for memory its runtime or device cannot export
 * (a runtime's host memory among it); hmr_hmem_dmabuf_get(3) lists all. */
#define HMR_DMABUF_PCIE (1ULL << 0)
HMR_EXPORT int hmr_hmem_dmabuf_get(const void *ptr, size_t len, uint64_t flags,
                                   int *fd, uint64_t *offset);
HMR_EXPORT int hmr_hmem_dmabuf_put(const void *ptr, int fd);

/* Page-lock host memory with a runtime (cuMemHostRegister...), so its
 * devices can reach it; classification then reports that interface. */
HMR_EXPORT int hmr_hmem_host_register(enum fi_hmem_iface iface, void *ptr,
                                      size_t len);
HMR_EXPORT int hmr_hmem_host_unregister(enum fi_hmem_iface iface, void *ptr,
                                        size_t len);

/*
 * Inter-process sharing of device memory (cuIpcGetMemHandle...): get a
 * handle for an allocation's start in one process, open it in another
 * (device: which of the interface's devices maps it), close it there.
 * hmr_hmem_ipc_get returns -FI_ETOOSMALL and the size needed when
 * *handle_size is too small.
 */
HMR_EXPORT int hmr_hmem_ipc_get(const void *ptr, void *handle,
                                size_t *handle_size);
HMR_EXPORT int hmr_hmem_ipc_open(enum fi_hmem_iface iface, uint64_t device,
                                 const void *handle, size_t handle_size,
                                 void **ptr);
HMR_EXPORT int hmr_hmem_ipc_close(enum fi_hmem_iface iface, void *ptr);

/* Copy between host memory and device memory of any interface. */
HMR_EXPORT int hmr_hmem_copy_to(void *dev, const void *host, size_t len);
HMR_EXPORT int hmr_hmem_copy_from(void *host, const void *dev, size_t len);

/*
 * Settings.  Every environment variable hmr reads is a setting with a
 * name, a default and a help text; a program may set one with
 * hmr_config_set instead of the environment (the API value wins over the
 * environment, which wins over the default).  Most settings are read
 * once, when the part that uses them starts (the log level at the first
 * log line, HMR_HMEM when the first domain with FI_HMEM classifies
 * memory): set them before.  hmr_config_entry lists them all, with the
 * value in force and where it came from, as hmr_info prints them.
 */
enum hmr_config_source {
	HMR_CONFIG_DEFAULT = 0,
	HMR_CONFIG_ENV = 1,
	HMR_CONFIG_API = 2,
};

struct hmr_config_info {
	const char *name;
	const char *value;         /* NULL: unset. */
	const char *default_value; /* NULL: no default. */
	const char *help;
	enum hmr_config_source source;
};

/* value NULL unsets the API value.  -FI_ENOENT: no such setting. */
HMR_EXPORT int hmr_config_set(const char *name, const char *value);
/* The index-th setting (0, 1, ...); -FI_ENOENT past the last.  The
 * strings stay valid while the library is loaded. */
HMR_EXPORT int hmr_config_entry(size_t index, struct hmr_config_info *info);

/*
 * The registration cache (verbs domains; doc/cache.md).  A registration
 * with no remote rights (FI_SEND, FI_RECV, FI_READ, FI_WRITE: what a NIC
 * reads or writes locally) is served from a cache of NIC registrations:
 * fi_mr_reg returns a new MR over a shared registration, and fi_close
 * keeps the registration for the next fi_mr_reg of the same memory.  A
 * registration with remote rights is never cached: once fi_close returns,
 * the rkey it handed out works no more.  Memory monitors (the setting
 * FI_MR_CACHE_MONITOR) drop cached registrations before their memory is
 * unmapped.
 *
 * hmr_mr_cache_invalidate: [addr, addr + len) is being freed or changed
 * (an allocator that reuses memory without unmapping it, a layer above
 * with its own cache): every cache drops what overlaps it, and the
 * memtype cache forgets it.  This is the "import" monitor: with
 * FI_MR_CACHE_MONITOR=import it is the only source of events.
 * hmr_mr_cache_flush: deregister every idle cached registration of the
 * domain (NULL: of every domain); MRs in use stay valid.
 */
HMR_EXPORT int hmr_mr_cache_invalidate(const void *addr, size_t len);
HMR_EXPORT int hmr_mr_cache_flush(struct fid_domain *domain);

struct hmr_mr_cache_stats {
	size_t size; /* sizeof(struct hmr_mr_cache_stats) */
	uint64_t hits, misses, evictions, invalidations, merges;
	uint64_t uncached; /* Registrations that bypassed the cache. */
	size_t entries;    /* Registrations held (in use or idle). */
	size_t idle;       /* Of which no MR uses. */
	size_t bytes;      /* Bytes the held registrations cover. */
	int active;        /* 1: caching; 0: bypassing (why says why). */
	char why[128];
	char monitor[32]; /* The monitor in force. */
	/* How the monitor reaches each function ("munmap patch; free
	 * relocation; ..."; details: hmr_monitor_info). */
	char monitor_how[256];
};
#define HMR_MR_CACHE_STATS_INIT                                                \
	{                                                                      \
		.size = sizeof(struct hmr_mr_cache_stats)                      \
	}
/* -FI_ENOSYS on a domain with no cache (software domains). */
HMR_EXPORT int hmr_mr_cache_stats(struct fid_domain *domain,
                                  struct hmr_mr_cache_stats *stats);

/*
 * The memory monitor that keeps the registration caches and the memtype
 * cache correct (doc/cache.md): which kind runs and why that one (what
 * was refused on the way), whether it tells of an unmap before the
 * kernel acts, and, for memhooks, how each libc function is reached:
 * "patch" (a jump written at its entry; `how` says which and where) or
 * "relocation" (every object's GOT entry; `how` says why).  Starts the
 * monitor if nothing has yet, as the first verbs domain would, so a
 * program can learn at start-up whether its caches will cache (hmr_info
 * prints this, and its self-check fails when a verbs domain's cannot).
 */
#define HMR_MONITOR_MAX_FUNCS 12
struct hmr_monitor_func_info {
	char name[16];      /* "munmap" */
	char mechanism[16]; /* "patch" or "relocation" */
	char how[112];
};
struct hmr_monitor_info {
	size_t size;   /* sizeof(struct hmr_monitor_info) */
	char kind[32]; /* memhooks, userfaultfd, kdreg2, import, disabled */
	char why[256];
	int caching;      /* 1: a registration cache can cache. */
	int before_unmap; /* 1: events come before the kernel unmaps, so
	                   * host answers of the memtype cache are kept. */
	unsigned nfuncs;
	struct hmr_monitor_func_info funcs[HMR_MONITOR_MAX_FUNCS];
};
#define HMR_MONITOR_INFO_INIT                                                  \
	{                                                                      \
		.size = sizeof(struct hmr_monitor_info)                        \
	}
/* 0, or -FI_EINVAL for a NULL or too small struct. */
HMR_EXPORT int hmr_monitor_info(struct hmr_monitor_info *info);

#ifdef __cplusplus
}
#endif

#endif /* HMR_HMR_H */
