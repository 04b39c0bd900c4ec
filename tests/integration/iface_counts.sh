#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# iface_counts.sh - the per-interface counters (status --json
# .interfaces[].in/out, flowsketch_packets_total / _bytes_total
# {interface,direction} on /metrics) across restarts that adopt the pins
# with other -i options.
#
#   NS_TX [fs-gen IN  x3] --veth A, B, C--> NS_RX [flowsketchd, fs-gen OUT]
#
# The oracle is what fs-gen wrote it sent on each link, in each direction
# (its truth files: packets, and bytes as whole frames); the counts are
# since the datapath was loaded, so each name's is the sum over every
# phase it was counted in.  Each link gets other amounts than the others,
# in and out, so that counts given to the wrong name show.
#   1. -i A -i B: status and the page are exactly what was sent on each,
#      in and out; nothing unattributed, no interface="unknown";
#   2. SIGKILL under traffic, traffic while no daemon runs, a restart
#      with -i B -i A (reversed) that adopts: each name's count goes on
#      (not reset, not swapped), exactly everything sent on it in both
#      phases, in status and on the page; no counter of the page went back;
#   3. that daemon ran with --keep; SIGTERM, a restart with -i A -i C:
#      B's XDP is gone and its series too; C (a new name, most likely in
#      B's old slot) starts at 0 and counts exactly what is sent on it; A
#      goes on; what is sent on B now is counted nowhere, unattributed
#      included;
#   4. SIGTERM without --keep: no pins, no XDP.
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

declare -A TX=([A]="fsicat$ID" [B]="fsicbt$ID" [C]="fsicct$ID")
declare -A RX=([A]="fsicar$ID" [B]="fsicbr$ID" [C]="fsiccr$ID")
declare -A MAC_TX MAC_RX
PORT=9108		# in NS_RX, whose ports are all free
PY=/usr/bin/python3	# Debian's, with python3-prometheus-client
CHECK=tests/integration/metrics_check.py


# start LINK... [-- OPTION...]: the daemon with -i RX[LINK] in that order,
# in the background; 0 once it answers status and /metrics.
start() {
	FSD_IFACES=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		FSD_IFACES+=(-i "${RX[$1]}"); shift
	done
	[ $# -gt 0 ] && shift
	fsd_start --metrics "127.0.0.1:$PORT" "$@" &&
		fs_until 150 --while "$DAEMON_PID" metrics "$WORK/first.prom"
}

py() { fs_in "$NS_RX" "$PY" "$CHECK" "$@"; }
metrics() { fs_in "$NS_RX" curl -sf --max-time 5 -o "$1" "http://127.0.0.1:$PORT/metrics"; }
# page FILE: after settle, a page built at or after the last window close
# status saw (the page is rebuilt at each close): what was sent before.
page() {
	local w f
	w=$(jq .counters.windows_finished "$WORK/st.json")
	for _ in $(seq 30); do
		metrics "$1" || return 1
		f=$(py get "$1" flowsketch_windows_finished_total frontend=xdp)
		[ -n "$f" ] && [ "$f" -ge "$w" ] && return 0
		sleep 0.2
	done
	return 1
}

# send_in LINK PACKETS SEED TRUTH [RATE]: from NS_TX to RX[LINK].
send_in() {
	fs_in "$NS_TX" "$GEN" -i "${TX[$1]}" --dst-mac "${MAC_RX[$1]}" --flows 200 \
		--packets "$2" --rate "${5:-0}" --zipf 1.2 --seed "$3" --truth "$4" \
		>/dev/null 2>>"$WORK/gen.log"
}
# send_out LINK PACKETS SEED TRUTH: from NS_RX out of RX[LINK].
send_out() {
	fs_in "$NS_RX" "$GEN" -i "${RX[$1]}" --dst-mac "${MAC_TX[$1]}" --flows 150 \
		--packets "$2" --zipf 1.2 --seed "$3" --truth "$4" \
		>/dev/null 2>>"$WORK/gen.log"
}
# sent DIR LINK: "packets bytes" of every truth file of DIR on LINK so far,
# $WORK/DIR-PHASE-LINK.json (0 0: none).
sent() {
	local f=("$WORK/$1"-*-"$2".json)
	[ -e "${f[0]}" ] || { echo "0 0"; return; }
	jq -rs '"\(map(.total_packets) | add) \(map(.total_bytes) | add)"' "${f[@]}"
}
# counted LINK: status's (st.json) "in.packets in.bytes out.packets
# out.bytes" of RX[LINK]; "absent" if status does not list it.
counted() {
	jq -r --arg n "${RX[$1]}" '[.interfaces[] | select(.name == $n)] |
		if length == 1 then .[0] | "\(.in.packets) \(.in.bytes) \(.out.packets) \(.out.bytes)"
		else "absent" end' "$WORK/st.json"
}
# paged FILE LINK: the page's four series of RX[LINK], as counted.
paged() {
	local d k v out=""
	for d in in out; do
		for k in packets bytes; do
			v=$(py get "$1" "flowsketch_${k}_total" interface="${RX[$2]}" direction="$d") || v=none
			out="$out $v"
		done
	done
	echo "${out# }"
}
# iface_series FILE DIR: the interface labels of the page's packets series of DIR.
iface_series() {
	grep -o "^flowsketch_packets_total{interface=\"[^\"]*\",direction=\"$2\"}" "$1" |
		sed 's/.*interface="\([^"]*\)".*/\1/' | sort | tr '\n' ' ' | sed 's/ $//'
}
# slots: which slot each name has in the pinned fs_ifslot maps (XDP's,
# the egress frontend's), for the log: "xdp: NAME=SLOT ...; egress: ...;".
slots() {
	local m
	for m in xdp:ifslot egress:egress/ifslot; do
		printf '%s: %s; ' "${m%%:*}" "$(bpftool -j map dump pinned "$PIN_DIR/${m#*:}" 2>/dev/null |
			jq -r '.[0].formatted.value.name // [] | to_entries |
				map(select(.value | length > 0) | "\(.value)=\(.key)") | join(" ")' 2>/dev/null)"
	done
	echo
}
sorted() { printf '%s\n' "$@" | sort | tr '\n' ' ' | sed 's/ $//'; }
unattributed() { jq -c '[.unattributed.in.packets, .unattributed.in.bytes, .unattributed.out.packets, .unattributed.out.bytes]' "$WORK/st.json"; }
# xdp_on LINK...: XDP on each RX[LINK]; xdp_off LINK...: on none.
xdp_on() {
	local l
	for l in "$@"; do
		ip -n "$NS_RX" -d link show dev "${RX[$l]}" | grep -q 'prog/xdp' || return 1
	done
}
xdp_off() {
	local l
	for l in "$@"; do
		! ip -n "$NS_RX" -d link show dev "${RX[$l]}" | grep -q 'prog/xdp' || return 1
	done
}

# exact PHASE FILE LINK...: per link, status and the page FILE are what was
# sent on it (sent in and out); then nothing unattributed, no other series.
exact() {
	local phase=$1 file=$2 l want got pg; shift 2
	for l in "$@"; do
		want="$(sent in "$l") $(sent out "$l")"
		got=$(counted "$l")
		check "$phase: status counts ${RX[$l]} ($l) in and out as everything sent on it ($got = $want)" \
			[ "$got" = "$want" ]
		pg=$(paged "$file" "$l")
		check "$phase: the page's series of ${RX[$l]} ($l) are the same ($pg)" [ "$pg" = "$want" ]
	done
	check "$phase: nothing unattributed ($(unattributed))" [ "$(unattributed)" = "[0,0,0,0]" ]
	local names=()
	for l in "$@"; do names+=("${RX[$l]}"); done
	got="$(iface_series "$file" in) / $(iface_series "$file" out)"
	want="$(sorted "${names[@]}") / $(sorted "${names[@]}")"
	check "$phase: the page has one series per interface and direction, no other ($got)" \
		[ "$got" = "$want" ]
}

fs_test ic "$GEN" "$PY" /usr/bin/curl
"$PY" -c 'import prometheus_client.parser' 2>/dev/null ||
	bail "python3-prometheus-client is installed (scripts/deps.sh)"
fs_pair_create "$NS_TX" "$NS_RX" "${TX[A]}" "${RX[A]}" || bail "namespaces and the veth pair A"
for l in B C; do
	fs_veth_add "$NS_TX" "$NS_RX" "${TX[$l]}" "${RX[$l]}" || bail "the veth pair $l"
done
for l in A B C; do
	MAC_TX[$l]=$(fs_mac "$NS_TX" "${TX[$l]}")
	MAC_RX[$l]=$(fs_mac "$NS_RX" "${RX[$l]}")
done
ok "three veth pairs A, B, C between $NS_TX and $NS_RX"

# ---------------------------------------------------------------- 1: A B
start A B || bail "flowsketchd -i A -i B answers status and /metrics"
check "1: status lists A, B in that order" \
	jqe --arg a "${RX[A]}" --arg b "${RX[B]}" '[.interfaces[].name] == [$a, $b] and .adopted == false' "$WORK/st.json"
send_in A 6000 1 "$WORK/in-1-A.json" & p1=$!
send_in B 9000 2 "$WORK/in-1-B.json" & p2=$!
send_out A 2000 3 "$WORK/out-1-A.json" & p3=$!
send_out B 3500 4 "$WORK/out-1-B.json" & p4=$!
wait $p1 && wait $p2 && wait $p3 && wait $p4 || { diag <"$WORK/gen.log"; bail "1: the generators sent their packets"; }
fsd_settle egress || bail "1: two windows closed after the traffic"
page "$WORK/p1.prom" || bail "1: a page built after the traffic"
exact 1 "$WORK/p1.prom" A B
slots | diag
check "1: the window totals are the sum of both links, in ($(jq .totals.packets "$WORK/st.json"))" \
	[ "$(jq .totals.packets "$WORK/st.json")" = $(( $(sent in A | cut -d' ' -f1) + $(sent in B | cut -d' ' -f1) )) ]

# ---------------------------------------------------------------- 2: B A
# SIGKILL while A and B receive; more on both while no daemon runs (the
# pinned links count on); a restart with the -i reversed.
send_in A 8000 5 "$WORK/in-2-A.json" 4000 & p1=$!
send_in B 4000 6 "$WORK/in-2-B.json" 2000 & p2=$!
sleep 0.7
fsd_kill
send_in A 1500 7 "$WORK/in-2n-A.json" || bail "2: traffic on A with no daemon"
send_in B 3500 8 "$WORK/in-2n-B.json" || bail "2: traffic on B with no daemon"
check "2: after SIGKILL XDP is still on A and B" xdp_on A B
start B A -- --keep || bail "2: flowsketchd -i B -i A answers"
check "2: it adopted the pinned datapath; status lists B, A in that order" \
	jqe --arg a "${RX[A]}" --arg b "${RX[B]}" '[.interfaces[].name] == [$b, $a] and .adopted == true' "$WORK/st.json"
check "2: right after the restart, no counter of the page is below the one before the SIGKILL" \
	py monotonic "$WORK/p1.prom" "$WORK/first.prom"
wait $p1 && wait $p2 || { diag <"$WORK/gen.log"; bail "2: the generators sent their packets across the kill"; }
send_out A 1200 9 "$WORK/out-2-A.json" & p3=$!
send_out B 2600 10 "$WORK/out-2-B.json" & p4=$!
wait $p3 && wait $p4 || { diag <"$WORK/gen.log"; bail "2: the generators sent out"; }
fsd_settle egress || bail "2: two windows closed after the traffic"
page "$WORK/p2.prom" || bail "2: a page built after the traffic"
exact 2 "$WORK/p2.prom" A B
slots | diag
check "2: no counter of the page went back" py monotonic "$WORK/p1.prom" "$WORK/p2.prom"

# ---------------------------------------------------------------- 3: A C
fsd_stop; rc=$?
check "3: SIGTERM of the --keep daemon: exit 0 (got $rc)" [ "$rc" = 0 ]
check "3: ... and XDP still on A and B" xdp_on A B
start A C || bail "3: flowsketchd -i A -i C answers"
slots | diag
check "3: it adopted; status lists A, C in that order" \
	jqe --arg a "${RX[A]}" --arg c "${RX[C]}" '[.interfaces[].name] == [$a, $c] and .adopted == true' "$WORK/st.json"
xdp_now() { xdp_off B && xdp_on A C; }
check "3: B is no longer counted: no XDP on it, XDP on A and C" xdp_now
# Nothing sent since: what status and the first page show now is all.
want="$(sent in A) $(sent out A)"
check "3: A goes on from everything sent on it before ($(counted A) = $want; page $(paged "$WORK/first.prom" A))" \
	[ "$(counted A)" = "$want" -a "$(paged "$WORK/first.prom" A)" = "$want" ]
check "3: C, a new name, starts at 0 in and out ($(counted C); page $(paged "$WORK/first.prom" C))" \
	[ "$(counted C)" = "0 0 0 0" -a "$(paged "$WORK/first.prom" C)" = "0 0 0 0" ]
send_in A 3000 11 "$WORK/in-3-A.json" & p1=$!
send_in C 7000 12 "$WORK/in-3-C.json" & p2=$!
send_out C 1800 13 "$WORK/out-3-C.json" & p3=$!
# B's frames, both ways, go to no counter now.
send_in B 2000 14 "$WORK/ignored-in-B.json" & p4=$!
send_out B 1000 15 "$WORK/ignored-out-B.json" & p5=$!
wait $p1 && wait $p2 && wait $p3 && wait $p4 && wait $p5 ||
	{ diag <"$WORK/gen.log"; bail "3: the generators sent their packets"; }
fsd_settle egress || bail "3: two windows closed after the traffic"
page "$WORK/p3.prom" || bail "3: a page built after the traffic"
exact 3 "$WORK/p3.prom" A C
grep -v "interface=\"${RX[B]}\"" "$WORK/p2.prom" >"$WORK/p2-no-B.prom"
check "3: no counter of the page went back but B's, gone" \
	py monotonic "$WORK/p2-no-B.prom" "$WORK/p3.prom"

# ---------------------------------------------------------------- 4: stop
fsd_stop; rc=$?
check "4: SIGTERM without --keep: exit 0 (got $rc)" [ "$rc" = 0 ]
check "4: no XDP on A, B or C" xdp_off A B C
check "4: no pins left ($(ls "$PIN_DIR" 2>/dev/null | tr '\n' ' '))" [ ! -e "$PIN_DIR" ]
finish
