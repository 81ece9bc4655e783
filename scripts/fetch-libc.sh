#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# fetch-libc.sh: download (never install) another C library to run on.
#
#   fetch-libc.sh trixie     prints the folder holding its
#                            ld-linux-x86-64.so.2 and libc.so.6
#
# trixie: Debian 13's libc6 (glibc 2.41), through a private apt
# configuration in $CACHE/apt/ (the machine's sources are not touched),
# as tests/vm/fetch-kernel.sh fetches trixie-backports' kernel; unpacked
# with dpkg -x (no maintainer script runs).  CACHE is $HMR_LIBC_CACHE,
# default ${XDG_CACHE_HOME:-$HOME/.cache}/hmr-libc; a libc already there
# is not fetched again.  Ubuntu 24.04's libc (CET) is not in any Debian
# archive: scripts/test.sh takes it from ../shared/lab/glibc/.
set -euo pipefail
CACHE=${HMR_LIBC_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/hmr-libc}
suite=${1:-trixie}
case $suite in
trixie) ;;
*)
	echo "fetch-libc: unknown libc '$suite' (trixie)" >&2
	exit 1
	;;
esac
dir=$CACHE/$suite
mkdir -p "$CACHE"
exec 9> "$CACHE/.lock"
flock 9
if [ ! -f "$dir/.done" ]; then
	a=$CACHE/apt/$suite
	mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
		"http://deb.debian.org/debian $suite main" > "$a/sources.list"
	apt=(-o "Dir::Etc::SourceList=$a/sources.list"
		-o Dir::Etc::SourceParts=/nonexistent
		-o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache")
	apt-get "${apt[@]}" -q update > "$a/update.log" 2>&1 || {
		echo "fetch-libc: apt-get update of $suite failed:" >&2
		tail -n 5 "$a/update.log" >&2
		exit 1
	}
	tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	dl=(apt-get "${apt[@]}" -q download)
	# As root, apt downloads as user _apt, who cannot write here.
	[ "$(id -u)" != 0 ] || dl+=(-o APT::Sandbox::User=root)
	(cd "$tmp" && "${dl[@]}" libc6 >&2)
	dpkg -x "$tmp"/libc6_*.deb "$tmp/root"
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -L "$tmp/root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" \
		"$tmp/root/usr/lib/x86_64-linux-gnu/libc.so.6" "$dir/"
	basename "$tmp"/libc6_*.deb > "$dir/package"
	touch "$dir/.done"
	echo "fetch-libc: $(cat "$dir/package") in $dir" >&2
fi
echo "$dir"
