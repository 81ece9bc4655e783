#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# test.sh: README command 2: every test, in every build CI runs.
#   gcc -Werror, clang -Werror with ASan+UBSan, TSan; the format check; the VM
#   suite (soft-RoCE in QEMU) and the tests labelled "once" (the Python
#   package building its own libhmr) once, in the gcc build.  Fails if a
#   test was skipped that this machine can run (all of them, on Debian 12
#   x86_64 with the packages of scripts/deps.sh).
#   valgrind memcheck on the core and unit suites.  The Debian packages
#   built, installed with dpkg, used and removed (scripts/check-deb.sh, as
#   root: CI's machine is a throwaway one).
#   The libFuzzer targets for HMR_FUZZ_SECONDS (20) each (scripts/fuzz.sh).
#   Not by default: `clang`, a plain clang -Werror build and its suite.
#   The asan step compiles every file with clang -Werror too, and runs the
#   same suite; the plain one cost CI 200 s for no check of its own.
#   The monitor, cache, memtype, model, core and unit cases of the gcc
#   build again under two other C libraries (scripts/libc-run.py): Ubuntu
#   24.04's (CET prologues; ../shared/lab/glibc, or $HMR_UBUNTU_LIBC) and
#   Debian trixie's (scripts/fetch-libc.sh).
# Usage: scripts/test.sh [gcc|clang|asan|tsan|valgrind|libc|fuzz|deb|format]...
#   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)
failed=()

format_check() {
	local files missing
	files=$(git ls-files '*.c' '*.h')
	# shellcheck disable=SC2086
	clang-format --dry-run --Werror $files || return 1
	# Every source file names its licence (LICENSE).
	missing=$(git ls-files '*.c' '*.h' '*.sh' '*CMakeLists.txt' '*.cmake' \
		'*.in' | xargs grep -L 'SPDX-License-Identifier' || true)
	if [ -n "$missing" ]; then
		echo "no SPDX-License-Identifier line in:"
		echo "$missing"
		return 1
	fi
}

# build <name> <cmake args...>; then ctest with the label filter in $ctest_args
run_build() {
	local name=$1
	shift
	local dir="$root/build-ci-$name"
	echo "=== $name: configure and build"
	cmake -S "$root" -B "$dir" -DHMR_WERROR=ON "$@" > "$dir.configure.log" 2>&1 ||
		{ cat "$dir.configure.log"; return 1; }
	cmake --build "$dir" -j"$jobs" 2>&1 | tail -n 50
	[ "${PIPESTATUS[0]}" = 0 ] || return 1
	echo "=== $name: ctest $ctest_args"
	# shellcheck disable=SC2086
	(cd "$dir" && ${runner:-} ctest -j"$jobs" --output-on-failure \
		--timeout 900 $ctest_args) | tee "$dir.ctest.log"
	[ "${PIPESTATUS[0]}" = 0 ] || return 1
	if grep -qE '\*\*\*Skipped|Not Run' "$dir.ctest.log"; then
		echo "=== $name: tests were skipped that this machine can run:"
		grep -E '\*\*\*Skipped|Not Run' "$dir.ctest.log"
		return 1
	fi
}

# The gcc build's cases again under other C libraries: production machines
# run Ubuntu's or RHEL's, whose functions open with endbr64 (monitor/).
libc_check() {
	local dir="$root/build-ci-gcc" labels='monitor|unit|model|hmem|core'
	local ubuntu=${HMR_UBUNTU_LIBC:-$root/../shared/lab/glibc/ubuntu-24.04}
	local trixie rc=0
	if [ ! -f "$dir/CTestTestfile.cmake" ]; then
		cmake -S "$root" -B "$dir" -DHMR_WERROR=ON \
			-DCMAKE_C_COMPILER=gcc > "$dir.configure.log" 2>&1 ||
			{ cat "$dir.configure.log"; return 1; }
	fi
	cmake --build "$dir" -j"$jobs" > "$dir.libc-build.log" 2>&1 ||
		{ tail -n 50 "$dir.libc-build.log"; return 1; }
	if [ -f "$ubuntu/libc.so.6" ]; then
		echo "=== libc: Ubuntu 24.04 ($ubuntu)"
		sha256sum "$ubuntu/libc.so.6"
		/usr/bin/python3 "$root/scripts/libc-run.py" "$dir" "$ubuntu" "$labels" ||
			rc=1
	else
		echo "=== libc: SKIPPED Ubuntu 24.04: no libc at $ubuntu" \
			"(set HMR_UBUNTU_LIBC to its folder)"
	fi
	trixie=$("$root/scripts/fetch-libc.sh" trixie) || return 1
	echo "=== libc: Debian trixie ($(cat "$trixie/package"))"
	/usr/bin/python3 "$root/scripts/libc-run.py" "$dir" "$trixie" "$labels" || rc=1
	return $rc
}

step() {
	local name=$1 s=$SECONDS
	shift
	if "$@"; then
		echo "=== $name: passed in $((SECONDS - s)) s"
	else
		echo "=== $name: FAILED in $((SECONDS - s)) s"
		failed+=("$name")
	fi
}

what=("$@")
[ ${#what[@]} -gt 0 ] || what=(format gcc libc asan tsan valgrind fuzz deb)
for w in "${what[@]}"; do
	case $w in
	format) step format format_check ;;
	gcc) ctest_args="-LE bench" step gcc run_build gcc \
		-DCMAKE_C_COMPILER=gcc ;;
	clang) ctest_args="-LE vm|once" step clang run_build clang \
		-DCMAKE_C_COMPILER=clang ;;
	asan) ctest_args="-LE vm" step asan run_build asan \
		-DCMAKE_C_COMPILER=clang -DHMR_ASAN=ON -DHMR_UBSAN=ON ;;
	# TSan needs a fixed address-space layout on kernels with high mmap
	# randomisation; setarch -R turns randomisation off for the run.
	tsan) ctest_args="-LE vm" runner="setarch $(uname -m) -R" step tsan \
		run_build tsan -DCMAKE_C_COMPILER=clang -DHMR_TSAN=ON ;;
	# memcheck on the core and unit suites; a small freed-block
	# quarantine so that "memory stays flat" tests measure hmr, not it.
	# Not the terabyte refresh: valgrind checks msync's range page by
	# page, so under it the one-system-call test takes minutes.
	valgrind) ctest_args="-L core|unit -E mr_refresh_of_a_terabyte_is_one_check" \
		step valgrind run_build valgrind \
		-DCMAKE_C_COMPILER=gcc -DHMR_VM_TESTS=OFF \
		"-DHMR_TEST_WRAPPER=valgrind;-q;--error-exitcode=99;--leak-check=full;--errors-for-leak-kinds=definite;--show-leak-kinds=definite;--freelist-vol=1000000;--suppressions=$root/tests/valgrind.supp" ;;
	libc) step libc libc_check ;;
	# Its own build (prefix /usr, no tests); it removes what it installs.
	deb) step deb scripts/check-deb.sh "$root/build-ci-deb" ;;
	# libFuzzer: every target, its corpus then new inputs, for a bounded
	# time each (HMR_FUZZ_SECONDS, default 30).
	fuzz) step fuzz "$root/scripts/fuzz.sh" "${HMR_FUZZ_SECONDS:-20}" ;;
	*) echo "unknown: $w"; exit 2 ;;
	esac
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAILED: ${failed[*]}"
	exit 1
fi
echo "all passed: ${what[*]}"
