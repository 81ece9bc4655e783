/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* hmem.c: the backend table, lazy start-up, selection, classification. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/ops.h"
#include "hmem/hmem.h"
#include "base/log.h"

HMR_CONFIG_VAR(HMR_HMEM, NULL,
               "memory interfaces to start, a comma list (system, cuda, "
               "rocr, ze, neuron, synapseai); a leading ^ excludes the "
               "list; unset: all (FI_HMEM when this is unset)");
HMR_CONFIG_VAR(FI_HMEM, NULL, "libfabric's name for HMR_HMEM");
HMR_CONFIG_VAR(HMR_HMEM_DISABLE_P2P, "0",
               "1: never let a NIC reach device memory directly");
HMR_CONFIG_VAR(FI_HMEM_DISABLE_P2P, "0",
               "libfabric's name for HMR_HMEM_DISABLE_P2P");

#define IFACES (FI_HMEM_SYNAPSEAI + 1)

static const char *const iface_names[IFACES] = {
        [FI_HMEM_SYSTEM] = "system", [FI_HMEM_CUDA] = "cuda",
        [FI_HMEM_ROCR] = "rocr",     [FI_HMEM_ZE] = "ze",
        [FI_HMEM_NEURON] = "neuron", [FI_HMEM_SYNAPSEAI] = "synapseai",
};

/* What this build has; a NULL slot is a backend not built. */
static const struct hmr_backend_ops *const built[IFACES] = {
        [FI_HMEM_SYSTEM] = &hmr__system_backend,
        [FI_HMEM_CUDA] = &hmr__cuda_backend,
        [FI_HMEM_ZE] = &hmr__ze_backend,
        [FI_HMEM_NEURON] = &hmr__neuron_backend,
        [FI_HMEM_ROCR] = &hmr__rocr_backend,
        [FI_HMEM_SYNAPSEAI] = &hmr__synapseai_backend,
};

/* Written once under `once`, read-only afterwards. */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct hmr_backend_ops merged[IFACES];
static bool present[IFACES];
static char why_absent[IFACES][192];
static bool any_device;     /* A present backend other than system. */
static atomic_bool started; /* Set (release) when start() is done. */
static bool p2p_disabled;

HMR_OPS_CHECK(struct hmr_backend_ops, init, HMR_BACKEND_SLOTS);

/* Every slot of b, or the stub where b leaves it NULL. */
static void merge(struct hmr_backend_ops *m, const struct hmr_backend_ops *b)
{
	HMR_OPS_MERGE(HMR_BACKEND_SLOTS, m, b, &hmr__backend_stubs);
}

/* HMR_HMEM, else FI_HMEM: a comma list of names; unset means all. A
 * leading '^' excludes the listed ones instead. */
static bool selected(const char *name)
{
	const char *env = hmr__config_get("HMR_HMEM", NULL), *tok, *comma;
	size_t n = strlen(name);
	bool exclude, in = false;

	if (!env)
		env = hmr__config_get("FI_HMEM", NULL);
	if (!env || !*env)
		return true;
	exclude = *env == '^';
	/* Walked in place: a list of any length is read whole. */
	for (tok = env + exclude; *tok; tok = *comma ? comma + 1 : comma) {
		comma = strchr(tok, ',');
		if (!comma)
			comma = tok + strlen(tok);
		in = in ||
		     ((size_t)(comma - tok) == n && strncmp(tok, name, n) == 0);
	}
	return exclude ? !in : in;
}

static void start(void)
{
	int i, ret;

	p2p_disabled = hmr__config_true("FI_HMEM_DISABLE_P2P") ||
	               hmr__config_true("HMR_HMEM_DISABLE_P2P");
	for (i = 0; i < IFACES; i++) {
		if (!built[i]) {
			snprintf(why_absent[i], sizeof(why_absent[i]),
			         "not built into this hmr");
			continue;
		}
		if (i != FI_HMEM_SYSTEM && !selected(iface_names[i])) {
			snprintf(why_absent[i], sizeof(why_absent[i]),
			         "not selected by HMR_HMEM/FI_HMEM");
			continue;
		}
		ret = built[i]->init(why_absent[i], sizeof(why_absent[i]));
		if (ret == -FI_ENOSYS) {
			hmr_info("%s: absent, because %s", iface_names[i],
			         why_absent[i]);
			continue;
		}
		if (ret) {
			hmr_warn("%s: start-up failed (%s): %s", iface_names[i],
			         hmr_strerror(ret), why_absent[i]);
			continue;
		}
		merge(&merged[i], built[i]);
		present[i] = true;
		any_device = any_device || i != FI_HMEM_SYSTEM;
	}
	atomic_store_explicit(&started, true, memory_order_release);
}

/* Start every selected backend once (thread-safe); cheap after that. */
static void hmem_init(void)
{
	pthread_once(&once, start);
}

__attribute__((destructor)) static void stop(void)
{
	int i;

	for (i = 0; i < IFACES; i++) {
		if (present[i])
			merged[i].fini();
	}
}

const struct hmr_backend_ops *hmr__hmem_backend(enum fi_hmem_iface iface)
{
	if ((unsigned)iface >= IFACES)
		return NULL;
	hmem_init();
	return present[iface] ? &merged[iface] : NULL;
}

bool hmr__hmem_cache_monitor_enabled(enum fi_hmem_iface iface)
{
	const struct hmr_backend_ops *b = hmr__hmem_backend(iface);

	return b && b->cache_setting && hmr__config_true(b->cache_setting);
}

bool hmr__hmem_any_device(void)
{
	/* After start-up, one load instead of a call to pthread_once. */
	if (!atomic_load_explicit(&started, memory_order_acquire))
		hmem_init();
	return any_device;
}

bool hmr__hmem_p2p_disabled(void)
{
	hmem_init();
	return p2p_disabled;
}

const char *hmr_hmem_iface_name(enum fi_hmem_iface iface)
{
	return (unsigned)iface < IFACES ? iface_names[iface] : "unknown";
}

int hmr_hmem_status(enum fi_hmem_iface iface, char *why, size_t why_len)
{
	if ((unsigned)iface >= IFACES) {
		if (why && why_len)
			snprintf(why, why_len, "unknown iface %d", (int)iface);
		return -FI_EINVAL;
	}
	hmem_init();
	if (present[iface])
		return 0;
	if (why && why_len)
		snprintf(why, why_len, "%s", why_absent[iface]);
	return -FI_ENOSYS;
}
