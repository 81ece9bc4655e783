/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* copy.c: cuMemcpy*, cuMemsetD8 through the simulator's shadow mappings. */
#include "sim_cuda.h"

#include <string.h>

/*
 * Where the bytes at p live, for up to *avail bytes.  CUDA memory is
 * reached through its shadow mapping; any other address is pageable host
 * memory (unified addressing), unless need_cuda or it lies in a window.
 * Caller holds sim.lock.
 */
static CUresult sim_resolve(CUdeviceptr p, size_t want, int need_cuda,
                            int write, unsigned char **out, size_t *avail)
{
	struct sim_alloc *a = sim_find(p);

	if (a) {
		if (a->kind == SIM_KIND_VMM) {
			unsigned int need =
			        write ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
			              : CU_MEM_ACCESS_FLAGS_PROT_READ;
			int ok = 0;

			for (int d = 0; d < sim_cfg.ndev; d++)
				ok |= (a->access[d] & need) == need;
			if (!ok)
				return CUDA_ERROR_INVALID_VALUE;
		}
		*out = sim_view(a, p);
		*avail = a->size - (p - a->base);
		return CUDA_SUCCESS;
	}
	if (p == 0 || need_cuda || sim_in_window(p))
		return CUDA_ERROR_INVALID_VALUE;
	*out = (unsigned char *)(uintptr_t)p;
	*avail = want;
	return CUDA_SUCCESS;
}

enum { SIM_DST_CUDA = 1, SIM_SRC_CUDA = 2 };

/* Validates the whole of both ranges, then copies (memmove) piecewise. */
static CUresult sim_copy(CUdeviceptr dst, CUdeviceptr src, size_t n,
                         unsigned int need)
{
	CUresult rc = CUDA_SUCCESS;

	if (n == 0)
		return CUDA_SUCCESS;
	rc = sim_ctx_require(NULL);
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&sim.lock);
	for (int pass = 0; pass < 2 && rc == CUDA_SUCCESS; pass++) {
		CUdeviceptr d = dst, s = src;
		size_t left = n;

		while (left && rc == CUDA_SUCCESS) {
			unsigned char *dp, *sp;
			size_t da, sa, chunk;

			rc = sim_resolve(d, left, need & SIM_DST_CUDA, 1, &dp,
			                 &da);
			if (rc == CUDA_SUCCESS)
				rc = sim_resolve(s, left, need & SIM_SRC_CUDA,
				                 0, &sp, &sa);
			if (rc != CUDA_SUCCESS)
				break;
			chunk = left < da ? left : da;
			chunk = chunk < sa ? chunk : sa;
			if (pass == 1)
				memmove(dp, sp, chunk);
			d += chunk;
			s += chunk;
			left -= chunk;
		}
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src,
                                  size_t ByteCount)
{
	SIM_ENTER("cuMemcpy");
	return sim_copy(dst, src, ByteCount, 0);
}

SIM_API CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice,
                                      const void *srcHost, size_t ByteCount)
{
	SIM_ENTER("cuMemcpyHtoD");
	return sim_copy(dstDevice, (CUdeviceptr)(uintptr_t)srcHost, ByteCount,
	                SIM_DST_CUDA);
}

SIM_API CUresult CUDAAPI cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice,
                                      size_t ByteCount)
{
	SIM_ENTER("cuMemcpyDtoH");
	return sim_copy((CUdeviceptr)(uintptr_t)dstHost, srcDevice, ByteCount,
	                SIM_SRC_CUDA);
}

SIM_API CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dstDevice,
                                      CUdeviceptr srcDevice, size_t ByteCount)
{
	SIM_ENTER("cuMemcpyDtoD");
	return sim_copy(dstDevice, srcDevice, ByteCount,
	                SIM_DST_CUDA | SIM_SRC_CUDA);
}

SIM_API CUresult CUDAAPI cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc,
                                    size_t N)
{
	CUresult rc;

	SIM_ENTER("cuMemsetD8");
	if (N == 0)
		return CUDA_SUCCESS;
	rc = sim_ctx_require(NULL);
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&sim.lock);
	for (int pass = 0; pass < 2 && rc == CUDA_SUCCESS; pass++) {
		CUdeviceptr d = dstDevice;
		size_t left = N;

		while (left) {
			unsigned char *dp;
			size_t da;

			rc = sim_resolve(d, left, 1, 1, &dp, &da);
			if (rc != CUDA_SUCCESS)
				break;
			da = left < da ? left : da;
			if (pass == 1)
				memset(dp, uc, da);
			d += da;
			left -= da;
		}
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}
