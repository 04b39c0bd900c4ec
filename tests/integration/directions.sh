#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# directions.sh - what an interface receives (XDP, "in") and what it sends
# (the egress frontend, "out"), counted at once and apart.
#
#   NS_TX [fs-gen IN] --veth--> NS_RX [XDP + egress, flowsketchd]
#   NS_TX             <--veth-- NS_RX [fs-gen OUT, out of the same veth]
#
# Two generators run at the same time, one in each direction, each writing
# what it sent; every check compares the daemon's answers with those files:
#   - per direction, totals exact: the egress frontend counted exactly the
#     frames the OUT generator sent, XDP exactly those of IN.  The IN
#     generator's frames leave the other veth, whose ifindex in its own
#     namespace may well be the counted one's (both are the only device
#     there besides lo): that they are not counted out says the egress
#     filter keys on the namespace too;
#   - top --direction in / out: every flow listed of that direction, one
#     its generator sent, its count in [truth, truth + e/w * N] with N that
#     direction's total; --direction both: both directions' flows, the
#     total of both;
#   - flows --direction in / out within 3 relative standard errors of the
#     distinct five-tuples sent that way, both of their union;
#   - status lists both frontends, where each is hooked, its counters and
#     the tracing program's recursion_misses;
#   - a SIGKILL while both run, and a restart: both directions adopted,
#     totals still exact per direction (the pinned egress link counted on);
#   - a stop without --keep leaves no egress pin and no XDP.
# The veths carry no IP traffic of their own (netns.sh), so "exact" is
# exact.  Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh


settle() { fsd_settle egress; }

fs_test dir "$GEN"
fs_test_pair
fsd_start || bail "flowsketchd answers status"
ok "flowsketchd on $VETH_RX answers status"
CMS_W=$(jq .params.cms_width "$WORK/st.json")
HLL_P=$(jq .params.hll_precision "$WORK/st.json")
check "status lists the xdp frontend (in) and the egress one (out, tp_btf/net_dev_start_xmit, attached)" \
	jqe '[.frontends[] | [.name, .direction, .hook]] == [["xdp","in","xdp"],["egress","out","tp_btf/net_dev_start_xmit"],["conn","connections","tp_btf/inet_sock_set_state"]] and (.frontends[1].attached == true)' "$WORK/st.json"
check "the egress link and maps are pinned under $PIN_DIR/egress" \
	test -e "$PIN_DIR/egress/link" -a -e "$PIN_DIR/egress/cms" -a -e "$PIN_DIR/egress/ctl"

# ---------------------------------------------------------------- traffic
send_in() { gen_in --flows 400 --packets "$1" --rate 20000 --zipf 1.2 --seed "$2" --truth "$3"; }
send_out() { gen_out --flows 300 --packets "$1" --rate 15000 --zipf 1.2 --seed "$2" --truth "$3"; }
send_in 60000 11 "$WORK/in1.json" & p1=$!
send_out 45000 22 "$WORK/out1.json" & p2=$!
wait $p1 && wait $p2 || bail "both generators sent their packets"
settle || bail "two windows closed after the traffic"
IN_P=$(jq .total_packets "$WORK/in1.json"); IN_B=$(jq .total_bytes "$WORK/in1.json")
OUT_P=$(jq .total_packets "$WORK/out1.json"); OUT_B=$(jq .total_bytes "$WORK/out1.json")
eg() { fsd_front egress "$1"; }
check "out: the egress frontend's windows hold exactly the $OUT_P packets, $OUT_B bytes sent out ($(eg '[.totals.packets, .totals.bytes]' | tr -d ' \n'))" \
	[ "$(eg .totals.packets)" = "$OUT_P" -a "$(eg .totals.bytes)" = "$OUT_B" ]
check "out: it saw and sketched exactly those frames, nothing of the other veth's ($(eg '[.rx, .sketched]' | tr -d ' \n'))" \
	[ "$(eg .rx)" = "$OUT_P" -a "$(eg .sketched)" = "$OUT_P" ]
check "in: XDP's windows hold exactly the $IN_P packets, $IN_B bytes received ($(jq -c '[.totals.packets, .totals.bytes]' "$WORK/st.json"))" \
	jqe --argjson p "$IN_P" --argjson b "$IN_B" '.totals.packets == $p and .totals.bytes == $b' "$WORK/st.json"
check "out: recursion_misses is shown ($(eg .recursion_misses)), nothing malformed ($(eg .malformed_total))" \
	[ "$(eg '.recursion_misses | type')" = number -a "$(eg .malformed_total)" = 0 ]

# top and flows per direction, against the generators' truth.
# top_ok DIR TRUTH...: every flow of direction DIR and of the truth, within
# [truth, truth + e/w * N], N the direction's total.
top_ok() {
	local dir=$1; shift
	cli top --span 60 -n 10 --direction "$dir" --json >"$WORK/top.json" || return 1
	jq -rn --slurpfile top "$WORK/top.json" --argjson w "$CMS_W" --arg dir "$dir" \
		'[inputs] as $truths |
		 ($truths | map(.flows) | add | map({("\(.src) \(.dst) \(.sport) \(.dport) \(.proto_num)"): .}) | add) as $t |
		 ($truths | map(.total_packets) | add) as $n |
		 (2.718281828459045 / $w * $n) as $eps |
		 $top[0] |
		 if .total_packets != $n then "total \(.total_packets), sent \($n)" else empty end,
		 (.flows[] | ("\(.src) \(.dst) \(.sport) \(.dport) \(.proto_num)") as $k |
		  if ($dir != "both" and .direction != $dir) then "\($k): direction \(.direction)"
		  elif $t[$k] == null then "\($k): not sent"
		  elif (.packets < $t[$k].packets or .packets > $t[$k].packets + $eps) then "\($k): \(.packets) packets, sent \($t[$k].packets)"
		  else empty end)' "$@" >"$WORK/top.bad"
	[ ! -s "$WORK/top.bad" ] && [ "$(jq '.flows | length' "$WORK/top.json")" -eq 10 ]
}
check "top --direction in: 10 received flows, each within its bound" top_ok in "$WORK/in1.json"
diag <"$WORK/top.bad"
check "top --direction out: 10 sent flows, each within its bound" top_ok out "$WORK/out1.json"
diag <"$WORK/top.bad"
check "top (both): the total of both directions, its flows from either" top_ok both "$WORK/in1.json" "$WORK/out1.json"
check "top (both) lists flows of both directions ($(jq -c '[.flows[].direction] | unique' "$WORK/top.json"))" \
	jqe '[.flows[].direction] | unique == ["in","out"]' "$WORK/top.json"
# flows_ok DIR TRUTH...: within 3 rse of the distinct five-tuples sent.
flows_ok() {
	local dir=$1 want got; shift
	want=$(jq -s '[.[].flows[] | "\(.src) \(.dst) \(.sport) \(.dport) \(.proto_num)"] | unique | length' "$@")
	got=$(cli flows --span 60 --direction "$dir" --json | jq .distinct_flows)
	echo "# flows --direction $dir: $got, sent $want"
	awk -v g="$got" -v w="$want" -v p="$HLL_P" 'BEGIN { e = 3 * 1.04 / sqrt(2 ^ p) * w; exit !(g >= w - e && g <= w + e) }'
}
check "flows --direction in within 3 rse of the received flows" flows_ok in "$WORK/in1.json"
check "flows --direction out within 3 rse of the sent flows" flows_ok out "$WORK/out1.json"
check "flows (both) within 3 rse of their union" flows_ok both "$WORK/in1.json" "$WORK/out1.json"

# ---------------------------------------------------------------- SIGKILL
send_in 60000 33 "$WORK/in2.json" & p1=$!
send_out 45000 44 "$WORK/out2.json" & p2=$!
sleep 1.3
fsd_kill
sleep 0.4
fsd_start || bail "a restart after SIGKILL answers status"
check "the restart adopts both directions ($(jq -c '[.adopted, .frontends[1].adopted]' "$WORK/st.json"))" \
	jqe '.adopted == true and .frontends[1].adopted == true' "$WORK/st.json"
wait $p1 && wait $p2 || bail "both generators sent their packets across the kill"
settle || bail "two windows closed after the traffic"
IN_P=$((IN_P + $(jq .total_packets "$WORK/in2.json")))
OUT_P=$((OUT_P + $(jq .total_packets "$WORK/out2.json")))
check "out: totals across the SIGKILL exact ($(eg .totals.packets) vs $OUT_P sent)" \
	[ "$(eg .totals.packets)" = "$OUT_P" ]
check "in: totals across the SIGKILL exact ($(jq .totals.packets "$WORK/st.json") vs $IN_P sent)" \
	[ "$(jq .totals.packets "$WORK/st.json")" = "$IN_P" ]

# ---------------------------------------------------------------- stop
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID"; rc=$?; DAEMON_PID=""
check "SIGTERM: exit 0 (got $rc)" [ "$rc" = 0 ]
check "SIGTERM without --keep: no egress pins, no pin directory left" [ ! -e "$PIN_DIR" ]
check "SIGTERM without --keep: no state left" [ ! -e "$WORK/state" ]
check "SIGTERM without --keep: no XDP on $VETH_RX" \
	bash -c "! ip -n '$NS_RX' link show dev '$VETH_RX' | grep -q xdp"
finish
