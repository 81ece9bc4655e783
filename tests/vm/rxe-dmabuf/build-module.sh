#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# build-module.sh: build (or reuse) rdma_rxe_dmabuf.ko for the VM kernel.
#
#   build-module.sh KVER   prints the module's path on stdout
#
# rxe's sources come from Debian's linux-source-<series> package of the
# kernel's exact version, rxe-dmabuf.patch is applied to them, and they
# are built out of tree against linux-headers-<KVER> (Kbuild here names
# the module).  All packages are fetched with apt-get download through
# the private apt list fetch-kernel.sh keeps for the series, unpacked
# with dpkg -x, never installed, and deleted after the build.  Only 7.3
# (trixie-backports) is supported: the patch is written against its rxe.
#
# Three host-side gaps, each closed without touching the kernel's files:
# - Debian 13's kbuild tools need glibc 2.38 (this is Debian 12): fixdep
#   runs as it is, modpost is rebuilt from the source package's
#   scripts/mod with this machine's gcc, and objtool (which only adds
#   ORC unwind data and mitigation call-site lists to the module; the
#   module runs without them) is skipped with objtool=:.  Without
#   objtool's list of return sites the kernel cannot patch the module's
#   `jmp __x86_return_thunk`, and where it chose no return thunk (TCG's
#   CPU) that thunk warns (taint W): KCFLAGS=-mfunction-return=keep
#   compiles plain returns instead.
# - The kernel was built with gcc-14, this machine has gcc-12: cc.sh
#   turns -fmin-function-alignment=N (gcc 14) into -falign-functions=N,
#   what the kernel's Makefile passes to compilers without it.
# - The headers' vmlinux (for module BTF) is deleted: pahole is not
#   needed and resolve_btfids needs glibc 2.38 too.
#
# Cache: $CACHE/rxe-dmabuf/<KVER>-<hash>/rdma_rxe_dmabuf.ko (about 300 KB,
# debug info stripped), CACHE as in fetch-kernel.sh; the hash covers this
# script, the patch and Kbuild.  Cold: about 170 MB downloaded (the
# source package is 167 MB), 16 s to pull rxe out of its tar.xz, about
# 1 min of CPU to compile.  Messages go to stderr.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${HMR_VM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/hmr-vm}
KVER=${1:?usage: build-module.sh KVER}
say() { echo "rxe-dmabuf: $*" >&2; }

case $KVER in
7.3.*) suite=trixie-backports series=7.3 ;;
*)
	say "kernel $KVER: the patch is for 7.3 (trixie-backports) only"
	exit 1
	;;
esac
key=$(cat "$0" "$HERE/rxe-dmabuf.patch" "$HERE/Kbuild" | sha256sum |
	cut -c1-12)
out=$CACHE/rxe-dmabuf/$KVER-$key
ko=$out/rdma_rxe_dmabuf.ko
mkdir -p "$CACHE/rxe-dmabuf"
exec 9> "$CACHE/.lock-rxe-dmabuf"
flock 9
if [ -f "$ko" ]; then
	echo "$ko"
	exit 0
fi

a=$CACHE/apt/$suite # fetch-kernel.sh made it when it fetched the kernel
[ -f "$a/sources.list" ] || {
	say "no $a: run fetch-kernel.sh $series first"
	exit 1
}
apt=(-o "Dir::Etc::SourceList=$a/sources.list"
	-o Dir::Etc::SourceParts=/nonexistent
	-o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache")
# The headers' version is the kernel's; the source package must match it.
ver=$(apt-cache "${apt[@]}" show "linux-headers-$KVER" 2>/dev/null |
	awk '/^Version:/ {print $2; exit}')
deps=$(apt-cache "${apt[@]}" depends "linux-headers-$KVER" 2>/dev/null |
	awk '/Depends: linux-(headers|kbuild)-/ {print $2}')
[ -n "$ver" ] && [ -n "$deps" ] || {
	say "apt-cache knows no linux-headers-$KVER (apt list in $a)"
	exit 1
}
t0=$SECONDS
tmp=$(mktemp -d "$CACHE/rxe-dmabuf/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dl=(apt-get "${apt[@]}" -q download)
[ "$(id -u)" != 0 ] || dl+=(-o APT::Sandbox::User=root)
# shellcheck disable=SC2086 # deps: one package name a word
(cd "$tmp" && "${dl[@]}" "linux-headers-$KVER" $deps \
	"linux-source-$series=$ver" >&2) || {
	say "apt-get download of the headers or source of $KVER ($ver) failed"
	exit 1
}
root=$tmp/root
for deb in "$tmp"/linux-headers-*.deb "$tmp"/linux-kbuild-*.deb; do
	dpkg -x "$deb" "$root"
done
hdr=$root/usr/src/linux-headers-$KVER
common=$(sed -n 's|^include /usr/src/\(.*\)/Makefile$|\1|p' "$hdr/Makefile")
# The Makefile names /usr/src: point it at the unpacked tree instead.
printf 'KBUILD_OUTPUT=%s\ninclude %s/usr/src/%s/Makefile\n' \
	"$hdr" "$root" "$common" > "$hdr/Makefile"
rm -f "$hdr/vmlinux"

src=$tmp/src
mkdir -p "$src"
t=linux-source-$series
dpkg-deb --fsys-tarfile "$tmp"/linux-source-*.deb |
	tar -xO "./usr/src/$t.tar.xz" | xz -T2 -dc |
	tar -x -C "$src" --strip-components=1 --wildcards \
		"$t/drivers/infiniband/sw/rxe/*" "$t/scripts/mod/*" \
		"$t/scripts/include/*"
rm -f "$tmp"/*.deb
patch -s -p1 -d "$src" < "$HERE/rxe-dmabuf.patch"
t1=$SECONDS

cat > "$tmp/cc.sh" << 'EOF'
#!/bin/bash
a=()
for x in "$@"; do
	case $x in
	-fmin-function-alignment=*) a+=("-falign-functions=${x#*=}") ;;
	*) a+=("$x") ;;
	esac
done
exec gcc "${a[@]}"
EOF
chmod +x "$tmp/cc.sh"
kmake=(make -s -C "$hdr" CC="$tmp/cc.sh" objtool=: PAHOLE=:
	KCFLAGS=-mfunction-return=keep -j"$(nproc)")
quiet() { # the pahole version note on every make; the rest goes through
	grep -v 'pahole version differs\|was built with: \|You are using: ' >&2 ||
		true
}

# modpost, as scripts/mod/Makefile builds it: devicetable-offsets.h from
# the kernel's own compile of devicetable-offsets.c, elfconfig.h from an
# object of this machine.
mod=$src/scripts/mod
ln -s "$root/usr/src/$common/include" "$src/include"
mkdir "$tmp/dto"
cp "$mod/devicetable-offsets.c" "$tmp/dto/"
echo 'obj-m :=' > "$tmp/dto/Kbuild"
"${kmake[@]}" M="$tmp/dto" devicetable-offsets.s 2>&1 | quiet
sed -ne 's:^[[:space:]]*\.ascii[[:space:]]*"\(.*\)".*:\1:
	/^->/{s:->#\(.*\):/* \1 */:; s:^->\([^ ]*\) [$#]*\([^ ]*\) \(.*\):#define \1 \2 /* \3 */:; s:->::; p;}' \
	"$tmp/dto/devicetable-offsets.s" > "$mod/devicetable-offsets.h"
gcc -O2 -o "$mod/mk_elfconfig" "$mod/mk_elfconfig.c"
gcc -c -o "$mod/empty.o" "$mod/empty.c"
"$mod/mk_elfconfig" < "$mod/empty.o" > "$mod/elfconfig.h"
(cd "$mod" && gcc -O2 -I ../include -o modpost modpost.c file2alias.c \
	sumversion.c symsearch.c)
real=$(readlink -f "$hdr/scripts")/mod/modpost.real-lsb-64
rm -f "$real"
cp "$mod/modpost" "$real"

rxe=$src/drivers/infiniband/sw/rxe
cp "$HERE/Kbuild" "$rxe/"
"${kmake[@]}" M="$rxe" modules 2>&1 | quiet
[ -f "$rxe/rdma_rxe_dmabuf.ko" ] || {
	say "the build of rdma_rxe_dmabuf.ko for $KVER failed (see above)"
	exit 1
}
mkdir -p "$out.tmp"
strip --strip-debug -o "$out.tmp/rdma_rxe_dmabuf.ko" "$rxe/rdma_rxe_dmabuf.ko"
rm -rf "$out"
mv "$out.tmp" "$out"
say "$ko for $KVER ($ver): download and unpack $((t1 - t0)) s," \
	"build $((SECONDS - t1)) s"
echo "$ko"
