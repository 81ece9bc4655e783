/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* rocm_register.c: allocate GPU memory with ROCr, register it, print what a
 * peer needs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <hmr/hmr.h>

/*
 * The ROCr (HSA) runtime is loaded with dlopen, as a library that must
 * also run on machines without ROCm would do, and used directly: HIP is
 * not installed where this sample is built and tested (its test runs it
 * on hmr's simulated runtime).  With HIP, hipMalloc and the device
 * ordinal do the same; HIP numbers GPUs in the order ROCr lists its GPU
 * agents, which is hmr's device number (ROCR_VISIBLE_DEVICES hides GPUs
 * from both; HIP_VISIBLE_DEVICES from HIP only).  With ROCr's headers
 * the sample uses their types; without, it declares the few it needs.
 */
#if defined(HAVE_HSA_H)
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#else
typedef int hsa_status_t;
typedef struct {
	unsigned long long handle;
} hsa_agent_t, hsa_amd_memory_pool_t;
#define HSA_STATUS_SUCCESS                             0
#define HSA_STATUS_INFO_BREAK                          1
#define HSA_AGENT_INFO_DEVICE                          17
#define HSA_DEVICE_TYPE_GPU                            1
#define HSA_AMD_MEMORY_POOL_INFO_SEGMENT               0
#define HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED 5
#define HSA_AMD_SEGMENT_GLOBAL                         0
#endif

static struct {
	hsa_status_t (*init)(void);
	hsa_status_t (*iterate_agents)(hsa_status_t (*)(hsa_agent_t, void *),
	                               void *);
	hsa_status_t (*agent_info)(hsa_agent_t, int, void *);
	hsa_status_t (*iterate_pools)(hsa_agent_t,
	                              hsa_status_t (*)(hsa_amd_memory_pool_t,
	                                               void *),
	                              void *);
	hsa_status_t (*pool_info)(hsa_amd_memory_pool_t, int, void *);
	hsa_status_t (*alloc)(hsa_amd_memory_pool_t, size_t, unsigned, void **);
	hsa_status_t (*free)(void *);
} hsa;

static int load(void)
{
	const char *path = getenv("HMR_ROCR_LIBRARY");
	void *h = dlopen(path ? path : "libhsa-runtime64.so.1", RTLD_NOW);

	if (!h)
		return fprintf(stderr, "no ROCr: %s\n", dlerror()), -1;
	*(void **)&hsa.init = dlsym(h, "hsa_init");
	*(void **)&hsa.iterate_agents = dlsym(h, "hsa_iterate_agents");
	*(void **)&hsa.agent_info = dlsym(h, "hsa_agent_get_info");
	*(void **)&hsa.iterate_pools =
	        dlsym(h, "hsa_amd_agent_iterate_memory_pools");
	*(void **)&hsa.pool_info = dlsym(h, "hsa_amd_memory_pool_get_info");
	*(void **)&hsa.alloc = dlsym(h, "hsa_amd_memory_pool_allocate");
	*(void **)&hsa.free = dlsym(h, "hsa_amd_memory_pool_free");
	return hsa.init && hsa.iterate_agents && hsa.agent_info &&
	                       hsa.iterate_pools && hsa.pool_info &&
	                       hsa.alloc && hsa.free
	               ? 0
	               : -1;
}

/* The first GPU's global pool that applications may allocate from. */
static hsa_status_t pick_pool(hsa_amd_memory_pool_t pool, void *out)
{
	unsigned segment = ~0u;
	bool allowed = false;

	hsa.pool_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment);
	hsa.pool_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
	              &allowed);
	if (segment != HSA_AMD_SEGMENT_GLOBAL || !allowed)
		return HSA_STATUS_SUCCESS;
	*(hsa_amd_memory_pool_t *)out = pool;
	return HSA_STATUS_INFO_BREAK;
}

static hsa_status_t first_gpu(hsa_agent_t agent, void *out)
{
	unsigned type = ~0u;

	hsa.agent_info(agent, HSA_AGENT_INFO_DEVICE, &type);
	if (type != HSA_DEVICE_TYPE_GPU)
		return HSA_STATUS_SUCCESS;
	hsa.iterate_pools(agent, pick_pool, out);
	return HSA_STATUS_INFO_BREAK; /* GPU 0: hmr's device 0. */
}

int main(void)
{
	struct hmr_domain_attr dattr = HMR_DOMAIN_ATTR_INIT;
	struct fi_mr_attr attr = {0};
	hsa_amd_memory_pool_t pool = {0};
	struct fid_domain *domain;
	struct fid_mr *mr;
	struct iovec iov;
	uint64_t offset;
	size_t len = 2 << 20;
	void *buf = NULL;
	int fd, ret;

	if (load() || hsa.init() != HSA_STATUS_SUCCESS ||
	    hsa.iterate_agents(first_gpu, &pool) != HSA_STATUS_INFO_BREAK ||
	    !pool.handle || hsa.alloc(pool, len, 0, &buf) != HSA_STATUS_SUCCESS)
		return fprintf(stderr, "ROCr set-up failed\n"), 1;

	dattr.caps = FI_HMEM;
	ret = hmr_domain_open(&dattr, &domain);
	if (ret)
		return fprintf(stderr, "domain: %s\n", hmr_strerror(ret)), 1;
	iov.iov_base = buf;
	iov.iov_len = len;
	attr.mr_iov = &iov;
	attr.iov_count = 1;
	attr.access = FI_REMOTE_READ | FI_REMOTE_WRITE;
	attr.iface = FI_HMEM_ROCR;
	attr.device.reserved = 0; /* The first GPU agent. */
	ret = fi_mr_regattr(domain, &attr, FI_HMEM_DEVICE_ONLY, &mr);
	if (ret)
		return fprintf(stderr, "regattr: %s\n", hmr_strerror(ret)), 1;
	printf("iface %s device 0 desc %p key %#llx\n",
	       hmr_hmem_iface_name(attr.iface), fi_mr_desc(mr),
	       (unsigned long long)fi_mr_key(mr));

	/* What a verbs registration would hand to ibv_reg_dmabuf_mr. */
	ret = hmr_hmem_dmabuf_get(buf, len, 0, &fd, &offset);
	if (ret == 0) {
		printf("dma-buf fd %d offset %llu\n", fd,
		       (unsigned long long)offset);
		hmr_hmem_dmabuf_put(buf, fd);
	} else {
		printf("dma-buf: %s\n", hmr_strerror(ret));
	}
	fi_close(&mr->fid);
	fi_close(&domain->fid);
	hsa.free(buf);
	return 0;
}
