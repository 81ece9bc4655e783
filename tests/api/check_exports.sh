#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# check_exports.sh: libhmr exports only hmr_ symbols and carries a SONAME.
set -euo pipefail
lib=$1
case "${2:-exports}" in
exports)
	# Version nodes (type A) are not symbols.
	bad=$(nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' |
		sed 's/@.*//' | grep -v '^hmr_' || true)
	count=$(nm -D --defined-only "$lib" | awk '$2 != "A"' | wc -l)
	echo "$count exported symbols"
	if [ -n "$bad" ]; then
		echo "exported without the hmr_ prefix:"; echo "$bad"; exit 1
	fi
	[ "$count" -gt 0 ]
	;;
soname)
	soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	echo "SONAME: ${soname:-none}"
	[[ "$soname" =~ ^libhmr\.so\.[0-9]+$ ]]
	;;
esac
