/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_info.c: hmr_verbs_device_info and hmr_verbs_reg_path on rxe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "verbs_vm.h"
#include "vm_case.h"

/*
 * rxe imports no dma-buf (its probe says EOPNOTSUPP), so simulated CUDA
 * memory takes the peer-memory path when a module is "loaded" (a fake
 * sysfs, HMR_SYSFS_ROOT) and none otherwise; HMR_VERBS_DMABUF=on makes
 * the dma-buf path the answer for the device that exports (device 0 of
 * HMR_SIM_CUDA_DMABUF=1,0).  Each answer is checked against what a
 * registration in a verbs domain then does.
 */
#define SYSFS  "/tmp/verbs-info-sysfs"
#define MODULE SYSFS "/module/nvidia_peermem"

static int path_is(const char *name, enum fi_hmem_iface iface, uint64_t device,
                   uint32_t nic, enum hmr_verbs_path want, const char *because)
{
	enum hmr_verbs_path path = (enum hmr_verbs_path) - 1;
	char why[512];
	int ret =
	        hmr_verbs_reg_path(iface, device, nic, &path, why, sizeof(why));

	printf("path %s device %llu nic %u: %d (%s)\n",
	       hmr_hmem_iface_name(iface), (unsigned long long)device, nic,
	       (int)path, why);
	return vm_case(name, !ret && path == want && strstr(why, because),
	               "ret %d path %d, want %d with \"%s\": %s", ret,
	               (int)path, (int)want, because, why);
}

/* Does a registration of 64 KiB of `iface` memory succeed on nic? */
static int registers(const char *nic, enum fi_hmem_iface iface)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *d;
	struct fid_mr *mr;
	void *p;
	int ret;

	attr.kind = HMR_DOMAIN_VERBS;
	attr.caps = FI_HMEM;
	attr.nic_name = nic;
	if (hmr_hmem_alloc(iface, 0, 1 << 16, &p))
		return -FI_ENOMEM;
	ret = hmr_domain_open(&attr, &d);
	if (!ret) {
		ret = fi_mr_reg(d, p, 1 << 16, FI_REMOTE_WRITE, 0, 0, 0, &mr,
		                NULL);
		if (!ret)
			fi_close(&mr->fid);
		fi_close(&d->fid);
	}
	hmr_hmem_free(iface, p);
	return ret;
}

/* The index of rxe0, after checking what the count and info say. */
static uint32_t nic_cases(void)
{
	struct hmr_verbs_device_info d = HMR_VERBS_DEVICE_INFO_INIT;
	uint32_t n = 0, i, rxe0 = 0;
	char why[256] = "";
	int ret = hmr_verbs_device_count(&n, why, sizeof(why));

	vm_case("verbs_info_counts_the_rxe_devices", !ret && n >= 3,
	        "%d, %u devices: %s", ret, n, why);
	for (i = 0; i < n; i++)
		if (!hmr_verbs_device_info(i, &d) && !strcmp(d.name, "rxe0"))
			rxe0 = i;
	ret = hmr_verbs_device_info(rxe0, &d);
	printf("rxe0: %s on %s, odp %d, dma-buf %d (%s), peer memory \"%s\"\n",
	       d.link_layer, d.netdev, d.odp, d.dmabuf, d.dmabuf_why,
	       d.peermem);
	vm_case("verbs_info_describes_rxe0_on_dummy0_without_dmabuf",
	        !ret && !strcmp(d.name, "rxe0") &&
	                !strcmp(d.link_layer, "Ethernet") &&
	                !strcmp(d.netdev, "dummy0") && d.dmabuf == 0 &&
	                strstr(d.dmabuf_why, "probe: ibv_reg_dmabuf_mr"),
	        "%d: %s %s %s dma-buf %d %s", ret, d.name, d.link_layer,
	        d.netdev, d.dmabuf, d.dmabuf_why);
	vm_case("verbs_info_past_the_last_device_is_enoent",
	        hmr_verbs_device_info(n, &d) == -FI_ENOENT, "not ENOENT");
	return rxe0;
}

int main(void)
{
	struct hmr_verbs_device_info d = HMR_VERBS_DEVICE_INFO_INIT;
	uint32_t nic;
	int ret;

	setenv("HMR_CUDA_LIBRARY", HMR_VM_SIM_CUDA, 1);
	setenv("HMR_SIM_CUDA_HOST_ACCESSIBLE", "1", 1);
	setenv("HMR_SIM_CUDA_DMABUF", "1,0", 1);
	setenv("HMR_SYSFS_ROOT", SYSFS, 1);
	mkdir(SYSFS, 0755);
	mkdir(SYSFS "/module", 0755);
	rmdir(MODULE);
	nic = nic_cases();

	path_is("verbs_path_of_host_memory_is_ibv_reg_mr", FI_HMEM_SYSTEM, 0,
	        nic, HMR_VERBS_PATH_HOST, "ibv_reg_mr on rxe0");
	path_is("verbs_path_of_gpu_memory_without_module_is_none", FI_HMEM_CUDA,
	        0, nic, HMR_VERBS_PATH_NONE, "does not import them");
	ret = registers("rxe0", FI_HMEM_CUDA);
	vm_case("verbs_path_none_and_the_registration_fails",
	        ret == -FI_EOPNOTSUPP, "fi_mr_reg: %d", ret);

	mkdir(MODULE, 0755);
	path_is("verbs_path_of_gpu_memory_with_module_is_peer_memory",
	        FI_HMEM_CUDA, 0, nic, HMR_VERBS_PATH_PEERMEM,
	        "nvidia_peermem is loaded");
	ret = registers("rxe0", FI_HMEM_CUDA);
	vm_case("verbs_path_peer_memory_and_the_registration_works", ret == 0,
	        "fi_mr_reg: %d", ret);
	ret = hmr_verbs_device_info(nic, &d);
	vm_case("verbs_info_lists_the_loaded_peer_memory_module",
	        !ret && !strcmp(d.peermem, "nvidia_peermem (cuda)"),
	        "%d: \"%s\"", ret, d.peermem);

	hmr_config_set("HMR_VERBS_DMABUF", "on");
	path_is("verbs_path_with_dmabuf_on_is_dmabuf_where_the_gpu_exports",
	        FI_HMEM_CUDA, 0, nic, HMR_VERBS_PATH_DMABUF,
	        "HMR_VERBS_DMABUF=on");
	path_is("verbs_path_falls_back_to_peer_memory_where_it_does_not",
	        FI_HMEM_CUDA, 1, nic, HMR_VERBS_PATH_PEERMEM, "cannot export");
	hmr_config_set("HMR_VERBS_DMABUF", NULL);
	vm_case("verbs_path_of_an_unknown_gpu_is_enoent",
	        hmr_verbs_reg_path(FI_HMEM_CUDA, 9, nic,
	                           &(enum hmr_verbs_path){0}, NULL,
	                           0) == -FI_ENOENT,
	        "not ENOENT");
	rmdir(MODULE);
	return vm_case_exit();
}
