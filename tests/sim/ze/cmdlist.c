/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cmdlist.c: command queues and lists; copies are the only commands. */
#include "sim_ze.h"

#include <stdlib.h>

/*
 * An immediate list copies at append time, so every copy has completed
 * when zeCommandListAppendMemoryCopy returns (even in asynchronous mode,
 * which a real driver need not honour that way).  A regular list records
 * copies until zeCommandListClose; zeCommandQueueExecuteCommandLists runs
 * them in order.  Events and fences are not simulated: passing one gives
 * ZE_RESULT_ERROR_UNSUPPORTED_FEATURE.  Destroyed queues and lists are
 * freed, so a stale handle is a use after free that ASan reports.
 */

#define SIM_QUEUE_FLAGS 0x1u /* ze_command_queue_flags_t */
#define SIM_LIST_FLAGS  0x7u /* ze_command_list_flags_t */

static int sim_cq_ok(ze_command_queue_handle_t h)
{
	return h && h->magic == SIM_CQ_MAGIC;
}

static int sim_cl_ok(ze_command_list_handle_t h)
{
	return h && h->magic == SIM_CL_MAGIC;
}

static ze_result_t sim_handles_ok(ze_context_handle_t hContext,
                                  ze_device_handle_t hDevice)
{
	int ok;

	pthread_mutex_lock(&sim.lock);
	ok = sim_context_ok(hContext) && sim_device_ok(hDevice);
	pthread_mutex_unlock(&sim.lock);
	return ok ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

static ze_result_t sim_queue_desc(const ze_command_queue_desc_t *desc)
{
	if (desc->flags & ~SIM_QUEUE_FLAGS ||
	    desc->mode > ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS ||
	    desc->priority > ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (!sim_queue_ok(desc->ordinal, desc->index))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_cq_create(ze_context_handle_t hContext,
                                 ze_device_handle_t hDevice,
                                 const ze_command_queue_desc_t *desc,
                                 ze_command_queue_handle_t *ph)
{
	ze_command_queue_handle_t q;
	ze_result_t rc;

	SIM_ENTER("zeCommandQueueCreate");
	rc = sim_handles_ok(hContext, hDevice);
	if (rc != ZE_RESULT_SUCCESS)
		return rc;
	if (!desc || !ph)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	rc = sim_queue_desc(desc);
	if (rc != ZE_RESULT_SUCCESS)
		return rc;
	q = calloc(1, sizeof(*q));
	if (!q)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	q->magic = SIM_CQ_MAGIC;
	q->dev = hDevice;
	q->ctx = hContext;
	*ph = q;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_cq_destroy(ze_command_queue_handle_t h)
{
	SIM_ENTER("zeCommandQueueDestroy");
	if (!sim_cq_ok(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	h->magic = 0;
	free(h);
	return ZE_RESULT_SUCCESS;
}

/* Runs the recorded copies of one closed regular list. */
static ze_result_t sim_cl_run(ze_command_list_handle_t l)
{
	ze_result_t rc = ZE_RESULT_SUCCESS;

	for (size_t i = 0; i < l->nops && rc == ZE_RESULT_SUCCESS; i++)
		rc = sim_copy(l->ops[i].dst, l->ops[i].src, l->ops[i].size);
	return rc;
}

static ze_result_t sim_cq_execute(ze_command_queue_handle_t h, uint32_t n,
                                  ze_command_list_handle_t *lists,
                                  ze_fence_handle_t hFence)
{
	ze_result_t rc = ZE_RESULT_SUCCESS;

	SIM_ENTER("zeCommandQueueExecuteCommandLists");
	if (!sim_cq_ok(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!lists)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (n == 0)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	if (hFence)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	for (uint32_t i = 0; i < n; i++) {
		if (!sim_cl_ok(lists[i]))
			return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
		if (lists[i]->immediate)
			return ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE;
		if (!lists[i]->closed)
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	for (uint32_t i = 0; i < n && rc == ZE_RESULT_SUCCESS; i++)
		rc = sim_cl_run(lists[i]);
	return rc;
}

/* Everything ran inside zeCommandQueueExecuteCommandLists. */
static ze_result_t sim_cq_synchronize(ze_command_queue_handle_t h,
                                      uint64_t timeout)
{
	(void)timeout;
	SIM_ENTER("zeCommandQueueSynchronize");
	return sim_cq_ok(h) ? ZE_RESULT_SUCCESS
	                    : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

void sim_fill_command_queue(ze_command_queue_dditable_t *t)
{
	t->pfnCreate = sim_cq_create;
	t->pfnDestroy = sim_cq_destroy;
	t->pfnExecuteCommandLists = sim_cq_execute;
	t->pfnSynchronize = sim_cq_synchronize;
}

static ze_result_t sim_cl_new(ze_context_handle_t hContext,
                              ze_device_handle_t hDevice, int immediate,
                              ze_command_list_handle_t *ph)
{
	ze_command_list_handle_t l = calloc(1, sizeof(*l));

	if (!l)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	l->magic = SIM_CL_MAGIC;
	l->dev = hDevice;
	l->ctx = hContext;
	l->immediate = immediate;
	*ph = l;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_cl_create(ze_context_handle_t hContext,
                                 ze_device_handle_t hDevice,
                                 const ze_command_list_desc_t *desc,
                                 ze_command_list_handle_t *ph)
{
	ze_result_t rc;

	SIM_ENTER("zeCommandListCreate");
	rc = sim_handles_ok(hContext, hDevice);
	if (rc != ZE_RESULT_SUCCESS)
		return rc;
	if (!desc || !ph)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->flags & ~SIM_LIST_FLAGS)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (!sim_queue_ok(desc->commandQueueGroupOrdinal, 0))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return sim_cl_new(hContext, hDevice, 0, ph);
}

static ze_result_t sim_cl_create_immediate(ze_context_handle_t hContext,
                                           ze_device_handle_t hDevice,
                                           const ze_command_queue_desc_t *desc,
                                           ze_command_list_handle_t *ph)
{
	ze_result_t rc;

	SIM_ENTER("zeCommandListCreateImmediate");
	rc = sim_handles_ok(hContext, hDevice);
	if (rc != ZE_RESULT_SUCCESS)
		return rc;
	if (!desc || !ph)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	rc = sim_queue_desc(desc);
	if (rc != ZE_RESULT_SUCCESS)
		return rc;
	return sim_cl_new(hContext, hDevice, 1, ph);
}

static ze_result_t sim_cl_destroy(ze_command_list_handle_t h)
{
	SIM_ENTER("zeCommandListDestroy");
	if (!sim_cl_ok(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	h->magic = 0;
	free(h->ops);
	free(h);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_cl_close(ze_command_list_handle_t h)
{
	SIM_ENTER("zeCommandListClose");
	if (!sim_cl_ok(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!h->immediate)
		h->closed = 1;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_cl_reset(ze_command_list_handle_t h)
{
	SIM_ENTER("zeCommandListReset");
	if (!sim_cl_ok(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	h->nops = 0;
	h->closed = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_cl_record(ze_command_list_handle_t h, void *dst,
                                 const void *src, size_t size)
{
	ze_result_t rc = sim_copy_check(dst, src, size);

	if (rc != ZE_RESULT_SUCCESS)
		return rc;
	if (h->nops == h->capops) {
		size_t cap = h->capops ? h->capops * 2 : 8;
		struct sim_copy_op *ops = realloc(h->ops, cap * sizeof(*ops));

		if (!ops)
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		h->ops = ops;
		h->capops = cap;
	}
	h->ops[h->nops].dst = dst;
	h->ops[h->nops].src = src;
	h->ops[h->nops].size = size;
	h->nops++;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_cl_copy(ze_command_list_handle_t h, void *dst,
                               const void *src, size_t size,
                               ze_event_handle_t hSignalEvent,
                               uint32_t numWaitEvents,
                               ze_event_handle_t *phWaitEvents)
{
	(void)phWaitEvents;
	SIM_ENTER("zeCommandListAppendMemoryCopy");
	if (!sim_cl_ok(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!dst || !src)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (hSignalEvent || numWaitEvents)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	if (h->immediate)
		return sim_copy(dst, src, size);
	if (h->closed)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return sim_cl_record(h, dst, src, size);
}

/* Copies run in order anyway: a barrier without events does nothing. */
static ze_result_t sim_cl_barrier(ze_command_list_handle_t h,
                                  ze_event_handle_t hSignalEvent,
                                  uint32_t numWaitEvents,
                                  ze_event_handle_t *phWaitEvents)
{
	(void)phWaitEvents;
	SIM_ENTER("zeCommandListAppendBarrier");
	if (!sim_cl_ok(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (hSignalEvent || numWaitEvents)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	if (!h->immediate && h->closed)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return ZE_RESULT_SUCCESS;
}

void sim_fill_command_list(ze_command_list_dditable_t *t)
{
	t->pfnCreate = sim_cl_create;
	t->pfnCreateImmediate = sim_cl_create_immediate;
	t->pfnDestroy = sim_cl_destroy;
	t->pfnClose = sim_cl_close;
	t->pfnReset = sim_cl_reset;
	t->pfnAppendMemoryCopy = sim_cl_copy;
	t->pfnAppendBarrier = sim_cl_barrier;
}
