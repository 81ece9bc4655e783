#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# fetch-kernel.sh: download (never install) Debian's kernel into the cache.
#
#   fetch-kernel.sh            prints the kernel version (KVER) on stdout
#
# Resolves linux-image-amd64 (bookworm's, on Debian 12) to
# linux-image-<KVER> with apt-cache (the machine must have run apt-get
# update), fetches that package with apt-get download, unpacks it with
# dpkg -x (no maintainer script runs) and builds its modules.dep with
# depmod.  The .deb is not kept.  Result:
#   $CACHE/kernels/<KVER>/boot/vmlinuz-<KVER>
#   $CACHE/kernels/<KVER>/boot/vmlinux-<KVER>  the same kernel decompressed:
#       an ELF image that QEMU boots through its PVH entry point, 6 s
#       faster under TCG than the bzImage (made for an xz-compressed
#       kernel built with CONFIG_PVH, as Debian's 6.1 is)
#   $CACHE/kernels/<KVER>/lib/modules/<KVER>/...
# CACHE is $HMR_VM_CACHE, default ${XDG_CACHE_HOME:-$HOME/.cache}/hmr-vm,
# shared by every build directory; a kernel already there is not fetched
# again.  KVER=<version> in the environment skips the apt-cache lookup.
# If apt knows no linux-image-amd64 but the cache has a kernel, the last
# one fetched is used (with a warning).  Messages go to stderr.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin
CACHE=${HMR_VM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/hmr-vm}
mkdir -p "$CACHE/kernels"
say() { echo "fetch-kernel: $*" >&2; }

# One fetch at a time per cache (ctest -j, several build directories).
exec 9> "$CACHE/.lock-kernel"
flock 9

if [ -z "${KVER:-}" ]; then
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ {print $2; exit}') || true
	last=$(cat "$CACHE/KVER" 2>/dev/null || true)
	if [ -n "$pkg" ]; then
		KVER=${pkg#linux-image-}
	elif [ -n "$last" ] && [ -f "$CACHE/kernels/$last/.done" ]; then
		KVER=$last
		say "apt-cache knows no linux-image-amd64 (no apt-get" \
			"update?); using the cached kernel $KVER"
	else
		say "cannot resolve linux-image-amd64: run apt-get update"
		exit 1
	fi
fi

dir=$CACHE/kernels/$KVER
if [ ! -f "$dir/.done" ]; then
	tmp=$(mktemp -d "$CACHE/kernels/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	say "downloading linux-image-$KVER"
	apt=(apt-get -q download)
	# As root, apt downloads as user _apt, who cannot write here.
	[ "$(id -u)" != 0 ] || apt+=(-o APT::Sandbox::User=root)
	if ! (cd "$tmp" && "${apt[@]}" "linux-image-$KVER" >&2); then
		say "apt-get download linux-image-$KVER failed"
		exit 1
	fi
	dpkg -x "$tmp"/linux-image-"$KVER"_*.deb "$tmp/root"
	[ -f "$tmp/root/boot/vmlinuz-$KVER" ] || {
		say "linux-image-$KVER has no boot/vmlinuz-$KVER"
		exit 1
	}
	depmod -b "$tmp/root" "$KVER" # the .deb ships no modules.dep
	rm -rf "$dir"
	mv "$tmp/root" "$dir"
	touch "$dir/.done"
	say "kernel $KVER: $dir ($(du -sh "$dir" | cut -f1))"
fi

# The bzImage's payload starts (setup_sects + 1) * 512 + payload_offset
# bytes in (x86 boot protocol); decompressed, it is vmlinux.
boot=$dir/boot
if [ ! -f "$boot/vmlinux-$KVER" ] &&
	grep -qx 'CONFIG_PVH=y' "$boot/config-$KVER" &&
	grep -qx 'CONFIG_KERNEL_XZ=y' "$boot/config-$KVER"; then
	z=$boot/vmlinuz-$KVER
	setup=$(od -An -tu1 -j $((0x1f1)) -N1 "$z")
	poff=$(od -An -tu4 -j $((0x248)) -N4 "$z")
	# (xz stops reading at the stream's end: no pipe, no SIGPIPE)
	if xz -dc --single-stream > "$boot/.vmlinux.tmp" \
		< <(tail -c +$(((setup + 1) * 512 + poff + 1)) "$z") &&
		[ "$(head -c4 "$boot/.vmlinux.tmp")" = $'\x7fELF' ]; then
		mv "$boot/.vmlinux.tmp" "$boot/vmlinux-$KVER"
	else
		rm -f "$boot/.vmlinux.tmp"
		say "could not decompress $z; QEMU will boot the bzImage"
	fi
fi
echo "$KVER" > "$CACHE/KVER"
echo "$KVER"
