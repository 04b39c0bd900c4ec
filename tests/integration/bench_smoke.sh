#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# bench_smoke.sh - `make bench` still runs: every benchmark program loads,
# passes the verifier and returns XDP_PASS under BPF_PROG_TEST_RUN, the
# daemon figures are printed, and bad options are refused.  A tiny run
# (1000 packets, one round): timing belongs to `make bench` alone, so no
# figure is held to a value, but every line the report promises must be
# there, every time positive, every net figure, ratio, rate, share and
# verdict must follow from the printed figures, and the memory lines from
# the parameters (bench_check.py).  Then a very short live run
# (bench/live.sh: namespaces of its own, every program attached in turn,
# about 5 s), held to the same rules by bench_check.py --live, and checked
# to leave no namespace behind; the same for the tracepoint frontends
# (bench/live.sh --tracepoints, fs-tpbench: every egress and ingress
# program attached in turn, about 3 s; bench_check.py --tp).
# Output: TAP ("ok N - ..."), diagnostics as "# ..." lines.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/netns.sh
. scripts/tap.sh

BENCH=build/tools/fs-bench
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# A failed check shows the run's output; a failed claim (claims, whose
# local in_claims this sees) says why instead.
tap_on_not_ok() {
	[ -n "${in_claims:-}" ] && return 0
	sed 's/^/# stdout: /' "$T/out" | head -40
	sed 's/^/# stderr: /' "$T/err" | head -10
}
run() { "$BENCH" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
# claims [--live|--tp] ARG...: every claim of the report in $T/out, from
# its own figures and the parameters ARG (tests/integration/bench_check.py):
# one TAP line each, a failed one saying why.
claims() {
	local verdict what why mode="" in_claims=1
	[[ $1 == --* ]] && { mode=" $1"; shift; }
	while IFS=$'\t' read -r verdict what why; do
		if [ "$verdict" = PASS ]; then
			ok "$what"
		else
			not_ok "$what"
			echo "# $why"
		fi
	done < <(python3 tests/integration/bench_check.py $mode "$T/out" "$@" 2>&1 ||
		 printf 'FAIL\tbench_check.py%s ran to the end\t\n' "$mode")
}

fs_require_root
fs_bpffs_mount
[ -x "$BENCH" ] || bail "$BENCH is built (run make)"

for depth in 5 1; do
	run --repeat 1000 --rounds 1 --candidates 100 --depth "$depth"
	check "fs-bench --depth $depth exits 0" [ "$rc" -eq 0 ]
	check "fs-bench --depth $depth writes nothing on stderr" [ ! -s "$T/err" ]
	claims "$depth"
done

# Live: one round, tiny phases, 100 ms windows so the full program closes
# several of them.
# live.sh names its namespaces after its own pid: look for exactly those,
# not for anyone else's benchmark running meanwhile.
bash bench/live.sh --rounds 1 --steady 0.4 --quiet 0.3 --burst 2000 \
	--window 100 --flows 10000 --ab-pairs 2 --ab-seconds 0.05 >"$T/out" 2>"$T/err" &
live_pid=$!
wait "$live_pid"
rc=$?
check "bench/live.sh exits 0" [ "$rc" -eq 0 ]
check "bench/live.sh writes nothing on stderr" [ ! -s "$T/err" ]
left=$(ip netns list | grep -c -e "^fsb-tx-$live_pid\b" -e "^fsb-rx-$live_pid\b")
check "bench/live.sh leaves no namespace behind ($left of fsb-{tx,rx}-$live_pid left)" \
	[ "$left" -eq 0 ]
claims --live 1 2000 5

# The tracepoint frontends: one round, short phases, 100 ms windows.
bash bench/live.sh --tracepoints --rounds 1 --steady 0.2 --window 100 \
	--flows 10000 >"$T/out" 2>"$T/err" &
tp_pid=$!
wait "$tp_pid"
rc=$?
check "bench/live.sh --tracepoints exits 0" [ "$rc" -eq 0 ]
check "bench/live.sh --tracepoints writes nothing on stderr" [ ! -s "$T/err" ]
left=$(ip netns list | grep -c -e "^fsb-tx-$tp_pid\b" -e "^fsb-rx-$tp_pid\b")
check "bench/live.sh --tracepoints leaves no namespace behind ($left of fsb-{tx,rx}-$tp_pid left)" \
	[ "$left" -eq 0 ]
claims --tp 1

TPB=build/tools/fs-tpbench
for bad in "--rounds 0" "--steady x" "--rounds 1.5" "--bogus" "--rounds 1"; do
	# shellcheck disable=SC2086
	"$TPB" $bad >"$T/out" 2>"$T/err"; rc=$?
	check "fs-tpbench $bad: exit 2 (got $rc)" [ "$rc" -eq 2 ]
	check "fs-tpbench $bad: one line on stderr" [ "$(wc -l <"$T/err")" -eq 1 ]
	if [ "$bad" = "--rounds 1" ]; then
		check "fs-tpbench without interfaces: the line names them" \
			grep -qF -- "--rx-netns" "$T/err"
	else
		check "fs-tpbench $bad: the line names the option" \
			grep -qF -- "${bad%% *}" "$T/err"
	fi
	check "fs-tpbench $bad: nothing on stdout" [ ! -s "$T/out" ]
done

LIVE=build/tools/fs-livebench
for bad in "--rounds 0" "--burst x" "--ab-pairs 65" "--ab-seconds 0" "--bogus" "--rounds 1"; do
	# shellcheck disable=SC2086
	"$LIVE" $bad >"$T/out" 2>"$T/err"; rc=$?
	check "fs-livebench $bad: exit 2 (got $rc)" [ "$rc" -eq 2 ]
	check "fs-livebench $bad: one line on stderr" [ "$(wc -l <"$T/err")" -eq 1 ]
	if [ "$bad" = "--rounds 1" ]; then
		check "fs-livebench without interfaces: the line names them" \
			grep -qF -- "--rx-netns" "$T/err"
	else
		check "fs-livebench $bad: the line names the option" \
			grep -qF -- "${bad%% *}" "$T/err"
	fi
	check "fs-livebench $bad: nothing on stdout" [ ! -s "$T/out" ]
done

for bad in "--depth 0" "--depth 9" "--repeat x" "--bogus"; do
	# shellcheck disable=SC2086
	run $bad
	check "fs-bench $bad: exit 2 (got $rc)" [ "$rc" -eq 2 ]
	check "fs-bench $bad: one line on stderr" [ "$(wc -l <"$T/err")" -eq 1 ]
	check "fs-bench $bad: the line names the option" \
		grep -qF -- "${bad%% *}" "$T/err"
	check "fs-bench $bad: nothing on stdout" [ ! -s "$T/out" ]
done

finish
