#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# run.sh: the vm_rxe_dmabuf payload: the programs, then hmr_info on the importing rxe.
set -euo pipefail
. /payload/vm-lib.sh
vm_setup_or_exit
mapfile -t progs < <(vm_programs | grep -v '/hmr_info$')
vm_run_programs "${progs[@]}"

# hmr_info with every simulated backend, their exports made udmabufs:
# LD_PRELOAD gives rxe's provider the ibv_reg_dmabuf_mr rdma-core lacks
# (reg_dmabuf.c), so the probe reaches rdma_rxe_dmabuf, and every
# backend's device 0 must take the dma-buf path on rxe0 (Neuron's and
# SynapseAI's exports are tried at the first registration: hmr never
# acquires a Gaudi).
printf 'CONFIG_DMABUF_MOVE_NOTIFY=y\nCONFIG_PCI_P2PDMA=y\n' > /tmp/kconfig
sims=(HMR_SIM_DMABUF=udmabuf
	HMR_CUDA_LIBRARY=/payload/libcuda.so.1
	HMR_ROCR_LIBRARY=/payload/libhsa-runtime64.so.1
	HMR_ROCR_KERNEL_CONFIG=/tmp/kconfig
	HMR_ZE_LIBRARY=/payload/libze_loader.so.1
	ZE_ENABLE_ALT_DRIVERS=/payload/libze_sim_a.so
	HMR_NEURON_LIBRARY=/payload/libnrt.so.1
	HMR_SYNAPSEAI_LIBRARY=/payload/libSynapse.so
	HMR_HLTHUNK_LIBRARY=/payload/libhl-thunk.so
	HMR_SYSFS_ROOT=/tmp/no-sysfs)
mkdir -p /tmp/no-sysfs/module
rows=() checks=()
for b in cuda rocr ze neuron synapseai; do
	rows+=("^  $b device 0 -> rxe0: dma-buf (dma-buf: rxe0 imports them")
done
# The self-check registers what hmr can allocate itself, on each NIC.
for b in cuda ze synapseai; do
	checks+=("^  $b device 0 *in a verbs *domain on rxe0 (dma-buf): registered")
done
{
	vm_run_case hmr_info_says_dmabuf_on_the_importing_rxe \
		"$(printf '%s\n' '^  rxe0 .*dma-buf yes (probe: ibv_reg_dmabuf_mr looked at the fd' \
			"${rows[@]}" "${checks[@]}" '^self-check passed')" \
		"${sims[@]}" LD_PRELOAD=/payload/libhmr_vm_reg_dmabuf.so \
		/payload/hmr_info
	# Without the provider method the same kernel is never asked.
	vm_run_case hmr_info_without_the_provider_method_says_no \
		$'^  rxe0 .*dma-buf no (probe: ibv_reg_dmabuf_mr: \n^  cuda device 0 -> rxe0: none (no dma-buf: rxe0 does not import them' \
		"${sims[@]}" /payload/hmr_info
} > /tmp/info.cases
cases=0 fails=0
vm_count < /tmp/info.cases
vm_summary
