#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# run.sh: the 7.3 suite's payload: its test programs, then the MPI sample
# between two "hosts" (network namespaces), which only 7.3's rxe connects.
set -euo pipefail
. /payload/vm-lib.sh
vm_setup_or_exit
mapfile -t progs < <(vm_programs | grep -v '/mpi_rdma$')
vm_run_programs "${progs[@]}"

# mpirun starts in hosta and reaches hostb through ns-agent.sh (no ssh);
# simulated CUDA memory takes the peer-memory path (a fake module).
mpi_sample() {
	local t0 out
	cp -a /payload/openmpi/. /
	hostname vm
	mkdir -p /tmp/mpi-sysfs/module/nvidia_peermem
	t0=$(vm_uptime)
	out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		ip netns exec hosta timeout 200 mpirun --host hosta,hostb \
		-np 2 --mca plm_rsh_agent /payload/ns-agent.sh \
		--mca pml ob1 --mca btl self,tcp \
		-x HMR_CUDA_LIBRARY=/payload/libcuda.so.1 \
		-x HMR_SIM_CUDA_HOST_ACCESSIBLE=1 \
		-x HMR_SYSFS_ROOT=/tmp/mpi-sysfs \
		/payload/mpi_rdma rxea rxeb 2>&1) || true
	echo "$out"
	echo "vm: mpirun took $(awk -v a="$t0" -v b="$(vm_uptime)" \
		'BEGIN { print b - a }') s"
	local r kind
	for kind in system cuda; do
		for r in 0 1; do
			if grep -q "^rank $r: my $kind memory says \"rank $((1 - r)) wrote this over RDMA\"" <<< "$out"; then
				echo "CASE PASS sample_mpi_rdma_rank${r}_${kind}_memory"
			else
				echo "CASE FAIL sample_mpi_rdma_rank${r}_${kind}_memory: see the mpirun output above"
			fi
		done
	done
}

cases=0 fails=0
if vm_netns_hosts; then
	mpi_sample > /tmp/mpi.cases
else
	echo "CASE FAIL sample_mpi_rdma_hosts: could not set up hosta and hostb" > /tmp/mpi.cases
fi
vm_count < /tmp/mpi.cases
vm_summary
