#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# fleet_detect.sh - two hosts' detection sketches exported and merged: the
# fleet's top prefixes and spreaders by `flowsketch merge`.
#
#   NS_TXA [detect_traffic.py] --veth--> NS_RXA [flowsketchd A]   one
#   NS_TXB [detect_traffic.py] --veth--> NS_RXB [flowsketchd B]   --secret-file,
#                                                   --detect prefixes,spread
#
# Traffic is made so that the union is not either host's: a planted /24
# (198.51.100.0/24) of light hosts sends 4,000 packets to each host,
# while each host has ten /24s of its own of 6,000 (A's 10.1.x.0/24, B's
# 10.2.x.0/24): on each host the planted /24 ranks 11th, in the union
# (8,000) first.  A scanner (172.16.9.9) reaches 2,500 distinct
# (destination, port) pairs on each host, disjoint ones: 5,000 in the
# union, amid 3,000 ordinary flows a host.  What detect_traffic.py wrote
# is the truth of every check; the bounds are computed here from the
# sketches' parameters, read from the export file's header (native.h:
# bytes 26..29, the parameters record's bytes 10..13, params.h), with
# prefix.h's and spread.h's formulas written out again, z = 4:
#   - export --format native works on a daemon with --detect (its
#     answer's params carry the detection sketches' sizes);
#   - merge a b top --by src4/24: the planted /24 first, its packets P
#     within [T - z sqrt((V-1) T), T + ceil(4 e N / w) + z sqrt((V-1) T)],
#     T its packets sent to both, N the union's, V = 8 x 2^t; its rows
#     1..d; the total is N; and host A's file alone does not list it in
#     its top 10 (heavy only together);
#   - merge a b spread --by src: the scanner first, its distinct X within
#     [n (1 - z s), (n + e F / w)(1 + z s)], s = sqrt(1.04^2/90 + (R-1)/n),
#     n its 5,000 peers, F the union's distinct flows; the tables print;
#   - merge refuses, one line and exit 1, naming the file: a file without
#     a detection sketch (B again with --detect none), and one whose
#     detection sketches differ (B with --detect prefixes only).
# Output: TAP.
#
# Mutants: FS_FLEET_CLI=PATH runs another CLI build (fleet.sh's
# FS_MUTANT_MERGE_FIRST_SKETCH one: the first file's buckets only): the
# planted /24 and the scanner checks must fail against it.
set -u
cd "$(dirname "$0")/../.." || exit 2
CLI=${FS_FLEET_CLI:-build/flowsketch}
. scripts/daemon_test.sh

TRAFFIC=tests/integration/detect_traffic.py
SPAN=300
Z=4
PLANTED=198.51.100.0/24
SCANNER=172.16.9.9

fs_test fleetd python3 jq
fleet_hosts fleetd fsfd
fsd_as a fsd_start --secret-file "$WORK/secret" --detect prefixes,spread ||
	bail "flowsketchd A with --detect prefixes,spread answers status"
fsd_as b fsd_start --secret-file "$WORK/secret" --detect prefixes,spread ||
	bail "flowsketchd B with --detect prefixes,spread answers status"
ok "flowsketchd A on $VETH_RXA and B on $VETH_RXB, one secret file, --detect prefixes,spread"

# ---------------------------------------------------------------- traffic
# send NS VETH MAC SEED OUT DECOY_NET FIRST_PEER
send() {
	local decoys=() i
	for i in $(seq 1 10); do decoys+=(--prefix "$6.$i.0/24,1,40,6000"); done
	fs_in "$1" python3 "$TRAFFIC" send -i "$2" --dst-mac "$3" --seed "$4" --out "$5" \
		--prefix "$PLANTED,$7,60,4000" "${decoys[@]}" \
		--scanner "$SCANNER,$8,2500" --background 3000 2>>"$WORK/gen.log"
}
mac_a=$(fs_mac "$NS_RXA" "$VETH_RXA")
mac_b=$(fs_mac "$NS_RXB" "$VETH_RXB")
send "$NS_TXA" "$VETH_TXA" "$mac_a" 1 "$WORK/t-a.json" 10.1 1 0 & pa=$!
send "$NS_TXB" "$VETH_TXB" "$mac_b" 2 "$WORK/t-b.json" 10.2 101 2500 & pb=$!
wait $pa && wait $pb || { diag <"$WORK/gen.log"; bail "the traffic of both hosts sent"; }
fsd_as a fsd_settle && fsd_as b fsd_settle || bail "two windows closed on each host after the traffic"
ok "traffic sent to both hosts, in finished windows"

python3 "$TRAFFIC" union "$WORK/t-a.json" "$WORK/t-b.json" >"$WORK/truth.json" ||
	bail "the union's truth"
python3 "$TRAFFIC" union "$WORK/t-a.json" >"$WORK/truth-a.json" || bail "A's truth"
N=$(jq .packets "$WORK/truth.json")
F=$(jq .flows "$WORK/truth.json")
T=$(jq -r --arg p "$PLANTED" '.src24[] | select(.[0] == $p) | .[1]' "$WORK/truth.json")
NEXT=$(jq -r --arg p "$PLANTED" '[.src24[] | select(.[0] != $p) | .[1]] | max' "$WORK/truth.json")
PEERS=$(jq -r --arg s "$SCANNER" '.spreaders[] | select(.[0] == $s) | .[1]' "$WORK/truth.json")
echo "# union: $N packets, $F distinct flows; $PLANTED $T packets (next /24 $NEXT); $SCANNER $PEERS peers"

# ---------------------------------------------------------------- exports
exports_ok=true
for h in a b; do
	fsd_as "$h" cli export --format native --span $SPAN -o "$WORK/$h.fsk" \
		2>>"$WORK/export.err" || exports_ok=false
done
check "export --format native on both daemons with --detect prefixes,spread" $exports_ok
diag <"$WORK/export.err"
$exports_ok || bail "the exports merge reads"

# The detection sketches' parameters, from the file's header (params.h):
# prefix log2 w, depth << 4 | t; spread log2 w, depth << 4 | s.
read -r PW PSHAPE SW SSHAPE < <(od -An -tu1 -j26 -N4 "$WORK/a.fsk")
PD=$((PSHAPE >> 4)) PT=$((PSHAPE & 15)) SD=$((SSHAPE >> 4)) SS=$((SSHAPE & 15))
echo "# prefix sketch: depth $PD, width 2^$PW, t $PT; spread sketch: depth $SD, width 2^$SW, s $SS"
check "the export holds both detection sketches (prefix width 2^$PW, spread width 2^$SW)" \
	[ "$PW" -gt 0 -a "$SW" -gt 0 ]

# prefix.h, "Error": V = 8 x 2^t; collisions 4 e N / w (one-sided, up),
# sampling z sqrt((V - 1) T) either way.
read -r P_LO P_HI P_SD < <(awk -v t="$T" -v n="$N" -v w=$((1 << PW)) -v V=$((8 << PT)) -v z=$Z \
	'BEGIN { sd = z * sqrt((V - 1) * t); c = int(4 * exp(1) * n / w) + 1;
		 printf "%d %d %d\n", t - sd, t + c + sd, sd }')
N_SD=$(awk -v t="$NEXT" -v V=$((8 << PT)) -v z=$Z 'BEGIN { printf "%d", z * sqrt((V - 1) * t) }')
check "the traffic puts $PLANTED ($T) above every other /24 ($NEXT) by more than both sampling errors ($P_SD + $N_SD)" \
	[ $((T - NEXT)) -gt $((P_SD + N_SD)) ]

# ---------------------------------------------------------------- merge top --by
"$CLI" merge "$WORK/a.fsk" "$WORK/b.fsk" top --by src4/24 -n 10 --json \
	>"$WORK/prefixes.json" 2>"$WORK/prefixes.err"
rc=$?
check "merge a.fsk b.fsk top --by src4/24 --json answers (exit $rc)" [ "$rc" = 0 ]
diag <"$WORK/prefixes.err"
got=$(jq -r '.prefixes[0] | "\(.prefix) \(.packets) \(.rows)"' "$WORK/prefixes.json")
read -r first packets rows <<<"$got"
check "the fleet's top /24 is $PLANTED (got $first)" [ "$first" = "$PLANTED" ]
check "its packets $packets within [$P_LO, $P_HI] (sent $T to both hosts)" \
	[ "${packets:-0}" -ge "$P_LO" -a "${packets:-0}" -le "$P_HI" ]
check "it was found in $rows of the $PD rows" [ "${rows:-0}" -ge 1 -a "${rows:-0}" -le "$PD" ]
check "the answer's total is the union's ($N), its key src4/24, ten prefixes" \
	jqe --argjson n "$N" '.total_packets == $n and .by == "src4/24" and
		(.prefixes | length) == 10 and .files == 2' "$WORK/prefixes.json"
"$CLI" merge "$WORK/a.fsk" top --by src4/24 -n 10 --json >"$WORK/prefixes-a.json" 2>/dev/null
check "host A's file alone does not list $PLANTED in its top 10 (heavy only together)" \
	jqe --arg p "$PLANTED" '(.prefixes | length) == 10 and
		([.prefixes[] | select(.prefix == $p)] | length) == 0' "$WORK/prefixes-a.json"
"$CLI" merge "$WORK/a.fsk" "$WORK/b.fsk" top --by src4/24 -n 3 >"$WORK/prefixes.txt" 2>&1
check "the table lists $PLANTED first" grep -qE "^ *1  ${PLANTED//./\\.} " "$WORK/prefixes.txt"
diag <"$WORK/prefixes.txt"

# ---------------------------------------------------------------- merge spread
# spread.h, "Error": sigma(n) = sqrt(1.04^2 / 90 + (R - 1) / n), sharing
# e F / w (one-sided, up).
read -r S_LO S_HI < <(awk -v n="$PEERS" -v f="$F" -v w=$((1 << SW)) -v R=$((1 << SS)) -v z=$Z \
	'BEGIN { s = sqrt(1.04 ^ 2 / 90 + (R - 1) / n);
		 printf "%d %d\n", n * (1 - z * s), (n + exp(1) * f / w) * (1 + z * s) + 1 }')
"$CLI" merge "$WORK/a.fsk" "$WORK/b.fsk" spread --by src -n 5 --json \
	>"$WORK/spread.json" 2>"$WORK/spread.err"
rc=$?
check "merge a.fsk b.fsk spread --by src --json answers (exit $rc)" [ "$rc" = 0 ]
diag <"$WORK/spread.err"
got=$(jq -r '.spreaders[0] | "\(.src) \(.distinct) \(.rows)"' "$WORK/spread.json")
read -r first distinct rows <<<"$got"
check "the fleet's widest source is the scanner $SCANNER (got $first)" [ "$first" = "$SCANNER" ]
check "its distinct peers $distinct within [$S_LO, $S_HI] ($PEERS sent over both hosts)" \
	[ "${distinct:-0}" -ge "$S_LO" -a "${distinct:-0}" -le "$S_HI" ]
check "it was found in $rows of the $SD rows" [ "${rows:-0}" -ge 1 -a "${rows:-0}" -le "$SD" ]
"$CLI" merge "$WORK/a.fsk" "$WORK/b.fsk" spread --by src -n 3 >"$WORK/spread.txt" 2>&1
check "the table lists $SCANNER first" grep -qE "^ *1  ${SCANNER//./\\.} " "$WORK/spread.txt"
diag <"$WORK/spread.txt"

# ---------------------------------------------------------------- refusals
# refused WHAT PATTERN ARG...: merge exits 1 with one line matching PATTERN.
refused() {
	local what=$1 pat=$2; shift 2
	"$CLI" merge "$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	check "merge refuses $what (exit $rc: $(head -c 200 "$WORK/err"))" \
		bash -c "[ $rc = 1 ] && [ ! -s '$WORK/out' ] && [ \$(wc -l <'$WORK/err') = 1 ] && grep -qE -- '$pat' '$WORK/err'"
}
# export_b FILE DETECT: B restarted with --detect DETECT, its export.
export_b() {
	fsd_as b fsd_stop
	fsd_as b fsd_start --secret-file "$WORK/secret" --detect "$2" ||
		bail "flowsketchd B with --detect $2 answers status"
	fsd_as b fsd_settle || bail "two windows closed on B with --detect $2"
	fsd_as b cli export --format native --span $SPAN -o "$1" || bail "an export of B with --detect $2"
}
export_b "$WORK/none.fsk" none
refused "top --by with a file of no prefix sketch, naming it" \
	'none.fsk holds no prefix sketch, which top --by needs' \
	"$WORK/a.fsk" "$WORK/none.fsk" top --by src4/24
refused "spread with a file of no spread sketch, naming it" \
	'none.fsk holds no spread sketch, which spread needs' \
	"$WORK/none.fsk" spread --by dst
export_b "$WORK/prefixes-only.fsk" prefixes
refused "a file whose detection sketches differ, naming both" \
	'prefixes-only.fsk does not merge with .*a.fsk: its spread sketch \(flowsketchd --detect\) is none, .*a.fsk.s [0-9]+ x [0-9]+ buckets' \
	"$WORK/a.fsk" "$WORK/prefixes-only.fsk" top --by src4/24
fsd_as a fsd_stop
fsd_as b fsd_stop
finish
