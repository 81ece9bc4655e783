#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# mutate.sh: mutation testing of core/, hmem/ and base/ against the suite.
#   Applies each mutant of the list (a small edit of one source line) alone,
#   rebuilds one build directory incrementally, runs the tests of these
#   layers (the labels below), and reports per mutant whether a test
#   failed (killed) or none did (survived), then the score:
#   killed / (mutants not marked equivalent).  The tree is restored after
#   each mutant and on any exit; a tree with changes is refused.
# Usage: scripts/mutate.sh [-n] [-b build-dir] [-j jobs] [-l list] [name...]
#   -n  only check that every mutant applies (no build, no tests)
#   name...  run only these mutants (shell patterns: 'core-access-*')
# Environment: MUTATE_CTEST_ARGS replaces the test selection
#   (default: -L 'core|unit|cuda|model|fuzz': the software domain, the
#   internal units, the CUDA backend on its simulator, the model-checked
#   and fuzz regression tests; not the VM, the benchmarks, the other
#   backends or Python).
# The list's format is described at the top of tests/mutants/mutants.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build="build-mutate"
jobs=2
list=tests/mutants/mutants.txt
dry=0
while getopts "nb:j:l:" opt; do
	case $opt in
	n) dry=1 ;;
	b) build=$OPTARG ;;
	j) jobs=$OPTARG ;;
	l) list=$OPTARG ;;
	*) sed -n '2,16p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
select_args=("$@")
read -r -a ctest_sel <<< "${MUTATE_CTEST_ARGS:--L core|unit|cuda|model|fuzz}"


# --- The list -------------------------------------------------------------
names=() files=() finds=() repls=() nths=() equivs=()
add_mutant() {
	[ -n "$name" ] || return 0
	if [ -z "$file" ] || [ -z "$find" ] || [ "$has_repl" = 0 ]; then
		echo "mutate.sh: $list: [$name] needs file:, find: and replace:" >&2
		exit 2
	fi
	names+=("$name") files+=("$file") finds+=("$find") repls+=("$repl")
	nths+=("$nth") equivs+=("$equiv")
}
name='' file='' find='' repl='' nth='' equiv='' has_repl=0
while IFS= read -r line || [ -n "$line" ]; do
	case $line in
	'#'* | '') ;;
	'['*']')
		add_mutant
		name=${line#[}
		name=${name%]}
		file='' find='' repl='' nth='' equiv='' has_repl=0
		;;
	'file: '*) file=${line#file: } ;;
	'find: '*) find=${line#find: } ;;
	'replace:'*) repl=${line#replace:} repl=${repl# } has_repl=1 ;;
	'nth: '*) nth=${line#nth: } ;;
	'equivalent: '*) equiv=${line#equivalent: } ;;
	*) echo "mutate.sh: $list: cannot read: $line" >&2; exit 2 ;;
	esac
done < "$list"
add_mutant

# apply <index> <in> <out>: the mutated text of <in> into <out>; fails
# unless `find` occurs exactly once (or at least nth times with nth:).
apply() {
	FIND=${finds[$1]} REPL=${repls[$1]} NTH=${nths[$1]:-0} awk '
	BEGIN { f = ENVIRON["FIND"]; r = ENVIRON["REPL"]
		nth = ENVIRON["NTH"] + 0; n = 0 }
	{
		out = ""; rest = $0
		while ((i = index(rest, f)) > 0) {
			n++
			if (n == (nth ? nth : 1))
				out = out substr(rest, 1, i - 1) r
			else
				out = out substr(rest, 1, i - 1 + length(f))
			rest = substr(rest, i + length(f))
		}
		print out rest
	}
	END {
		if ((!nth && n != 1) || n < nth) {
			printf "found %d times\n", n > "/dev/stderr"
			exit 3
		}
	}' "$2" > "$3"
}

chosen=()
for i in "${!names[@]}"; do
	if [ ${#select_args[@]} -gt 0 ]; then
		hit=0
		for pat in "${select_args[@]}"; do
			# shellcheck disable=SC2053
			[[ ${names[$i]} == $pat ]] && hit=1
		done
		[ $hit = 1 ] || continue
	fi
	chosen+=("$i")
done
[ ${#chosen[@]} -gt 0 ] || { echo "mutate.sh: no mutant selected" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
for i in "${chosen[@]}"; do
	f=${files[$i]}
	if [ ! -f "$f" ] || ! apply "$i" "$f" "$tmp/check" 2> "$tmp/err" ||
		cmp -s "$f" "$tmp/check"; then
		echo "mutate.sh: [${names[$i]}] does not apply to $f:" \
			"$(cat "$tmp/err" 2>/dev/null)" >&2
		bad=1
	fi
done
[ $bad = 0 ] || exit 2
echo "mutate.sh: ${#chosen[@]} mutants apply"
[ $dry = 0 ] || exit 0
# Restoring puts back what was there: only a committed tree is safe.
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "mutate.sh: the tree has changes; commit or stash them first:" >&2
	git status --short --untracked-files=no >&2
	exit 2
fi

# --- The run --------------------------------------------------------------
current='' # The file under mutation, restored by restore().
restore() {
	if [ -n "$current" ]; then
		cp "$tmp/orig" "$current"
		current=''
	fi
}
trap 'restore; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

start=$SECONDS
log=$root/$build/mutate.log
mkdir -p "$build"
: > "$log"

build_it() {
	cmake --build "$build" -j"$jobs" >> "$log" 2>&1
}
test_it() {
	# The first failure decides: --stop-on-failure ends the run there.
	rm -f "$build/Testing/Temporary/LastTestsFailed.log"
	(cd "$build" && timeout 900 ctest -j"$jobs" --stop-on-failure \
		--timeout 120 "${ctest_sel[@]}") >> "$log" 2>&1
}
first_failed() {
	local f="$build/Testing/Temporary/LastTestsFailed.log"
	if [ -s "$f" ]; then
		head -n1 "$f" | cut -d: -f2-
	else
		echo "ctest"
	fi
}

echo "=== baseline: configure, build, test ($build, -j$jobs)"
# Ninja where there is one (a new build directory only); executables are
# not relinked when only libhmr.so changed (its interface does not).
gen=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja > /dev/null; then
	gen=(-G Ninja)
fi
cmake -S . -B "$build" "${gen[@]}" -DCMAKE_LINK_DEPENDS_NO_SHARED=ON \
	>> "$log" 2>&1 || { tail -n 30 "$log"; exit 1; }
if ! build_it || ! test_it; then
	echo "mutate.sh: the unmutated tree does not build or pass; see $log" >&2
	exit 1
fi
echo "=== baseline passed in $((SECONDS - start)) s"

declare -A total killed
results=()
survivors=0 nobuild=0 wrong_equiv=0
for i in "${chosen[@]}"; do
	n=${names[$i]} f=${files[$i]} t0=$SECONDS
	area=${f%%/*}
	echo "--- [$n] $f" >> "$log"
	cp "$f" "$tmp/orig"
	current=$f
	apply "$i" "$tmp/orig" "$f"
	if ! build_it; then
		status=NOBUILD by=''
		nobuild=$((nobuild + 1))
	elif test_it; then
		status=SURVIVED by=''
	else
		status=KILLED by=$(first_failed)
	fi
	restore
	if [ -n "${equivs[$i]}" ]; then
		if [ $status = KILLED ]; then
			status=KILLED-BUT-MARKED-EQUIVALENT
			wrong_equiv=$((wrong_equiv + 1))
		else
			status=EQUIVALENT
		fi
	else
		total[$area]=$((${total[$area]:-0} + 1))
		if [ $status = KILLED ]; then
			killed[$area]=$((${killed[$area]:-0} + 1))
		elif [ $status = SURVIVED ]; then
			survivors=$((survivors + 1))
		fi
	fi
	line=$(printf '%-10s %-44s %4ss %s' "$status" "$n" \
		$((SECONDS - t0)) "${by:+by $by}")
	echo "$line"
	results+=("$line")
done
if ! git diff --quiet; then
	echo "mutate.sh: the tree was not restored!" >&2
	exit 1
fi

all_k=0 all_t=0
for area in "${!total[@]}"; do
	all_k=$((all_k + ${killed[$area]:-0})) all_t=$((all_t + total[$area]))
done
{
	echo "=== mutants: ${#chosen[@]} in $((SECONDS - start)) s" \
		"(build dir $build, log $log)"
	for area in "${!total[@]}"; do
		k=${killed[$area]:-0} t=${total[$area]}
		echo "$area/: $k of $t killed ($((100 * k / t))%)"
	done | sort
	if [ $all_t -gt 0 ]; then
		echo "score: $all_k of $all_t killed ($((100 * all_k / all_t))%)," \
			"equivalent mutants not counted"
	fi
} | tee "$build/mutate-report.txt"
printf '%s\n' "${results[@]}" >> "$build/mutate-report.txt"
[ $survivors = 0 ] && [ $nobuild = 0 ] && [ $wrong_equiv = 0 ]
