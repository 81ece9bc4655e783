#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# run.sh: the verbs suite's payload: the test programs, then the RDMA sample.
set -euo pipefail
. /payload/vm-lib.sh
if ! vm_setup_rxe; then
	echo "CASE FAIL rxe_setup: could not set up rxe0, rxe1 and rxe2"
	echo "0 passed, 1 failed"
	exit 1
fi
vm_run_programs /payload/two_hosts /payload/verbs_suite /payload/verbs_cache \
	/payload/verbs_faults

# samples/rdma/rdma_write, as a reader would run it: one CASE line a run.
sample_case() { # sample_case NAME EXPECTED-LINE [VAR=value...]
	local name=$1 expect=$2 out
	shift 2
	if out=$(env "$@" /payload/rdma_write rxe0 2>&1) &&
		grep -q "$expect" <<< "$out" && grep -q "^bytes arrived" <<< "$out"
	then
		echo "CASE PASS $name"
	else
		echo "CASE FAIL $name: $(tr '\n' ' ' <<< "$out")"
	fi
}
mkdir -p /tmp/sample-sysfs/module/nvidia_peermem
{
	sample_case sample_rdma_write_host_memory "target: system memory" \
		HMR_CUDA_LIBRARY=/nonexistent
	sample_case sample_rdma_write_gpu_memory "target: cuda memory" \
		HMR_CUDA_LIBRARY=/payload/libcuda.so.1 \
		HMR_SIM_CUDA_HOST_ACCESSIBLE=1 HMR_SYSFS_ROOT=/tmp/sample-sysfs
} > /tmp/sample.cases
cases=0 fails=0
vm_count < /tmp/sample.cases
vm_summary
