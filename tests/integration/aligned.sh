#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# aligned.sh - windows end on wall-clock multiples of their length, so that
# two hosts' spans cover the same time (issue 11: fleet merges).
#
# Two daemons with 3-second windows, each on its own veth pair, started
# 1.2 s past a multiple of 3 s and 1.3 s apart: windows timed from each
# start would end ~1.4 s (plus the load time) and ~2.7 s past a multiple.
# Checked, from the answers' window_start_ns / window_end_ns (wall clock,
# ns): each daemon's last window ends within LATE of a multiple of 3 s and,
# being a whole window, starts within LATE of the one before; both daemons'
# last windows end within LATE of each other.  LATE (300 ms) is what a
# rotation may run after its boundary on a loaded machine.  Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

LATE_NS=300000000
PERIOD_NS=3000000000

# Sleep until the wall clock is OFFSET_NS past a multiple of the period.
sleep_to_offset() {
	local now
	now=$(date +%s%N)
	awk -v n="$now" -v p="$PERIOD_NS" -v o="$1" 'BEGIN {
		d = (o - n % p + p) % p; printf "%.3f\n", d / 1e9 }' | xargs sleep
}
# off NS: how far NS is past the nearest multiple of the period before it
off() { echo $(($1 % PERIOD_NS)); }

# two_windows NAME: daemon NAME has finished two windows.
two_windows() {
	local n
	n=$(fsd_as "$1" cli status --json 2>/dev/null | jq -r .counters.windows_finished)
	[ "${n:-0}" -ge 2 ] 2>/dev/null
}

fs_test al
fs_test_pair
FS_NAMESPACES+=("$NS_TX-b" "$NS_RX-b")
fs_pair_create "$NS_TX-b" "$NS_RX-b" "${VETH_TX}b" "${VETH_RX}b" || bail "namespaces and veth pairs"
fsd_daemon a "$NS_RX" "$VETH_RX"
fsd_daemon b "$NS_RX-b" "${VETH_RX}b"

sleep_to_offset 1200000000
fsd_as a fsd_launch --window 3
sleep 1.3
fsd_as b fsd_launch --window 3

# Until each has finished two windows: the second is a whole one.
fs_until 120 two_windows a && fs_until 120 two_windows b || bail "both daemons closed two windows"
fsd_as a cli flows --json >"$WORK/a.json" &&
	fsd_as b cli flows --json >"$WORK/b.json" || bail "both answer flows"
ae=$(jq .window_end_ns "$WORK/a.json"); as=$(jq .window_start_ns "$WORK/a.json")
be=$(jq .window_end_ns "$WORK/b.json"); bs=$(jq .window_start_ns "$WORK/b.json")
echo "# a: window $as .. $ae ($(off "$as"), $(off "$ae") ns past a multiple); b: $bs .. $be ($(off "$bs"), $(off "$be"))"
check "daemon a's last window ends on a multiple of 3 s (+$(( $(off "$ae") / 1000000 )) ms)" [ "$(off "$ae")" -lt $LATE_NS ]
check "... and starts on the one before (+$(( $(off "$as") / 1000000 )) ms)" \
	[ "$(off "$as")" -lt $LATE_NS -a $((ae - as)) -gt $((PERIOD_NS - LATE_NS)) ]
check "daemon b's, started 1.3 s later, too (+$(( $(off "$be") / 1000000 )) ms)" [ "$(off "$be")" -lt $LATE_NS ]
d=$((ae > be ? ae - be : be - ae))
check "both daemons' last windows end together (within $((d / 1000000)) ms)" [ "$d" -lt $LATE_NS ]
finish
