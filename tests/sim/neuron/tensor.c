/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* tensor.c: tensor allocation, free, queries and copies. */
#include "sim_neuron.h"

#include <stdlib.h>
#include <string.h>

/*
 * Statuses the runtime does not document are chosen as nrt_status.h
 * describes them: NRT_INVALID for a bad argument or handle, NRT_RESOURCE
 * when memory runs out.
 */

static NRT_STATUS sim_check_placement(nrt_tensor_placement_t placement, int vnc,
                                      size_t size)
{
	switch (placement) {
	case NRT_TENSOR_PLACEMENT_DEVICE:
		return vnc >= 0 && vnc < sim_cfg.visible ? NRT_SUCCESS
		                                         : NRT_INVALID;
	case NRT_TENSOR_PLACEMENT_HOST:
		/* The developer guide: host tensors "cannot be larger than
		 * 4MB, the Kernel physical page size limit". */
		if (size > SIM_HOST_MAX)
			return NRT_INVALID;
		/* fall through */
	case NRT_TENSOR_PLACEMENT_VIRTUAL:
		/* nrt.h: "Pass in -1 if allocating tensors on host memory";
		 * the guide lets a core id name the associated core. */
		return vnc >= -1 && vnc < sim_cfg.visible ? NRT_SUCCESS
		                                          : NRT_INVALID;
	default:
		return NRT_INVALID;
	}
}

SIM_API NRT_STATUS nrt_tensor_allocate(nrt_tensor_placement_t tensor_placement,
                                       int vnc, size_t size, const char *name,
                                       nrt_tensor_t **tensor)
{
	struct nrt_tensor *t;
	NRT_STATUS rc;

	(void)name; /* the runtime uses it in log messages only */
	SIM_ENTER(nrt_tensor_allocate);
	if (!tensor || size == 0 || size > SIZE_MAX / 2)
		return NRT_INVALID;
	rc = sim_check_placement(tensor_placement, vnc, size);
	if (rc != NRT_SUCCESS)
		return rc;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NRT_RESOURCE;
	t->magic = SIM_TENSOR_MAGIC;
	t->placement = tensor_placement;
	t->nc = vnc;
	t->size = size;
	pthread_mutex_lock(&sim.lock);
	/* nrt_close may have run since SIM_ENTER looked. */
	rc = sim_check_init();
	if (rc == NRT_SUCCESS)
		rc = sim_tensor_back(t);
	if (rc == NRT_SUCCESS) {
		t->id = sim.next_id++;
		t->alive = 1;
		t->next = sim.all;
		sim.all = t;
	}
	pthread_mutex_unlock(&sim.lock);
	if (rc != NRT_SUCCESS) {
		free(t);
		return rc;
	}
	*tensor = t;
	return NRT_SUCCESS;
}

/* Works in any state: after nrt_close it frees the handle's remains. */
SIM_API void nrt_tensor_free(nrt_tensor_t **tensor)
{
	struct nrt_tensor *t = NULL;
	NRT_STATUS ignored;

	(void)sim_fail_check(SIM_EP_nrt_tensor_free, &ignored);
	if (!tensor || !*tensor)
		return;
	pthread_mutex_lock(&sim.lock);
	t = sim_lookup(*tensor);
	if (t) {
		if (t->alive)
			sim_tensor_release(t);
		sim_unlink(t);
	}
	pthread_mutex_unlock(&sim.lock);
	if (!t)
		return;
	t->magic = 0;
	free(t);
	*tensor = NULL;
}

/* Copies between buf and [offset, offset + size) of the tensor. */
static NRT_STATUS sim_copy(const nrt_tensor_t *tensor, void *buf, size_t offset,
                           size_t size, int to_tensor)
{
	NRT_STATUS rc = NRT_SUCCESS;
	struct nrt_tensor *t;

	if (!buf && size)
		return NRT_INVALID;
	pthread_mutex_lock(&sim.lock);
	t = sim_lookup(tensor);
	if (!t || !t->alive || offset > t->size || size > t->size - offset)
		rc = NRT_INVALID;
	else if (size && to_tensor)
		memcpy(t->shadow + offset, buf, size);
	else if (size)
		memcpy(buf, t->shadow + offset, size);
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

SIM_API NRT_STATUS nrt_tensor_read(const nrt_tensor_t *tensor, void *buf,
                                   size_t offset, size_t size)
{
	SIM_ENTER(nrt_tensor_read);
	return sim_copy(tensor, buf, offset, size, 0);
}

SIM_API NRT_STATUS nrt_tensor_write(nrt_tensor_t *tensor, const void *buf,
                                    size_t offset, size_t size)
{
	SIM_ENTER(nrt_tensor_write);
	return sim_copy(tensor, (void *)(uintptr_t)buf, offset, size, 1);
}

/* A live tensor's field, or 0 (the runtime's error value for both). */
static uintptr_t sim_tensor_field(enum sim_entry ep, const nrt_tensor_t *tensor,
                                  int want_va)
{
	struct nrt_tensor *t;
	uintptr_t v = 0;
	NRT_STATUS ignored;

	if (sim_fail_check(ep, &ignored) || sim_check_init() != NRT_SUCCESS)
		return 0;
	pthread_mutex_lock(&sim.lock);
	t = sim_lookup(tensor);
	if (t && t->alive)
		v = want_va ? t->va : t->size;
	pthread_mutex_unlock(&sim.lock);
	return v;
}

SIM_API size_t nrt_tensor_get_size(const nrt_tensor_t *tensor)
{
	return sim_tensor_field(SIM_EP_nrt_tensor_get_size, tensor, 0);
}

/*
 * The host VA: the device mapping for DEVICE tensors (NULL with
 * HMR_SIM_NEURON_DEVICE_VA=0), the memory itself otherwise.
 */
SIM_API void *nrt_tensor_get_va(const nrt_tensor_t *tensor)
{
	return (void *)sim_tensor_field(SIM_EP_nrt_tensor_get_va, tensor, 1);
}

/*
 * nrt_experimental.h: a CPU copy into "mmaped device memory".  dest and
 * the whole range must lie in one DEVICE tensor; the bytes go through its
 * shadow, so this works whether or not the VA is host accessible.
 */
SIM_API NRT_STATUS nrt_memcpy_to_device(void *dest, const void *src,
                                        size_t size)
{
	NRT_STATUS rc = NRT_INVALID;
	struct nrt_tensor *t;
	uintptr_t d = (uintptr_t)dest;

	SIM_ENTER(nrt_memcpy_to_device);
	if (!dest || !src)
		return NRT_INVALID;
	pthread_mutex_lock(&sim.lock);
	t = sim_find_va(d);
	if (t && t->placement == NRT_TENSOR_PLACEMENT_DEVICE &&
	    size <= t->size - (d - t->va)) {
		memcpy(t->shadow + (d - t->va), src, size);
		rc = NRT_SUCCESS;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}
