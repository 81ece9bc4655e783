#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# vm-lib.sh: the payload runner's functions, for /payload/run.sh in the VM.
#
# A payload directory holds test programs, this file and a run.sh; the
# default run.sh is
#     . /payload/vm-lib.sh; vm_setup_rxe; vm_run_programs; vm_summary
# Each test program prints one line per case:
#     CASE PASS <name>
#     CASE FAIL <name>: <reason>
#     CASE SKIP <name>: <reason>
# vm_run_programs runs the programs (all executable files of /payload but
# *.sh and *.so*, in name order, or the ones named), echoes their output
# and counts those lines.  A program that exits non-zero without a CASE
# FAIL line, or that prints no CASE line, counts as one failed case.
# vm_summary prints "N passed, N failed" (", N skipped" when some were) and
# returns non-zero if a case failed or none passed.
#
# vm_setup_rxe makes the soft-RoCE devices the programs expect:
#     rxe0 on dummy0                       one-device (loopback) tests
#     rxe1 on veth0, rxe2 on veth1         two-device tests; the veth pair
#                                          sits in one network namespace
#                                          (rxe across namespaces fails)
# and waits until each has its GID 0 (the IPv6 link-local address).
# vm_netns_hosts makes two "hosts" instead (7.3 only: 6.1's rxe fails
# across namespaces): namespaces hosta and hostb joined by a veth pair,
# va/vb with rxea/rxeb on them and 10.77.0.1/.2.
# VM_PROGRAM_TIMEOUT (seconds, default 300) bounds each program.

vm_passed=0 vm_failed=0 vm_skipped=0
shopt -s lastpipe # the counting loop at the end of a pipe runs in this shell

vm_uptime() { # vm_uptime: print the guest's uptime in seconds
	local up _
	read -r up _ < /proc/uptime
	echo "$up"
}

vm_wait_gid() { # vm_wait_gid DEV [TENTHS]: wait for DEV's GID 0 (10 s)
	local f=/sys/class/infiniband/$1/ports/1/gids/0 g i
	local zero=0000:0000:0000:0000:0000:0000:0000:0000
	for ((i = 0; i < ${2:-100}; i++)); do
		g=
		[ -r "$f" ] && read -r g < "$f"
		if [ -n "$g" ] && [ "$g" != "$zero" ]; then
			echo "vm: $1 GID 0 $g"
			return 0
		fi
		sleep 0.1
	done
	echo "vm: $1 has no GID 0 after $((${2:-100} / 10)) s"
	return 1
}

vm_load_rxe() { # vm_load_rxe: rdma_rxe, or the payload's importing rxe
	# A payload with rdma_rxe_dmabuf.ko (tests/vm/rxe-dmabuf/README.md)
	# gets it in place of the stock module, which init loaded at boot.
	if [ -f /payload/rdma_rxe_dmabuf.ko ]; then
		[ ! -d /sys/module/rdma_rxe ] || rmmod rdma_rxe || return 1
		[ -d /sys/module/rdma_rxe_dmabuf ] ||
			insmod /payload/rdma_rxe_dmabuf.ko || return 1
		echo "vm: rdma_rxe_dmabuf loaded in place of rdma_rxe;" \
			"taint $(cat /proc/sys/kernel/tainted)"
		return 0
	fi
	modprobe rdma_rxe
}

vm_setup_rxe() { # vm_setup_rxe: rxe0 on dummy0, rxe1/rxe2 on veth0/veth1
	local d
	echo "vm: setting up rxe at uptime $(vm_uptime) s"
	# 6.1's rdma_rxe needs crc32; without crc32_generic `rdma link add`
	# fails with ENOENT.  The image lists it where the kernel has it.
	if grep -qx crc32_generic /etc/vm-modules; then
		modprobe crc32_generic || return 1
	fi
	vm_load_rxe || return 1
	modprobe dummy && modprobe veth || return 1
	# No duplicate address detection: the link-local address (GID 0)
	# is never tentative, so traffic can use it at once.
	echo 0 > /proc/sys/net/ipv6/conf/default/accept_dad
	[ -d /sys/class/net/dummy0 ] ||
		ip link add dummy0 type dummy || return 1
	echo 0 > /proc/sys/net/ipv6/conf/dummy0/accept_dad
	ip link add veth0 type veth peer name veth1 || return 1
	for d in dummy0 veth0 veth1; do
		ip link set "$d" up || return 1
	done
	rdma link add rxe0 type rxe netdev dummy0 &&
		rdma link add rxe1 type rxe netdev veth0 &&
		rdma link add rxe2 type rxe netdev veth1 || return 1
	for d in rxe0 rxe1 rxe2; do
		vm_wait_gid "$d" || return 1
	done
	echo "vm: rxe0 rxe1 rxe2 ready at uptime $(vm_uptime) s"
}

vm_setup_or_exit() { # vm_setup_or_exit: vm_setup_rxe, or a failed case, exit
	vm_setup_rxe && return 0
	echo "CASE FAIL rxe_setup: could not set up rxe0, rxe1 and rxe2"
	echo "0 passed, 1 failed"
	exit 1
}

vm_programs() { # vm_programs: the payload's test programs, in name order
	local f
	for f in /payload/*; do
		case ${f##*/} in
		*.sh | *.so | *.so.*) continue ;;
		esac
		[ -f "$f" ] && [ -x "$f" ] && echo "$f"
	done
}

vm_count() { # vm_count: echo stdin, counting its CASE lines
	local line
	while IFS= read -r line || [ -n "$line" ]; do
		echo "$line"
		case $line in
		"CASE PASS "*) ((++vm_passed, ++cases)) ;;
		"CASE FAIL "*) ((++vm_failed, ++cases, ++fails)) ;;
		"CASE SKIP "*) ((++vm_skipped, ++cases)) ;;
		esac
	done
}

vm_run_programs() { # vm_run_programs [PROGRAM...]: run and count cases
	local p name st line cases fails
	local -a progs=("$@")
	[ ${#progs[@]} -gt 0 ] || mapfile -t progs < <(vm_programs)
	for p in "${progs[@]}"; do
		name=${p##*/}
		echo "vm: === $name at uptime $(vm_uptime) s"
		st=0 cases=0 fails=0
		timeout "${VM_PROGRAM_TIMEOUT:-300}" "$p" 2>&1 | vm_count ||
			st=$?
		if [ "$st" != 0 ] && [ "$fails" = 0 ]; then
			case $st in
			143) line="killed after ${VM_PROGRAM_TIMEOUT:-300} s" ;;
			*) line="exit status $st" ;;
			esac
			echo "CASE FAIL $name: $line without a CASE FAIL line"
			((++vm_failed))
		elif [ "$cases" = 0 ]; then
			echo "CASE FAIL $name: printed no CASE line"
			((++vm_failed))
		fi
		echo "vm: === $name: exit status $st"
	done
}

# A program as a reader would run it: one CASE line a run, passing when
# its output has every line given (grep patterns).  Count the lines with
# vm_count (cases=0 fails=0 first).
vm_run_case() { # vm_run_case NAME 'PATTERN...' [VAR=value...] -- COMMAND...
	local name=$1 pattern out ok=1 st=0
	local -a patterns
	mapfile -t patterns <<< "$2"
	shift 2
	out=$(env "$@" 2>&1) || st=$?
	for pattern in "${patterns[@]}"; do
		grep -q -- "$pattern" <<< "$out" || ok=0
	done
	if [ "$ok" = 1 ]; then
		echo "CASE PASS $name"
	else
		echo "CASE FAIL $name: exit $st: $(tr '\n' ' ' <<< "$out")"
	fi
}

vm_summary() { # vm_summary: the totals; fails if a case failed or none passed
	local skipped=
	[ "$vm_skipped" = 0 ] || skipped=", $vm_skipped skipped"
	echo "$vm_passed passed, $vm_failed failed$skipped"
	[ "$vm_failed" = 0 ] && [ "$vm_passed" -gt 0 ]
}

vm_netns_hosts() { # vm_netns_hosts: hosta, hostb, rxea and rxeb (see top)
	local h i=1
	ip link add va type veth peer name vb || return 1
	for h in a b; do
		ip netns add "host$h" &&
			ip link set "v$h" netns "host$h" &&
			ip netns exec "host$h" sh -c \
				"echo 0 > /proc/sys/net/ipv6/conf/v$h/accept_dad" &&
			ip -n "host$h" addr add "10.77.0.$i/24" dev "v$h" &&
			ip -n "host$h" link set lo up &&
			ip -n "host$h" link set "v$h" up &&
			ip netns exec "host$h" rdma link add "rxe$h" type rxe \
				netdev "v$h" || return 1
		i=$((i + 1))
	done
	vm_wait_gid rxea && vm_wait_gid rxeb
}
