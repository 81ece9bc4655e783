/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* copy.c: what a copy engine does, through the simulator's shadows. */
#include "sim_ze.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/*
 * Memory this driver allocated (or mapped by IPC) is read and written
 * through its shadow mapping, and must hold the whole range.  Anything
 * else outside the device windows is host memory the GPU reaches by
 * unified addressing: it is copied with process_vm_readv on this very
 * process, so an address the CPU cannot touch (another driver's device
 * memory, an unmapped page) fails the copy instead of crashing the test.
 */

/* Caller holds sim.lock. */
static ze_result_t sim_resolve(const void *p, size_t n, unsigned char **view,
                               int *foreign)
{
	uintptr_t u = (uintptr_t)p;
	struct sim_alloc *a = sim_find(u);

	if (a && sim_is_usm(a)) {
		if (n > a->size - (u - a->base)) {
			sim_log("copy of %zu bytes at %p overruns allocation "
			        "%llu",
			        n, p, (unsigned long long)a->id);
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		}
		*view = a->mem.shadow + (u - a->base);
		return ZE_RESULT_SUCCESS;
	}
	if (sim_in_window(u) || sim_in_window(u + n - 1) || u + n < u) {
		sim_log("copy at %p: no allocation there", p);
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	*view = (unsigned char *)u;
	*foreign = 1;
	return ZE_RESULT_SUCCESS;
}

/* Checks both ranges without copying (for a regular command list). */
ze_result_t sim_copy_check(void *dst, const void *src, size_t size)
{
	unsigned char *d, *s;
	ze_result_t rc = ZE_RESULT_SUCCESS;
	int foreign = 0;

	if (size == 0)
		return rc;
	pthread_mutex_lock(&sim.lock);
	rc = sim_resolve(dst, size, &d, &foreign);
	if (rc == ZE_RESULT_SUCCESS)
		rc = sim_resolve(src, size, &s, &foreign);
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/* Copies between memory not all ours; caller holds sim.lock. */
static ze_result_t sim_copy_foreign(unsigned char *d, unsigned char *s,
                                    size_t size)
{
	struct iovec local = {d, size}, remote = {s, size};
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);

	if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
		memmove(d, s, size); /* no process_vm_readv: trust it */
		return ZE_RESULT_SUCCESS;
	}
	if (n == (ssize_t)size)
		return ZE_RESULT_SUCCESS;
	sim_log("copy %p -> %p (%zu bytes): memory the device cannot reach",
	        (void *)s, (void *)d, size);
	return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

ze_result_t sim_copy(void *dst, const void *src, size_t size)
{
	unsigned char *d, *s;
	ze_result_t rc;
	int foreign = 0;

	if (size == 0)
		return ZE_RESULT_SUCCESS;
	pthread_mutex_lock(&sim.lock);
	rc = sim_resolve(dst, size, &d, &foreign);
	if (rc == ZE_RESULT_SUCCESS)
		rc = sim_resolve(src, size, &s, &foreign);
	if (rc == ZE_RESULT_SUCCESS && foreign)
		rc = sim_copy_foreign(d, s, size);
	else if (rc == ZE_RESULT_SUCCESS)
		memmove(d, s, size);
	pthread_mutex_unlock(&sim.lock);
	return rc;
}
