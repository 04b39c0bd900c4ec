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
# the full one with the detection sketches too, then the bursty phase on
# three veth pairs, about 15 s), held to the same rules by
# bench_check.py --live (issue 20's detection rows and verdict included), and checked to leave no namespace
# behind; the same for the tracepoint frontends
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

# live DESC ARG...: bench/live.sh ARG... exits 0, silent on stderr, and
# leaves none of its namespaces, named after its own pid: not anyone
# else's benchmark running meanwhile.
live() {
	local what=$1 pid rc left; shift
	bash bench/live.sh "$@" >"$T/out" 2>"$T/err" &
	pid=$!
	wait "$pid"
	rc=$?
	check "$what exits 0" [ "$rc" -eq 0 ]
	check "$what writes nothing on stderr" [ ! -s "$T/err" ]
	left=$(ip netns list | grep -c -e "^fsb-tx-$pid\b" -e "^fsb-rx-$pid\b")
	check "$what leaves no namespace behind ($left of fsb-{tx,rx}-$pid left)" \
		[ "$left" -eq 0 ]
}

# Live: one round, tiny phases, 100 ms windows so the full program closes
# several of them; bursts of 1000 packets on the three pairs, 0.1 s apart.
live bench/live.sh --rounds 1 --steady 0.4 --quiet 0.3 --burst 2000 \
	--window 100 --flows 10000 --ab-pairs 2 --ab-seconds 0.05 \
	--sample-ab-pairs 4 --sample-ab-seconds 0.01 \
	--bursty-cycles 1 --bursty-burst 1000 --bursty-load 0.1
claims --live 1 2000 5 1 1000

# The tracepoint frontends: one round, short phases, 100 ms windows.
live "bench/live.sh --tracepoints" --tracepoints --rounds 1 --steady 0.2 \
	--window 100 --flows 10000
claims --tp 1

# refused TOOL NAME BAD...: each BAD option set: exit 2, nothing on stdout,
# one line on stderr naming the option ("--rounds 1": the interfaces).
refused() {
	local tool=$1 name=$2 bad rc; shift 2
	for bad in "$@"; do
		# shellcheck disable=SC2086
		"$tool" $bad >"$T/out" 2>"$T/err"; rc=$?
		check "$name $bad: exit 2 (got $rc)" [ "$rc" -eq 2 ]
		check "$name $bad: one line on stderr" [ "$(wc -l <"$T/err")" -eq 1 ]
		if [ "$bad" = "--rounds 1" ]; then
			check "$name without interfaces: the line names them" \
				grep -qF -- "--rx-netns" "$T/err"
		else
			check "$name $bad: the line names the option" \
				grep -qF -- "${bad%% *}" "$T/err"
		fi
		check "$name $bad: nothing on stdout" [ ! -s "$T/out" ]
	done
}
refused build/tools/fs-tpbench fs-tpbench "--rounds 0" "--steady x" "--rounds 1.5" \
	"--bogus" "--rounds 1"
IFACES="--rx-netns n --rx-iface r --tx-netns n --tx-iface t"
refused build/tools/fs-livebench fs-livebench "--rounds 0" "--burst x" "--ab-pairs 65" \
	"--ab-seconds 0" "--bogus" "--rounds 1" "--bursty-cycles 11" "--bursty-burst 0" \
	"--bursty-load -1" "--bursty-flows 0" "--pair lb-tx1" "--pair :lb-rx1" \
	"--pair lb-tx1:" "--pair a:b:c" "--pair a-name-too-long-for-an-interface:b" \
	"--pair a:b --pair c:d --pair e:f $IFACES" "--pair a:b $IFACES" \
	"--detect-prefix 5,10,0" "--detect-prefix 2,10" "--detect-spread 2,9,16" \
	"--detect-spread x" "--sample-ab-pairs 257" "--sample-ab-seconds 0"
refused "$BENCH" fs-bench "--depth 0" "--depth 9" "--repeat x" "--bogus" \
	"--detect-prefix 2,3,0" "--detect-prefix 2,10,9" "--detect-spread 2,9,3,1" \
	"--detect-spread -2,9,3"

finish
