#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# check_install.sh: install hmr, then build a consumer out of tree with
# find_package(hmr) and with pkg-config, and run both.
set -euo pipefail
build=$1 src=$2 work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > /dev/null
# The man pages, as Debian ships them: every one gzipped (a .so page a
# link to its group's), one per source page, each intact.
man=$work/prefix/share/man
mansrc=$(cd "$src/../.." && pwd)/man
for page in "$mansrc"/man3/*.3 "$mansrc"/man1/hmr_info.1; do
	sec=$(basename "$(dirname "$page")")
	gz=$man/$sec/$(basename "$page").gz
	[ -f "$gz" ] || { echo "$gz: not installed"; exit 1; }
	gzip -t "$gz"
done
plain=$(find "$man" -type f ! -name '*.gz')
[ -z "$plain" ] || { echo "uncompressed man pages: $plain"; exit 1; }
cmake -S "$src/consumer" -B "$work/consumer" \
	-DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/consumer" > /dev/null
LD_LIBRARY_PATH="$work/prefix/lib" "$work/consumer/consumer"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
cc -std=c11 -o "$work/consumer_pc" "$src/consumer/consumer.c" \
	$(pkg-config --cflags --libs hmr)
LD_LIBRARY_PATH="$work/prefix/lib" "$work/consumer_pc"
