#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# deps.sh: install what hmr needs from Debian 12's archive (as root).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends \
	build-essential cmake clang clang-format pkg-config binutils file valgrind \
	libjansson-dev liburcu-dev \
	openmpi-bin libopenmpi-dev \
	libclang-rt-14-dev \
	libfabric-dev libucx-dev libibverbs-dev ibverbs-providers \
	ibverbs-utils rdma-core \
	man-db groff-base python3 \
	libze-dev libze1 intel-opencl-icd libhsa-runtime-dev \
	qemu-system-x86 busybox-static iproute2 kmod cpio xz-utils \
	python3-dev python3-setuptools python3-pip python3-venv \
	python3-numpy python3-torch python3-pytest python3-pyverbs \
	ca-certificates
