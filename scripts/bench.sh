#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# bench.sh: every benchmark, side by side with the peers, as the README quotes.
#   memtype: on this machine, with the simulated CUDA driver loaded;
#   verbs:   on soft-RoCE in the test VM (twice: a cold and a warm process).
# Usage: scripts/bench.sh [build-dir]   (default build/, made by setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake --build "$build" -j"$(nproc)" > /dev/null
HMR_CUDA_LIBRARY=$PWD/$build/tests/sim/cuda/cuda13/libcuda.so.1 \
	"$build/tools/hmr_bench" memtype
ctest --test-dir "$build" -L bench > /dev/null ||
	echo "bench.sh: the VM benchmark failed; see its log" >&2
grep -v '^vm:' "$build/tests/vm/vm_bench_verbs.payload.results"
