/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* thunk_config.c: environment, failure injection and call counters. */
#include "thunk.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>

/*
 * Environment, read once at the first call into either library:
 *
 *   HMR_SIM_SYNAPSEAI_DEVICES   Gaudi2 devices on the host, 0..16, default
 *                               2.  0 is a host without a Gaudi:
 *                               synInitialize still succeeds,
 *                               synDeviceGetCount says 0, every acquire
 *                               fails with synNoDeviceFound and synDestroy
 *                               returns at once (the real one can hang
 *                               there, which is why libfabric skips it).
 *   HMR_SIM_SYNAPSEAI_HBM_MIB   HBM per device in MiB, 16..1048576,
 *                               default 16384 (sparse: only touched pages
 *                               cost memory).
 *   HMR_SIM_SYNAPSEAI_DMABUF    "1,0,...": whether the driver exports
 *                               dma-bufs of each device (missing entries:
 *                               1).  0: the hl-thunk exports return
 *                               -EOPNOTSUPP and hcclLookupDMABuff finds
 *                               no gaudi-direct region.
 *   HMR_SIM_SYNAPSEAI_HOST_ACCESSIBLE
 *                               1: HBM is mapped read/write at its device
 *                               address (soft-RoCE pins it as plain
 *                               memory); default 0, PROT_NONE.
 *   HMR_SIM_SYNAPSEAI_FAIL      "name[@N][=status][:count],...": the
 *                               entry point with exactly that name
 *                               (synDeviceMalloc, hcclLookupDMABuff,
 *                               hlthunk_close, ...) lets its first N calls
 *                               through (default 0), then returns status
 *                               for count calls (default: every later
 *                               call).  status is a number, a synStatus
 *                               or hcclResult_t name, or an errno name
 *                               meaning its negation (EBUSY is -16, the
 *                               hl-thunk convention).  Without =status:
 *                               synFail for syn*, hcclInternalError for
 *                               hcclLookupDMABuff, -EIO (-ENODEV for the
 *                               opens, -1 for hlthunk_close) for hl-thunk.
 *                               An injected failure changes nothing: no
 *                               output is written, no fd is closed.
 */

struct sim_config sim_cfg;

static pthread_once_t sim_once = PTHREAD_ONCE_INIT;

SIM_API void hmr_sim_synapseai__log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sim_vlog(fmt, ap);
	va_end(ap);
}

/* Without =status a rule fails with the call site's own default. */
static int sim_fail_rule(char *name, const char *word, long *code)
{
	(void)name;
	if (!word)
		return 1;
	return sim_syn_status_parse(word, code);
}

const struct sim_ops sim_ops = {
        .log_prefix = "sim-synapseai",
        .fail_var = "HMR_SIM_SYNAPSEAI_FAIL",
        .fail_flags = SIM_FAIL_SKIP_FIRST | SIM_FAIL_SKIP_ON,
        .fail_rule = sim_fail_rule,
};

static void sim_config_read(void)
{
	sim_cfg.page = sim_page_size();
	sim_cfg.ndev = (int)sim_env_long("HMR_SIM_SYNAPSEAI_DEVICES", 0,
	                                 SIM_MAX_DEVICES, 2);
	sim_cfg.hbm_size = (uint64_t)sim_env_long("HMR_SIM_SYNAPSEAI_HBM_MIB",
	                                          16, 1048576, 16384)
	                   << 20;
	sim_cfg.host_accessible =
	        (int)sim_env_long("HMR_SIM_SYNAPSEAI_HOST_ACCESSIBLE", 0, 1, 0);
	/* A bad list counts for nothing: every device exports. */
	if (sim_parse_switches(getenv("HMR_SIM_SYNAPSEAI_DMABUF"),
	                       sim_cfg.dmabuf, SIM_MAX_DEVICES)) {
		sim_log("ignoring bad HMR_SIM_SYNAPSEAI_DMABUF");
		sim_parse_switches(NULL, sim_cfg.dmabuf, SIM_MAX_DEVICES);
	}
	sim_fails_set(getenv("HMR_SIM_SYNAPSEAI_FAIL"), 0);
}

const struct sim_config *sim_config(void)
{
	pthread_once(&sim_once, sim_config_read);
	return &sim_cfg;
}

SIM_API int hmr_sim_synapseai__devices(void)
{
	return sim_config()->ndev;
}

/*
 * Counts a call of the entry point name; returns 1 and the status to
 * return if HMR_SIM_SYNAPSEAI_FAIL makes this call fail.
 */
SIM_API int hmr_sim_synapseai__fail(const char *name, long dflt, long *status)
{
	long code = dflt;

	sim_config();
	sim_calls_count(name);
	if (!sim_fails_check(name, &code))
		return 0;
	*status = code;
	return 1;
}

/*
 * Test hook, not a vendor symbol: how many times the entry point with
 * this exact name was called, failed calls included.  The runtime's own
 * use of the driver (acquire opening the device node, say) is not
 * counted: only calls a program made.
 */
SIM_API unsigned long hmr_sim_synapseai_calls(const char *name)
{
	return sim_calls_get(name);
}
