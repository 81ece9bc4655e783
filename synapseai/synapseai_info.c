/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* synapseai_info.c: what the SynapseAI backend reports; self-check memory. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/host.h"
#include "hmem/hmem.h"
#include "synapseai/synapseai_api.h"

/*
 * A process drives one Gaudi (Synapse acquires one device per process),
 * so the backend reports one device, the synDeviceId every call takes:
 * 0.  The host's count is in the start-up log line.
 */
int hmr__synapseai_describe(struct hmr_hmem_backend_info *info)
{
	const struct hmr_synapseai *s = &hmr__synapseai;
	char version[48] = "";

	if (!s->synDriverGetVersion ||
	    s->synDriverGetVersion(version, (int)sizeof(version)) !=
	            HMR_synSuccess)
		snprintf(version, sizeof(version), "unknown");
	version[sizeof(version) - 1] = '\0';
	_Static_assert(sizeof(info->library) == sizeof(s->library), "library");
	memcpy(info->library, s->library, sizeof(info->library));
	snprintf(info->version, sizeof(info->version), "driver %s", version);
	info->devices = 1;
	return 0;
}

static const char *type_name(int type)
{
	switch (type) { /* [S1] synDeviceType */
	case 2:
		return "Gaudi";
	case 4:
		return "Gaudi2";
	case 5:
		return "Gaudi3";
	default:
		return "Gaudi (unknown type)";
	}
}

/*
 * Whether the memory exports.  hl-thunk answers only by exporting: one
 * page at the HBM base is exported and closed at once.  HCL's fd is not
 * asked for: HCL has one only while its gaudi-direct scale-out runs, and
 * its lookup may crash in a process where HCL never started.
 */
static void dmabuf_support(struct hmr_hmem_device_info *info)
{
	const struct hmr_synapseai *s = &hmr__synapseai;
	int fd;

	if (!s->hlthunk && !s->hcclLookupDMABuff) {
		info->dmabuf = 0;
		snprintf(
		        info->dmabuf_why, sizeof(info->dmabuf_why),
		        "neither libhl-thunk nor hcclLookupDMABuff is present");
		return;
	}
	if (!s->hlthunk) {
		info->dmabuf = -1;
		snprintf(info->dmabuf_why, sizeof(info->dmabuf_why),
		         "no libhl-thunk: hcclLookupDMABuff has an fd only "
		         "while HCL's gaudi-direct scale-out runs");
		return;
	}
	fd = s->hlthunk_device_mapped_memory_export_dmabuf_fd(
	        s->device_fd, s->hbm_base, hmr__host_page_size(), 0,
	        O_RDWR | O_CLOEXEC);
	info->dmabuf = fd >= 0;
	if (fd >= 0)
		close(fd);
	else
		snprintf(info->dmabuf_why, sizeof(info->dmabuf_why),
		         "hlthunk_device_mapped_memory_export_dmabuf_fd: %s",
		         strerror(-fd));
}

int hmr__synapseai_device(uint32_t index, struct hmr_hmem_device_info *info)
{
	const struct hmr_synapseai *s = &hmr__synapseai;

	if (index != 0)
		return -FI_ENOENT;
	info->device = 0;
	if (!hmr__synapseai_held()) {
		/* Nothing to ask without the device, and hmr never acquires
		 * it to find out (synapseai_device.c). */
		snprintf(info->name, sizeof(info->name),
		         "Gaudi, not acquired by this process");
		info->dmabuf = -1;
		snprintf(info->dmabuf_why, sizeof(info->dmabuf_why),
		         "unknown until the application acquires the Gaudi");
		return 0;
	}
	snprintf(info->name, sizeof(info->name), "%s module %u",
	         type_name(s->device_type), s->module);
	dmabuf_support(info);
	return 0;
}

int hmr__synapseai_alloc(uint64_t device, size_t len, void **ptr)
{
	const struct hmr_synapseai *s = &hmr__synapseai;
	uint64_t p = 0;
	int ret;

	if (!s->synDeviceMalloc || !s->synDeviceFree)
		return -FI_ENOSYS;
	if (device != 0) /* the process's one device */
		return -FI_EINVAL;
	/* The one call that may acquire the device (synapseai_device.c). */
	ret = hmr__synapseai_hold_for_alloc();
	if (ret)
		return ret;
	ret = HMR_SYN(synDeviceMalloc, s->device, len, 0, 0, &p);
	if (ret) {
		hmr__synapseai_alloc_done();
		return ret;
	}
	*ptr = (void *)(uintptr_t)p;
	return 0;
}

/* Classification needs no update: the address stays in the HBM range
 * while the device is held; the last of hmr's allocations gives back a
 * device hmr acquired for them. */
int hmr__synapseai_free(void *ptr)
{
	const struct hmr_synapseai *s = &hmr__synapseai;
	int ret;

	if (!s->synDeviceFree)
		return -FI_ENOSYS;
	ret = HMR_SYN(synDeviceFree, s->device, (uintptr_t)ptr, 0);
	if (!ret)
		hmr__synapseai_alloc_done();
	return ret;
}
