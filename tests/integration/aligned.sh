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
. scripts/netns.sh
. scripts/tap.sh

ID=$$
FSD=build/flowsketchd
CLI=build/flowsketch
WORK=""
LATE_NS=300000000
PERIOD_NS=3000000000
A_PID=""
B_PID=""

cleanup() {
	local x

	fs_daemon_stop "$A_PID"
	fs_daemon_stop "$B_PID"
	for x in a b; do
		pkill -KILL -f -- "--pin-dir /sys/fs/bpf/fs-al-$x-$ID( |\$)" 2>/dev/null
		fs_pair_destroy "fs-al-${x}tx-$ID" "fs-al-${x}rx-$ID"
		rm -rf "/sys/fs/bpf/fs-al-$x-$ID"
	done
	[ -n "$WORK" ] && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Sleep until the wall clock is OFFSET_NS past a multiple of the period.
sleep_to_offset() {
	local now
	now=$(date +%s%N)
	awk -v n="$now" -v p="$PERIOD_NS" -v o="$1" 'BEGIN {
		d = (o - n % p + p) % p; printf "%.3f\n", d / 1e9 }' | xargs sleep
}
# off NS: how far NS is past the nearest multiple of the period before it
off() { echo $(($1 % PERIOD_NS)); }

fs_require_root
for b in "$FSD" "$CLI"; do
	[ -x "$b" ] || bail "$b is built (run make)"
done
fs_bpffs_mount || bail "bpffs is mounted"
WORK=$(mktemp -d /tmp/fs-al.XXXXXX) || bail "a work directory"
mkdir -p "$WORK/a" "$WORK/b"
fs_pair_create "fs-al-atx-$ID" "fs-al-arx-$ID" "fsalat$ID" "fsalar$ID" &&
	fs_pair_create "fs-al-btx-$ID" "fs-al-brx-$ID" "fsalbt$ID" "fsalbr$ID" ||
	bail "namespaces and veth pairs"

sleep_to_offset 1200000000
(exec nsenter --net="/run/netns/fs-al-arx-$ID" "$FSD" -i "fsalar$ID" --window 3 \
	--pin-dir "/sys/fs/bpf/fs-al-a-$ID" --state-dir "$WORK/a/state" \
	--socket "$WORK/a/sock" --blocklist "$WORK/a/blocklist" >>"$WORK/a/daemon.log" 2>&1) &
A_PID=$!
disown "$A_PID"	# stopped by cleanup(), without a job notice
sleep 1.3
WORK_B="$WORK/b"
(exec nsenter --net="/run/netns/fs-al-brx-$ID" "$FSD" -i "fsalbr$ID" --window 3 \
	--pin-dir "/sys/fs/bpf/fs-al-b-$ID" --state-dir "$WORK_B/state" \
	--socket "$WORK_B/sock" --blocklist "$WORK_B/blocklist" >>"$WORK_B/daemon.log" 2>&1) &
B_PID=$!
disown "$B_PID"

# Until each has finished two windows: the second is a whole one.
for _ in $(seq 120); do
	a=$("$CLI" --socket "$WORK/a/sock" status --json 2>/dev/null | jq -r .counters.windows_finished)
	b=$("$CLI" --socket "$WORK_B/sock" status --json 2>/dev/null | jq -r .counters.windows_finished)
	[ "${a:-0}" -ge 2 ] 2>/dev/null && [ "${b:-0}" -ge 2 ] 2>/dev/null && break
	sleep 0.1
done
[ "${a:-0}" -ge 2 ] 2>/dev/null && [ "${b:-0}" -ge 2 ] 2>/dev/null ||
	{ diag <"$WORK/a/daemon.log"; diag <"$WORK_B/daemon.log"; bail "both daemons closed two windows"; }
"$CLI" --socket "$WORK/a/sock" flows --json >"$WORK/a.json" &&
	"$CLI" --socket "$WORK_B/sock" flows --json >"$WORK/b.json" || bail "both answer flows"
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
