/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* thunk_config.c: environment, failure injection and call counters. */
#include "thunk.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

#define SIM_MAX_FAILS 32
#define SIM_MAX_NAMES 64

struct sim_fail {
	char name[64];
	unsigned long after; /* calls let through before failing */
	unsigned long seen;  /* calls seen so far */
	long count;          /* failures left; < 0: unlimited */
	long status;
	int has_status;
};

/* Calls per entry point name (a string literal of the entry point). */
struct sim_calls {
	const char *name;
	unsigned long count;
};

struct sim_config sim_cfg;

static pthread_once_t sim_once = PTHREAD_ONCE_INIT;
/* Protects sim_fails[] (their counters) and sim_calls[]. */
static pthread_mutex_t sim_hook_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_fail sim_fails[SIM_MAX_FAILS];
static int sim_nfails;
static struct sim_calls sim_calls[SIM_MAX_NAMES];
static int sim_ncalls;

SIM_API void hmr_sim_synapseai__log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("sim-synapseai: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static long sim_env_long(const char *var, long lo, long hi, long dflt)
{
	const char *s = getenv(var);
	char *end;
	long v;

	if (!s || !*s)
		return dflt;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < lo || v > hi) {
		hmr_sim_synapseai__log("ignoring %s=%s (want %ld..%ld)", var, s,
		                       lo, hi);
		return dflt;
	}
	return v;
}

static int sim_parse_count(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 0);
	return (errno || end == s || *end || *s == '-') ? -1 : 0;
}

/* One "name[@N][=status][:count]" item; item is modified. */
static int sim_parse_fail_item(char *item, struct sim_fail *f)
{
	char *colon = strrchr(item, ':'), *eq, *at;
	unsigned long n;

	memset(f, 0, sizeof(*f));
	f->count = -1;
	if (colon) {
		*colon = '\0';
		if (sim_parse_count(colon + 1, &n) || n > 1000000000UL)
			return -1;
		f->count = (long)n;
	}
	eq = strchr(item, '=');
	if (eq) {
		*eq = '\0';
		if (sim_syn_status_parse(eq + 1, &f->status))
			return -1;
		f->has_status = 1;
	}
	at = strchr(item, '@');
	if (at) {
		*at = '\0';
		if (sim_parse_count(at + 1, &f->after))
			return -1;
	}
	if (!*item || strlen(item) >= sizeof(f->name))
		return -1;
	memcpy(f->name, item, strlen(item) + 1);
	return 0;
}

static void sim_parse_fails(const char *spec)
{
	char *copy, *item, *save = NULL;

	if (!spec || !*spec)
		return;
	copy = strdup(spec);
	if (!copy)
		return;
	for (item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char shown[128];

		snprintf(shown, sizeof(shown), "%s", item);
		if (sim_nfails == SIM_MAX_FAILS ||
		    sim_parse_fail_item(item, &sim_fails[sim_nfails]))
			hmr_sim_synapseai__log(
			        "ignoring HMR_SIM_SYNAPSEAI_FAIL item '%s'",
			        shown);
		else
			sim_nfails++;
	}
	free(copy);
}

static void sim_parse_dmabuf(const char *spec)
{
	int i;

	for (i = 0; i < SIM_MAX_DEVICES; i++)
		sim_cfg.dmabuf[i] = 1;
	for (i = 0; spec && *spec && i < SIM_MAX_DEVICES; i++) {
		char *end;
		long v = strtol(spec, &end, 0);

		if (end == spec || (*end && *end != ',')) {
			hmr_sim_synapseai__log("ignoring bad "
			                       "HMR_SIM_SYNAPSEAI_DMABUF");
			for (i = 0; i < SIM_MAX_DEVICES; i++)
				sim_cfg.dmabuf[i] = 1;
			return;
		}
		sim_cfg.dmabuf[i] = v != 0;
		spec = *end ? end + 1 : end;
	}
}

static void sim_config_read(void)
{
	long page = sysconf(_SC_PAGESIZE);

	sim_cfg.page = page > 0 ? (size_t)page : 4096;
	sim_cfg.ndev = (int)sim_env_long("HMR_SIM_SYNAPSEAI_DEVICES", 0,
	                                 SIM_MAX_DEVICES, 2);
	sim_cfg.hbm_size = (uint64_t)sim_env_long("HMR_SIM_SYNAPSEAI_HBM_MIB",
	                                          16, 1048576, 16384)
	                   << 20;
	sim_cfg.host_accessible =
	        (int)sim_env_long("HMR_SIM_SYNAPSEAI_HOST_ACCESSIBLE", 0, 1, 0);
	sim_parse_dmabuf(getenv("HMR_SIM_SYNAPSEAI_DMABUF"));
	sim_parse_fails(getenv("HMR_SIM_SYNAPSEAI_FAIL"));
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

static void sim_count_locked(const char *name)
{
	int i;

	for (i = 0; i < sim_ncalls; i++)
		if (strcmp(sim_calls[i].name, name) == 0)
			break;
	if (i == sim_ncalls && sim_ncalls < SIM_MAX_NAMES)
		sim_calls[sim_ncalls++].name = name;
	if (i < sim_ncalls)
		sim_calls[i].count++;
}

/*
 * Counts a call of the entry point name; returns 1 and the status to
 * return if HMR_SIM_SYNAPSEAI_FAIL makes this call fail.
 */
SIM_API int hmr_sim_synapseai__fail(const char *name, long dflt, long *status)
{
	int fail = 0;

	sim_config();
	pthread_mutex_lock(&sim_hook_lock);
	sim_count_locked(name);
	for (int i = 0; i < sim_nfails && !fail; i++) {
		struct sim_fail *f = &sim_fails[i];

		if (strcmp(f->name, name) != 0)
			continue;
		if (f->seen < f->after) {
			f->seen++;
			continue;
		}
		if (f->count == 0)
			continue;
		if (f->count > 0)
			f->count--;
		*status = f->has_status ? f->status : dflt;
		fail = 1;
	}
	pthread_mutex_unlock(&sim_hook_lock);
	return fail;
}

/*
 * Test hook, not a vendor symbol: how many times the entry point with
 * this exact name was called, failed calls included.  The runtime's own
 * use of the driver (acquire opening the device node, say) is not
 * counted: only calls a program made.
 */
SIM_API unsigned long hmr_sim_synapseai_calls(const char *name)
{
	unsigned long n = 0;

	if (!name)
		return 0;
	pthread_mutex_lock(&sim_hook_lock);
	for (int i = 0; i < sim_ncalls; i++)
		if (strcmp(sim_calls[i].name, name) == 0)
			n = sim_calls[i].count;
	pthread_mutex_unlock(&sim_hook_lock);
	return n;
}
