/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dmabuf_nic.h: a test program that plays a dma-buf-importing NIC on rxe. */
#ifndef HMR_VM_DMABUF_NIC_H
#define HMR_VM_DMABUF_NIC_H

#include <stddef.h>
#include <stdint.h>

/*
 * rxe cannot import a dma-buf, and the simulators' dma-bufs are memfds
 * no kernel importer takes.  A program linked with dmabuf_nic.c (and
 * built with ENABLE_EXPORTS) defines ibv_reg_dmabuf_mr and ibv_dereg_mr
 * itself, so libhmr binds to them (the executable comes first in the
 * lookup scope).  For an fd whose /proc/self/fd link names vm_nic_takes,
 * it maps the fd's [offset, offset + length) and registers those pages
 * with ibv_reg_mr_iova at iova: exactly the bytes a NIC importing the
 * dma-buf would reach, so an RDMA WRITE through the rkey shows whether
 * hmr's offset was right.  Other fds, and every fd while vm_nic_on is 0,
 * go to libibverbs' real call (rxe's own refusal).
 */
extern const char *vm_nic_takes; /* e.g. "sim-synapseai:hbm" */
extern int vm_nic_on;            /* 1 by default */
extern unsigned vm_nic_imports;  /* dma-bufs imported so far */
extern uint64_t vm_nic_offset;   /* the last one's offset */
/* How the cases read device memory back: hmr_hmem_copy_from, or the
 * runtime's own call where hmr's backend has no copy from the device. */
extern int (*vm_nic_copy_from)(void *host, const void *dev, size_t len);

struct fid_domain;
struct fid_mr;
struct rc_pair;

/* Where the RDMA comes from: registered host memory (4096 bytes) on the
 * QP pair's initiator side, and its lkey. */
struct vm_nic_src {
	struct rc_pair *pair;
	unsigned char *src;
	uint32_t lkey;
};

/*
 * Device memory at p: 8 KiB of it written with hmr_hmem_copy_to, the
 * buffer registered by reg(p, &mr) through the dma-buf path, an RDMA
 * READ of the 256 bytes at p + 6144 (bytes hmr copied in) and a WRITE of
 * 256 at p + 4608 through its rkey.  Case w passes when the 8 KiB read
 * back through hmr_hmem_copy_from are what was copied and written, one
 * dma-buf was imported at want_offset and no fd was left open; case r
 * when the READ returned the copied bytes.
 */
void vm_nic_rdma_cases(const struct vm_nic_src *s, uint64_t p,
                       int (*reg)(uint64_t p, struct fid_mr **mr),
                       uint64_t want_offset, const char *w, const char *r);

/* Where in the 8 KiB from p the READ and the WRITE go, up to 8192 - 256.
 * The READ comes first, so the two may cross one boundary (of pages, of
 * chunks) over the same bytes. */
struct vm_nic_at {
	size_t write, read;
};

/* vm_nic_rdma_cases with the WRITE and the READ at *at; reg may register
 * more than the 8 KiB (a whole tensor around them). */
void vm_nic_rdma_at(const struct vm_nic_src *s, uint64_t p,
                    const struct vm_nic_at *at,
                    int (*reg)(uint64_t p, struct fid_mr **mr),
                    uint64_t want_offset, const char *w, const char *r);

/* A backend's device memory for vm_nic_kernel_cases. */
struct vm_nic_dev {
	const char *name; /* case-name prefix: "rxe_dmabuf_rocr" */
	int iface;        /* enum fi_hmem_iface */
	uint64_t device;
	uint64_t base; /* a page-aligned allocation of at least 64 KiB */
	/* The fd offset hmr's export of memory starting at p must give:
	 * where p lies in the fd the backend hands out. */
	uint64_t (*offset_of)(const struct vm_nic_dev *dev, uint64_t p);
	/* Optional: the backend's own cases, run last on the same verbs
	 * domain and QP pair. */
	void (*more)(const struct vm_nic_dev *dev, struct fid_domain *domain,
	             const struct vm_nic_src *s);
	/* Optional, both or neither: the runtime's own allocation of len
	 * bytes of device memory (0 on failure) and its free, as the
	 * application calls them; vm_nic_cache_cases needs them. */
	uint64_t (*alloc)(const struct vm_nic_dev *dev, size_t len);
	void (*free)(const struct vm_nic_dev *dev, uint64_t p);
	/* An address keeps its pages across a free and a new allocation
	 * (Gaudi HBM): the cache may serve them, and should. */
	int free_keeps_pages;
	/* The setting that keeps this memory out of the cache at 0
	 * (FI_MR_CUDA_CACHE_MONITOR_ENABLED, ...). */
	const char *cache_setting;
};

/*
 * The registration cache on the dma-buf path, run by vm_nic_kernel_main
 * where dev has alloc and free, each named <name>_<case>:
 * cache_serves_device_memory (a second local-only registration of a
 * fresh allocation is a hit, with no second import, whose lkey moves the
 * allocation's bytes), and cache_misses_after_free (the allocation freed
 * through the runtime and another made at the same address: the next
 * registration misses, is imported anew and moves the new allocation's
 * bytes, never those of the freed pages the old registration pinned; the
 * old entry is gone, by the runtime's free event, the memory monitor or
 * the miss at its address, whichever comes first); or, where the free
 * keeps the pages (free_keeps_pages), cache_serves_the_same_pages_after_free
 * (that registration is a hit, imports nothing, and moves the new
 * allocation's bytes).  Then cache_off_by_setting: with dev->cache_setting
 * set to 0 through hmr_config_set, a verbs domain opened afterwards
 * registers the memory anew each time (two imports, no hit, no miss).
 */
void vm_nic_cache_cases(const struct vm_nic_dev *dev, struct fid_domain *d,
                        const struct vm_nic_src *s);

/*
 * Every case a backend's memory passes through the kernel, each named
 * <name>_<case>: reg_path (hmr_verbs_reg_path says DMABUF),
 * rdma_write_lands and rdma_read_returns (vm_nic_rdma_cases on the
 * allocation from its base), interior_write_across_page and
 * interior_read_returns (a registration that starts 2560 bytes into a
 * page: a WRITE across the next page boundary lands there and nowhere
 * else, the fd offset is offset_of's, a READ across the one after
 * returns the bytes hmr copied in), closed_rkey_refused (the closed
 * MR's rkey gets a remote access error and the bytes stay),
 * read_only_refuses_write (a region registered FI_REMOTE_READ: a WRITE
 * gets a remote access error and changes nothing, a READ succeeds), and
 * cycles_fd_flat (10,000 registrations and closes, each imported by the
 * kernel, leave the fd count where it was), then the cache's
 * (vm_nic_cache_cases) where dev has alloc and free.  They run on a verbs
 * domain on rxe0 with a loopback QP pair on its protection domain.  A program's
 * main: returns its exit status; dev->base 0 (the simulator sim gave no
 * memory), or no domain or QPs, fail <name>_setup.
 */
int vm_nic_kernel_main(const struct vm_nic_dev *dev, const char *sim);

#endif /* HMR_VM_DMABUF_NIC_H */
