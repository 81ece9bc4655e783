#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# check_man.sh: the man pages render without warnings and cover the API.
#   check_man.sh render <man-dir>
#     every page of man1/ and man3/ through man --warnings (groff -ww):
#     any warning fails; a .so link must name an existing page whose NAME
#     line lists the link.
#   check_man.sh cover <man-dir> <hmr.h>
#     every function hmr.h exports has a man3 page (its own or a .so link),
#     and every man3 page names a function hmr.h still exports.
set -uo pipefail
mode=${1:-}
dir=${2:-}
fail=0
problem() {
	echo "$*"
	fail=1
}

render() {
	local page out target n=0
	cd "$dir" || exit 2
	for page in man1/*.1 man3/*.3; do
		n=$((n + 1))
		target=$(sed -n '1s/^\.so //p' "$page")
		if [ -n "$target" ]; then
			[ -f "$target" ] || { problem "$page: .so $target: no such page"; continue; }
			sed -n '/^\.SH NAME/,/^\.SH /p' "$target" |
				grep -qw "$(basename "$page" .3)" ||
				problem "$page: $target's NAME does not list it"
			continue
		fi
		# What Debian's lintian runs; man-db prints groff's warnings
		# and still exits 0, so stderr is what counts.
		out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
			man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 > /dev/null)
		[ $? = 0 ] || problem "$page: man failed"
		[ -z "$out" ] || problem "$page: $out"
	done
	[ "$n" -gt 0 ] || problem "no pages in $dir"
	echo "$n pages checked"
}

cover() {
	local header=$1 fn page
	local exported
	exported=$(tr '\n' ' ' < "$header" |
		grep -oE 'HMR_EXPORT [^;(]*\bhmr_[a-z0-9_]+ *\(' |
		grep -oE 'hmr_[a-z0-9_]+ *\($' | tr -d ' (' | sort -u)
	[ -n "$exported" ] || problem "$header: no HMR_EXPORT function found"
	for fn in $exported; do
		[ -f "$dir/man3/$fn.3" ] || problem "$fn: no man3/$fn.3"
	done
	for page in "$dir"/man3/*.3; do
		fn=$(basename "$page" .3)
		grep -qx "$fn" <<< "$exported" ||
			problem "man3/$fn.3: hmr.h exports no $fn"
	done
	echo "$(wc -w <<< "$exported") exported functions checked"
}

case $mode in
render) render ;;
cover) cover "${3:?hmr.h}" ;;
*) echo "usage: check_man.sh render|cover <man-dir> [hmr.h]"; exit 2 ;;
esac
exit $fail
