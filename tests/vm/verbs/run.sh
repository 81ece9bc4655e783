#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# run.sh: the verbs suite's payload: the test programs, then the RDMA sample.
set -euo pipefail
. /payload/vm-lib.sh
vm_setup_or_exit
vm_run_programs /payload/two_hosts /payload/verbs_suite /payload/verbs_info \
	/payload/verbs_cache /payload/verbs_faults
# The cache cases once more on Ubuntu 24.04's C library, whose functions
# open with endbr64 (the payload has it when the build found it in
# ../shared/lab/glibc): the cache must cache there too.
u=/payload/ubuntu-24.04
if [ -x "$u/ld-linux-x86-64.so.2" ]; then
	printf '#!/bin/sh
%s/ld-linux-x86-64.so.2 --library-path %s /payload/verbs_cache 2>&1 | sed "s/^CASE \\([A-Z]*\\) /CASE \\1 ubuntu_libc_/"
' \
		"$u" "$u:/payload:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu" \
		> /tmp/verbs_cache_ubuntu_libc
	chmod +x /tmp/verbs_cache_ubuntu_libc
	vm_run_programs /tmp/verbs_cache_ubuntu_libc
else
	echo "vm: the cache cases on Ubuntu's libc: SKIPPED, no $u in the payload"
fi
# hmr's and libfabric's memory hooks in one process, in both orders.
if [ -x /payload/verbs_lf_hooks ]; then
	for order in hmr-first lf-first; do
		printf '#!/bin/sh\nexec /payload/verbs_lf_hooks %s\n' "$order" \
			> "/tmp/lf_hooks_$order"
		chmod +x "/tmp/lf_hooks_$order"
		vm_run_programs "/tmp/lf_hooks_$order"
	done
fi

sim_cuda=(HMR_CUDA_LIBRARY=/payload/libcuda.so.1 HMR_SIM_CUDA_HOST_ACCESSIBLE=1)
mkdir -p /tmp/sample-sysfs/module/nvidia_peermem /tmp/no-sysfs/module
{
	# samples/rdma/rdma_write: two processes on rxe0.
	vm_run_case sample_rdma_write_host_memory \
		$'^target: registered system memory\n^initiator: RDMA WRITE .*: success\n^target: the 4096 bytes arrived' \
		HMR_CUDA_LIBRARY=/nonexistent /payload/rdma_write rxe0
	vm_run_case sample_rdma_write_gpu_memory \
		$'^target: registered cuda memory\n^initiator: RDMA WRITE .*: success\n^target: the 4096 bytes arrived' \
		"${sim_cuda[@]}" HMR_SYSFS_ROOT=/tmp/sample-sysfs \
		/payload/rdma_write rxe0
	# hmr_info: the rxe devices, the path of each simulated GPU on each,
	# and a self-check that registers on every NIC.
	vm_run_case hmr_info_lists_rxe_devices_and_gpu_paths \
		$'^  rxe0 *Ethernet on dummy0, ODP [a-z]*, dma-buf no (probe: ibv_reg_dmabuf_mr: \n^  cuda device 0 -> rxe0: peer-memory (no dma-buf: rxe0 does not import them\n^  cuda device 1 -> rxe2: peer-memory\n^  cuda device 0 *in a verbs *domain on rxe1 (peer-memory): registered\n^self-check passed' \
		"${sim_cuda[@]}" HMR_SYSFS_ROOT=/tmp/sample-sysfs /payload/hmr_info
	vm_run_case hmr_info_says_no_path_without_peer_memory_and_fails \
		$'^  cuda device 0 -> rxe0: none (no dma-buf: .*; no peer memory: no module for cuda loaded)\n^  cuda device 0 *in a verbs *domain on rxe0 (none): \n^self-check FAILED' \
		"${sim_cuda[@]}" HMR_SYSFS_ROOT=/tmp/no-sysfs /payload/hmr_info
	vm_run_case hmr_info_json_has_rdma_devices_and_paths \
		$'"rdma_devices": \[\n"name": "rxe0"\n"path": "peer-memory"\n"nic": "rxe2"' \
		"${sim_cuda[@]}" HMR_SYSFS_ROOT=/tmp/sample-sysfs \
		/payload/hmr_info --json
} > /tmp/sample.cases
cases=0 fails=0
vm_count < /tmp/sample.cases
vm_summary
