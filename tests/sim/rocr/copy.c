/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* copy.c: hsa_memory_copy and hsa_amd_memory_async_copy, done at once. */
#include "sim_rocr.h"

#include <string.h>

/*
 * Where the bytes at p live, for up to *avail bytes.  ROCr memory is
 * reached through its shadow mapping; any other address outside the GPU
 * windows is host memory, used in place (ROCr locks it for the copy).
 * Caller holds sim.lock.
 */
static hsa_status_t sim_resolve(uintptr_t p, size_t want, unsigned char **out,
                                size_t *avail)
{
	struct sim_alloc *a = sim_find(p);

	if (a) {
		size_t off = p - a->base;

		if (off >= a->size)
			return HSA_STATUS_ERROR_INVALID_ARGUMENT;
		*out = (unsigned char *)a->shadow + off;
		*avail = a->size - off;
		return HSA_STATUS_SUCCESS;
	}
	if (sim_in_window(p))
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	*out = (unsigned char *)p;
	*avail = want;
	return HSA_STATUS_SUCCESS;
}

/*
 * Checks both whole ranges first (pass 0), then copies piecewise (pass
 * 1), so a bad range copies nothing.  Copying past the end of a buffer
 * is undefined in hsa.h; here it is HSA_STATUS_ERROR_INVALID_ARGUMENT.
 */
static hsa_status_t sim_copy(uintptr_t dst, uintptr_t src, size_t n)
{
	hsa_status_t rc = HSA_STATUS_SUCCESS;

	pthread_mutex_lock(&sim.lock);
	for (int pass = 0; pass < 2 && rc == HSA_STATUS_SUCCESS; pass++) {
		uintptr_t d = dst, s = src;
		size_t left = n;

		while (left && rc == HSA_STATUS_SUCCESS) {
			unsigned char *dp, *sp;
			size_t da, sa, chunk;

			rc = sim_resolve(d, left, &dp, &da);
			if (rc == HSA_STATUS_SUCCESS)
				rc = sim_resolve(s, left, &sp, &sa);
			if (rc != HSA_STATUS_SUCCESS)
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

SIM_API hsa_status_t HSA_API hsa_memory_copy(void *dst, const void *src,
                                             size_t size)
{
	SIM_ENTER("hsa_memory_copy");
	if (!dst || !src)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	if (size == 0)
		return HSA_STATUS_SUCCESS;
	return sim_copy((uintptr_t)dst, (uintptr_t)src, size);
}

/* Caller holds nothing.  The agents and signals an async copy names. */
static hsa_status_t sim_async_args(hsa_agent_t dst_agent, hsa_agent_t src_agent,
                                   uint32_t num_dep, const hsa_signal_t *deps,
                                   hsa_signal_t completion)
{
	hsa_status_t rc = HSA_STATUS_SUCCESS;

	pthread_mutex_lock(&sim.lock);
	if (!sim_agent_from(dst_agent) || !sim_agent_from(src_agent))
		rc = HSA_STATUS_ERROR_INVALID_AGENT;
	pthread_mutex_unlock(&sim.lock);
	for (uint32_t i = 0; i < num_dep && rc == HSA_STATUS_SUCCESS; i++)
		rc = sim_signal_check(deps[i]);
	if (rc == HSA_STATUS_SUCCESS)
		rc = sim_signal_check(completion);
	return rc;
}

/*
 * The copy is done before the call returns: it first waits for every
 * dependent signal to read 0 (so a dependency nobody completes blocks the
 * caller), then copies and decrements the completion signal by one.  As
 * in ROCr, size 0 returns success without touching the signal.  The
 * simulator does not check that the agents may reach the memory or that
 * host memory is locked (a GPU without XNACK would fault on pageable
 * memory).
 */
SIM_API hsa_status_t HSA_API hsa_amd_memory_async_copy(
        void *dst, hsa_agent_t dst_agent, const void *src,
        hsa_agent_t src_agent, size_t size, uint32_t num_dep_signals,
        const hsa_signal_t *dep_signals, hsa_signal_t completion_signal)
{
	hsa_status_t rc;

	SIM_ENTER("hsa_amd_memory_async_copy");
	if (!dst || !src || completion_signal.handle == 0 ||
	    (num_dep_signals == 0) != (dep_signals == NULL))
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	rc = sim_async_args(dst_agent, src_agent, num_dep_signals, dep_signals,
	                    completion_signal);
	if (rc != HSA_STATUS_SUCCESS || size == 0)
		return rc;
	for (uint32_t i = 0; i < num_dep_signals; i++)
		sim_signal_wait_zero(dep_signals[i]);
	rc = sim_copy((uintptr_t)dst, (uintptr_t)src, size);
	if (rc == HSA_STATUS_SUCCESS)
		sim_signal_add(completion_signal, -1);
	return rc;
}
