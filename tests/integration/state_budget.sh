#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# state_budget.sh - a flood of distinct flows in both directions cannot fill
# the state directory: every history's files together stay within
# --state-max, or within the file system's room, by giving up the oldest
# windows of all histories first, never by failing a rotation.
#
#   NS_TX [fs-gen IN, distinct flows] --veth--> NS_RX [XDP + egress + conn]
#   NS_TX             <--veth-- NS_RX [fs-gen OUT, distinct flows]
#
# The state directory is a small tmpfs mounted in the test's work
# directory, so the limits are reached in seconds.  --hh-fraction 1e-6
# makes every flow a heavy-hitter candidate, as a flood of spoofed sources
# (and the host's replies to it) does at the defaults.  Oracles are the
# test's own: du of the directory, the window files it lists and their
# end times read from each file's header (winstore.h: u64 at byte 72),
# statvfs of the tmpfs (stat -f), fs-gen's truth; then the daemon's
# counters under test.
#   1. --state-max 5M on a 24 MiB tmpfs: after every window du <= 5 MiB;
#      files go oldest first across the three histories (every file gone
#      ended before every file kept); no window lost or unstored, windows
#      keep finishing; status (state_budget, windows_evicted) and /metrics
#      (flowsketch_state_windows_evicted_total, flowsketch_state_bytes,
#      flowsketch_state_max_bytes) count it; a warning is logged; spans
#      answer over the windows kept, with the generators' flows.
#   2. --state-max 1G on a 10 MiB tmpfs: the file system's room, not the
#      budget, is the limit: windows are evicted for room, none lost or
#      kept in memory only, rotations go on.
#   3. No --state-max: the budget is a quarter of the file system.
#   4. Bad --state-max values are refused with one message.
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

PORT=$((20000 + ID % 20000))
GEN_PIDS=""

test_cleanup() {
	local p
	for p in $GEN_PIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
}

# One wide row: a window's file is 260 KiB plus 48 bytes a candidate, and
# the flags that stop a flow being reported twice (cms.h) leave most of the
# flood's new flows reportable; candidates are what fills the directory.
SIZES=(--width 16384 --depth 1 --precision 8 --hh-fraction 0.000001 --history 300)
start() {
	fsd_start --metrics "127.0.0.1:$PORT" "${SIZES[@]}" "$@"
}
mount_state() { # SIZE
	mkdir -p "$WORK/state" &&
		mount -t tmpfs -o "size=$1,mode=0700" tmpfs "$WORK/state"
}

fs_test sb "$GEN"
fs_test_pair

# ------------------------------------------------------------ 4. bad values
for bad in 5X 0 -1 1.5G 12MB7 "" 99999999999999999999 100K; do
	out=$(fsd_run "${SIZES[@]}" --state-max "$bad" 2>&1 </dev/null)
	rc=$?
	lines=$(printf '%s\n' "$out" | wc -l)
	named=0; [[ "$out" == *--state-max* ]] && named=1
	check "--state-max '$bad' refused: exit 1, one line naming the option ($out)" \
		[ "$rc" = 1 -a "$lines" = 1 -a "$named" = 1 ]
done
check "nothing pinned by the refused starts" [ ! -e "$PIN_DIR" ]

# ------------------------------------------------------------ traffic
# send DIR SECONDS SEED: distinct flows (uniform, no repeats worth the
# name) at 15000 packets/s, in (to the counted veth) or out (from it).
send() {
	"gen_$1" --flows 400000 --zipf 0 --rate 15000 --duration "$2" --seed "$3" \
		--truth "$WORK/$1-$3.json"
}
flood() { # SECONDS SEED
	GEN_PIDS=""
	send in "$1" "$2" & GEN_PIDS="$!"
	send out "$1" "$(($2 + 1))" & GEN_PIDS="$GEN_PIDS $!"
}
flood_running() {
	local p
	for p in $GEN_PIDS; do kill -0 "$p" 2>/dev/null && return 0; done
	return 1
}

# Window files now: "END_NS PATH" a line, END_NS from the file's header.
list_windows() {
	local f
	find "$WORK/state" -name 'window-[0-9]*' ! -name '*.tmp' -type f 2>/dev/null |
	while read -r f; do
		printf '%s %s\n' "$(od -An -t u8 -j 72 -N 8 "$f" 2>/dev/null | tr -d ' ')" "$f"
	done | awk 'NF == 2 && $1 != ""' | sort -n
}

windows_done() { jq '[.counters.windows_finished, (.frontends[] | select(.windows_finished) | .windows_finished)] | min' "$WORK/st.json"; }

# watch_flood LIMIT: after every window until the generators are done,
# du of the state directory (at most LIMIT bytes; violations in
# $WORK/watch.bad, the largest in $WORK/du.max) and the window files
# there (all ever seen in $WORK/seen).
watch_flood() {
	local limit=$1 n0 n n_start du max=0
	: >"$WORK/watch.bad"; : >"$WORK/seen"; rm -f "$WORK/top-in.json"
	cli status --json >"$WORK/st.json" || return 1
	n0=$(windows_done)
	n_start=$n0
	while flood_running; do
		cli status --json >"$WORK/st.json" 2>/dev/null || { echo "status failed" >>"$WORK/watch.bad"; sleep 0.1; continue; }
		n=$(windows_done)
		if [ "$n" = "$n0" ]; then sleep 0.05; continue; fi
		n0=$n
		du=$(du -sB1 "$WORK/state" | cut -f1)
		[ "$du" -gt "$max" ] && max=$du
		[ "$du" -le "$limit" ] || echo "window $n: du $du > $limit" >>"$WORK/watch.bad"
		list_windows >>"$WORK/seen"
		if [ $((n - n_start)) -ge 8 ] && [ ! -s "$WORK/top-in.json" ]; then
			cli top --span 300 -n 5 --direction in --json >"$WORK/top-in.json"
			cli top --span 300 -n 5 --direction out --json >"$WORK/top-out.json"
			cli status --json >"$WORK/st-flood.json"
		fi
	done
	sort -u "$WORK/seen" -o "$WORK/seen"
	echo "$max" >"$WORK/du.max"
}

# oldest_first: once the flood is over (nothing is journaled any more, so
# windows are evicted only as a rotation stores a new one), the files
# listed between two rotations: every file seen during the flood and gone
# now ended before every file still there.  Gone ones in $WORK/gone.
oldest_first() {
	local n0 kept_min gone_max
	for _ in 1 2 3 4 5; do
		fsd_settle egress conn || return 1
		n0=$(windows_done)
		list_windows >"$WORK/now"
		cli top --span 300 -n 5 --direction in --json >"$WORK/top-quiet.json" || return 1
		cli status --json >"$WORK/st.json" || return 1
		[ "$(windows_done)" = "$n0" ] && break
	done
	join -v1 -1 2 -2 2 <(sort -k2,2 "$WORK/seen") <(sort -k2,2 "$WORK/now") |
		awk '{print $2, $1}' | sort -n >"$WORK/gone"
	kept_min=$(head -1 "$WORK/now" | cut -d' ' -f1)
	gone_max=$(tail -1 "$WORK/gone" | cut -d' ' -f1)
	echo "# $(wc -l <"$WORK/gone") files gone, the newest ended at ${gone_max:-none}; $(wc -l <"$WORK/now") kept, the oldest ended at ${kept_min:-none}"
	[ -s "$WORK/gone" ] && [ -n "$kept_min" ] && [ "$gone_max" -lt "$kept_min" ]
}

metric() { # NAME: the sum of its series on the page
	fs_in "$NS_RX" curl -s --max-time 5 "http://127.0.0.1:$PORT/metrics" | awk -v n="$1" '$1 == n || index($1, n "{") == 1 { s += $2; f = 1 } END { if (f) printf "%.0f\n", s }'
}

# ------------------------------------------------------------ 1. the budget
BUDGET=$((5 * 1024 * 1024))
mount_state 24m || bail "a 24 MiB tmpfs for the state directory"
start --state-max 5M || bail "flowsketchd answers status"
ok "flowsketchd with --state-max 5M on a 24 MiB tmpfs answers status"
check "status: state_budget.max_bytes is 5 MiB" jqe ".state_budget.max_bytes == $BUDGET" "$WORK/st.json"
flood 14 100
watch_flood "$BUDGET" || bail "status during the flood"
for p in $GEN_PIDS; do wait "$p"; done
GEN_PIDS=""
# Spans over the windows kept, in the flood (watch_flood): the history no
# longer reaches its first windows, but what it keeps answers, with its
# flows.
check "top --span 300 (in), 8 windows into the flood, sums the windows kept ($(jq .windows "$WORK/top-in.json") of $(jq .windows_kept "$WORK/st-flood.json")), fewer than the windows finished" \
	jqe --slurpfile st "$WORK/st-flood.json" \
		'.windows >= 1 and .windows <= $st[0].windows_kept + 1 and .windows < $st[0].counters.windows_finished' "$WORK/top-in.json"
sent_flow() { # TOP TRUTH: every flow listed is one fs-gen sent that way
	jq -rn --slurpfile top "$1" --slurpfile t "$2" \
		'($t[0].flows | map({("\(.src) \(.dst) \(.sport) \(.dport)"): 1}) | add) as $s |
		 $top[0].flows | length > 0 and all(.[]; $s["\(.src) \(.dst) \(.sport) \(.dport)"] == 1)' | grep -qx true
}
check "top --span (in) lists flows the IN generator sent" sent_flow "$WORK/top-in.json" "$WORK/in-100.json"
check "top --span (out) lists flows the OUT generator sent" sent_flow "$WORK/top-out.json" "$WORK/out-101.json"
check "du of the state directory stayed within 5 MiB after every window (largest $(cat "$WORK/du.max") B)" \
	[ ! -s "$WORK/watch.bad" ]
diag <"$WORK/watch.bad"
check "windows were given up, oldest first across the three histories: every file gone ended before every file kept" \
	oldest_first
# Header fields of winstore.h: window packets at byte 80.
in_files_packets() {
	local f sum=0 n=0
	while read -r _ f; do
		[ "$(dirname "$f")" = "$WORK/state" ] || continue
		sum=$((sum + $(od -An -t u8 -j 80 -N 8 "$f" | tr -d ' ')))
		n=$((n + 1))
	done <"$WORK/now"
	echo "$n $sum"
}
read -r IN_N IN_SUM < <(in_files_packets)
check "a span over the ingress windows kept sums exactly their files ($IN_N windows, $IN_SUM packets; top: $(jq -c '[.windows, .total_packets]' "$WORK/top-quiet.json"))" \
	jqe --argjson n "$IN_N" --argjson p "$IN_SUM" '.windows == $n and .total_packets == $p' "$WORK/top-quiet.json"
# The flood filled candidate sets: without the budget the files would
# have passed it many times over.
check "the flood put candidates in both directions' windows ($(jq -c '[.counters.reports_filed, (.frontends[] | select(.name == "egress") | .reports)]' "$WORK/st.json"))" \
	jqe '.counters.reports_filed > 50000 and (.frontends[] | select(.name == "egress") | .reports > 50000)' "$WORK/st.json"
check "no window lost, none kept in memory only, in any frontend" \
	jqe '.counters.windows_lost == 0 and .windows_store_errors == 0 and ([.frontends[] | select(.windows_lost != null) | .windows_lost + .windows_store_errors] | add) == 0' "$WORK/st.json"
EV=$(jq .state_budget.windows_evicted "$WORK/st.json")
check "status: state_budget.windows_evicted ($EV) is the sum of the frontends' windows_evicted, and > 0" \
	jqe '.state_budget.windows_evicted > 0 and .state_budget.windows_evicted == .windows_evicted + ([.frontends[] | .windows_evicted // 0] | add)' "$WORK/st.json"
check "status: both directions gave up windows (in $(jq .windows_evicted "$WORK/st.json"), out $(fsd_front egress .windows_evicted))" \
	[ "$(jq .windows_evicted "$WORK/st.json")" -gt 0 -a "$(fsd_front egress .windows_evicted)" -gt 0 ]
check "status: used_bytes <= max_bytes ($(jq .state_budget.used_bytes "$WORK/st.json"))" \
	jqe '.state_budget.used_bytes <= .state_budget.max_bytes' "$WORK/st.json"
check "status: memory.history_bytes counts every frontend's history" \
	jqe '.memory.history_bytes >= ([.frontends[] | .history_bytes // 0] | add)' "$WORK/st.json"
M_EV=$(metric flowsketch_state_windows_evicted_total)
check "/metrics: flowsketch_state_windows_evicted_total ($M_EV) > 0" [ "${M_EV:-0}" -gt 0 ]
check "/metrics: flowsketch_state_max_bytes is the budget, flowsketch_state_bytes within it" \
	[ "$(metric flowsketch_state_max_bytes)" = "$BUDGET" -a "$(metric flowsketch_state_bytes)" -le "$BUDGET" ]
log=$(grep -c "windows evicted, oldest first" "$WORK/daemon.log")
check "a warning was logged, and rate limited ($log lines in a flood of many evictions)" \
	[ "$log" -ge 1 -a "$log" -le 2 ]
fsd_stop
umount "$WORK/state" || bail "the first tmpfs unmounted"

# ------------------------------------------------- 2. the file system first
mount_state 10m || bail "a 10 MiB tmpfs for the state directory"
start --state-max 1G || bail "flowsketchd answers status (2)"
ok "flowsketchd with --state-max 1G on a 10 MiB tmpfs answers status"
grep -q "less than the state budget" "$WORK/daemon.log"
check "it warns at start that the file system has less room than the budget" [ $? = 0 ]
flood 10 200
watch_flood $((10 * 1024 * 1024)) || bail "status during the second flood"
for p in $GEN_PIDS; do wait "$p"; done
GEN_PIDS=""
check "the state directory never passed the 10 MiB tmpfs (largest $(cat "$WORK/du.max") B)" \
	[ ! -s "$WORK/watch.bad" ]
diag <"$WORK/watch.bad"
check "windows were given up for room, oldest first across the three histories" oldest_first
check "status counts them as evicted for room ($(jq -c .state_budget "$WORK/st.json"))" \
	jqe '.state_budget.windows_evicted_for_room > 0 and .state_budget.windows_evicted_for_room == .state_budget.windows_evicted' "$WORK/st.json"
check "no window lost, none kept in memory only, in any frontend" \
	jqe '.counters.windows_lost == 0 and .windows_store_errors == 0 and ([.frontends[] | select(.windows_lost != null) | .windows_lost + .windows_store_errors] | add) == 0' "$WORK/st.json"
n0=$(windows_done)
fsd_settle egress conn
check "rotations go on after the file system filled ($n0 -> $(windows_done) windows)" [ "$(windows_done)" -gt "$n0" ]
fsd_stop
umount "$WORK/state" || bail "the second tmpfs unmounted"

# ------------------------------------------------- 3. the default budget
mount_state 16m || bail "a 16 MiB tmpfs for the state directory"
start || bail "flowsketchd answers status (3)"
read -r blocks bsize < <(stat -f -c '%b %S' "$WORK/state")
want=$((blocks * bsize / 100 * 25))
check "without --state-max the budget is 25 % of the file system ($want B)" \
	jqe ".state_budget.max_bytes == $want" "$WORK/st.json"
fsd_stop
finish
