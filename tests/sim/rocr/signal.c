/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* signal.c: HSA signals: a value, and waiters woken when it changes. */
#include "sim_rocr.h"

#include <stdlib.h>
#include <time.h>

struct sim_signal {
	hsa_signal_value_t value;
	struct sim_signal *next;
};

/*
 * sim_sig_lock protects the signal list and every value; sim_sig_cond is
 * broadcast on every change.  Lock order: sim.lock before sim_sig_lock.
 */
static pthread_mutex_t sim_sig_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sim_sig_cond = PTHREAD_COND_INITIALIZER;
static struct sim_signal *sim_signals;

/* Caller holds sim_sig_lock.  Never dereferences an unknown handle. */
static struct sim_signal *sim_signal_find(hsa_signal_t s)
{
	for (struct sim_signal *g = sim_signals; g; g = g->next)
		if ((uint64_t)(uintptr_t)g == s.handle)
			return g;
	return NULL;
}

/*
 * The value calls have no status to return: ROCr asserts the signal is
 * valid, then dereferences it.  The simulator says why and aborts.
 */
static struct sim_signal *sim_signal_must(hsa_signal_t s, const char *fn)
{
	struct sim_signal *g = sim_signal_find(s);

	if (!g) {
		sim_log("%s: invalid signal 0x%llx", fn,
		        (unsigned long long)s.handle);
		abort();
	}
	return g;
}

/* Counts a call that cannot fail (no hsa_status_t to return). */
static void sim_count(const char *name)
{
	(void)sim_fail_check(name);
}

SIM_API hsa_status_t HSA_API hsa_signal_create(hsa_signal_value_t initial_value,
                                               uint32_t num_consumers,
                                               const hsa_agent_t *consumers,
                                               hsa_signal_t *signal)
{
	struct sim_signal *g;
	uint32_t mask = 1;

	SIM_ENTER("hsa_signal_create");
	if (!signal || (num_consumers > 0 && !consumers))
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	if (num_consumers > 0) {
		pthread_mutex_lock(&sim.lock);
		mask = sim_agent_mask(num_consumers, consumers);
		pthread_mutex_unlock(&sim.lock);
	}
	if (!mask)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	g = calloc(1, sizeof(*g));
	if (!g)
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	g->value = initial_value;
	pthread_mutex_lock(&sim_sig_lock);
	g->next = sim_signals;
	sim_signals = g;
	pthread_mutex_unlock(&sim_sig_lock);
	signal->handle = (uint64_t)(uintptr_t)g;
	return HSA_STATUS_SUCCESS;
}

SIM_API hsa_status_t HSA_API hsa_signal_destroy(hsa_signal_t signal)
{
	struct sim_signal **pp;
	hsa_status_t rc = HSA_STATUS_ERROR_INVALID_SIGNAL;

	SIM_ENTER("hsa_signal_destroy");
	if (signal.handle == 0)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&sim_sig_lock);
	for (pp = &sim_signals; *pp; pp = &(*pp)->next) {
		struct sim_signal *g = *pp;

		if ((uint64_t)(uintptr_t)g == signal.handle) {
			*pp = g->next;
			free(g);
			rc = HSA_STATUS_SUCCESS;
			break;
		}
	}
	pthread_mutex_unlock(&sim_sig_lock);
	return rc;
}

/* The last hsa_shut_down: ROCr destroys every signal with the runtime. */
void sim_signals_destroy_all(void)
{
	pthread_mutex_lock(&sim_sig_lock);
	while (sim_signals) {
		struct sim_signal *g = sim_signals;

		sim_signals = g->next;
		free(g);
	}
	pthread_mutex_unlock(&sim_sig_lock);
}

static hsa_signal_value_t sim_load(hsa_signal_t s, const char *fn)
{
	hsa_signal_value_t v;

	pthread_mutex_lock(&sim_sig_lock);
	v = sim_signal_must(s, fn)->value;
	pthread_mutex_unlock(&sim_sig_lock);
	return v;
}

static void sim_store(hsa_signal_t s, hsa_signal_value_t v, const char *fn)
{
	pthread_mutex_lock(&sim_sig_lock);
	sim_signal_must(s, fn)->value = v;
	pthread_cond_broadcast(&sim_sig_cond);
	pthread_mutex_unlock(&sim_sig_lock);
}

SIM_API hsa_signal_value_t HSA_API
hsa_signal_load_scacquire(hsa_signal_t signal)
{
	sim_count("hsa_signal_load_scacquire");
	return sim_load(signal, "hsa_signal_load_scacquire");
}

SIM_API hsa_signal_value_t HSA_API hsa_signal_load_relaxed(hsa_signal_t signal)
{
	sim_count("hsa_signal_load_relaxed");
	return sim_load(signal, "hsa_signal_load_relaxed");
}

SIM_API void HSA_API hsa_signal_store_screlease(hsa_signal_t signal,
                                                hsa_signal_value_t value)
{
	sim_count("hsa_signal_store_screlease");
	sim_store(signal, value, "hsa_signal_store_screlease");
}

SIM_API void HSA_API hsa_signal_store_relaxed(hsa_signal_t signal,
                                              hsa_signal_value_t value)
{
	sim_count("hsa_signal_store_relaxed");
	sim_store(signal, value, "hsa_signal_store_relaxed");
}

static int sim_satisfied(hsa_signal_value_t v, hsa_signal_condition_t c,
                         hsa_signal_value_t cmp)
{
	switch (c) {
	case HSA_SIGNAL_CONDITION_EQ:
		return v == cmp;
	case HSA_SIGNAL_CONDITION_NE:
		return v != cmp;
	case HSA_SIGNAL_CONDITION_LT:
		return v < cmp;
	case HSA_SIGNAL_CONDITION_GTE:
		return v >= cmp;
	}
	return 1; /* an unknown condition: do not block forever */
}

/* timeout_hint is in HSA_SYSTEM_INFO_TIMESTAMP units: nanoseconds here. */
static struct timespec sim_deadline(uint64_t timeout_ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (timeout_ns > (uint64_t)365 * 24 * 3600 * 1000000000ull)
		timeout_ns = (uint64_t)365 * 24 * 3600 * 1000000000ull;
	ts.tv_sec += (time_t)(timeout_ns / 1000000000u);
	ts.tv_nsec += (long)(timeout_ns % 1000000000u);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* Returns the value that satisfied the condition, or the last one seen. */
static hsa_signal_value_t sim_wait(hsa_signal_t s, hsa_signal_condition_t c,
                                   hsa_signal_value_t cmp, uint64_t timeout,
                                   const char *fn)
{
	struct timespec until = sim_deadline(timeout);
	hsa_signal_value_t v;

	pthread_mutex_lock(&sim_sig_lock);
	for (;;) {
		v = sim_signal_must(s, fn)->value;
		if (sim_satisfied(v, c, cmp) ||
		    pthread_cond_timedwait(&sim_sig_cond, &sim_sig_lock,
		                           &until))
			break;
	}
	v = sim_signal_must(s, fn)->value;
	pthread_mutex_unlock(&sim_sig_lock);
	return v;
}

SIM_API hsa_signal_value_t HSA_API hsa_signal_wait_scacquire(
        hsa_signal_t signal, hsa_signal_condition_t condition,
        hsa_signal_value_t compare_value, uint64_t timeout_hint,
        hsa_wait_state_t wait_state_hint)
{
	(void)wait_state_hint;
	sim_count("hsa_signal_wait_scacquire");
	return sim_wait(signal, condition, compare_value, timeout_hint,
	                "hsa_signal_wait_scacquire");
}

SIM_API hsa_signal_value_t HSA_API
hsa_signal_wait_relaxed(hsa_signal_t signal, hsa_signal_condition_t condition,
                        hsa_signal_value_t compare_value, uint64_t timeout_hint,
                        hsa_wait_state_t wait_state_hint)
{
	(void)wait_state_hint;
	sim_count("hsa_signal_wait_relaxed");
	return sim_wait(signal, condition, compare_value, timeout_hint,
	                "hsa_signal_wait_relaxed");
}

/* For hsa_amd_memory_async_copy. */
hsa_status_t sim_signal_check(hsa_signal_t s)
{
	int ok;

	pthread_mutex_lock(&sim_sig_lock);
	ok = sim_signal_find(s) != NULL;
	pthread_mutex_unlock(&sim_sig_lock);
	return ok ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_SIGNAL;
}

/* A dependency: the copy starts once the signal reads 0. */
void sim_signal_wait_zero(hsa_signal_t s)
{
	sim_wait(s, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, "dependency");
}

void sim_signal_add(hsa_signal_t s, hsa_signal_value_t delta)
{
	pthread_mutex_lock(&sim_sig_lock);
	sim_signal_must(s, "completion")->value += delta;
	pthread_cond_broadcast(&sim_sig_cond);
	pthread_mutex_unlock(&sim_sig_lock);
}
