#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# run-suite.sh: the CTest driver: run a payload's run.sh in the test VM.
#
#   run-suite.sh PAYLOAD_DIR [-L LIBDIR]...
#
# Fetches the kernel (cached, see fetch-kernel.sh), builds the base
# initramfs (cached per kernel), boots the VM with the payload (run-vm.sh),
# then prints the payload's "N passed, N failed" line and every CASE FAIL
# line.  Exit 0 when the payload's run.sh exited 0 and printed that line;
# 77 (CTest's skip) only when QEMU cannot run here at all; otherwise
# non-zero, with the end of the VM's console log.  The full console log is
# PAYLOAD_DIR.log, the payload's own output PAYLOAD_DIR.results.
# HMR_VM_CACHE, HMR_VM_TIMEOUT and KVER are passed on to the scripts.
# The kernel: the one the payload is pinned to (its vm-kernel file, from
# hmr_add_vm_suite KERNEL), else $HMR_VM_KERNEL, else
# $HMR_VM_KERNEL_DEFAULT (CMake's HMR_VM_KERNEL), else 6.1.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ] || [ ! -d "$1" ]; then
	echo "usage: run-suite.sh PAYLOAD_DIR [-L LIBDIR]..." >&2
	exit 2
fi
payload=${1%/}
shift
log=$payload.log
results=$payload.results
t0=$SECONDS

if ! command -v qemu-system-x86_64 > /dev/null; then
	echo "SKIP: qemu-system-x86_64 not found: the VM tests need QEMU" \
		"(apt-get install qemu-system-x86)"
	exit 77
fi

if [ -f "$payload/vm-kernel" ]; then
	HMR_VM_KERNEL=$(cat "$payload/vm-kernel")
	export HMR_VM_KERNEL
fi
if ! KVER=$("$HERE/fetch-kernel.sh"); then
	echo "run-suite: FAILED: could not get the kernel (see above)"
	exit 1
fi
export KVER
# A suite of the importing rxe (hmr_add_vm_suite RXE_DMABUF) takes the
# module built for this kernel (cached), loaded by vm-lib.sh's vm_load_rxe.
if [ -f "$payload/vm-rxe-dmabuf" ]; then
	if ! ko=$("$HERE/rxe-dmabuf/build-module.sh" "$KVER"); then
		echo "run-suite: FAILED: could not build rdma_rxe_dmabuf" \
			"(see above)"
		exit 1
	fi
	cp "$ko" "$payload/rdma_rxe_dmabuf.ko"
fi
if ! initrd=$("$HERE/make-initramfs.sh" "$KVER"); then
	echo "run-suite: FAILED: could not build the initramfs (see above)"
	exit 1
fi
t1=$SECONDS

rm -f "$log" "$results" # never read a previous run's results
st=0
"$HERE/run-vm.sh" -p "$payload" -i "$initrd" -l "$log" -r "$results" "$@" \
	> /dev/null || st=$?
t2=$SECONDS

out=
[ ! -f "$results" ] || out=$(tr -d '\r' < "$results")
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<< "$out" | tail -1 || true)
grep '^CASE FAIL ' <<< "$out" || true
echo "run-suite: kernel $KVER; setup $((t1 - t0)) s, VM $((t2 - t1)) s;" \
	"log $log"
if [ "$st" = 0 ] && [ -n "$summary" ]; then
	echo "$summary"
	exit 0
fi
case $st in
0) why="the payload printed no 'N passed, N failed' line" ;;
124) why="the VM timed out" ;;
125) why="the VM reported no exit status (crashed or did not boot)" ;;
126) why="run-vm.sh could not assemble the payload" ;;
*) why="the payload's run.sh exited with status $st" ;;
esac
echo "run-suite: FAILED: $why"
if [ -s "$log" ]; then
	echo "run-suite: the console log ends:"
	tr -d '\r' < "$log" | tail -n 40 | sed 's/^/  | /'
fi
[ -z "$summary" ] || echo "$summary"
exit 1 # never 77, whatever the payload's status
