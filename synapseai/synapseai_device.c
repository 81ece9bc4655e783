/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* synapseai_device.c: the process's one Gaudi: whether it is held, by whom. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <hmr/fi_mr.h>

#include "base/log.h"
#include "base/range.h"
#include "synapseai/synapseai_api.h"

/*
 * Synapse holds at most ONE acquired device per process, numbered 0, and a
 * second synDeviceAcquire fails with synDeviceAlreadyAcquired.  Frameworks
 * treat that failure as fatal (Habana's PyTorch bridge raises on anything
 * but synSuccess).  So hmr never acquires the device on its own account:
 * a query, a domain with FI_HMEM or hmr_info's self-check that came before
 * the framework's acquire would make the framework fail to start.  (The
 * same reasoning keeps hmr from calling nrt_init for Neuron.)
 *
 * Instead Gaudi memory is Gaudi memory only while this process holds the
 * device, and hmr notices that lazily: until it has seen the device held,
 * every call that needs it asks synDeviceGetInfoV2, which answers only for
 * a held device.  Once seen, the answer (the HBM range) stays: one atomic
 * load per query.
 *
 * hmr_hmem_alloc asks for device memory explicitly (self-checks,
 * samples), so it may acquire when nobody holds the device; hmr then
 * releases the device when the last of its allocations is freed, or at
 * unload.
 *
 * Limit: a device the application releases and acquires again is not
 * noticed; its memory is gone meanwhile, and Synapse maps the pool at the
 * same base when the same process acquires again.
 */

/* Serialises probes, acquires and releases; the fields of hmr__synapseai
 * that describe the device are written under it, before `held`. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool held;
static unsigned long hmr_allocs; /* hmr's live allocations, on hmr's device */

/* Asks the runtime whether the device is held, and learns its HBM range
 * (lock held).  A failure just means nobody holds it. */
static bool probe_locked(void)
{
	struct hmr_synapseai *s = &hmr__synapseai;
	hmr_synDeviceInfoV2 info;
	hmr_synStatus st;

	memset(&info, 0, sizeof(info));
	st = s->synDeviceGetInfoV2(0, &info);
	if (st != HMR_synSuccess) {
		hmr_dbg("synapseai: synDeviceGetInfoV2: status %d: the device "
		        "is not held yet",
		        st);
		return false;
	}
	if (!info.globalHbmBaseAddress ||
	    !hmr__range_valid(info.globalHbmBaseAddress, info.dramSize)) {
		hmr_warn("synapseai: synDeviceGetInfoV2: no HBM range (base "
		         "%#llx, %llu bytes)",
		         (unsigned long long)info.globalHbmBaseAddress,
		         (unsigned long long)info.dramSize);
		return false;
	}
	s->device = 0;
	s->hbm_base = info.globalHbmBaseAddress;
	s->hbm_size = info.dramSize;
	s->device_fd = (int)info.fd;
	s->module = info.deviceIndex;
	s->device_type = (int)info.deviceType;
	atomic_store_explicit(&held, true, memory_order_release);
	hmr_info("synapseai: device %u (module %u, %s), HBM [%#llx, +%llu), "
	         "dma-buf via %s",
	         s->device, s->module,
	         s->acquired ? "acquired by hmr for hmr_hmem_alloc"
	                     : "the application's",
	         (unsigned long long)s->hbm_base,
	         (unsigned long long)s->hbm_size,
	         s->hlthunk ? "hl-thunk" : "hcclLookupDMABuff");
	return true;
}

bool hmr__synapseai_held(void)
{
	bool h;

	if (atomic_load_explicit(&held, memory_order_acquire))
		return true;
	pthread_mutex_lock(&lock);
	h = atomic_load_explicit(&held, memory_order_relaxed) || probe_locked();
	pthread_mutex_unlock(&lock);
	return h;
}

int hmr__synapseai_need(const char *what)
{
	if (hmr__synapseai_held())
		return 0;
	hmr_warn("synapseai: %s needs the Gaudi, and this process has not "
	         "acquired it (hmr never acquires it itself, except for "
	         "hmr_hmem_alloc)",
	         what);
	return -FI_ENODEV;
}

/* Gives back the device hmr acquired (lock held). */
static void release_locked(void)
{
	struct hmr_synapseai *s = &hmr__synapseai;

	atomic_store_explicit(&held, false, memory_order_release);
	/* hmr's stream, staging buffer and mappings are the device's. */
	hmr__synapseai_host_fini();
	if (s->synDeviceRelease(s->device) != HMR_synSuccess)
		hmr_info("synapseai: synDeviceRelease failed (the runtime may "
		         "be gone)");
	else
		hmr_info("synapseai: the device hmr acquired is released");
	s->acquired = false;
	hmr_allocs = 0;
}

int hmr__synapseai_hold_for_alloc(void)
{
	struct hmr_synapseai *s = &hmr__synapseai;
	hmr_synDeviceId id = 0;
	hmr_synStatus st;
	int ret = 0;

	pthread_mutex_lock(&lock);
	if (atomic_load_explicit(&held, memory_order_relaxed) || probe_locked())
		goto out;
	st = s->synDeviceAcquire(&id, NULL);
	if (st == HMR_synSuccess) {
		s->acquired = true;
		if (!probe_locked()) {
			hmr_warn("synapseai: the device hmr acquired has no "
			         "HBM range: given back");
			release_locked();
			ret = -FI_EIO;
		}
	} else if (st == HMR_synDeviceAlreadyAcquired) {
		/* The application acquired it since the probe. */
		ret = probe_locked() ? 0 : -FI_EIO;
	} else {
		ret = hmr__synapseai_check("synDeviceAcquire", st);
		if (st == HMR_synNoDeviceFound)
			hmr_warn("synapseai: every Gaudi on the host is held "
			         "by another process");
	}
out:
	if (!ret && s->acquired)
		hmr_allocs++;
	pthread_mutex_unlock(&lock);
	return ret;
}

void hmr__synapseai_alloc_done(void)
{
	pthread_mutex_lock(&lock);
	if (hmr__synapseai.acquired && hmr_allocs && --hmr_allocs == 0)
		release_locked();
	pthread_mutex_unlock(&lock);
}

void hmr__synapseai_device_fini(void)
{
	pthread_mutex_lock(&lock);
	if (hmr__synapseai.acquired)
		release_locked();
	else
		hmr__synapseai_host_fini();
	atomic_store_explicit(&held, false, memory_order_relaxed);
	hmr_allocs = 0;
	pthread_mutex_unlock(&lock);
}
