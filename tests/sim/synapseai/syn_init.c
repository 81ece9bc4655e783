/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* syn_init.c: synInitialize/synDestroy, device count, acquire, info. */
#include "syn.h"

#include <string.h>
#include <unistd.h>

struct syn_state syn = {
        .lock = PTHREAD_MUTEX_INITIALIZER,
        .fd = -1,
        .hccl_fd = -1,
};

/* Returned by synDriverGetVersion: "major.minor.patch.sha" in Synapse. */
#define SYN_SIM_VERSION "1.21.0.hmrsim"

/*
 * Works before synInitialize and with any number of devices.  A second
 * call is a no-op returning synSuccess, as documented.
 */
SIM_API synStatus synInitialize(void)
{
	long page = sysconf(_SC_PAGESIZE);

	SYN_ENTER("synInitialize");
	pthread_mutex_lock(&syn.lock);
	syn.page = page > 0 ? (size_t)page : 4096;
	syn.initialized = 1;
	pthread_mutex_unlock(&syn.lock);
	return synSuccess;
}

/* Drops the acquired device: flushes and frees streams, frees memory. */
static void syn_release_locked(void)
{
	syn_streams_reset();
	syn_hccl_reset();
	syn_memory_reset();
	hmr_sim_synapseai__close(syn.fd);
	syn.fd = -1;
	syn.acquired = 0;
	memset(&syn.hl, 0, sizeof(syn.hl));
}

/*
 * Releases the acquired device, if any, and ends the instance.  It never
 * waits for hardware, so it returns at once with no Gaudi present (the
 * real one may hang there).  Without synInitialize: synSuccess.
 */
SIM_API synStatus synDestroy(void)
{
	SYN_ENTER("synDestroy");
	pthread_mutex_lock(&syn.lock);
	if (syn.acquired)
		syn_release_locked();
	syn.initialized = 0;
	pthread_mutex_unlock(&syn.lock);
	return synSuccess;
}

/* Works before synInitialize. */
SIM_API synStatus synDriverGetVersion(char *pDriverVersion, const int len)
{
	SYN_ENTER("synDriverGetVersion");
	if (!pDriverVersion || len <= 0)
		return synInvalidArgument;
	strncpy(pDriverVersion, SYN_SIM_VERSION, (size_t)len);
	pDriverVersion[len - 1] = '\0';
	return synSuccess;
}

/* Works before synInitialize; synFail for a status it cannot describe. */
SIM_API synStatus synStatusGetBriefDescription(synStatus status,
                                               char *statusDescription,
                                               syn_size_t len)
{
	const char *text;

	SYN_ENTER("synStatusGetBriefDescription");
	text = sim_syn_status_text(status);
	if (!text)
		return synFail;
	if (!statusDescription || len == 0)
		return synInvalidArgument;
	strncpy(statusDescription, text, len);
	statusDescription[len - 1] = '\0';
	return synSuccess;
}

SIM_API synStatus synDeviceGetCount(uint32_t *pCount)
{
	synStatus rc;

	SYN_ENTER("synDeviceGetCount");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(0, synSuccess);
	if (rc == synSuccess && !pCount)
		rc = synInvalidArgument;
	if (rc == synSuccess)
		*pCount = (uint32_t)hmr_sim_synapseai__devices();
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

/* Every simulated device is a Gaudi2; synDeviceTypeInvalid means any. */
SIM_API synStatus synDeviceGetCountByDeviceType(uint32_t *pCount,
                                                const synDeviceType deviceType)
{
	synStatus rc;

	SYN_ENTER("synDeviceGetCountByDeviceType");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(0, synSuccess);
	if (rc == synSuccess && !pCount)
		rc = synInvalidArgument;
	if (rc == synSuccess)
		*pCount = deviceType == synDeviceGaudi2 ||
		                          deviceType == synDeviceTypeInvalid
		                  ? (uint32_t)hmr_sim_synapseai__devices()
		                  : 0;
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

/* Opens module (or, if module < 0, the first free device) and maps HBM. */
static synStatus syn_acquire_locked(int module, synDeviceType type)
{
	int ndev = hmr_sim_synapseai__devices(), fd = -1;

	if (ndev == 0)
		return synNoDeviceFound;
	if (type != synDeviceTypeInvalid && type != synDeviceGaudi2)
		return synDeviceTypeMismatch;
	if (module >= 0)
		fd = hmr_sim_synapseai__open(module);
	for (int m = 0; module < 0 && m < ndev && fd < 0; m++)
		fd = hmr_sim_synapseai__open(m);
	if (fd < 0)
		return synNoDeviceFound;
	if (hmr_sim_synapseai__map_hbm(fd, &syn.hl) != 0) {
		hmr_sim_synapseai__close(fd);
		return synFail;
	}
	syn.fd = fd;
	syn.acquired = 1;
	syn.used = 0;
	return synSuccess;
}

/*
 * The acquire family: one device per process (synDeviceAlreadyAcquired,
 * *pDeviceId untouched, for a second one); on success *pDeviceId is 0, on
 * other failures SYN_INVALID_DEVICE_ID.
 */
static synStatus syn_acquire(synDeviceId *pDeviceId, int module,
                             synDeviceType type)
{
	synStatus rc;

	if (!pDeviceId)
		return synInvalidArgument;
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(0, synSuccess);
	if (rc == synSuccess && syn.acquired)
		rc = synDeviceAlreadyAcquired;
	else if (rc == synSuccess)
		rc = syn_acquire_locked(module, type);
	if (rc == synSuccess)
		*pDeviceId = 0;
	else if (rc != synUninitialized && rc != synDeviceAlreadyAcquired)
		*pDeviceId = SYN_INVALID_DEVICE_ID;
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

SIM_API synStatus synDeviceAcquireByDeviceType(synDeviceId *pDeviceId,
                                               const synDeviceType deviceType)
{
	SYN_ENTER("synDeviceAcquireByDeviceType");
	return syn_acquire(pDeviceId, -1, deviceType);
}

SIM_API synStatus synDeviceAcquireByModuleId(synDeviceId *pDeviceId,
                                             const synModuleId moduleId)
{
	int ndev;

	SYN_ENTER("synDeviceAcquireByModuleId");
	ndev = hmr_sim_synapseai__devices();
	/* A module that does not exist opens nothing. */
	return syn_acquire(pDeviceId,
	                   moduleId < (uint32_t)ndev ? (int)moduleId : ndev,
	                   synDeviceTypeInvalid);
}

/* pciBus NULL or "": the first free device. */
SIM_API synStatus synDeviceAcquire(synDeviceId *pDeviceId, const char *pciBus)
{
	int module = -1;

	SYN_ENTER("synDeviceAcquire");
	if (pciBus && *pciBus) {
		module = hmr_sim_synapseai__module_of_bus(pciBus);
		if (module < 0)
			module = hmr_sim_synapseai__devices();
	}
	return syn_acquire(pDeviceId, module, synDeviceTypeInvalid);
}

SIM_API synStatus synDeviceRelease(const synDeviceId deviceId)
{
	synStatus rc;

	(void)deviceId;
	SYN_ENTER("synDeviceRelease");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(1, synNoDeviceFound);
	if (rc == synSuccess)
		syn_release_locked();
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

static void syn_fill_info(synDeviceInfoV2 *info)
{
	memset(info, 0, sizeof(*info));
	info->sramBaseAddress = SIM_GAUDI2_SRAM_BASE;
	/* Device-physical, not an address the program can use. */
	info->dramBaseAddress = SIM_GAUDI2_DRAM_PHYS;
	info->sramSize = SIM_GAUDI2_SRAM_SIZE;
	info->dramSize = syn.hl.hbm_size;
	info->tpcEnabledMask = SIM_GAUDI2_TPC_MASK;
	info->dramEnabled = 1;
	info->deviceId = SIM_GAUDI2_PCI_ID;
	info->fd = (uint32_t)syn.fd;
	info->deviceType = synDeviceGaudi2;
	info->deviceIndex = (uint8_t)syn.hl.module;
	info->globalHbmBaseAddress = syn.hl.hbm_base;
}

SIM_API synStatus synDeviceGetInfoV2(const synDeviceId deviceId,
                                     synDeviceInfoV2 *pDeviceInfo)
{
	synStatus rc;

	(void)deviceId;
	SYN_ENTER("synDeviceGetInfoV2");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(0, synSuccess);
	if (rc == synSuccess && !pDeviceInfo)
		rc = synInvalidArgument;
	if (rc == synSuccess)
		rc = syn_ready(1, synFail);
	if (rc == synSuccess)
		syn_fill_info(pDeviceInfo);
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

/* synDeviceInfo is synDeviceInfoV2 without its two last fields. */
SIM_API synStatus synDeviceGetInfo(const synDeviceId deviceId,
                                   synDeviceInfo *pDeviceInfo)
{
	synDeviceInfoV2 v2;
	synStatus rc;

	(void)deviceId;
	SYN_ENTER("synDeviceGetInfo");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(0, synSuccess);
	if (rc == synSuccess && !pDeviceInfo)
		rc = synInvalidArgument;
	if (rc == synSuccess)
		rc = syn_ready(1, synFail);
	if (rc == synSuccess) {
		syn_fill_info(&v2);
		memcpy(pDeviceInfo, &v2, sizeof(*pDeviceInfo));
	}
	pthread_mutex_unlock(&syn.lock);
	return rc;
}

/* total: all of HBM; free: less the runtime's own and user buffers. */
SIM_API synStatus synDeviceGetMemoryInfo(const synDeviceId deviceId,
                                         uint64_t *free, uint64_t *total)
{
	synStatus rc;

	(void)deviceId;
	SYN_ENTER("synDeviceGetMemoryInfo");
	pthread_mutex_lock(&syn.lock);
	rc = syn_ready(0, synSuccess);
	if (rc == synSuccess && (!free || !total))
		rc = synInvalidArgument;
	if (rc == synSuccess)
		rc = syn_ready(1, synFail);
	if (rc == synSuccess) {
		*total = syn.hl.hbm_size;
		*free = syn.hl.hbm_size - SIM_SYN_RESERVED - syn.used;
	}
	pthread_mutex_unlock(&syn.lock);
	return rc;
}
