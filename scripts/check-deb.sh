#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# check-deb.sh: the Debian packages (cmake/hmr_package.cmake) as a user gets
#   them: build them with CPack, install them with dpkg -i, build the samples
#   out of tree against them (find_package(hmr), and pkg-config for the host
#   samples), run the host samples and hmr_info, then remove the packages
#   with dpkg -r and check that nothing of them is left.
# Usage: scripts/check-deb.sh [build dir]   (default: build-ci-deb, its own
#   build: prefix /usr, no tests)
# As root, on a machine where no hmr is installed (CI's throwaway one).  The
# packages are removed on every exit; runs take turns through a lock.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=$(realpath -m "${1:-$root/build-ci-deb}")
jobs=$(nproc)
work=""
installed=()

fail() {
	echo "check-deb: $*" >&2
	exit 1
}

# dpkg -r what this run installed, then --purge: dpkg keeps a removed
# package that has maintainer scripts (libhmr's run ldconfig) on record
# until it is purged.  The trap does both on every exit.
remove_packages() {
	local ret=0
	if [ ${#installed[@]} -gt 0 ]; then
		echo "=== dpkg -r ${installed[*]}"
		dpkg -r "${installed[@]}" > "$work/remove.log" 2>&1 ||
			{ ret=1; cat "$work/remove.log"; }
		check_removed || ret=1
		dpkg --purge "${installed[@]}" > "$work/purge.log" 2>&1 ||
			{ ret=1; cat "$work/purge.log"; }
		installed=()
	fi
	return $ret
}

# After dpkg -r: no file, and no directory it made, is left, and no
# library in ld.so's cache.
check_removed() {
	local path ret=0
	while read -r path; do
		if [ -e "$path" ] || [ -L "$path" ]; then
			grep -qxF "$path" "$work/dirs_before" ||
				{ ret=1; echo "$path is left after dpkg -r"; }
		fi
	done < "$work/paths"
	if grep -q 'libhmr\.so' <<< "$(ldconfig -p)"; then
		ret=1
		echo "libhmr is still in ld.so's cache"
	fi
	return $ret
}

[ "$(id -u)" = 0 ] || fail "needs root (dpkg -i); CI runs it as root"
exec 9> /run/lock/hmr-check-deb.lock
flock 9
work=$(mktemp -d)
trap 'remove_packages || true; rm -rf "$work"' EXIT
trap 'echo "check-deb: failed at line $LINENO" >&2' ERR

echo "=== build and package in $build"
cmake -S "$root" -B "$build" -DCMAKE_INSTALL_PREFIX=/usr \
	-DHMR_BUILD_TESTS=OFF -DHMR_WERROR=ON > "$work/configure.log" 2>&1 ||
	{ cat "$work/configure.log"; fail "configure failed"; }
cmake --build "$build" -j"$jobs" > "$work/build.log" 2>&1 ||
	{ tail -n 50 "$work/build.log"; fail "build failed"; }
rm -rf "$build/deb"
(cd "$build" && cpack -B "$build/deb") > "$work/cpack.log" 2>&1 ||
	{ cat "$work/cpack.log"; fail "cpack failed"; }
debs=("$build"/deb/*.deb)
[ -e "${debs[0]}" ] || fail "cpack made no .deb"
version=$(sed -n 's/^project(hmr VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)

# Every package's name and files.  A file already on disk would be
# overwritten by dpkg -i and deleted by dpkg -r: refuse instead.
pkgs=()
for deb in "${debs[@]}"; do
	pkg=$(dpkg-deb -f "$deb" Package)
	pkgs+=("$pkg")
	echo "$pkg $(dpkg-deb -f "$deb" Version): $(dpkg-deb -f "$deb" Depends)"
	[[ $(dpkg-deb -f "$deb" Version) == "$version"-* ]] ||
		fail "$pkg is not version $version"
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2> /dev/null || true)
	case $status in
	"" | *not-installed) ;;
	*config-files) dpkg --purge "$pkg" > /dev/null ;; # A killed run's.
	*) fail "$pkg is installed ($status)" ;;
	esac
	dpkg-deb --fsys-tarfile "$deb" | tar -t | sed 's|^\./|/|;s|/$||' |
		grep -v '^$' >> "$work/paths"
done
while read -r path; do
	if [ -d "$path" ]; then
		echo "$path" >> "$work/dirs_before"
	elif [ -e "$path" ] || [ -L "$path" ]; then
		fail "$path exists already (an hmr installed by hand?)"
	fi
done < "$work/paths"

echo "=== dpkg -i ${pkgs[*]}"
installed=("${pkgs[@]}")
dpkg -i "${debs[@]}" > "$work/install.log" 2>&1 ||
	{ cat "$work/install.log"; fail "dpkg -i failed"; }
lib=$(dpkg -L "libhmr${version%%.*}" | grep '/libhmr\.so\.[0-9]*$')
tests/api/check_exports.sh "$lib"
tests/api/check_exports.sh "$lib" soname
# (grep reads whole outputs: -q would cut a pipe that pipefail reports.)
syms=$(readelf --dyn-syms -W "$lib")
grep -q '@@HMR_' <<< "$syms" ||
	fail "$lib has no version nodes (cmake/hmr.map)"
[ "$(pkg-config --modversion hmr)" = "$version" ] ||
	fail "pkg-config says hmr $(pkg-config --modversion hmr)"

# Man pages as Debian ships them: gzipped, .so pages as links, and man
# finds them by name.
echo "=== man pages"
pages=$(dpkg -L libhmr-dev hmr-utils | grep '/share/man/man[0-9]/')
plain=$(grep -v '\.gz$' <<< "$pages" || true)
[ -z "$plain" ] || fail "man pages not gzipped: $plain"
want=$(($(find man/man3 -name '*.3' | wc -l) + 1)) # and hmr_info.1
[ "$(grep -c . <<< "$pages")" = "$want" ] ||
	fail "$(grep -c . <<< "$pages") man pages installed, not $want"
for p in hmr_info hmr_domain_open hmr_verbs_device_count hmr_verbs_reg_path; do
	page=$(man -w "$p") || fail "man -w $p finds no page"
	[[ $page == /usr/share/man/*.gz ]] || fail "man -w $p: $page"
	gzip -t "$(readlink -f "$page")"
done

echo "=== hmr_info"
hmr_info
json=$(hmr_info --json)
grep -q "\"version\": \"hmr $version\"" <<< "$json" ||
	fail "hmr_info --json does not report hmr $version"

# The shipped examples are the samples; all build with find_package(hmr)
# alone, the host ones with pkg-config too, and run from /usr's library.
echo "=== samples against the installed packages"
diff -r "$root/samples" "/usr/share/doc/libhmr-dev/examples"
cmake -S "$root/samples" -B "$work/samples" -DCMAKE_C_FLAGS=-Werror \
	> "$work/samples.log" 2>&1 ||
	{ cat "$work/samples.log"; fail "samples: configure failed"; }
cmake --build "$work/samples" -j"$jobs" >> "$work/samples.log" 2>&1 ||
	{ cat "$work/samples.log"; fail "samples: build failed"; }
for s in register_host host_threads; do
	# shellcheck disable=SC2046 # pkg-config's flags are words.
	cc -std=c11 -Wall -Werror -o "$work/$s.pc" "$root/samples/host/$s.c" \
		$(pkg-config --cflags --libs hmr) -pthread
	for exe in "$work/samples/$s" "$work/$s.pc"; do
		used=$(ldd "$exe" | sed -n 's/.*libhmr\.so.* => \(.*\) (.*/\1/p')
		[ "$(readlink -f "$used")" = "$(readlink -f "$lib")" ] ||
			fail "$exe uses ${used:-no libhmr}, not $lib"
		echo "--- $exe"
		"$exe" | tee "$work/out"
	done
done
grep -q 'now says "hello from the writer' "$work/out" ||
	fail "host_threads wrote nothing"

remove_packages || fail "dpkg -r or --purge failed, or left something"
for pkg in "${pkgs[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2> /dev/null || true)
	[ -z "$status" ] || [[ $status == *not-installed ]] ||
		fail "$pkg is still known to dpkg: $status"
done
echo "check-deb: ${pkgs[*]} built, installed, used and removed"
