/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_neuron.c: simulated Neuron memory through hmr's verbs domain on rxe. */
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "rc_pair.h"
#include "vm_case.h"

/*
 * The simulated libnrt (tests/sim/neuron) runs in the VM with its device
 * memory mapped read/write, as the real driver maps it.  Neuron memory
 * reaches a NIC only as a dma-buf (no peer-memory module serves it), and
 * rxe imports no dma-buf (its kernel has no reg_user_mr_dmabuf): these
 * cases show hmr taking that path and failing it cleanly, the bytes of
 * the dma-buf hmr exports, and an RDMA WRITE reaching Neuron memory
 * through a registered host buffer and hmr's copy.  The VM's kernel (6.1)
 * has no PROCMAP_QUERY: classification reads /proc/self/maps here.
 */
#define SIM_NRT  "/payload/libnrt.so.1"
#define DLEN     (1u << 20)
#define WLEN     4096
#define INTERIOR 8192 /* Where in the tensor the cases work. */

typedef int (*nrt_init_fn)(int, const char *, const char *);
typedef int (*nrt_alloc_fn)(int, int, size_t, const char *, void **);
typedef void (*nrt_free_fn)(void **);
typedef void *(*nrt_va_fn)(const void *);
typedef int (*nrt_rw_fn)(const void *, void *, size_t, size_t);

static struct {
	nrt_alloc_fn alloc;
	nrt_free_fn free;
	nrt_va_fn va;
	nrt_rw_fn read, write;
	unsigned long (*calls)(const char *);
} nrt;

/* The application's side: the runtime started, one device tensor. */
static char *load_sim(void **tensor)
{
	void *h = dlopen(getenv("HMR_NEURON_LIBRARY"), RTLD_NOW);
	nrt_init_fn init = h ? (nrt_init_fn)dlsym(h, "nrt_init") : NULL;

	if (!init)
		return NULL;
	nrt.alloc = (nrt_alloc_fn)dlsym(h, "nrt_tensor_allocate");
	nrt.free = (nrt_free_fn)dlsym(h, "nrt_tensor_free");
	nrt.va = (nrt_va_fn)dlsym(h, "nrt_tensor_get_va");
	nrt.read = (nrt_rw_fn)dlsym(h, "nrt_tensor_read");
	nrt.write = (nrt_rw_fn)dlsym(h, "nrt_tensor_write");
	*(void **)&nrt.calls = dlsym(h, "hmr_sim_neuron_calls");
	if (!nrt.alloc || !nrt.free || !nrt.va || !nrt.read || !nrt.write ||
	    !nrt.calls || init(1 /* NO_FW */, "2.0", "") ||
	    nrt.alloc(0 /* DEVICE */, 0, DLEN, "vm", tensor))
		return NULL;
	return nrt.va(*tensor);
}

static unsigned long exports(void)
{
	return nrt.calls("nrt_get_dmabuf_fd_v2") +
	       nrt.calls("nrt_get_dmabuf_fd");
}

/* A verbs domain on rxe0, or on the protection domain pd when given. */
static int open_domain(struct ibv_pd *pd, struct fid_domain **d)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.kind = HMR_DOMAIN_VERBS;
	attr.caps = FI_HMEM;
	attr.nic_name = "rxe0";
	attr.pd = pd;
	return hmr_domain_open(&attr, d);
}

static int reg_neuron(struct fid_domain *d, void *p, size_t len,
                      struct fid_mr **mr)
{
	struct iovec iov = {p, len};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_WRITE | FI_REMOTE_READ,
	                          .iface = FI_HMEM_NEURON};

	attr.device.neuron = 0;
	return fi_mr_regattr(d, &attr, 0, mr);
}

static void case_classified(char *dev)
{
	struct hmr_hmem_info di, hi;
	char host[64];
	int r1 = hmr_hmem_query(dev + INTERIOR, 64, &di);
	int r2 = hmr_hmem_query(host, sizeof(host), &hi);

	vm_case("verbs_neuron_classified_from_proc_maps",
	        !r1 && !r2 && di.iface == FI_HMEM_NEURON &&
	                di.base == (uintptr_t)dev && di.size == DLEN &&
	                (di.flags & ~HMR_HMEM_DEVICE_UNCHECKED) ==
	                        HMR_HMEM_DEVICE_ONLY &&
	                hi.iface == FI_HMEM_SYSTEM,
	        "device: %s iface %s base %#llx size %llu; host: %s iface %s",
	        hmr_strerror(r1), hmr_hmem_iface_name(di.iface),
	        (unsigned long long)di.base, (unsigned long long)di.size,
	        hmr_strerror(r2), hmr_hmem_iface_name(hi.iface));
}

/* rxe's answer to the fd -1 probe is "no dma-buf": hmr never exports. */
static void case_probe(struct ibv_pd *pd, char *dev)
{
	const char *name = "verbs_neuron_nic_without_dmabuf_exports_nothing";
	unsigned long before = exports();
	struct fid_domain *d;
	struct fid_mr *mr;
	int fds, ret;

	if (open_domain(pd, &d)) {
		vm_case_fail(name, "domain");
		return;
	}
	fds = vm_open_fds();
	ret = reg_neuron(d, dev + INTERIOR, WLEN, &mr);
	vm_case(name,
	        ret == -FI_EOPNOTSUPP && exports() == before &&
	                vm_open_fds() == fds,
	        "ret %s, exports %lu, fds %d -> %d", hmr_strerror(ret),
	        exports() - before, fds, vm_open_fds());
	if (!ret)
		fi_close(&mr->fid);
	fi_close(&d->fid);
}

/* With the probe skipped, hmr exports once (v2, at the interior
 * pointer), rxe refuses the import, the fd is closed and the device is
 * not exported to again. */
static void case_refused(struct ibv_pd *pd, char *dev)
{
	const char *name = "verbs_neuron_dmabuf_refused_by_rxe_closes_the_fd";
	unsigned long e0 = exports(), v2 = nrt.calls("nrt_get_dmabuf_fd_v2");
	struct fid_domain *d;
	struct fid_mr *mr[2] = {NULL, NULL};
	unsigned long e1, e2;
	int fds, ret[2];

	setenv("HMR_VERBS_DMABUF", "on", 1);
	ret[0] = open_domain(pd, &d);
	unsetenv("HMR_VERBS_DMABUF");
	if (ret[0]) {
		vm_case_fail(name, "domain");
		return;
	}
	fds = vm_open_fds();
	ret[0] = reg_neuron(d, dev + INTERIOR, WLEN, &mr[0]);
	e1 = exports();
	ret[1] = reg_neuron(d, dev + INTERIOR, WLEN, &mr[1]);
	e2 = exports();
	vm_case(name,
	        ret[0] == -FI_EOPNOTSUPP && ret[1] == -FI_EOPNOTSUPP &&
	                e1 == e0 + 1 && e2 == e1 &&
	                nrt.calls("nrt_get_dmabuf_fd_v2") == v2 + 1 &&
	                vm_open_fds() == fds,
	        "regs %s %s, exports %lu then %lu, fds %d -> %d",
	        hmr_strerror(ret[0]), hmr_strerror(ret[1]), e1 - e0, e2 - e1,
	        fds, vm_open_fds());
	for (int i = 0; i < 2; i++)
		if (mr[i])
			fi_close(&mr[i]->fid);
	fi_close(&d->fid);
}

/* The bytes of [p, p + len) as the dma-buf hmr exports for it shows them;
 * 0 when they equal `want`. */
static int dmabuf_bytes(char *p, size_t len, const char *want, char *why,
                        size_t why_len)
{
	uint64_t offset = 0;
	int fd = -1, ret = hmr_hmem_dmabuf_get(p, len, 0, &fd, &offset), same;
	off_t size;
	char *map;

	if (ret) {
		snprintf(why, why_len, "dmabuf_get: %s", hmr_strerror(ret));
		return -1;
	}
	size = lseek(fd, 0, SEEK_END);
	map = size > 0 ? mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0)
	               : MAP_FAILED;
	same = map != MAP_FAILED && offset + len <= (uint64_t)size &&
	       !memcmp(map + offset, want, len);
	snprintf(why, why_len, "offset %llu of %lld, bytes %s",
	         (unsigned long long)offset, (long long)size,
	         same ? "equal" : "differ");
	if (map != MAP_FAILED)
		munmap(map, (size_t)size);
	hmr_hmem_dmabuf_put(p, fd);
	return same ? 0 : -1;
}

/* RDMA WRITE into a registered host buffer, then hmr's copy into the
 * tensor: the bytes are in Neuron memory, seen through its dma-buf. */
static void case_staged(struct rc_pair *p, struct fid_domain *hd, char *dev)
{
	const char *name = "verbs_neuron_rdma_write_staged_into_neuron_memory";
	char *src = aligned_alloc(4096, WLEN),
	     *stage = aligned_alloc(4096, WLEN);
	struct fid_mr *smr = NULL, *tmr = NULL;
	char why[160] = "";
	int st = -1, ret;

	memset(src, 0x3c, WLEN);
	memset(stage, 0, WLEN);
	ret = fi_mr_reg(hd, src, WLEN, FI_WRITE, 0, 0, 0, &smr, NULL);
	if (!ret)
		ret = fi_mr_reg(hd, stage, WLEN, FI_REMOTE_WRITE, 0, 0, 0, &tmr,
		                NULL);
	if (!ret)
		st = rc_rdma(p, IBV_WR_RDMA_WRITE, src, WLEN,
		             ((struct hmr_verbs_desc *)fi_mr_desc(smr))->lkey,
		             (uintptr_t)stage, (uint32_t)fi_mr_key(tmr));
	if (!ret && st == IBV_WC_SUCCESS)
		ret = hmr_hmem_copy_to(dev + INTERIOR, stage, WLEN);
	vm_case(name,
	        !ret && st == IBV_WC_SUCCESS &&
	                !dmabuf_bytes(dev + INTERIOR, WLEN, src, why,
	                              sizeof(why)),
	        "registration/copy %s, write %s, %s", hmr_strerror(ret),
	        rc_status_str(st), why);
	if (tmr)
		fi_close(&tmr->fid);
	if (smr)
		fi_close(&smr->fid);
	free(src);
	free(stage);
}

int main(void)
{
	struct fid_domain *hd;
	struct ibv_context *ctx;
	struct rc_pair pair;
	void *tensor = NULL;
	char *dev;

	/* Before hmr's first memory query: backends start once. */
	setenv("HMR_NEURON_LIBRARY", SIM_NRT, 0);
	setenv("HMR_SIM_NEURON_HOST_ACCESSIBLE", "1", 0);
	dev = load_sim(&tensor);
	if (!dev) {
		vm_case_fail("verbs_neuron_setup", "simulator %s: no tensor",
		             SIM_NRT);
		return vm_case_exit();
	}
	ctx = rc_open_device("rxe0");
	if (!ctx || rc_wait_gid(ctx, 0, 10000) || open_domain(NULL, &hd)) {
		vm_case_fail("verbs_neuron_setup", "rxe0 and a verbs domain");
		return vm_case_exit();
	}
	if (rc_pair_create(&pair, hmr_verbs_pd(hd), hmr_verbs_pd(hd), 0)) {
		vm_case_fail("verbs_neuron_setup", "%s", pair.err);
		return vm_case_exit();
	}
	case_classified(dev);
	case_probe(hmr_verbs_pd(hd), dev);
	case_refused(hmr_verbs_pd(hd), dev);
	case_staged(&pair, hd, dev);
	rc_pair_destroy(&pair);
	fi_close(&hd->fid);
	ibv_close_device(ctx);
	nrt.free(&tensor);
	return vm_case_exit();
}
