#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# make-initramfs.sh: build (or reuse) the test VM's base initramfs.
#
#   make-initramfs.sh [KVER]   prints the initramfs path on stdout
#
# KVER defaults to the kernel fetch-kernel.sh fetched last.  The image holds
# busybox, bash (as /bin/sh), the kernel modules in $MODULES and what they
# depend on, rdma-core's user space (libibverbs, the rxe provider,
# /etc/libibverbs.d) and iproute2's ip and rdma, all taken from this
# machine, plus initramfs/init.  It is cached in $CACHE/initramfs/ (CACHE
# as in fetch-kernel.sh) under a name made of the kernel version and a
# hash of this script, init, $MODULES and the host files it copies, so a
# change to any of them builds a new one (about 1 s).  Messages go to
# stderr.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${HMR_VM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/hmr-vm}
KVER=${1:-${KVER:-$(cat "$CACHE/KVER")}}
KROOT=$CACHE/kernels/$KVER
ARCH=x86_64-linux-gnu
LIBDIR=/usr/lib/$ARCH
# Loaded by init in this order; a name ending in "?" is left out where the
# kernel has no such module.  6.1's rdma_rxe asks the crypto API for
# "crc32" when a device is added: without crc32_generic, `rdma link add`
# fails with ENOENT (7.3 has neither the module nor the need).
MODULES=${MODULES:-crc32_generic? rdma_rxe ib_uverbs rdma_ucm vgem veth dummy}
say() { echo "make-initramfs: $*" >&2; }
need() { # need WHAT PACKAGE: give up
	say "need $1 on this machine (apt-get install $2)"
	exit 1
}

[ -f "$KROOT/.done" ] ||
	need "kernel $KVER in $CACHE/kernels" "nothing: run fetch-kernel.sh"
files=() # host files copied into the image
for t in bash ip rdma busybox; do
	p=$(command -v "$t") || need "$t" "bash iproute2 busybox-static"
	files+=("$p")
done
for t in ibv_devinfo ibv_devices; do # ibverbs-utils: optional
	p=$(command -v "$t") && files+=("$p")
done
VERBS=$LIBDIR/libibverbs.so.1
[ -f "$VERBS" ] || need libibverbs libibverbs1
PROVIDER=
for p in "$LIBDIR"/libibverbs/librxe-rdmav*.so; do
	[ -f "$p" ] && PROVIDER=$p
done
if [ -z "$PROVIDER" ] || [ ! -f /etc/libibverbs.d/rxe.driver ]; then
	need "the rxe provider" ibverbs-providers
fi

key=$( {
	cat "$0" "$HERE/initramfs/init"
	echo "$MODULES"
	stat -L -c '%n %s %Y' "${files[@]}" "$VERBS" "$PROVIDER"
} | sha256sum | cut -c1-12)
mkdir -p "$CACHE/initramfs"
OUT=$CACHE/initramfs/initramfs-$KVER-$key.cpio.gz
exec 9> "$CACHE/.lock-initramfs"
flock 9
if [ -f "$OUT" ]; then
	echo "$OUT"
	exit 0
fi

ROOT=$(mktemp -d "$CACHE/initramfs/.root.XXXXXX")
trap 'rm -rf "$ROOT"' EXIT
mkdir -p "$ROOT"/{usr/bin,usr/sbin,$LIBDIR,usr/lib64,etc,proc,sys,dev}
mkdir -p "$ROOT"/{tmp,run,root,payload}
ln -s usr/bin "$ROOT/bin"
ln -s usr/sbin "$ROOT/sbin"
ln -s usr/lib "$ROOT/lib"
ln -s usr/lib64 "$ROOT/lib64"

# Kernel modules: the closure of $MODULES, decompressed (busybox modprobe
# wants plain .ko files), then a fresh depmod.
mods=()
for m in $MODULES; do
	name=${m%\?}
	deps=$(modprobe -d "$KROOT" -S "$KVER" --show-depends "$name" 2>&1) || {
		[ "$name" = "$m" ] || continue # optional and absent
		say "kernel $KVER: no module $m: $deps"
		exit 1
	}
	m=$name
	mapfile -t -O ${#mods[@]} mods < <(awk '$1 == "insmod" {print $2}' \
		<<< "$deps")
	echo "$m" >> "$ROOT/etc/vm-modules"
done
printf '%s\n' "${mods[@]}" | sort -u | while read -r ko; do
	rel=${ko#"$KROOT"/}
	mkdir -p "$ROOT/$(dirname "$rel")"
	cp "$ko" "$ROOT/$rel"
	case $rel in
	*.xz) xz -d "$ROOT/$rel" ;;
	*.zst) zstd -q --rm -d "$ROOT/$rel" ;;
	*.gz) gzip -d "$ROOT/$rel" ;;
	esac
done
mkdir -p "$ROOT/lib/modules/$KVER"
cp "$KROOT/lib/modules/$KVER"/modules.{order,builtin,builtin.modinfo} \
	"$ROOT/lib/modules/$KVER/"
depmod -b "$ROOT" "$KVER"

# busybox for the small tools; bash as /bin/sh (Debian's busybox ash runs
# its own applets, e.g. its ip, before anything on PATH).
for f in "${files[@]}"; do
	cp "$f" "$ROOT/usr/bin/"
done
for a in $("$ROOT/usr/bin/busybox" --list); do
	[ -e "$ROOT/usr/bin/$a" ] || ln -s busybox "$ROOT/usr/bin/$a"
done
ln -sf bash "$ROOT/usr/bin/sh"

# rdma-core: libibverbs, the rxe provider and its driver file.
mkdir -p "$ROOT/$LIBDIR/libibverbs" "$ROOT/etc/libibverbs.d"
cp "$PROVIDER" "$ROOT/$LIBDIR/libibverbs/"
cp /etc/libibverbs.d/rxe.driver "$ROOT/etc/libibverbs.d/"

# Every shared library those ELF files need, under its soname.
for f in "${files[@]}" "$PROVIDER" "$VERBS"; do
	{ ldd "$f" 2>/dev/null || true; } |
		awk '/=> \// {print $3} /^\t\// {print $1}'
done | sort -u | while read -r lib; do
	dst=$ROOT/$LIBDIR/$(basename "$lib")
	[ -e "$dst" ] || cp -L "$lib" "$dst"
done
cp -L "$VERBS" "$ROOT/$LIBDIR/"
ln -s "../lib/$ARCH/ld-linux-x86-64.so.2" "$ROOT/usr/lib64/"

echo "root:x:0:0:root:/root:/bin/sh" > "$ROOT/etc/passwd"
echo "root:x:0:" > "$ROOT/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$ROOT/etc/hosts"
install -m 0755 "$HERE/initramfs/init" "$ROOT/init"

(cd "$ROOT" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc -R 0:0 --quiet) | gzip -1 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
say "$OUT: $(du -h "$OUT" | cut -f1), kernel $KVER"
echo "$OUT"
