/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_rocr.c: simulated ROCr memory through hmr's verbs device paths. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <hmr/hmr.h>

#include "rc_pair.h"
#include "vm_case.h"

/*
 * The simulated ROCm 5.6 runtime (tests/sim/rocr) runs in the VM with its
 * GPU memory host-accessible (HMR_SIM_ROCR_HOST_ACCESSIBLE=1), because
 * rxe pins peer memory as plain pages.  A fake sysfs (HMR_SYSFS_ROOT)
 * says whether amdgpu_peermem, the module the ROCr backend names, is
 * loaded.  The kernel configuration the backend reads says dma-buf can
 * work, so the export is really tried: rxe's refusal of the simulated
 * dma-buf (a memfd) is what sends registration down the peer-memory path.
 */
#define DLEN (1 << 20)
#define SIM  "/payload/libhsa-runtime64.so.1"

static struct {
	__typeof__(&hsa_init) init;
	__typeof__(&hsa_iterate_agents) iterate_agents;
	__typeof__(&hsa_agent_get_info) agent_info;
	__typeof__(&hsa_amd_agent_iterate_memory_pools) iterate_pools;
	__typeof__(&hsa_amd_memory_pool_allocate) alloc;
	__typeof__(&hsa_amd_memory_pool_free) free;
	unsigned long (*calls)(const char *);
	hsa_amd_memory_pool_t pool[2];
	int ngpu;
} hsa;

static hsa_status_t first_pool(hsa_amd_memory_pool_t pool, void *data)
{
	*(hsa_amd_memory_pool_t *)data = pool;
	return HSA_STATUS_INFO_BREAK;
}

static hsa_status_t gpu_pool(hsa_agent_t agent, void *data)
{
	hsa_device_type_t type;

	(void)data;
	if (hsa.agent_info(agent, HSA_AGENT_INFO_DEVICE, &type) == 0 &&
	    type == HSA_DEVICE_TYPE_GPU && hsa.ngpu < 2)
		hsa.iterate_pools(agent, first_pool, &hsa.pool[hsa.ngpu++]);
	return HSA_STATUS_SUCCESS;
}

/* The application's side: the same runtime, two GPUs' pools. */
static int load_sim(void)
{
	void *h = dlopen(getenv("HMR_ROCR_LIBRARY"), RTLD_NOW);

	if (!h)
		return -1;
	*(void **)&hsa.init = dlsym(h, "hsa_init");
	*(void **)&hsa.iterate_agents = dlsym(h, "hsa_iterate_agents");
	*(void **)&hsa.agent_info = dlsym(h, "hsa_agent_get_info");
	*(void **)&hsa.iterate_pools =
	        dlsym(h, "hsa_amd_agent_iterate_memory_pools");
	*(void **)&hsa.alloc = dlsym(h, "hsa_amd_memory_pool_allocate");
	*(void **)&hsa.free = dlsym(h, "hsa_amd_memory_pool_free");
	*(void **)&hsa.calls = dlsym(h, "hmr_sim_rocr_calls");
	if (!hsa.init || !hsa.iterate_agents || !hsa.agent_info ||
	    !hsa.iterate_pools || !hsa.alloc || !hsa.free || !hsa.calls)
		return -1;
	return hsa.init() || hsa.iterate_agents(gpu_pool, NULL) || hsa.ngpu != 2
	               ? -1
	               : 0;
}

static char *gpu_alloc(int gpu)
{
	void *p = NULL;

	return hsa.alloc(hsa.pool[gpu], DLEN, 0, &p) ? NULL : p;
}

/* A fake sysfs root, with or without the amdgpu_peermem module; and a
 * kernel configuration with what amdgpu's dma-bufs need. */
static const char *sysfs(int with_module)
{
	static const char *root[] = {"/tmp/hmr-rocr-sysfs-none",
	                             "/tmp/hmr-rocr-sysfs-peermem"};

	mkdir(root[0], 0755);
	mkdir(root[1], 0755);
	mkdir("/tmp/hmr-rocr-sysfs-peermem/module", 0755);
	mkdir("/tmp/hmr-rocr-sysfs-peermem/module/amdgpu_peermem", 0755);
	return root[with_module];
}

static void environment(void)
{
	FILE *f = fopen("/tmp/hmr-rocr-kconfig", "w");

	if (f) {
		fputs("CONFIG_DMABUF_MOVE_NOTIFY=y\nCONFIG_PCI_P2PDMA=y\n", f);
		fclose(f);
	}
	/* Before hmr's first memory query: backends start once. */
	setenv("HMR_ROCR_LIBRARY", SIM, 0);
	setenv("HMR_SIM_ROCR_HOST_ACCESSIBLE", "1", 0);
	setenv("HMR_ROCR_KERNEL_CONFIG", "/tmp/hmr-rocr-kconfig", 0);
}

static int open_domain(struct ibv_pd *pd, struct fid_domain **d)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;

	attr.kind = HMR_DOMAIN_VERBS;
	attr.caps = FI_HMEM;
	attr.nic_name = pd ? NULL : "rxe0";
	attr.pd = pd;
	return hmr_domain_open(&attr, d);
}

static int reg_rocr(struct fid_domain *d, void *p, int device,
                    struct fid_mr **mr)
{
	struct iovec iov = {p, DLEN};
	struct fi_mr_attr attr = {.mr_iov = &iov,
	                          .iov_count = 1,
	                          .access = FI_REMOTE_WRITE | FI_REMOTE_READ,
	                          .iface = FI_HMEM_ROCR};

	attr.device.reserved = (uint64_t)device;
	return fi_mr_regattr(d, &attr, FI_HMEM_DEVICE_ONLY, mr);
}

static uint32_t lkey_of(struct fid_mr *mr)
{
	return ((struct hmr_verbs_desc *)fi_mr_desc(mr))->lkey;
}

/* RDMA WRITE into GPU memory, READ back from it; the bytes are checked
 * through the runtime's copy. */
static void write_read(struct rc_pair *p, struct fid_mr *src_mr, char *src,
                       char *dev, struct fid_mr *mr)
{
	const char *name = "verbs_rocr_peermem_rdma_write_and_read";
	char back[256];
	int w, r, ret;

	memset(src, 0x6b, 256);
	w = rc_rdma(p, IBV_WR_RDMA_WRITE, src, 256, lkey_of(src_mr),
	            (uintptr_t)dev + 4096, (uint32_t)fi_mr_key(mr));
	memset(back, 0, sizeof(back));
	ret = hmr_hmem_copy_from(back, dev + 4096, sizeof(back));
	memset(src, 0, 256);
	r = rc_rdma(p, IBV_WR_RDMA_READ, src, 256, lkey_of(src_mr),
	            (uintptr_t)dev + 4096, (uint32_t)fi_mr_key(mr));
	vm_case(name,
	        w == IBV_WC_SUCCESS && r == IBV_WC_SUCCESS && !ret &&
	                back[0] == 0x6b && back[255] == 0x6b &&
	                !memcmp(back, src, sizeof(back)),
	        "write %s, read %s, copy %s, bytes %#x", rc_status_str(w),
	        rc_status_str(r), hmr_strerror(ret), back[0] & 0xff);
}

/*
 * With the probe skipped (HMR_VERBS_DMABUF=on), the first registration of
 * GPU 0 exports a dma-buf (and gives the fd back), rxe refuses it, GPU 0
 * is demoted and peer memory carries the registration; GPU 0 is not
 * exported again, GPU 1 still is, once.
 */
static void dmabuf_then_peermem(struct rc_pair *p, struct fid_mr *src_mr,
                                char *src, char *d0, char *d1)
{
	const char *ex = "hsa_amd_portable_export_dmabuf";
	const char *cl = "hsa_amd_portable_close_dmabuf";
	unsigned long e[4], c0 = hsa.calls(cl);
	struct fid_mr *mr[3] = {NULL, NULL, NULL};
	struct fid_domain *d;
	int ret[3], i;

	setenv("HMR_VERBS_DMABUF", "on", 1);
	setenv("HMR_SYSFS_ROOT", sysfs(1), 1);
	i = open_domain(p->pd_b, &d);
	unsetenv("HMR_VERBS_DMABUF");
	if (i) {
		vm_case_fail("verbs_rocr_dmabuf_first_then_peermem", "domain");
		return;
	}
	e[0] = hsa.calls(ex);
	ret[0] = reg_rocr(d, d0, 0, &mr[0]);
	e[1] = hsa.calls(ex);
	ret[1] = reg_rocr(d, d0, 0, &mr[1]);
	e[2] = hsa.calls(ex);
	ret[2] = reg_rocr(d, d1, 1, &mr[2]);
	e[3] = hsa.calls(ex);
	vm_case("verbs_rocr_dmabuf_first_then_peermem",
	        !ret[0] && e[1] == e[0] + 1 && hsa.calls(cl) > c0,
	        "reg %s, exports %lu, closes %lu", hmr_strerror(ret[0]),
	        e[1] - e[0], hsa.calls(cl) - c0);
	vm_case("verbs_rocr_dmabuf_refusal_demotes_that_gpu_only",
	        !ret[1] && !ret[2] && e[2] == e[1] && e[3] == e[2] + 1,
	        "regs %d %d, exports %lu %lu", ret[1], ret[2], e[2] - e[1],
	        e[3] - e[2]);
	/* fi_mr: V16 */
	vm_case("verbs_rocr_dmabuf_fds_all_given_back",
	        hsa.calls(cl) - c0 == e[3] - e[0], "exports %lu, closes %lu",
	        e[3] - e[0], hsa.calls(cl) - c0);
	if (!ret[0])
		write_read(p, src_mr, src, d0, mr[0]);
	for (i = 0; i < 3; i++)
		if (mr[i])
			fi_close(&mr[i]->fid);
	fi_close(&d->fid);
}

int main(void)
{
	struct fid_domain *host, *d;
	struct fid_mr *src_mr, *mr;
	struct rc_pair pair;
	char *src = aligned_alloc(4096, 8192), *d0, *d1;
	int ret;

	environment();
	if (load_sim() || !(d0 = gpu_alloc(0)) || !(d1 = gpu_alloc(1))) {
		vm_case_fail("verbs_rocr_setup", "simulator %s: no GPU memory",
		             getenv("HMR_ROCR_LIBRARY"));
		return vm_case_exit();
	}
	ret = open_domain(NULL, &host);
	if (ret || rc_wait_gid(hmr_verbs_pd(host)->context, 0, 10000) ||
	    rc_pair_create(&pair, hmr_verbs_pd(host), hmr_verbs_pd(host), 0) ||
	    fi_mr_reg(host, src, 8192, FI_READ | FI_WRITE, 0, 0, 0, &src_mr,
	              NULL)) {
		vm_case_fail("verbs_rocr_setup", "rxe0: %s", hmr_strerror(ret));
		return vm_case_exit();
	}
	vm_case("verbs_rocr_backend_present",
	        hmr_hmem_status(FI_HMEM_ROCR, NULL, 0) == 0, "absent");

	/* The default probe: rxe imports no dma-buf, and no peer memory. */
	setenv("HMR_SYSFS_ROOT", sysfs(0), 1);
	ret = open_domain(pair.pd_b, &d);
	if (!ret) {
		ret = reg_rocr(d, d0, 0, &mr);
		if (!ret)
			fi_close(&mr->fid);
		fi_close(&d->fid);
	}
	vm_case("verbs_rocr_without_dmabuf_or_peermem_is_eopnotsupp",
	        ret == -FI_EOPNOTSUPP, "ret %s", hmr_strerror(ret));

	dmabuf_then_peermem(&pair, src_mr, src, d0, d1);

	fi_close(&src_mr->fid);
	rc_pair_destroy(&pair);
	fi_close(&host->fid);
	hsa.free(d0);
	hsa.free(d1);
	free(src);
	return vm_case_exit();
}
