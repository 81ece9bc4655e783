/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cuda_query.c: what a pointer is: allocation, VMM chunk, buffer id. */
#include <string.h>

#include "cuda/cuda_api.h"
#include "base/hash.h"
#include "base/range.h"
#include "hmem/hmem.h"
#include "base/log.h"

/*
 * What the driver answers (lab/gpu.md, doc/hmem-cuda.md):
 * - cuMemAlloc, pool, managed and host memory: RANGE_START_ADDR and
 *   RANGE_SIZE are the allocation, BUFFER_ID its id.
 * - VMM memory (cuMemCreate + cuMemMap, and so every tensor of PyTorch's
 *   expandable segments): RANGE_* are the whole reservation, mostly
 *   unmapped; BUFFER_ID is the mapped chunk's and cuMemGetAddressRange
 *   gives the chunk.  hmr's allocation of VMM memory is the chunk.
 * cuMemAlloc memory is legacy-IPC capable and VMM memory is not, so the
 * extra call (and the context it needs) is made only for device memory
 * that is not: the common case stays one batched call.
 */

/* One allocation (or VMM chunk) as the driver describes it. */
struct cu_one {
	unsigned memtype;
	int ordinal, managed, mapped, ipc;
	unsigned long long id;
	hmr_CUdeviceptr start;
	size_t size;
};

/*
 * The mapped chunk holding p: cuMemGetAddressRange, which needs a current
 * context (lab/gpu.md).  Kept inside what RANGE_* said: for VMM memory
 * the chunk lies in the reservation; for memory whose RANGE_* is already
 * the allocation (a pool's, measured) a larger answer changes nothing.
 * Left as it was if the driver lacks the call or does not answer.
 */
static void narrow_to_chunk(uintptr_t p, struct cu_one *o)
{
	int dev = o->ordinal >= 0 && o->ordinal < hmr__cuda.device_count
	                  ? o->ordinal
	                  : 0;
	hmr_CUdeviceptr base = 0;
	uint64_t end, cend;
	hmr_CUcontext prev;
	size_t size = 0;
	int r;

	if (!hmr__cuda.cuMemGetAddressRange)
		return;
	prev = hmr__cuda_push(dev);
	r = hmr__cuda.cuMemGetAddressRange(&base, &size, p);
	hmr__cuda_pop(prev);
	if (r == HMR_CUDA_SUCCESS && hmr__range_end(base, size, &cend) &&
	    base <= p && p < cend) {
		/* RANGE_* not holding p (never seen): the chunk as it is. */
		if (!hmr__range_end(o->start, o->size, &end) || o->start > p ||
		    p >= end) {
			o->start = base;
			end = cend;
		}
		if (base > o->start)
			o->start = base;
		o->size = (size_t)((cend < end ? cend : end) - o->start);
	} else {
		hmr_info("cuMemGetAddressRange(%#lx): %d; the range stays the "
		         "reservation",
		         (unsigned long)p, r);
	}
}

/* One batched cuPointerGetAttributes (and for VMM memory the chunk). */
static int ask(uintptr_t p, struct cu_one *o)
{
	hmr_CUpointer_attribute attrs[] = {
	        HMR_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	        HMR_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
	        HMR_CU_POINTER_ATTRIBUTE_BUFFER_ID,
	        HMR_CU_POINTER_ATTRIBUTE_IS_MANAGED,
	        HMR_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
	        HMR_CU_POINTER_ATTRIBUTE_RANGE_SIZE,
	        HMR_CU_POINTER_ATTRIBUTE_MAPPED,
	        HMR_CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
	};
	void *data[] = {&o->memtype, &o->ordinal, &o->id,     &o->managed,
	                &o->start,   &o->size,    &o->mapped, &o->ipc};
	int r;

	memset(o, 0, sizeof(*o));
	o->ordinal = -1;
	r = hmr__cuda.cuPointerGetAttributes(sizeof(attrs) / sizeof(attrs[0]),
	                                     attrs, data, (hmr_CUdeviceptr)p);
	/* INVALID_VALUE (a hole of a VMM reservation) / NOT_INITIALIZED,
	 * or memory type 0: not CUDA's. */
	if (r == HMR_CUDA_ERROR_INVALID_VALUE ||
	    r == HMR_CUDA_ERROR_NOT_INITIALIZED || (r == 0 && o->memtype == 0))
		return -FI_ENOENT;
	if (r != HMR_CUDA_SUCCESS)
		return hmr__cuda_check("cuPointerGetAttributes", r);
	if (o->memtype == HMR_CU_MEMORYTYPE_DEVICE && !o->managed && !o->ipc)
		narrow_to_chunk(p, o);
	return 0;
}

/*
 * The identity of a range over several allocations or VMM chunks (a
 * tensor of an expandable segment spans chunks; a dma-buf may cover two
 * adjacent cuMemAlloc allocations): every part's buffer id folded in, in
 * order, so that replacing any part changes it.  0 (never cached) when a
 * part is not the same device's memory of the same type, or has no id.
 */
static uint64_t span_id(const struct cu_one *first, uint64_t end)
{
	uint64_t id = hmr__hash64(first->id), at, next;
	struct cu_one o;

	if (!hmr__range_end(first->start, first->size, &at))
		return 0;
	while (at < end) {
		if (ask((uintptr_t)at, &o) || o.ordinal != first->ordinal ||
		    o.memtype != first->memtype || !o.id ||
		    !hmr__range_end(o.start, o.size, &next) || next <= at)
			return 0;
		id = hmr__hash64(id ^ o.id);
		at = next;
	}
	return id ? id : 1;
}

int hmr__cuda_query(const void *ptr, size_t len, struct hmr_hmem_info *info)
{
	uintptr_t p = (uintptr_t)ptr;
	struct cu_one o;
	uint64_t end, aend;
	int ret = ask(p, &o);

	if (ret)
		return ret;
	memset(info, 0, sizeof(*info));
	info->iface = FI_HMEM_CUDA;
	info->device = o.ordinal < 0 ? 0 : (uint64_t)o.ordinal;
	info->base = o.start;
	info->size = o.size;
	info->buffer_id = o.id;
	if (o.managed)
		info->flags |= HMR_HMEM_MANAGED;
	else if (o.memtype == HMR_CU_MEMORYTYPE_DEVICE)
		info->flags |= HMR_HMEM_DEVICE_ONLY;
	else if (o.memtype == HMR_CU_MEMORYTYPE_HOST)
		info->flags |= HMR_HMEM_HOST_ALLOC;
	/* Past the allocation holding ptr: the identity of every part. */
	if (o.id && hmr__range_end(p, len, &end) &&
	    hmr__range_end(o.start, o.size, &aend) && end > aend)
		info->buffer_id = span_id(&o, end);
	return 0;
}
