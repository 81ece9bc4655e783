#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# stage-openmpi.sh: this machine's Open MPI (Debian openmpi-bin 4.1) as a
# tree to copy over the VM's root: mpirun, orted, the MCA components, the
# PMIx components, the configuration and the help texts, each at the path
# Debian built into Open MPI.  run-vm.sh adds the libraries they link.
#   stage-openmpi.sh OUTDIR
# Components for transports the VM does not have (UCX, libfabric, PSM,
# openib) are left out: with them go their large libraries.
set -euo pipefail
out=${1:?usage: stage-openmpi.sh OUTDIR}
A=/usr/lib/x86_64-linux-gnu
mpirun=$(readlink -f "$(command -v mpirun)") || {
	echo "stage-openmpi: no mpirun (apt-get install openmpi-bin)" >&2
	exit 1
}
rm -rf "$out"
mkdir -p "$out/usr/bin" "$out$A/openmpi/lib/openmpi3" "$out/etc"
cp -L "$mpirun" "$out/usr/bin/mpirun"
cp -L /usr/bin/orted "$out/usr/bin/"
for c in "$A"/openmpi/lib/openmpi3/mca_*.so; do
	case ${c##*/} in
	*ucx* | *ofi* | *psm* | *openib*) continue ;;
	esac
	cp -L "$c" "$out$A/openmpi/lib/openmpi3/"
done
mkdir -p "$out$A/pmix2/lib" "$out$A/pmix2/share" "$out/usr/share"
cp -rL "$A/pmix2/lib/pmix" "$out$A/pmix2/lib/"
cp -rL "$A/pmix2/share/pmix" "$out$A/pmix2/share/"
cp -rL /etc/openmpi "$out/etc/"
cp -rL /usr/share/openmpi "$out/usr/share/"
