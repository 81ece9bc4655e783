#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# run-vm.sh: boot Debian's kernel in QEMU with a payload; exit with its status.
#
#   run-vm.sh -p DIR [-L LIBDIR]...   DIR becomes /payload; runs its run.sh
#   run-vm.sh -c 'CMD'                runs one shell command as the payload
#   run-vm.sh --shell                 interactive shell on the serial console
#
# Options:
#   -k KERNEL -i INITRD  kernel and base initramfs (default: the cached
#                        kernel $KVER, else the one fetch-kernel.sh fetched
#                        last, and make-initramfs.sh's image for it)
#   -L DIR               another place to find the payload's libraries
#   -t SECS              timeout (default $HMR_VM_TIMEOUT or 600): exit 124
#   -m MEM               guest memory (default 2G)
#   -l LOG               console log (default $CACHE/last-vm.log)
#   -r FILE              the payload's output alone, without kernel
#                        messages (default: LOG with .results for .log)
#   -v                   kernel messages on (no "quiet")
#   --tcg | --kvm        accelerator (default: KVM only if kvm_intel or
#                        kvm_amd is loaded and /dev/kvm is usable; a PVM
#                        host's /dev/kvm cannot boot a stock kernel)
# Exit status: the payload's run.sh's; 124 timeout; 125 the VM reported no
# status; 126 the payload could not be assembled.
#
# The payload goes in as a second cpio archive after the base initramfs.
# Every shared library its ELF files need (ldd, searching DIR and each -L
# DIR too) and every libhmr.so* in DIR or an -L DIR go to /usr/lib/<arch>
# in the VM.  The VM has no network card (-nic none).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${HMR_VM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/hmr-vm}
ARCH=x86_64-linux-gnu

payload='' cmd='' kernel='' base='' accel='' shell='' log='' results=''
timeout=${HMR_VM_TIMEOUT:-600} mem=2G quiet=quiet libdirs=()
usage() {
	sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 126
}
while [ $# -gt 0 ]; do
	case $1 in
	-p) payload=${2%/} && shift 2 ;;
	-c) cmd=$2 && shift 2 ;;
	-k) kernel=$2 && shift 2 ;;
	-i) base=$2 && shift 2 ;;
	-L) libdirs+=("$(cd "$2" && pwd)") && shift 2 ;;
	-t) timeout=$2 && shift 2 ;;
	-m) mem=$2 && shift 2 ;;
	-l) log=$2 && shift 2 ;;
	-r) results=$2 && shift 2 ;;
	-v) quiet='' && shift ;;
	--tcg) accel=tcg && shift ;;
	--kvm) accel=kvm && shift ;;
	--shell) shell=vmshell && shift ;;
	*) usage ;;
	esac
done
if [ -z "$kernel" ] || [ -z "$base" ]; then
	KVER=${KVER:-$(cat "$CACHE/KVER" 2>/dev/null || true)}
	[ -n "$KVER" ] || {
		echo "run-vm: no kernel: run fetch-kernel.sh first" >&2
		exit 126
	}
	if [ -z "$kernel" ]; then # the ELF vmlinux boots faster (PVH)
		kernel=$CACHE/kernels/$KVER/boot/vmlinux-$KVER
		[ -f "$kernel" ] ||
			kernel=$CACHE/kernels/$KVER/boot/vmlinuz-$KVER
	fi
	[ -n "$base" ] || base=$("$HERE/make-initramfs.sh" "$KVER")
fi
log=${log:-$CACHE/last-vm.log}
results=${results:-${log%.log}.results}
mkdir -p "$(dirname "$log")" "$(dirname "$results")"
rm -f "$log" "$results"

work=$(mktemp -d "${TMPDIR:-/tmp}/hmr-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT
initrd=$base
if [ -n "$payload$cmd" ]; then
	root=$work/root
	lib=$root/usr/lib/$ARCH
	mkdir -p "$root/payload" "$lib"
	if [ -n "$payload" ]; then
		[ -f "$payload/run.sh" ] || {
			echo "run-vm: $payload has no run.sh" >&2
			exit 126
		}
		cp -a "$payload"/. "$root/payload/"
		payload=$(cd "$payload" && pwd)
	else
		printf '#!/bin/sh\n%s\n' "$cmd" > "$root/payload/run.sh"
	fi
	chmod +x "$root/payload/run.sh"
	search=$(IFS=: && echo "${payload:+$payload:}${libdirs[*]}")
	search+=${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	dirs=("${libdirs[@]}")
	[ -z "$payload" ] || dirs+=("$payload")
	for d in "${dirs[@]}"; do # libhmr wherever it is given
		for l in "$d"/libhmr.so*; do
			[ ! -f "$l" ] || cp -L "$l" "$lib/"
		done
	done
	missing=0 # then what ldd finds
	while IFS= read -r -d '' f; do
		# The magic by a builtin: two forks a file took minutes
		# over a payload of thousands (a Python tree) on a busy host.
		magic=
		LC_ALL=C IFS= read -r -N4 magic < "$f" 2> /dev/null || true
		[ "$magic" = $'\x7fELF' ] || continue
		deps=$(LD_LIBRARY_PATH=$search ldd "$f" 2>/dev/null) || continue
		while read -r name arrow path _; do
			[ "$arrow" = "=>" ] || continue
			if [ "$path" = not ]; then
				echo "run-vm: ${f#"$root"/} needs $name:" \
					"not found (add -L its-dir)" >&2
				missing=1
			elif [ ! -e "$lib/$name" ]; then
				cp -L "$path" "$lib/$name"
			fi
		done <<< "$deps"
	done < <(find "$root/payload" -type f -print0)
	[ "$missing" = 0 ] || exit 126
	(cd "$root" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc -R 0:0 --quiet) |
		gzip -1 > "$work/payload.cpio.gz"
	cat "$base" "$work/payload.cpio.gz" > "$work/initrd"
	initrd=$work/initrd
fi

if [ -z "$accel" ]; then
	accel=tcg
	if [ -r /dev/kvm ] && [ -w /dev/kvm ] &&
		{ [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }
	then
		accel=kvm
	fi
fi
# -arch-capabilities: some nested hosts refuse MSR 0x10a and qemu aborts.
cpu=max
[ "$accel" = tcg ] || cpu=host,-arch-capabilities
echo "run-vm: accel=$accel kernel=$(basename "$kernel")" >&2
qemu=(qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -smp 2 -m "$mem"
	-nodefaults -no-user-config -display none -nic none -no-reboot
	-serial stdio -serial "file:$results"
	-kernel "$kernel" -initrd "$initrd"
	-append "console=ttyS0 panic=-1 $quiet $shell")
if [ -n "$shell" ]; then
	exec "${qemu[@]}"
fi
start=$SECONDS
st=0
timeout -k 5 "$timeout" "${qemu[@]}" < /dev/null | tee "$log" || st=$?
echo "run-vm: the VM ran $((SECONDS - start)) s" >&2
if [ "$st" = 124 ] || [ "$st" = 137 ]; then
	echo "run-vm: timed out after ${timeout}s" >&2
	exit 124
fi
rc=$(cat "$results" "$log" 2>/dev/null | tr -d '\r' |
	sed -n 's/^VM-RC=\([0-9]*\)$/\1/p' | head -1)
[ -n "$rc" ] || {
	echo "run-vm: the VM reported no exit status (qemu status $st)" >&2
	exit 125
}
exit "$rc"
