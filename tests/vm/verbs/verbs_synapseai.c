/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_synapseai.c: simulated Gaudi memory through hmr's verbs dma-buf path.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "dmabuf_nic.h"
#include "rc_pair.h"
#include "syn_decl.h" /* tests/sim/synapseai: the application's calls */
#include "vm_case.h"

/*
 * The simulated Gaudi stack (tests/sim/synapseai) runs in the VM; hmr
 * registers a buffer of its HBM on rxe0 through the verbs domain's
 * dma-buf path (the backend exports, ibv_reg_dmabuf_mr imports, the fd
 * goes back), and an RDMA WRITE through the rkey must land at exactly the
 * buffer's bytes: a wrong dma-buf offset (libfabric reports 0 for
 * hcclLookupDMABuff) would put them into the runtime's own HBM instead.
 *
 * rxe cannot import a dma-buf (ibv_reg_dmabuf_mr is EOPNOTSUPP on 6.1),
 * and the simulator's dma-buf is a memfd no kernel importer takes.  So
 * this program plays a dma-buf-capable NIC (dmabuf_nic.h) for the
 * simulator's HBM fds; with vm_nic_on 0, every fd goes to libibverbs'
 * real call: the last case shows rxe's own refusal.
 *
 * The thunk route runs here; the program re-runs itself with "hccl" for
 * hcclLookupDMABuff (hmr reads HMR_HLTHUNK_LIBRARY once per process).
 */
#define SIM  "/payload/libSynapse.so"
#define DLEN (1 << 20)

/* The application's side: the device, an allocation, the truth. */
static __typeof__(synDeviceMalloc) *syn_malloc;
static synDeviceInfoV2 info;

/* hccl: HCL's own fd is made first, so fds counted later stay flat. */
static int app_start(int hccl)
{
	void *h = dlopen(SIM, RTLD_NOW);
	__typeof__(synInitialize) *init;
	__typeof__(synDeviceAcquireByModuleId) *acquire;
	__typeof__(synDeviceGetInfoV2) *get_info;
	__typeof__(hcclLookupDMABuff) *lookup;
	synDeviceId id;
	int hcl_fd = -1;

	if (!h)
		return -1;
	*(void **)&init = dlsym(h, "synInitialize");
	*(void **)&acquire = dlsym(h, "synDeviceAcquireByModuleId");
	*(void **)&get_info = dlsym(h, "synDeviceGetInfoV2");
	*(void **)&syn_malloc = dlsym(h, "synDeviceMalloc");
	*(void **)&lookup = dlsym(h, "hcclLookupDMABuff");
	if (!init || !acquire || !get_info || !syn_malloc || !lookup)
		return -1;
	if (init() || acquire(&id, 0) || get_info(0, &info))
		return -1;
	return hccl && (lookup(0, 0, &hcl_fd) || hcl_fd < 0) ? -1 : 0;
}

static int open_domain(struct ibv_pd *pd, struct fid_domain **d)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.kind = HMR_DOMAIN_VERBS;
	attr.nic_name = "rxe0";
	attr.caps = FI_HMEM;
	attr.pd = pd;
	return hmr_domain_open(&attr, d);
}

static int reg_gaudi(struct fid_domain *d, uint64_t p, struct fid_mr **mr)
{
	struct iovec iov = {(void *)(uintptr_t)p, DLEN};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_WRITE | FI_REMOTE_READ,
	                          .iface = FI_HMEM_SYNAPSEAI};

	attr.device.synapseai = 0;
	return fi_mr_regattr(d, &attr, 0, mr);
}

/* reg_gaudi in the domain of the cases (the shared check's callback). */
static struct fid_domain *cases_domain;

static int reg_in_domain(uint64_t p, struct fid_mr **mr)
{
	return reg_gaudi(cases_domain, p, mr);
}

/* WRITE into a registered Gaudi buffer; READ other bytes of it. */
static void case_rdma(struct fid_domain *d, const struct vm_nic_src *s,
                      const char *w, const char *r)
{
	uint64_t p = 0;

	/* Not the pool's first buffer: its offset is neither 0 nor 2 MiB. */
	if (syn_malloc(0, DLEN, 0, 0, &p) || syn_malloc(0, DLEN, 0, 0, &p)) {
		vm_case_fail(w, "synDeviceMalloc");
		return;
	}
	cases_domain = d;
	vm_nic_rdma_cases(s, p, reg_in_domain, p - info.globalHbmBaseAddress, w,
	                  r);
}

/* rxe's real answer: refused, cleanly; Habana has no peer memory. */
static void case_refused(struct ibv_pd *pd)
{
	/* fi_mr: V16 */
	const char *name = "verbs_synapseai_rxe_refuses_real_dmabuf_cleanly";
	struct fid_domain *d;
	struct fid_mr *mr;
	uint64_t p = 0;
	int fds, ret;

	if (syn_malloc(0, DLEN, 0, 0, &p) || open_domain(pd, &d)) {
		vm_case_fail(name, "set-up");
		return;
	}
	vm_nic_on = 0;
	fds = vm_open_fds();
	ret = reg_gaudi(d, p, &mr);
	vm_case(name, ret == -FI_EOPNOTSUPP && vm_open_fds() == fds,
	        "ret %s, fds %d -> %d", hmr_strerror(ret), fds, vm_open_fds());
	if (!ret)
		fi_close(&mr->fid);
	fi_close(&d->fid);
	vm_nic_on = 1;
}

/* The hccl route in a process of its own; its CASE lines are its own. */
static void run_hccl_child(void)
{
	int status = -1;

	fflush(stdout);
	if (fork() == 0) {
		execl("/proc/self/exe", "verbs_synapseai", "hccl",
		      (char *)NULL);
		_exit(127);
	}
	wait(&status);
	vm_case("verbs_synapseai_hccl_route_ran",
	        WIFEXITED(status) && WEXITSTATUS(status) == 0,
	        "child status %#x", status);
}

static void cases(int hccl)
{
	struct fid_domain *d;
	struct fid_mr *src_mr;
	struct rc_pair pair;
	struct vm_nic_src t = {&pair, aligned_alloc(4096, 4096), 0};
	const char *route = hccl ? "hccl" : "hlthunk";
	char w[96], r[96];

	if (app_start(hccl) || open_domain(NULL, &d)) {
		vm_case_fail("verbs_synapseai_setup", "simulator %s or rxe0",
		             SIM);
		return;
	}
	if (rc_wait_gid(hmr_verbs_pd(d)->context, 0, 10000) ||
	    rc_pair_create(&pair, hmr_verbs_pd(d), hmr_verbs_pd(d), 0) ||
	    fi_mr_reg(d, t.src, 4096, FI_READ | FI_WRITE, 0, 0, 0, &src_mr,
	              NULL)) {
		vm_case_fail("verbs_synapseai_setup", "rc pair: %s", pair.err);
		return;
	}
	t.lkey = ((struct hmr_verbs_desc *)fi_mr_desc(src_mr))->lkey;
	/* fi_mr: F90 V16 */
	snprintf(w, sizeof(w), "verbs_synapseai_%s_dmabuf_rdma_write_lands",
	         route);
	/* fi_mr: V16 */
	snprintf(r, sizeof(r), "verbs_synapseai_%s_dmabuf_rdma_read_returns",
	         route);
	case_rdma(d, &t, w, r);
	if (!hccl) {
		case_refused(hmr_verbs_pd(d));
		run_hccl_child();
	}
	fi_close(&src_mr->fid);
	rc_pair_destroy(&pair);
	fi_close(&d->fid);
	free(t.src);
}

int main(int argc, char **argv)
{
	int hccl = argc > 1 && strcmp(argv[1], "hccl") == 0;

	/* Before hmr's first memory call: backends start once. */
	setenv("HMR_SYNAPSEAI_LIBRARY", SIM, 1);
	setenv("HMR_HLTHUNK_LIBRARY",
	       hccl ? "/nonexistent/libhl-thunk.so" : "/payload/libhl-thunk.so",
	       1);
	setenv("HMR_SIM_SYNAPSEAI_HBM_MIB", "64", 1);
	/* Not rxe's answer to the probe: this program's NIC imports. */
	setenv("HMR_VERBS_DMABUF", "on", 1);
	vm_nic_takes = "sim-synapseai:hbm";
	cases(hccl);
	return vm_case_exit();
}
