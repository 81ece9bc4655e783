/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* syn_stream.c: streams, queued copies and memsets, synchronization. */
#include "syn.h"

#include <stdlib.h>
#include <string.h>

/*
 * Arguments are checked when the work is queued, with Synapse's codes:
 * a NULL or unknown stream is synInvalidArgument, a zero size succeeds
 * and does nothing, a 0 address is synInvalidArgument, a host side the
 * device cannot reach is synMappingNotFound.  The device side must lie
 * inside one live synDeviceMalloc buffer (synInvalidArgument otherwise):
 * stricter than hardware, whose DMA would reach any mapped HBM.
 */

static struct InternalStreamHandle *syn_stream_find(synStreamHandle h)
{
	for (struct InternalStreamHandle *s = syn.streams; s; s = s->next)
		if (s == h)
			return s;
	return NULL;
}

static void syn_op_run(const struct syn_op *op)
{
	unsigned char *hbm = syn.hl.view;
	uint64_t base = syn.hl.hbm_base;

	switch (op->dir) {
	case HOST_TO_DRAM:
		memcpy(hbm + (op->dst - base), (const void *)(uintptr_t)op->src,
		       op->size);
		break;
	case DRAM_TO_HOST:
		memcpy((void *)(uintptr_t)op->dst, hbm + (op->src - base),
		       op->size);
		break;
	case DRAM_TO_DRAM:
		memmove(hbm + (op->dst - base), hbm + (op->src - base),
		        op->size);
		break;
	default:
		memset(hbm + (op->dst - base), op->value, op->size);
		break;
	}
}

/* Performs the stream's queued work in order. */
static void syn_stream_run(struct InternalStreamHandle *s)
{
	struct syn_op *op = s->head, *next;

	for (; op; op = next) {
		next = op->next;
		syn_op_run(op);
		free(op);
	}
	s->head = NULL;
	s->tail = &s->head;
}

static synStatus syn_enqueue(struct InternalStreamHandle *s,
                             const struct syn_op *op)
{
	struct syn_op *q = malloc(sizeof(*q));

	if (!q)
		return synOutOfHostMemory;
	*q = *op;
	q->next = NULL;
	*s->tail = q;
	s->tail = &q->next;
	return synSuccess;
}

SIM_API synStatus synStreamCreateGeneric(synStreamHandle *pStreamHandle,
                                         const synDeviceId deviceId,
                                         const uint32_t flags)
{
	struct InternalStreamHandle *s;
	synStatus rc;

	(void)deviceId;
	(void)flags;
	SYN_ENTER("synStreamCreateGeneric");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(1, synFail);
	if (rc == synSuccess && !pStreamHandle)
		rc = synInvalidArgument;
	if (rc == synSuccess) {
		s = calloc(1, sizeof(*s));
		if (s) {
			s->magic = SYN_STREAM_MAGIC;
			s->tail = &s->head;
			s->next = syn.streams;
			syn.streams = s;
			*pStreamHandle = s;
		} else {
			rc = synOutOfHostMemory;
		}
	}
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

/* A stream with queued work is busy: synchronize it first. */
SIM_API synStatus synStreamDestroy(const synStreamHandle streamHandle)
{
	struct InternalStreamHandle **pp;
	synStatus rc;

	SYN_ENTER("synStreamDestroy");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(0, synSuccess);
	if (rc == synSuccess && !syn_stream_find(streamHandle))
		rc = synInvalidArgument;
	else if (rc == synSuccess && streamHandle->head)
		rc = synBusy;
	for (pp = &syn.streams; rc == synSuccess && *pp; pp = &(*pp)->next) {
		if (*pp == streamHandle) {
			*pp = streamHandle->next;
			streamHandle->magic = 0;
			free(streamHandle);
			break;
		}
	}
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

SIM_API synStatus synStreamSynchronize(const synStreamHandle streamHandle)
{
	struct InternalStreamHandle *s;
	synStatus rc;

	SYN_ENTER("synStreamSynchronize");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(0, synSuccess);
	s = rc == synSuccess ? syn_stream_find(streamHandle) : NULL;
	if (rc == synSuccess && !s)
		rc = synInvalidArgument;
	if (s)
		syn_stream_run(s);
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

SIM_API synStatus synDeviceSynchronize(const synDeviceId deviceId)
{
	synStatus rc;

	(void)deviceId;
	SYN_ENTER("synDeviceSynchronize");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(1, synFail);
	for (struct InternalStreamHandle *s = syn.streams;
	     rc == synSuccess && s; s = s->next)
		syn_stream_run(s);
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

/* The checks of a copy; synSuccess means it may be queued. */
static synStatus syn_copy_check(const struct syn_op *op)
{
	if (op->src == 0 || op->dst == 0)
		return synInvalidArgument;
	switch (op->dir) {
	case HOST_TO_DRAM:
		if (!syn_host_mapped(op->src, op->size))
			return synMappingNotFound;
		return syn_device_view(op->dst, op->size) ? synSuccess
		                                          : synInvalidArgument;
	case DRAM_TO_HOST:
		if (!syn_host_mapped(op->dst, op->size))
			return synMappingNotFound;
		return syn_device_view(op->src, op->size) ? synSuccess
		                                          : synInvalidArgument;
	case DRAM_TO_DRAM:
		return syn_device_view(op->src, op->size) &&
		                       syn_device_view(op->dst, op->size)
		               ? synSuccess
		               : synInvalidArgument;
	default:
		return synInvalidArgument;
	}
}

SIM_API synStatus synMemCopyAsync(const synStreamHandle streamHandle,
                                  const uint64_t src, const uint64_t size,
                                  const uint64_t dst, const synDmaDir direction)
{
	struct syn_op op = {NULL, direction, src, dst, size, 0};
	struct InternalStreamHandle *s;
	synStatus rc;

	SYN_ENTER("synMemCopyAsync");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(0, synSuccess);
	s = rc == synSuccess ? syn_stream_find(streamHandle) : NULL;
	if (rc == synSuccess && !s)
		rc = synInvalidArgument;
	if (rc == synSuccess && size != 0)
		rc = syn_copy_check(&op);
	if (rc == synSuccess && size != 0)
		rc = syn_enqueue(s, &op);
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

SIM_API synStatus synMemsetD8Async(uint64_t pDeviceMem,
                                   const unsigned char value,
                                   const syn_size_t numOfElements,
                                   const synStreamHandle streamHandle)
{
	struct syn_op op = {NULL,       DIRECTION_ENUM_MAX, 0,
	                    pDeviceMem, numOfElements,      value};
	struct InternalStreamHandle *s;
	synStatus rc;

	SYN_ENTER("synMemsetD8Async");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(0, synSuccess);
	s = rc == synSuccess ? syn_stream_find(streamHandle) : NULL;
	if (rc == synSuccess && !s)
		rc = synInvalidArgument;
	if (rc == synSuccess && numOfElements != 0 &&
	    !syn_device_view(pDeviceMem, numOfElements))
		rc = synInvalidArgument;
	if (rc == synSuccess && numOfElements != 0)
		rc = syn_enqueue(s, &op);
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

/* The device's release: queued work is done, then the streams go. */
void syn_streams_reset(void)
{
	struct InternalStreamHandle *s, *next;

	for (s = syn.streams; s; s = next) {
		next = s->next;
		syn_stream_run(s);
		s->magic = 0;
		free(s);
	}
	syn.streams = NULL;
}
