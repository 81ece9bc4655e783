/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* init.c: environment, failure injection, call counters, nrt_init/close. */
#include "sim_neuron.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Environment (read once, at the first call of any entry point):
 *   HMR_SIM_NEURON_CORES            NeuronCores on the instance, default 4
 *                                   (0..128); 0: nrt_init fails with
 *                                   NRT_FAILURE, the counts say 0
 *   HMR_SIM_NEURON_VISIBLE_CORES    cores this process may use (logical
 *                                   ids 0..n-1), default all
 *   HMR_SIM_NEURON_CORES_PER_DEVICE cores per Neuron device, default 2:
 *                                   names /dev/neuron<D>, picks the EFA BDF
 *   HMR_SIM_NEURON_DMABUF           "1,0,...": dma-buf export per logical
 *                                   core (missing entries: 1); 0 makes
 *                                   nrt_get_dmabuf_fd* return NRT_FAILURE
 *   HMR_SIM_NEURON_HOST_ACCESSIBLE  1: device VAs are mapped read/write
 *                                   (as the real BAR mapping is) instead
 *                                   of PROT_NONE
 *   HMR_SIM_NEURON_DEVICE_VA        0: device tensors get no host VA
 *                                   (nrt_tensor_get_va returns NULL, as
 *                                   reported when HBM is not mapped);
 *                                   default 1
 *   HMR_SIM_NEURON_FAIL             "rule[,rule...]", rule =
 *                                   name[@N][=status][:count]: the entry
 *                                   point `name` runs normally for its
 *                                   first N calls (default 0), then
 *                                   returns status (a number or an NRT_*
 *                                   name, default NRT_FAILURE) for count
 *                                   calls (default: every later call).
 *                                   nrt_tensor_get_va fails with NULL,
 *                                   nrt_tensor_get_size with 0; the void
 *                                   calls and nrt_get_status_as_str are
 *                                   counted but cannot fail.
 */

#define SIM_MAX_RULES 32

struct sim_rule {
	enum sim_entry ep;
	NRT_STATUS status;
	unsigned long skip; /* calls still to let through */
	long count;         /* failures still to inject; < 0: forever */
};

struct sim_state sim = {
        .lock = PTHREAD_MUTEX_INITIALIZER,
        .state = SIM_START,
        .next_id = 1,
};
struct sim_config sim_cfg;

#define SIM_EP_NAME(name) #name,
static const char *const sim_entry_names[SIM_EP_COUNT] = {
        SIM_ENTRY_POINTS(SIM_EP_NAME)};
#undef SIM_EP_NAME

static pthread_once_t sim_config_once = PTHREAD_ONCE_INIT;
/* Protects sim_calls and sim_rules (the test hooks' state). */
static pthread_mutex_t sim_hooks_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long sim_calls[SIM_EP_COUNT];
static struct sim_rule sim_rules[SIM_MAX_RULES];
static int sim_nrules; /* written only under sim_config_once */

#define SIM_STATUS_NAME(s)                                                     \
	{                                                                      \
		s, #s                                                          \
	}
static const struct {
	NRT_STATUS status;
	const char *name;
} sim_status_names[] = {
        SIM_STATUS_NAME(NRT_SUCCESS),
        SIM_STATUS_NAME(NRT_FAILURE),
        SIM_STATUS_NAME(NRT_INVALID),
        SIM_STATUS_NAME(NRT_INVALID_HANDLE),
        SIM_STATUS_NAME(NRT_RESOURCE),
        SIM_STATUS_NAME(NRT_TIMEOUT),
        SIM_STATUS_NAME(NRT_HW_ERROR),
        SIM_STATUS_NAME(NRT_QUEUE_FULL),
        SIM_STATUS_NAME(NRT_LOAD_NOT_ENOUGH_NC),
        SIM_STATUS_NAME(NRT_UNSUPPORTED_NEFF_VERSION),
        SIM_STATUS_NAME(NRT_FAIL_HOST_MEM_ALLOC),
        SIM_STATUS_NAME(NRT_UNINITIALIZED),
        SIM_STATUS_NAME(NRT_CLOSED),
        SIM_STATUS_NAME(NRT_QUEUE_EMPTY),
        SIM_STATUS_NAME(NRT_EXEC_UNIT_UNRECOVERABLE),
        SIM_STATUS_NAME(NRT_EXEC_BAD_INPUT),
        SIM_STATUS_NAME(NRT_EXEC_COMPLETED_WITH_NUM_ERR),
        SIM_STATUS_NAME(NRT_EXEC_COMPLETED_WITH_ERR),
        SIM_STATUS_NAME(NRT_EXEC_NC_BUSY),
        SIM_STATUS_NAME(NRT_EXEC_OOB),
        SIM_STATUS_NAME(NRT_COLL_PENDING),
        SIM_STATUS_NAME(NRT_EXEC_HW_ERR_COLLECTIVES),
        SIM_STATUS_NAME(NRT_EXEC_HW_ERR_HBM_UE),
        SIM_STATUS_NAME(NRT_EXEC_HW_ERR_NC_UE),
        SIM_STATUS_NAME(NRT_EXEC_HW_ERR_DMA_ABORT),
        SIM_STATUS_NAME(NRT_EXEC_SW_NQ_OVERFLOW),
        SIM_STATUS_NAME(NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE),
        SIM_STATUS_NAME(NRT_NETWORK_PROXY_FAILURE),
};
#undef SIM_STATUS_NAME
#define SIM_NSTATUS (sizeof(sim_status_names) / sizeof(sim_status_names[0]))

void sim_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("sim-neuron: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int sim_env_int(const char *var, long lo, long hi, int dflt)
{
	const char *s = getenv(var);
	char *end;
	long v;

	if (!s || !*s)
		return dflt;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < lo || v > hi) {
		sim_log("ignoring %s=%s (want %ld..%ld)", var, s, lo, hi);
		return dflt;
	}
	return (int)v;
}

static int sim_entry_by_name(const char *name, size_t len)
{
	for (int i = 0; i < SIM_EP_COUNT; i++)
		if (strlen(sim_entry_names[i]) == len &&
		    strncmp(sim_entry_names[i], name, len) == 0)
			return i;
	return -1;
}

/* "NRT_RESOURCE" or "4" */
static int sim_status_parse(const char *s, NRT_STATUS *out)
{
	char *end;
	long v;

	for (size_t i = 0; i < SIM_NSTATUS; i++) {
		if (strcmp(sim_status_names[i].name, s) == 0) {
			*out = sim_status_names[i].status;
			return 0;
		}
	}
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < 0 || v > 1000000)
		return -1;
	*out = (NRT_STATUS)v;
	return 0;
}

/* name[@N][=status][:count], parsed right to left. */
static void sim_parse_rule(char *item)
{
	struct sim_rule r = {.status = NRT_FAILURE, .count = -1};
	char *colon = strchr(item, ':'), *eq, *at, *end;
	int ep;

	if (colon) {
		*colon = '\0';
		r.count = strtol(colon + 1, &end, 0);
		if (*end || end == colon + 1 || r.count < 0)
			goto bad;
	}
	eq = strchr(item, '=');
	if (eq) {
		*eq = '\0';
		if (sim_status_parse(eq + 1, &r.status))
			goto bad;
	}
	at = strchr(item, '@');
	if (at) {
		*at = '\0';
		r.skip = strtoul(at + 1, &end, 0);
		if (*end || end == at + 1)
			goto bad;
	}
	ep = sim_entry_by_name(item, strlen(item));
	if (ep < 0 || sim_nrules == SIM_MAX_RULES)
		goto bad;
	r.ep = (enum sim_entry)ep;
	sim_rules[sim_nrules++] = r;
	return;
bad:
	sim_log("ignoring HMR_SIM_NEURON_FAIL rule for '%s'", item);
}

static void sim_parse_rules(const char *spec)
{
	char *copy, *item, *save = NULL;

	if (!spec || !*spec)
		return;
	copy = strdup(spec);
	if (!copy)
		return;
	for (item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save))
		sim_parse_rule(item);
	free(copy);
}

static void sim_parse_dmabuf(const char *spec)
{
	int i;

	memset(sim_cfg.dmabuf, 1, sizeof(sim_cfg.dmabuf));
	for (i = 0; spec && *spec && i < SIM_MAX_CORES; i++) {
		char *end;
		long v = strtol(spec, &end, 0);

		if (end == spec || (*end && *end != ',')) {
			sim_log("ignoring bad HMR_SIM_NEURON_DMABUF");
			memset(sim_cfg.dmabuf, 1, sizeof(sim_cfg.dmabuf));
			return;
		}
		sim_cfg.dmabuf[i] = v != 0;
		spec = *end ? end + 1 : end;
	}
}

/* A fork child must not inherit the hooks lock held by another thread. */
static void sim_hooks_fork_lock(void)
{
	pthread_mutex_lock(&sim_hooks_lock);
}

static void sim_hooks_fork_unlock(void)
{
	pthread_mutex_unlock(&sim_hooks_lock);
}

static void sim_config_read(void)
{
	long page = sysconf(_SC_PAGESIZE);

	sim.page = page > 0 ? (size_t)page : 4096;
	sim_cfg.cores =
	        sim_env_int("HMR_SIM_NEURON_CORES", 0, SIM_MAX_CORES, 4);
	sim_cfg.visible = sim_env_int("HMR_SIM_NEURON_VISIBLE_CORES", 0,
	                              sim_cfg.cores, sim_cfg.cores);
	sim_cfg.cores_per_device = sim_env_int(
	        "HMR_SIM_NEURON_CORES_PER_DEVICE", 1, SIM_MAX_CORES, 2);
	sim_cfg.host_accessible =
	        sim_env_int("HMR_SIM_NEURON_HOST_ACCESSIBLE", 0, 1, 0);
	sim_cfg.device_va = sim_env_int("HMR_SIM_NEURON_DEVICE_VA", 0, 1, 1);
	sim_parse_dmabuf(getenv("HMR_SIM_NEURON_DMABUF"));
	sim_parse_rules(getenv("HMR_SIM_NEURON_FAIL"));
	/* Run in reverse order at fork: sim.lock, then the hooks lock. */
	pthread_atfork(sim_hooks_fork_lock, sim_hooks_fork_unlock,
	               sim_hooks_fork_unlock);
	sim_fork_hooks();
}

void sim_config_load(void)
{
	pthread_once(&sim_config_once, sim_config_read);
}

/* Counts the call; 1 and *status when a failure rule fires. */
int sim_fail_check(enum sim_entry ep, NRT_STATUS *status)
{
	int fire = 0;

	sim_config_load();
	pthread_mutex_lock(&sim_hooks_lock);
	sim_calls[ep]++;
	for (int i = 0; i < sim_nrules && !fire; i++) {
		struct sim_rule *r = &sim_rules[i];

		if (r->ep != ep)
			continue;
		if (r->skip > 0) {
			r->skip--;
			continue;
		}
		if (r->count == 0)
			continue;
		if (r->count > 0)
			r->count--;
		*status = r->status;
		fire = 1;
	}
	pthread_mutex_unlock(&sim_hooks_lock);
	return fire;
}

/*
 * Test hook, not a runtime symbol: how many times the entry point with
 * this name was called (failed calls included), 0 for unknown names.
 */
SIM_API unsigned long hmr_sim_neuron_calls(const char *name)
{
	unsigned long n = 0;
	int ep;

	if (!name)
		return 0;
	ep = sim_entry_by_name(name, strlen(name));
	if (ep < 0)
		return 0;
	pthread_mutex_lock(&sim_hooks_lock);
	n = sim_calls[ep];
	pthread_mutex_unlock(&sim_hooks_lock);
	return n;
}

/* nrt_status.h: NRT_UNINITIALIZED before nrt_init, NRT_CLOSED after. */
NRT_STATUS sim_check_init(void)
{
	switch (__atomic_load_n(&sim.state, __ATOMIC_ACQUIRE)) {
	case SIM_INITED:
		return NRT_SUCCESS;
	case SIM_CLOSED:
		return NRT_CLOSED;
	default:
		return NRT_UNINITIALIZED;
	}
}

SIM_API NRT_STATUS nrt_init(nrt_framework_type_t framework,
                            const char *fw_version, const char *fal_version)
{
	NRT_STATUS rc = NRT_SUCCESS;

	(void)fw_version; /* only logged by the runtime */
	(void)fal_version;
	SIM_ENTER_NOINIT(nrt_init);
	if ((int)framework <= NRT_FRAMEWORK_TYPE_INVALID ||
	    (int)framework > SIM_FRAMEWORK_MAX)
		return NRT_INVALID;
	if (sim_cfg.cores == 0 || sim_cfg.visible == 0)
		return NRT_FAILURE; /* no NeuronCore to bring up */
	pthread_mutex_lock(&sim.lock);
	/* A second nrt_init is a no-op; one after nrt_close starts over. */
	if (sim.state != SIM_INITED) {
		if (sim_reserve_windows() == 0)
			__atomic_store_n(&sim.state, SIM_INITED,
			                 __ATOMIC_RELEASE);
		else
			rc = NRT_RESOURCE;
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

/* Releases every tensor's memory; handles stay valid for nrt_tensor_free. */
SIM_API void nrt_close(void)
{
	NRT_STATUS ignored;

	(void)sim_fail_check(SIM_EP_nrt_close, &ignored);
	pthread_mutex_lock(&sim.lock);
	if (sim.state == SIM_INITED) {
		sim_release_all();
		__atomic_store_n(&sim.state, SIM_CLOSED, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&sim.lock);
}

static NRT_STATUS sim_count(uint32_t *out, int n)
{
	if (!out)
		return NRT_INVALID;
	*out = (uint32_t)n;
	return NRT_SUCCESS;
}

/* The four counts work before nrt_init, as nrt.h documents. */
SIM_API NRT_STATUS nrt_get_total_nc_count(uint32_t *vnc_count)
{
	SIM_ENTER_NOINIT(nrt_get_total_nc_count);
	return sim_count(vnc_count, sim_cfg.cores);
}

SIM_API NRT_STATUS nrt_get_total_vnc_count(uint32_t *vnc_count)
{
	SIM_ENTER_NOINIT(nrt_get_total_vnc_count);
	return sim_count(vnc_count, sim_cfg.cores);
}

SIM_API NRT_STATUS nrt_get_visible_nc_count(uint32_t *vnc_count)
{
	SIM_ENTER_NOINIT(nrt_get_visible_nc_count);
	return sim_count(vnc_count, sim_cfg.visible);
}

SIM_API NRT_STATUS nrt_get_visible_vnc_count(uint32_t *vnc_count)
{
	SIM_ENTER_NOINIT(nrt_get_visible_vnc_count);
	return sim_count(vnc_count, sim_cfg.visible);
}

/* The runtime's strings are undocumented; the enumerator names stand in. */
SIM_API const char *nrt_get_status_as_str(NRT_STATUS status)
{
	NRT_STATUS ignored;

	(void)sim_fail_check(SIM_EP_nrt_get_status_as_str, &ignored);
	for (size_t i = 0; i < SIM_NSTATUS; i++)
		if (sim_status_names[i].status == status)
			return sim_status_names[i].name;
	return "NRT_UNKNOWN_STATUS";
}
