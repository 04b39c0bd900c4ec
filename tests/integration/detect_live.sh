#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# detect_live.sh - the detection sketches live between namespaces (issue
# 20, "Accuracy"): a scanner, a victim and a heavy /24 of light hosts
# amid 100,000 ordinary flows, through a veth pair into XDP, and what the
# daemon's "prefixes" and "spread" requests say of them.
#
#   NS_TX [detect_live_traffic.py send] --veth--> NS_RX [XDP, flowsketchd --detect prefixes,spread]
#
# Traffic (detect_live_traffic.py, one shuffled sequence of 60-byte UDP
# frames, sent as fast as Python goes):
#   - 100,000 ordinary flows of one packet, random 10/8 addresses and ports;
#   - a scanner, 192.0.2.7, to 5,000 distinct (destination, port) pairs;
#   - a victim, 203.0.113.9:80, from 5,000 distinct spoofed sources;
#   - 198.51.100.0/24: 200 hosts, each some 0.1 % of the packets, together
#     25 % of them.
# The oracle is that traffic: the generator writes what the kernel took
# (totals, true spreads, the sum F of all keys' spreads per side, every
# source /24's packets).  The bounds are computed by the judge from the
# sketches' parameters, read from include/flowsketch/prefix.h and
# spread.h (--detect takes their defaults), at z = Z standard deviations,
# as their "Error" sections derive them:
#   prefix of N_x packets, span of N, V = 8 x 2^t, w buckets a row:
#       N_x - z sqrt((V - 1) N_x)  <=  E  <=  N_x + 4 e N / w + z sqrt((V - 1) N_x)
#   spread n of a key, F on its side, R = 2^s, m registers, w a row:
#       sigma = sqrt(1.04^2 / m + (R - 1) / n)
#       n (1 - z sigma)  <=  S  <=  (n + e F / w) (1 + z sigma)
# The answers' own error_bound, packets_low, distinct_low and error are
# never used.  Window boundaries do not matter: the queries take a span
# over every window since the daemon started, after two more windows
# closed past the last frame (status polled), and the prefixes answer's
# total_packets must be exactly the packets sent.
#
# What is shown (TAP, with a plan):
#   1. the daemon runs both sketches at the sizes the bounds assume;
#      every frame sent is in its finished windows, and `flows` counts
#      the distinct five-tuples, sources and destinations sent within
#      3 relative standard errors (the harness loses nothing);
#   2. spread by src: the scanner listed first, within its bound, no
#      ordinary source above it, every listed key a source of the traffic
#      and its distinct_low (the answer's claim, what a mitigation rule
#      acts on) at most its true spread; by dst: the same of the victim;
#   3. prefixes by src4/24: the heavy /24 listed first, within its bound;
#      every /24 above PHI of the span listed, within its bound; every
#      listed prefix a /24 of the traffic's sources, its packets_low at
#      most its true packets;
#   4. a daemon with --detect none answers both requests with an error
#      naming the option that turns the sketch on.
# Runs in about 20 s (most of it building and sending the frames in Python).
# Only the namespaces and the veth pair made here are touched; they, the
# pins and the work directory go on every exit.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

HELPER=tests/integration/detect_live_traffic.py
Z=4			# standard deviations of every two-sided bound
PHI=0.03		# /24s above this share of the span must be listed
SPAN=120		# seconds: every window of the test (history keeps 300)
N_LIST=20		# entries asked for
SEED=${DETECT_SEED:-$((RANDOM << 15 | RANDOM))}

# hdr NAME FILE: a #define's number in include/flowsketch/FILE.
hdr() { sed -n "s/^#define $1[[:space:]]\{1,\}\([0-9]\{1,\}\).*/\1/p" "include/flowsketch/$2"; }
P_DEPTH=$(hdr FS_DEFAULT_PREFIX_DEPTH prefix.h)
P_LOG2W=$(hdr FS_DEFAULT_PREFIX_LOG2W prefix.h)
P_SKIP=$(hdr FS_DEFAULT_PREFIX_SKIP prefix.h)
S_DEPTH=$(hdr FS_DEFAULT_SPREAD_DEPTH spread.h)
S_LOG2W=$(hdr FS_DEFAULT_SPREAD_LOG2W spread.h)
S_SHIFT=$(hdr FS_DEFAULT_SPREAD_SHIFT spread.h)
S_REGS=$(hdr FS_SPREAD_REGS spread.h)

# ask FILE JSON: one request to the daemon's socket, its answer in FILE.
ask() { printf '%s\n' "$2" | fsd_ask >"$1" 2>"$1.err"; }

# judged KEY DESC: ok if the judge found no violation under KEY (a path
# such as .spread_src.top), else not_ok with them.
judged() {
	local v
	v=$(jq -r "($1 // [\"the judge did not run\"]) | .[]" "$WORK/judge.json" 2>&1)
	if [ -z "$v" ]; then ok "$2"; else not_ok "$2"; echo "$v" | head -20 | diag; fi
}

# ---------------------------------------------------------------- set-up
fs_test det jq python3
for v in P_DEPTH P_LOG2W P_SKIP S_DEPTH S_LOG2W S_SHIFT S_REGS; do
	[ -n "${!v}" ] || bail "$v read from include/flowsketch/"
done
fs_test_pair
fsd_start --detect prefixes,spread || bail "flowsketchd starts on $VETH_RX with --detect prefixes,spread"
ok "flowsketchd on $VETH_RX with --detect prefixes,spread and 1 s windows"
want=$(jq -nc --argjson pd "$P_DEPTH" --argjson pl "$P_LOG2W" --argjson pt "$P_SKIP" \
	--argjson sd "$S_DEPTH" --argjson sl "$S_LOG2W" --argjson ss "$S_SHIFT" \
	'{prefixes: {depth: $pd, width: pow(2; $pl), levels_drawn_from: (8 * pow(2; $pt))},
	  spread: {depth: $sd, width: pow(2; $sl), sampling: pow(2; $ss)}}')
sizes_ok() {
	jqe --argjson w "$want" '(.params.detect.prefixes | {depth, width, levels_drawn_from}) == $w.prefixes and
		(.params.detect.spread | {depth, width, sampling}) == $w.spread' "$FSD_ST"
}
check "status: both sketches at the headers' defaults ($want)" sizes_ok
sizes_ok || jq -c .params.detect "$FSD_ST" | diag

# ---------------------------------------------------------------- traffic
MAC=$(fs_mac "$NS_RX" "$VETH_RX")
echo "# seed $SEED (DETECT_SEED=$SEED repeats this traffic)"
if fs_in "$NS_TX" python3 "$HELPER" send -i "$VETH_TX" --dst-mac "$MAC" --seed "$SEED" \
	--out "$WORK/truth.json" 2>"$WORK/send.err"; then
	ok "$(jq -r '"sent \(.total_packets) frames in \(.send_seconds) s: \(.distinct_flows) five-tuples, \(.heavy.packets) from \(.heavy.hosts) hosts of \(.heavy.prefix) (at most \(.heavy.max_host) a host)"' "$WORK/truth.json")"
else
	diag <"$WORK/send.err"
	bail "the traffic sent"
fi
SENT=$(jq .total_packets "$WORK/truth.json")
fsd_settle || bail "two more windows closed after the last frame"
check "the finished windows hold every frame sent ($(jq .totals.packets "$FSD_ST") of $SENT)" \
	jqe --argjson n "$SENT" '.totals.packets == $n' "$FSD_ST"
cli flows --span "$SPAN" --direction in --json >"$WORK/flows.json" 2>"$WORK/flows.err" ||
	diag <"$WORK/flows.err"
HLL_P=$(jq .params.hll_precision "$FSD_ST")
# Where the window boundaries fell (shown only: the span takes them all).
ask "$WORK/windows.json" "{\"cmd\":\"windows\",\"span\":$SPAN,\"direction\":\"in\"}"
jq -r '"the traffic fell in \([.series[] | select(.direction == "in") | .windows[] | select(.packets > 0) | .packets] | join(" + ")) packets of 1 s windows"' \
	"$WORK/windows.json" 2>/dev/null | diag
# flows_ok WHAT: flows' distinct WHAT within 3 rse (1.04 / sqrt(2^p)) of the truth's.
flows_ok() {
	jqe -n --slurpfile f "$WORK/flows.json" --slurpfile t "$WORK/truth.json" --argjson p "$HLL_P" --arg k "$1" \
		'($t[0][$k]) as $n | (3 * 1.04 / pow(2; $p / 2) * $n) as $e | ($f[0][$k] - $n | fabs) <= $e'
}
for k in distinct_flows distinct_sources distinct_destinations; do
	check "flows: $k $(jq ".$k" "$WORK/flows.json"), sent $(jq ".$k" "$WORK/truth.json"), within 3 rse" flows_ok "$k"
done

# ---------------------------------------------------------------- queries
ask "$WORK/prefixes.json" "{\"cmd\":\"prefixes\",\"by\":\"src4/24\",\"n\":$N_LIST,\"sort\":\"packets\",\"span\":$SPAN,\"direction\":\"in\"}"
ask "$WORK/spread-src.json" "{\"cmd\":\"spread\",\"by\":\"src\",\"n\":$N_LIST,\"span\":$SPAN,\"direction\":\"in\"}"
ask "$WORK/spread-dst.json" "{\"cmd\":\"spread\",\"by\":\"dst\",\"n\":$N_LIST,\"span\":$SPAN,\"direction\":\"in\"}"
for q in prefixes spread-src spread-dst; do
	check "$q: an answer with no error ($(jq -c '.error // "no error"' "$WORK/$q.json" 2>/dev/null))" \
		jqe 'has("error") | not' "$WORK/$q.json"
done
python3 "$HELPER" judge --truth "$WORK/truth.json" --z "$Z" --phi "$PHI" \
	--prefix-depth "$P_DEPTH" --prefix-log2w "$P_LOG2W" --prefix-skip "$P_SKIP" \
	--spread-depth "$S_DEPTH" --spread-log2w "$S_LOG2W" --spread-shift "$S_SHIFT" \
	--spread-regs "$S_REGS" --prefixes "$WORK/prefixes.json" \
	--spread-src "$WORK/spread-src.json" --spread-dst "$WORK/spread-dst.json" \
	>"$WORK/judge.json" 2>"$WORK/judge.err" || diag <"$WORK/judge.err"

for side in src dst; do
	s=".spread_$side"
	jq -r "\"spread by $side: \" + ($s.listed // [] | .[:5] | join(\", \"))" "$WORK/judge.json" | diag
	judged "$s.bad_answer" "spread by $side: entries with $side and distinct"
	judged "$s.top" "spread by $side: $(jq -r ".spread.$side.planted" "$WORK/truth.json") listed first"
	judged "$s.bound" "spread by $side: its distinct $(jq -r "$s.estimate" "$WORK/judge.json") within z = $Z ($(jq -r "$s.figures" "$WORK/judge.json"))"
	judged "$s.above" "spread by $side: no other key above it (true spread of any other at most $(jq ".spread.$side.max_other" "$WORK/truth.json"))"
	judged "$s.unknown" "spread by $side: every listed key is one the traffic had"
	judged "$s.low" "spread by $side: no listed key's distinct_low above its true spread"
done

jq -r '"prefixes by src4/24: " + (.prefixes.listed // [] | .[:5] | join(", "))' "$WORK/judge.json" | diag
judged .prefixes.bad_answer "prefixes by src4/24: entries of IPv4 /24s with packets"
judged .prefixes.total "prefixes: total_packets is every frame sent ($SENT)"
judged .prefixes.order "prefixes by src4/24: $(jq -r .heavy.prefix "$WORK/truth.json") listed first, no light /24 above it"
judged .prefixes.heavy "prefixes by src4/24: $(jq -r '.prefixes.heavy_figures // [] | join("; ")' "$WORK/judge.json") (z = $Z)"
judged .prefixes.above_phi "prefixes by src4/24: every other /24 above $PHI of the span listed within z = $Z ($(jq -r '.prefixes.above_phi_figures // ["none"] | join("; ")' "$WORK/judge.json"))"
judged .prefixes.unknown "prefixes by src4/24: every listed prefix holds sources of the traffic"
judged .prefixes.low "prefixes by src4/24: no listed prefix's packets_low above its true packets"

# ---------------------------------------------------------------- --detect none
rc=0
fsd_stop || rc=$?
check "flowsketchd exits 0 on SIGTERM (got $rc)" [ "$rc" = 0 ]
fsd_start --detect none || bail "flowsketchd starts again with --detect none"
check "status: --detect none keeps neither sketch ($(jq -c .params.detect "$FSD_ST"))" \
	jqe '.params.detect.prefixes == false and .params.detect.spread == false' "$FSD_ST"
ask "$WORK/none-prefixes.json" '{"cmd":"prefixes","by":"src4/24"}'
check "--detect none: prefixes answers an error naming --detect prefixes ($(cat "$WORK/none-prefixes.json"))" \
	jqe '(keys == ["error"]) and (.error | test("no prefix sketch") and test("--detect prefixes"))' "$WORK/none-prefixes.json"
ask "$WORK/none-spread.json" '{"cmd":"spread","by":"src"}'
check "--detect none: spread answers an error naming --detect spread ($(cat "$WORK/none-spread.json"))" \
	jqe '(keys == ["error"]) and (.error | test("no spread sketch") and test("--detect spread"))' "$WORK/none-spread.json"
rc=0
fsd_stop || rc=$?
check "flowsketchd --detect none exits 0 on SIGTERM (got $rc)" [ "$rc" = 0 ]
finish
