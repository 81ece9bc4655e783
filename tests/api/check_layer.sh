#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# check_layer.sh: does a layer's include view reach a header?
# Usage: check_layer.sh <cc> <binary dir> <source dir> <layer target>
#                       <header> ok|refused
# Compiles `#include "<header>"` with exactly the include path the
# layer's own sources get (cmake/hmr_functions.cmake: hmr_layer).
set -u
cc=$1 bin=$2 src=$3 layer=$4 header=$5 expect=$6
out=$(printf '#include "%s"\n' "$header" | "$cc" -fsyntax-only -x c \
	-D_GNU_SOURCE -DHMR_BUILDING_LIBRARY -I"$bin/layers/$layer" \
	-I"$src/include" -I"$bin/include" - 2>&1)
rc=$?
case $expect in
ok)
	[ $rc = 0 ] && { echo "$layer reaches $header, as it should"; exit 0; }
	echo "$layer cannot include $header:"; echo "$out"; exit 1 ;;
refused)
	if [ $rc != 0 ] && echo "$out" | grep -qE "No such file|file not found"; then
		echo "$layer cannot include $header, as it should not"
		exit 0
	fi
	echo "$layer includes $header (rc $rc), which the layering forbids:"
	echo "$out"; exit 1 ;;
esac
exit 2
