#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# run.sh: the Python suite's payload (7.3): hmr's package on rxe, with
# Debian's python3, NumPy and pyverbs from /payload/python (stage-python.sh).
#   1. samples/python/rdma_numpy.py on rxe0 (one process, loopback);
#   2. two_hosts.py: the target in hosta (rxea), a pyverbs peer in hostb
#      (rxeb), its five cases;
#   3. tools/bench_python.py: register + close of a cached local
#      registration from Python against C's in the same process, printed
#      (a figure, not a pass/fail: TCG's timing says nothing of a host's);
#      it fails only if the cache served nothing.
set -euo pipefail
. /payload/vm-lib.sh
vm_setup_or_exit
ln -s /payload/python/usr/bin/python3.11 /usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1 PYTHONFAULTHANDLER=1

# py_case NAME CMD...: one case, passed when CMD exits 0.
py_case() {
	local name=$1 st=0 t0
	shift
	t0=$(vm_uptime)
	timeout 200 "$@" 2>&1 || st=$?
	echo "vm: $name took $(awk -v a="$t0" -v b="$(vm_uptime)" \
		'BEGIN { print b - a }') s"
	if [ "$st" = 0 ]; then
		echo "CASE PASS $name"
	else
		echo "CASE FAIL $name: exit status $st"
	fi
}

cases=0 fails=0
{
	py_case py_imports_numpy_pyverbs_hmr python3 -c \
		'import numpy, pyverbs.device, hmr; print(hmr.info()["version"])'
	py_case sample_rdma_numpy python3 /payload/rdma_numpy.py rxe0
} > /tmp/py.cases
vm_count < /tmp/py.cases

if vm_netns_hosts; then
	st=0
	ip netns exec hosta timeout 200 python3 /payload/two_hosts.py \
		rxea rxeb hostb > /tmp/two.cases 2>&1 || st=$?
	n=$(grep -c '^CASE ' /tmp/two.cases || true)
	[ "$st" = 0 ] && [ "$n" = 5 ] ||
		echo "CASE FAIL py_two_hosts: exit status $st, $n of 5 cases" \
			>> /tmp/two.cases
else
	echo "CASE FAIL py_two_hosts: could not set up hosta and hostb" \
		> /tmp/two.cases
fi
vm_count < /tmp/two.cases

# Then the software domain in the same VM: what Python adds does not
# depend on the domain (python/README.md compares it with the host's).
bench="/payload/bench_python.py --access local --rounds 7 --batch 200"
py_case py_bench_cached_local_registration sh -c \
	"python3 $bench --kind verbs --nic rxe0 && python3 $bench" \
	> /tmp/bench.cases
vm_count < /tmp/bench.cases
vm_summary
