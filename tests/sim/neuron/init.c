/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* init.c: environment, failure injection, call counters, nrt_init/close. */
#include "sim_neuron.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

struct sim_state sim = {
        .lock = PTHREAD_MUTEX_INITIALIZER,
        .state = SIM_START,
        .tab = SIM_TABLE_INIT(struct nrt_tensor, va, span),
        .next_id = 1,
};
struct sim_config sim_cfg;

#define SIM_EP_NAME(name) #name,
static const char *const sim_entry_names[SIM_EP_COUNT] = {
        SIM_ENTRY_POINTS(SIM_EP_NAME)};
#undef SIM_EP_NAME

static pthread_once_t sim_config_once = PTHREAD_ONCE_INIT;

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

/* A rule names an entry point; the status defaults to NRT_FAILURE. */
static int sim_fail_rule(char *name, const char *word, long *code)
{
	NRT_STATUS status = NRT_FAILURE;

	if (sim_entry_by_name(name, strlen(name)) < 0 ||
	    (word && sim_status_parse(word, &status)))
		return -1;
	*code = status;
	return 0;
}

const struct sim_ops sim_ops = {
        .log_prefix = "sim-neuron",
        .fail_var = "HMR_SIM_NEURON_FAIL",
        .fail_flags = SIM_FAIL_SKIP_FIRST | SIM_FAIL_SKIP_ON,
        .fail_rule = sim_fail_rule,
};

static void sim_config_read(void)
{
	sim.page = sim_page_size();
	sim_cfg.cores =
	        (int)sim_env_long("HMR_SIM_NEURON_CORES", 0, SIM_MAX_CORES, 4);
	sim_cfg.visible = (int)sim_env_long("HMR_SIM_NEURON_VISIBLE_CORES", 0,
	                                    sim_cfg.cores, sim_cfg.cores);
	sim_cfg.cores_per_device = (int)sim_env_long(
	        "HMR_SIM_NEURON_CORES_PER_DEVICE", 1, SIM_MAX_CORES, 2);
	sim_cfg.host_accessible =
	        (int)sim_env_long("HMR_SIM_NEURON_HOST_ACCESSIBLE", 0, 1, 0);
	sim_cfg.device_va =
	        (int)sim_env_long("HMR_SIM_NEURON_DEVICE_VA", 0, 1, 1);
	/* A bad list counts for nothing: every core exports. */
	if (sim_parse_switches(getenv("HMR_SIM_NEURON_DMABUF"), sim_cfg.dmabuf,
	                       SIM_MAX_CORES)) {
		sim_log("ignoring bad HMR_SIM_NEURON_DMABUF");
		sim_parse_switches(NULL, sim_cfg.dmabuf, SIM_MAX_CORES);
	}
	sim_fails_set(getenv("HMR_SIM_NEURON_FAIL"), 0);
	/* Run in reverse order at fork: sim.lock, then the hooks' locks. */
	sim_hooks_atfork();
	sim_fork_hooks();
}

void sim_config_load(void)
{
	pthread_once(&sim_config_once, sim_config_read);
}

/* Counts the call; 1 and *status when a failure rule fires. */
int sim_fail_check(enum sim_entry ep, NRT_STATUS *status)
{
	long code;

	sim_config_load();
	sim_calls_count(sim_entry_names[ep]);
	if (!sim_fails_check(sim_entry_names[ep], &code))
		return 0;
	*status = (NRT_STATUS)code;
	return 1;
}

/*
 * Test hook, not a runtime symbol: how many times the entry point with
 * this name was called (failed calls included), 0 for unknown names.
 */
SIM_API unsigned long hmr_sim_neuron_calls(const char *name)
{
	return sim_calls_get(name);
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
