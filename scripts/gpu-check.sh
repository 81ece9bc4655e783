#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# gpu-check.sh: the real-GPU tier (tests/gpu), built here, run on a GPU
# machine (lab/gpu.md: Ubuntu 24.04, an NVIDIA driver, Python with torch,
# CuPy and JAX; no apt and none of hmr's dependencies).
#
#   scripts/gpu-check.sh build [DIR]  here: build hmr and tests/gpu in DIR
#                                     (default build-gpu), copy the shared
#                                     libraries they need that the GPU
#                                     machine lacks into DIR/carry
#   scripts/gpu-check.sh run [DIR]    there, from the source tree with DIR
#                                     carried: the driver's version, every
#                                     C case, then the Python cases built
#                                     with that machine's Python
#   scripts/gpu-check.sh try [DIR]    here: `run` against the simulated
#                                     driver (C cases only), to try it first
#
# libcuda.so.1 is the driver's own, found by the loader; never carried.
# Exit status: 0 when every case passed.  The whole run takes well under
# the 3 minutes the GPU machine is lent for.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
what=${1:-}
dir=$(realpath -m "${2:-build-gpu}")
py=${HMR_GPU_PYTHON:-/opt/torch/.venv/bin/python3}
targets=(hmr hmr_sim_cuda13 gpu_probe test_gpu_driver test_gpu_hmr)

# Libraries from this machine that the GPU machine's loader would not find:
# all but glibc's, the compiler runtime's and the driver's.
carry() {
	local f lib
	mkdir -p "$dir/carry"
	for f in "$dir/libhmr.so" "$dir"/tests/gpu/test_gpu_*; do
		[ -x "$f" ] || [ -f "$f" ] || continue
		ldd "$f" | awk '/=> \//{print $3}'
	done | sort -u | while read -r lib; do
		case $(basename "$lib") in
		libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | \
			ld-linux* | libgcc_s.so* | libcuda.so*) ;;
		*) cp -L "$lib" "$dir/carry/" ;;
		esac
	done
}

build() {
	mkdir -p "$dir"
	cmake -S "$root" -B "$dir" -DHMR_WERROR=ON -DHMR_GPU_TESTS=ON \
		> "$dir/configure.log" 2>&1 ||
		{ cat "$dir/configure.log"; return 1; }
	cmake --build "$dir" -j2 --target "${targets[@]}" 2>&1 | tail -n 20
	[ "${PIPESTATUS[0]}" = 0 ] || return 1
	carry
	echo "gpu-check: built in $dir; carried:" "$dir"/carry/*
}

# Every HMR_TEST of tests/gpu/test_gpu_*.c, one process each.
run_c() {
	local src exe name pass=0 fail=0
	for src in "$root"/tests/gpu/test_gpu_*.c; do
		exe=$dir/tests/gpu/$(basename "$src" .c)
		for name in $(sed -n 's/^HMR_TEST(\([A-Za-z0-9_]*\)).*/\1/p' "$src"); do
			if timeout 60 "$exe" "$name" > "$dir/$name.log" 2>&1; then
				echo "PASS $name"
				pass=$((pass + 1))
			else
				echo "FAIL $name"
				sed 's/^/    /' "$dir/$name.log" | tail -n 20
				fail=$((fail + 1))
			fi
		done
	done
	echo "gpu-check: C cases: $pass passed, $fail failed"
	[ "$fail" = 0 ]
}

run_python() {
	local lib=$dir/pylib
	(cd "$root/python" && HMR_BUILD_DIR=$dir "$py" -B setup.py -q build \
		--build-base "$dir/pybuild" --build-lib "$lib") > "$dir/pybuild.log" 2>&1 ||
		{ tail -n 30 "$dir/pybuild.log"; return 1; }
	PYTHONPATH=$lib timeout 150 "$py" -B -m pytest -q -p no:cacheprovider \
		"$root/tests/gpu/test_gpu_python.py"
}

case $what in
build)
	build
	;;
run | try)
	export LD_LIBRARY_PATH=$dir/carry:$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	if [ "$what" = try ]; then
		export HMR_CUDA_LIBRARY=$dir/tests/sim/cuda/cuda13/libcuda.so.1
	else
		unset HMR_CUDA_LIBRARY
	fi
	start=$SECONDS
	"$dir/tests/gpu/gpu_probe" --any || exit 1
	echo
	status=0
	run_c || status=1
	if [ "$what" = run ]; then
		run_python || status=1
	fi
	echo "gpu-check: $what finished in $((SECONDS - start)) s, status $status"
	exit $status
	;;
*)
	sed -n '3,20p' "$0"
	exit 2
	;;
esac
