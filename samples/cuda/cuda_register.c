/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cuda_register.c: allocate GPU memory, register it, print what a peer needs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <hmr/hmr.h>

/*
 * The driver API is loaded with dlopen, as a library that must also run on
 * machines without CUDA would do.  With the toolkit's cuda.h the sample
 * uses its types; without, the few it needs are declared here.
 */
#if defined(HAVE_CUDA_H)
#include <cuda.h>
#else
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
#define CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9
#endif

struct driver {
	CUresult (*init)(unsigned);
	CUresult (*device_get)(CUdevice *, int);
	CUresult (*ctx_retain)(CUcontext *, CUdevice);
	CUresult (*ctx_set)(CUcontext);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*free)(CUdeviceptr);
	CUresult (*attr)(void *, int, CUdeviceptr);
};

static int load(struct driver *d)
{
	const char *path = getenv("HMR_CUDA_LIBRARY");
	void *h = dlopen(path ? path : "libcuda.so.1", RTLD_NOW);

	if (!h)
		return fprintf(stderr, "no libcuda: %s\n", dlerror()), -1;
	/* The _v2 names are the current ABI of these calls. */
	*(void **)&d->init = dlsym(h, "cuInit");
	*(void **)&d->device_get = dlsym(h, "cuDeviceGet");
	*(void **)&d->ctx_retain = dlsym(h, "cuDevicePrimaryCtxRetain");
	*(void **)&d->ctx_set = dlsym(h, "cuCtxSetCurrent");
	*(void **)&d->alloc = dlsym(h, "cuMemAlloc_v2");
	*(void **)&d->free = dlsym(h, "cuMemFree_v2");
	*(void **)&d->attr = dlsym(h, "cuPointerGetAttribute");
	return d->init && d->device_get && d->ctx_retain && d->ctx_set &&
	                       d->alloc && d->free && d->attr
	               ? 0
	               : -1;
}

int main(void)
{
	struct hmr_domain_attr dattr = HMR_DOMAIN_ATTR_INIT;
	struct fi_mr_attr attr = {0};
	struct fid_domain *domain;
	struct driver cu;
	CUcontext ctx;
	CUdevice dev;
	CUdeviceptr buf;
	struct fid_mr *mr;
	struct iovec iov;
	uint64_t offset;
	int ordinal = -1, fd, ret;
	size_t len = 2 << 20;

	if (load(&cu) || cu.init(0) || cu.device_get(&dev, 0) ||
	    cu.ctx_retain(&ctx, dev) || cu.ctx_set(ctx) || cu.alloc(&buf, len))
		return fprintf(stderr, "CUDA set-up failed\n"), 1;
	cu.attr(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, buf);

	dattr.caps = FI_HMEM;
	ret = hmr_domain_open(&dattr, &domain);
	if (ret)
		return fprintf(stderr, "domain: %s\n", hmr_strerror(ret)), 1;
	iov.iov_base = (void *)(uintptr_t)buf;
	iov.iov_len = len;
	attr.mr_iov = &iov;
	attr.iov_count = 1;
	attr.access = FI_REMOTE_READ | FI_REMOTE_WRITE;
	attr.iface = FI_HMEM_CUDA;
	attr.device.cuda = ordinal; /* The device the pointer is on. */
	ret = fi_mr_regattr(domain, &attr, 0, &mr);
	if (ret)
		return fprintf(stderr, "regattr: %s\n", hmr_strerror(ret)), 1;
	printf("iface %s device %d desc %p key %#llx\n",
	       hmr_hmem_iface_name(attr.iface), ordinal, fi_mr_desc(mr),
	       (unsigned long long)fi_mr_key(mr));

	/* What a verbs registration would hand to ibv_reg_dmabuf_mr. */
	ret = hmr_hmem_dmabuf_get(iov.iov_base, len, 0, &fd, &offset);
	if (ret == 0) {
		printf("dma-buf fd %d offset %llu\n", fd,
		       (unsigned long long)offset);
		hmr_hmem_dmabuf_put(iov.iov_base, fd);
	} else {
		printf("dma-buf: %s\n", hmr_strerror(ret));
	}
	fi_close(&mr->fid);
	fi_close(&domain->fid);
	cu.free(buf);
	return 0;
}
