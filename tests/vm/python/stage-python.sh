#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# stage-python.sh: this machine's Python for the VM, as a tree whose usr/
# is a relocated prefix: Debian's python3.11 and its standard library,
# NumPy (python3-numpy), pyverbs (python3-pyverbs: rdma-core's own
# bindings) and hmr's package as tests/python built it.
#   stage-python.sh OUTDIR HMR_PACKAGE_LIB
# The interpreter finds its library from where it lies (OUTDIR/usr/bin),
# and Debian's site.py adds usr/lib/python3/dist-packages under it, so the
# VM runs /payload/python/usr/bin/python3 in place, nothing copied over
# its root.  run-vm.sh adds the shared libraries the ELF files link (ldd).
# Every module is compiled here, as unchecked-hash bytecode: valid whatever
# the sources' times become (CMake's copy into the payload does not keep
# them, and a stale .pyc is compiled again at each import: 20 s of TCG).  Left out: what a test never imports (tests, IDLE, Tk,
# lib2to3, distutils, the static libpython, NumPy's f2py and headers).
set -euo pipefail
out=${1:?usage: stage-python.sh OUTDIR HMR_PACKAGE_LIB}
pkg=${2:?usage: stage-python.sh OUTDIR HMR_PACKAGE_LIB}
V=3.11
lib=/usr/lib/python$V
dist=/usr/lib/python3/dist-packages
for d in "$lib/os.py" "$dist/numpy" "$dist/pyverbs" "$pkg/hmr"; do
	[ -e "$d" ] || {
		echo "stage-python: no $d (apt-get install python3" \
			"python3-numpy python3-pyverbs; or build hmr_python)" >&2
		exit 1
	}
done
rm -rf "$out"
mkdir -p "$out/usr/bin" "$out/usr/lib/python3/dist-packages"
cp -L "/usr/bin/python$V" "$out/usr/bin/"
ln -s "python$V" "$out/usr/bin/python3"
cp -a "$lib" "$out/usr/lib/"
rm -rf "$out$lib"/{test,idlelib,tkinter,turtledemo,lib2to3,ensurepip} \
	"$out$lib"/{pydoc_data,distutils,dist-packages,venv,sqlite3} \
	"$out$lib"/config-$V-* "$out$lib/sitecustomize.py"
# Extension modules only tests or terminals use, and what links OpenSSL,
# ncurses or sqlite (their libraries would come along).
(cd "$out$lib/lib-dynload" && rm -f _test* _ctypes_test* xx* _xx* \
	_curses* _dbm* nis.* ossaudiodev.* readline.* _sqlite3.* _ssl.* \
	_hashlib.* _tkinter.*)
for p in numpy pyverbs; do
	cp -a "$dist/$p" "$out$dist/"
done
find "$out$dist/numpy" -depth -type d \( -name tests -o -name f2py -o \
	-name distutils -o -name include -o -name _pyinstaller \) \
	-exec rm -rf {} +
cp -a "$pkg/hmr" "$out$dist/"
/usr/bin/python$V -m compileall -q -f -j0 --invalidation-mode unchecked-hash \
	"$out/usr/lib" > /dev/null
