#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# bench.sh: the verbs registration benchmark on rxe0 (hmr_bench verbs).
set -euo pipefail
. /payload/vm-lib.sh
if ! vm_setup_rxe; then
	echo "CASE FAIL rxe_setup: could not set up rxe devices"
	echo "0 passed, 1 failed"
	exit 1
fi
# Several processes: under QEMU's TCG one process's numbers differ from the
# next's by more than hmr's share, so the summary is the median over runs.
runs=${HMR_BENCH_RUNS:-5}
rc=0
for run in $(seq 1 "$runs"); do
	echo "=== hmr_bench verbs, run $run of $runs"
	/payload/hmr_bench verbs | tee -a /tmp/bench.out || rc=$?
done
# Columns of a table row: size ibv hmr libfabric hmr/ibv paired hmr/lf ctl.
median() { sort -n | awk '{v[NR] = $1} END {
	if (NR == 0) print "none"; else if (NR % 2) print v[(NR + 1) / 2];
	else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for col in 5 6 7; do
	m[$col]=$(awk -v c="$col" '$1 == 4096 && NF >= 8 {print $c}' \
		/tmp/bench.out | median)
done
echo "4 KiB over $runs runs, medians: hmr/ibv ${m[5]}, paired ${m[6]}," \
	"hmr/libfabric ${m[7]} (goal hmr/ibv <= 1.05)"
# The cache's table: size ibv cached cached/ibv.
for size in 4096 1048576; do
	c=$(awk -v s="$size" '$1 == s && NF == 4 {print $4}' /tmp/bench.out |
		median)
	echo "cached $size-byte fi_mr_reg+fi_close over $runs runs, median" \
		"cached/ibv: $c"
done
if [ "$rc" = 0 ]; then
	echo "CASE PASS hmr_bench_verbs"
else
	echo "CASE FAIL hmr_bench_verbs: exit status $rc"
fi > /tmp/bench.cases
cases=0 fails=0
vm_count < /tmp/bench.cases
vm_summary
