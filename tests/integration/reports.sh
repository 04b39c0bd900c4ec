#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# reports.sh - heavy-hitter reports on bursty traffic, through a real
# daemon: no storm after start or after a quiet spell, and no heavy flow
# missed.
#
#   NS_TX [fs-gen bursts] --veth--> NS_RX [XDP, flowsketchd --window 1]
#
# Three bursts of 20,000 packets over 20,000 Zipf(1.1) flows (thousands of
# them distinct, most of them mice), each sent right after a rotation so
# that it lands in one window: the first window after start, then after 3
# and after 5 s of silence.  The generator is pinned to one CPU, so XDP,
# which runs in the sender's softirq on a veth, sketches each burst on one
# CPU.  Per burst, from its truth file alone (cms.h, "Heavy-hitter
# reporting", with eps = e / width from status and phi = --hh-fraction):
#   - bound:  reports <= sum over packets and bytes of (2 H + 1 / phi),
#             H = flows with >= (phi / 2 - eps) of the burst;
#   - recall: every flow with >= phi of the burst's packets or bytes is in
#             `top` of that window.
# The old rule (a threshold of one packet after a quiet window) reported
# nearly every flow of such a burst, thousands over this bound.
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

PHI=0.01

finished() { cli status --json | jq '.counters.windows_finished'; }
reports() { cli status --json | jq '.counters.reports'; }

# Wait until a rotation happens (windows_finished moves past $1).
wait_rotation() {
	local w
	for _ in $(seq 300); do
		w=$(finished)
		[ "$w" -gt "$1" ] && { echo "$w"; return 0; }
		sleep 0.01
	done
	return 1
}

fs_test rep "$GEN"
T=$WORK
fs_test_pair
MAC=$(fs_mac "$NS_RX" "$VETH_RX")

fsd_start --hh-fraction "$PHI"
cli status --json >"$T/status.json" || bail "flowsketchd answers status"
WIDTH=$(jq '.params.cms_width' "$T/status.json")
ok "flowsketchd with --hh-fraction $PHI, width $WIDTH"

burst=0
for quiet in 0 3 5; do
	burst=$((burst + 1))
	sleep "$quiet"
	w=$(finished)
	# From a rotation: windows end on wall-clock multiples (daemon.c), so
	# the first one after a start is only what is left of its second.
	w=$(wait_rotation "$w") || bail "burst $burst: a rotation to start from"
	r0=$(reports)
	fs_in "$NS_TX" taskset -c 0 "$GEN" -i "$VETH_TX" --dst-mac "$MAC" \
		--flows 20000 --packets 20000 --zipf 1.1 --seed "$burst" \
		--truth "$T/truth$burst.json" >/dev/null 2>"$T/gen.err" ||
		bail "burst $burst: fs-gen sends"
	w=$(wait_rotation "$w") || bail "burst $burst: the window closes"
	r1=$(reports)
	cli top -n 10000 --json >"$T/top$burst.json" || bail "burst $burst: top answers"
	sent=$(jq .total_packets "$T/truth$burst.json")
	got=$(jq .total_packets "$T/top$burst.json")
	if [ "$sent" != "$got" ]; then
		# The burst straddled a rotation; say so rather than guess.
		not_ok "burst $burst: its $sent packets in one window (got $got)"
		continue
	fi
	ok "burst $burst (after ${quiet} s quiet): $sent packets in one window"
	# The oracle, from the truth file: bound and the flows recall needs.
	read -r bound heavy distinct < <(jq -r --argjson phi "$PHI" --argjson w "$WIDTH" '
		((1 | exp) / $w) as $eps
		| .total_packets as $n | .total_bytes as $b
		| ([.flows[] | select(.packets >= ($phi / 2 - $eps) * $n)] | length) as $hp
		| ([.flows[] | select(.bytes >= ($phi / 2 - $eps) * $b)] | length) as $hb
		| ([.flows[] | select(.packets >= $phi * $n or .bytes >= $phi * $b)] | length) as $heavy
		| "\(2 * $hp + 2 * $hb + 2 * (1 / $phi | ceil)) \($heavy) \(.distinct_flows)"' \
		"$T/truth$burst.json")
	sent_reports=$((r1 - r0))
	echo "# burst $burst: $sent_reports reports for $distinct distinct flows (bound $bound, $heavy flows above phi)"
	check "burst $burst: $sent_reports reports, within the bound $bound" \
		[ "$sent_reports" -le "$bound" ]
	missing=$(jq -rn --slurpfile top "$T/top$burst.json" --slurpfile truth "$T/truth$burst.json" \
		--argjson phi "$PHI" '
		($top[0].flows | map("\(.src) \(.dst) \(.sport) \(.dport) \(.proto_num)")) as $got
		| $truth[0] | .total_packets as $n | .total_bytes as $b
		| [.flows[] | select(.packets >= $phi * $n or .bytes >= $phi * $b)
		   | "\(.src) \(.dst) \(.sport) \(.dport) \(.proto_num)"
		   | select(. as $k | $got | index([$k]) | not)] | length')
	check "burst $burst: every one of the $heavy flows above phi is a candidate ($missing missing)" \
		[ "$missing" -eq 0 -a "$heavy" -gt 0 ]
done

check "daemon stops cleanly" fsd_stop
finish
