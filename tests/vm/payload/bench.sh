#!/bin/bash
# bench.sh: the verbs registration benchmark on rxe0 (hmr_bench verbs).
set -euo pipefail
. /payload/vm-lib.sh
if ! vm_setup_rxe; then
	echo "CASE FAIL rxe_setup: could not set up rxe devices"
	echo "0 passed, 1 failed"
	exit 1
fi
# Twice: QEMU's first process after boot runs everything slower (its
# translation cache is cold); both runs are printed.
rc=0
for run in 1 2; do
	echo "=== hmr_bench verbs, run $run of 2"
	/payload/hmr_bench verbs || rc=$?
done
if [ "$rc" = 0 ]; then
	echo "CASE PASS hmr_bench_verbs"
else
	echo "CASE FAIL hmr_bench_verbs: exit status $rc"
fi > /tmp/bench.cases
cases=0 fails=0
vm_count < /tmp/bench.cases
vm_summary
