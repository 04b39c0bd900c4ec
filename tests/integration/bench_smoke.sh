#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# bench_smoke.sh - `make bench` still runs: every benchmark program loads,
# passes the verifier and returns XDP_PASS under BPF_PROG_TEST_RUN, the
# daemon figures are printed, and bad options are refused.  A tiny run
# (1000 packets, one round): the figures are not checked, timing belongs to
# `make bench` alone; only that each figure is there and is a number.
# Output: TAP ("ok N - ..."), diagnostics as "# ..." lines.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/netns.sh

BENCH=build/tools/fs-bench
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1))
	echo "not ok $n - $1"
	sed 's/^/# stdout: /' "$T/out" | head -40
	sed 's/^/# stderr: /' "$T/err" | head -10
	return 0
}
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
run() { "$BENCH" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
# figure LABEL: the line starting with LABEL gives ns/packet and the net of
# the driver (which a tiny run can make negative: noise, not an error).
figure() { grep -qE "^  $1 +[0-9]+\.[0-9] +(-?[0-9]+\.[0-9]|-)\$" "$T/out"; }

fs_require_root
fs_bpffs_mount
if [ ! -x "$BENCH" ]; then
	echo "not ok 1 - $BENCH is built (run make)"
	echo "1..1"
	exit 1
fi

for depth in 5 1; do
	run --repeat 1000 --rounds 1 --candidates 100 --depth "$depth"
	check "fs-bench --depth $depth runs to the end" [ "$rc" -eq 0 ]
	for label in "driver baseline" "parse only" "full datapath" \
		"naive \(FNV-1a/row\)" "floor \(cells only\)"; do
		check "depth $depth: a figure for ${label//\\/}" figure "$label"
	done
	check "depth $depth: the floor is named with its depth" \
		grep -qF "(d = $depth rows, 3 registers)" "$T/out"
	check "depth $depth: the daemon's rotation is timed" \
		grep -qE "rotation / memcpy +[0-9.]+x" "$T/out"
done

for bad in "--depth 0" "--depth 9" "--repeat x" "--bogus"; do
	# shellcheck disable=SC2086
	run $bad
	check "fs-bench $bad: exit 2, one line on stderr, nothing on stdout" \
		[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -s "$T/out" ]
done

echo "1..$n"
[ "$failed" -eq 0 ]
