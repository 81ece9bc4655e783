#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# fetch-kernel.sh: download (never install) Debian's kernel into the cache.
#
#   fetch-kernel.sh [SERIES]   prints the kernel version (KVER) on stdout
#
# SERIES is the kernel line to boot (default $HMR_VM_KERNEL, else
# $HMR_VM_KERNEL_DEFAULT, else 6.1):
#   6.1  bookworm's linux-image-amd64, from the machine's own apt sources
#        (what most clusters run; the machine must have run apt-get update)
#   7.3  trixie-backports' linux-image-amd64, through a private apt
#        configuration in $CACHE/apt/ (the machine's sources are not
#        touched): rxe there has on-demand paging, works across network
#        namespaces, and the kernel has udmabuf
# The metapackage is resolved to linux-image-<KVER> with apt-cache; its
# files are fetched with apt-get download and unpacked with dpkg -x (no
# maintainer script runs), and depmod builds modules.dep.  The .debs are
# not kept.  6.1 ships one package with boot/ and lib/modules/; 7.3 splits
# the kernel into linux-binary (usr/lib/modules/<KVER>/vmlinuz),
# linux-modules and linux-base (config, System.map, modules.order and
# modules.builtin), which are linked into the 6.1 layout.  Result:
#   $CACHE/kernels/<KVER>/boot/vmlinuz-<KVER>
#   $CACHE/kernels/<KVER>/boot/vmlinux-<KVER>  the same kernel decompressed:
#       an ELF image that QEMU boots through its PVH entry point, 6 s
#       faster under TCG than the bzImage (for a kernel built with
#       CONFIG_PVH and compressed with xz (6.1) or zstd (7.3))
#   $CACHE/kernels/<KVER>/lib/modules/<KVER>/...
# CACHE is $HMR_VM_CACHE, default ${XDG_CACHE_HOME:-$HOME/.cache}/hmr-vm,
# shared by every build directory; a kernel already there is not fetched
# again.  KVER=<version> in the environment skips the apt-cache lookup
# (ignored, with a note, when it is not of SERIES).  If apt cannot
# resolve the metapackage but the cache has a kernel of SERIES, the last
# one fetched is used (with a warning).  Messages go to stderr.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin
CACHE=${HMR_VM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/hmr-vm}
SERIES=${1:-${HMR_VM_KERNEL:-${HMR_VM_KERNEL_DEFAULT:-6.1}}}
mkdir -p "$CACHE/kernels"
say() { echo "fetch-kernel: $*" >&2; }

case $SERIES in
6.1) suite='' pkgs=(linux-image) ;;
7.3) suite=trixie-backports pkgs=(linux-binary linux-modules linux-base) ;;
*)
	say "unknown kernel series '$SERIES' (6.1 or 7.3)"
	exit 1
	;;
esac

# One fetch at a time per cache (ctest -j, several build directories).
exec 9> "$CACHE/.lock-kernel"
flock 9

apt=()   # options of every apt call for SERIES
if [ -n "$suite" ]; then
	a=$CACHE/apt/$suite
	apt=(-o "Dir::Etc::SourceList=$a/sources.list"
		-o Dir::Etc::SourceParts=/nonexistent
		-o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache")
fi
apt_update() { # the private list of SERIES (quiet; 0.5 s)
	[ -n "$suite" ] || return 1
	mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
		"http://deb.debian.org/debian $suite main" > "$a/sources.list"
	apt-get "${apt[@]}" -q update > "$a/update.log" 2>&1 || {
		say "apt-get update of $suite failed:"
		tail -n 5 "$a/update.log" >&2
		return 1
	}
}
resolve() { # the linux-image-<KVER> of SERIES' metapackage
	apt-cache "${apt[@]}" depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ {print $2; exit}' || true
}

if [ -n "${KVER:-}" ] && [[ $KVER != "$SERIES".* ]]; then
	say "KVER=$KVER is not a $SERIES kernel: ignored"
	KVER=
fi
if [ -z "${KVER:-}" ]; then
	pkg=
	[ -z "$suite" ] || [ -d "$a/lists" ] || apt_update || true
	pkg=$(resolve)
	last=$(cat "$CACHE/KVER-$SERIES" 2>/dev/null || true)
	if [ -n "$pkg" ]; then
		KVER=${pkg#linux-image-}
	elif [ -n "$last" ] && [ -f "$CACHE/kernels/$last/.done" ]; then
		KVER=$last
		say "apt-cache cannot resolve $SERIES's linux-image-amd64;" \
			"using the cached kernel $KVER"
	else
		say "cannot resolve $SERIES's linux-image-amd64" \
			"(run apt-get update)"
		exit 1
	fi
fi

download() { # download DIR: the packages of KVER into DIR
	local p names=()
	for p in "${pkgs[@]}"; do
		names+=("$p-$KVER")
	done
	local dl=(apt-get "${apt[@]}" -q download)
	# As root, apt downloads as user _apt, who cannot write here.
	[ "$(id -u)" != 0 ] || dl+=(-o APT::Sandbox::User=root)
	(cd "$1" && "${dl[@]}" "${names[@]}" >&2)
}

dir=$CACHE/kernels/$KVER
if [ ! -f "$dir/.done" ]; then
	tmp=$(mktemp -d "$CACHE/kernels/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	say "downloading ${pkgs[*]} of $KVER"
	# A list gone stale (the backports kernel moved on) is refreshed once.
	if ! download "$tmp" && ! { apt_update && download "$tmp"; }; then
		say "apt-get download of $KVER failed"
		exit 1
	fi
	for deb in "$tmp"/*.deb; do
		dpkg -x "$deb" "$tmp/root"
	done
	rm -f "$tmp"/*.deb
	m=usr/lib/modules/$KVER # 7.3's layout, linked into 6.1's
	if [ -f "$tmp/root/$m/vmlinuz" ]; then
		mkdir -p "$tmp/root/boot"
		ln -s "../$m/vmlinuz" "$tmp/root/boot/vmlinuz-$KVER"
		ln -s "../$m/config" "$tmp/root/boot/config-$KVER"
		[ -e "$tmp/root/lib" ] || ln -s usr/lib "$tmp/root/lib"
	fi
	[ -f "$tmp/root/boot/vmlinuz-$KVER" ] || {
		say "the packages of $KVER have no vmlinuz"
		exit 1
	}
	depmod -b "$tmp/root" "$KVER" # the .debs ship no modules.dep
	rm -rf "$dir"
	mv "$tmp/root" "$dir"
	touch "$dir/.done"
	say "kernel $KVER: $dir ($(du -sh "$dir" | cut -f1))"
fi

# The bzImage's payload starts (setup_sects + 1) * 512 + payload_offset
# bytes in and is payload_length bytes long, the last 4 of which give the
# decompressed size (x86 boot protocol); decompressed, it is vmlinux.
boot=$dir/boot
config=$boot/config-$KVER
unpack=
if grep -qx 'CONFIG_KERNEL_XZ=y' "$config"; then
	unpack="xz -dc"
elif grep -qx 'CONFIG_KERNEL_ZSTD=y' "$config"; then
	unpack="zstd -dcq"
fi
if [ ! -f "$boot/vmlinux-$KVER" ] && [ -n "$unpack" ] &&
	grep -qx 'CONFIG_PVH=y' "$config"; then
	z=$boot/vmlinuz-$KVER
	setup=$(od -An -tu1 -j $((0x1f1)) -N1 "$z")
	poff=$(od -An -tu4 -j $((0x248)) -N4 "$z")
	plen=$(od -An -tu4 -j $((0x24c)) -N4 "$z")
	if dd if="$z" iflag=skip_bytes,count_bytes status=none \
		skip=$(((setup + 1) * 512 + poff)) count=$((plen - 4)) |
		$unpack > "$boot/.vmlinux.tmp" &&
		[ "$(head -c4 "$boot/.vmlinux.tmp")" = $'\x7fELF' ]; then
		mv "$boot/.vmlinux.tmp" "$boot/vmlinux-$KVER"
	else
		rm -f "$boot/.vmlinux.tmp"
		say "could not decompress $z; QEMU will boot the bzImage"
	fi
fi
echo "$KVER" > "$CACHE/KVER-$SERIES"
echo "$KVER" > "$CACHE/KVER"
echo "$KVER"
