#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# fuzz.sh: build the libFuzzer targets with clang and run each for a while.
#
# Usage: scripts/fuzz.sh [seconds per target, default 60] [target...]
#   targets: mr_reg raw_key access_auth domain_attr env_config cache (all)
#
# Builds build-fuzz/ (HMR_FUZZ_BUILD overrides) with clang, ASan, UBSan and
# libFuzzer coverage in the library too (-fsanitize=fuzzer-no-link), then
# runs every target: first its regression corpus (tests/fuzz/corpus/<t>),
# then new inputs until the time is up.  New corpus entries go to
# build-fuzz/fuzz-corpus/<t>/, crash/leak/timeout inputs to
# build-fuzz/fuzz-artifacts/<t>/.  Exits 1 if any target crashed, leaked
# (LeakSanitizer), hit undefined behaviour (UBSan aborts) or timed out.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-mr_reg raw_key access_auth domain_attr env_config cache}
build=${HMR_FUZZ_BUILD:-$root/build-fuzz}

command -v clang > /dev/null || {
	echo "fuzz.sh: clang is needed (and libclang-rt-dev for libFuzzer)" >&2
	exit 1
}
mkdir -p "$build"
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DHMR_FUZZ=ON \
	-DHMR_ASAN=ON -DHMR_UBSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" > "$build/configure.log" ||
	{ cat "$build/configure.log" >&2; exit 1; }
for t in $targets; do
	cmake --build "$build" -j2 --target "fuzz_$t" > /dev/null
done

failed=""
for t in $targets; do
	work=$build/fuzz-corpus/$t
	artifacts=$build/fuzz-artifacts/$t
	mkdir -p "$work" "$artifacts"
	extra=()
	[ -f "$root/tests/fuzz/$t.dict" ] && extra=(-dict="$root/tests/fuzz/$t.dict")
	echo "== fuzz_$t: ${secs}s"
	# Refusals are expected: keep the library quiet.  LeakSanitizer is
	# on (ASan's default); UBSan aborts on the first report.
	if ! HMR_LOG_LEVEL=none \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		"$build/tests/fuzz/fuzz_$t" -max_total_time="$secs" \
		-timeout=10 -rss_limit_mb=4096 -print_final_stats=1 "${extra[@]}" \
		-artifact_prefix="$artifacts/" "$work" \
		"$root/tests/fuzz/corpus/$t" > "$build/fuzz_$t.log" 2>&1; then
		failed="$failed $t"
		grep -E "ERROR|MISMATCH|runtime error|SUMMARY|Test unit" \
			"$build/fuzz_$t.log" | head -20 >&2 || true
		echo "fuzz.sh: fuzz_$t failed; log $build/fuzz_$t.log," \
			"inputs in $artifacts/" >&2
	else
		grep -E "stat::number_of_executed_units|cov:" \
			"$build/fuzz_$t.log" | tail -2
	fi
done
if [ -n "$failed" ]; then
	echo "fuzz.sh: failed:$failed" >&2
	exit 1
fi
echo "fuzz.sh: every target ran ${secs}s without a finding"
