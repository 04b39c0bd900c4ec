#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# ingress_tp.sh - flowsketchd --ingress tracepoint: what an interface
# receives, counted on tp_btf/netif_receive_skb instead of XDP.
#
#   NS_TX [fs-gen IN] --veth--> NS_RX [receive tracepoint + egress, flowsketchd]
#   NS_TX             <--veth-- NS_RX [fs-gen OUT]
#
# Ground truth is what the two generators wrote they sent.  Checked:
#   - the mode is what status says (frontend "ingress", hook, attached, a
#     link pinned at PIN_DIR/tp_ingress) and what the host shows: no XDP on
#     the interface, no blocklist; blocklist requests and --blocklist are
#     refused with one message each;
#   - per direction, totals and rx exact: every received frame counted
#     once, by one frontend (a frame counted twice, or also by the egress
#     frontend, would make them high), the other veth's frames not at all;
#   - per interface (status .interfaces[].in/out, since load): in exactly
#     the packets and bytes received, out exactly those sent, nothing
#     unattributed;
#   - top --direction in within [truth, truth + e/w * N];
#   - SIGKILL under traffic, restart: the pinned tracepoint link counted
#     on (totals exact across the kill, the interface's counts too: all
#     that was sent before and across it);
#   - a restart in the other mode is refused, naming --ingress, and leaves
#     the pinned link counting; --replace switches modes both ways, leaving
#     no link of the other mode, and counts exactly after the switch (the
#     interface's counts too, from 0: a fresh datapath);
#   - a stop without --keep leaves no pin and no XDP.
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh


settle() { fsd_settle egress; }
fe() { fsd_front "$@"; }
# ifc: the one interface's "in.packets in.bytes out.packets out.bytes" in
# $WORK/st.json ("not VETH_RX alone" if status lists another).
ifc() {
	jq -r --arg n "$VETH_RX" 'if [.interfaces[].name] == [$n] then .interfaces[0] |
		"\(.in.packets) \(.in.bytes) \(.out.packets) \(.out.bytes)"
		else "not \($n) alone" end' "$WORK/st.json"
}
unattributed() { jq -c '[.unattributed.in.packets, .unattributed.in.bytes, .unattributed.out.packets, .unattributed.out.bytes]' "$WORK/st.json"; }


fs_test itp "$GEN"
fs_test_pair

# ---------------------------------------------------------------- options
fsd_run --ingress bogus >"$WORK/bad.out" 2>&1; rc=$?
check "--ingress bogus: exit 1, one message naming the choices ($(head -c 120 "$WORK/bad.out"))" \
	eval '[ "$rc" = 1 -a "$(wc -l <"$WORK/bad.out")" = 1 ] && grep -q "xdp or tracepoint" "$WORK/bad.out"'
fsd_run --ingress tracepoint --blocklist "$WORK/list" >"$WORK/bad.out" 2>&1; rc=$?
check "--ingress tracepoint --blocklist: exit 1, says the blocklist is XDP's ($(head -c 120 "$WORK/bad.out"))" \
	eval '[ "$rc" = 1 ] && grep -q -- "--blocklist works on XDP only" "$WORK/bad.out"'
check "neither left a pin behind" [ ! -e "$PIN_DIR/params" ]

fsd_start --ingress tracepoint || bail "flowsketchd --ingress tracepoint answers status"
ok "flowsketchd --ingress tracepoint on $VETH_RX answers status"
CMS_W=$(jq .params.cms_width "$WORK/st.json")
check "status: frontends ingress (in, tp_btf/netif_receive_skb, attached, recursion_misses) and egress" \
	jqe '[.frontends[] | [.name, .direction, .hook]] == [["ingress","in","tp_btf/netif_receive_skb"],["egress","out","tp_btf/net_dev_start_xmit"],["conn","connections","tp_btf/inet_sock_set_state"]] and .frontends[0].attached == true and (.frontends[0].recursion_misses | type) == "number"' "$WORK/st.json"
check "status: the interface is counted by the receive tracepoint, with no XDP mode" \
	jqe '.interfaces[0] | .state == "attached" and .hook == "tp_btf/netif_receive_skb" and (has("xdp_mode") | not)' "$WORK/st.json"
check "the tracepoint link is pinned at $PIN_DIR/tp_ingress; no XDP link pin" \
	bash -c "test -e '$PIN_DIR/tp_ingress' && ! ls '$PIN_DIR' | grep -q '^link_'"
check "no XDP program on $VETH_RX" bash -c "! ip -n '$NS_RX' link show dev '$VETH_RX' | grep -q xdp"
check "status has no blocklist" jqe 'has("blocklist") | not' "$WORK/st.json"
cli block add 10.0.0.0/8 >"$WORK/bad.out" 2>&1; rc=$?
check "block add: non-zero exit, says why ($(head -c 150 "$WORK/bad.out"))" \
	eval '[ "$rc" != 0 ] && grep -q "no blocklist" "$WORK/bad.out"'
cli status >"$WORK/status.txt" 2>&1
check "the status table names the receive tracepoint" grep -q "receive tracepoint" "$WORK/status.txt"

# ---------------------------------------------------------------- traffic
send_in() { gen_in --flows 400 --packets "$1" --rate 20000 --zipf 1.2 --seed "$2" --truth "$3"; }
send_out() { gen_out --flows 300 --packets "$1" --rate 15000 --zipf 1.2 --seed "$2" --truth "$3"; }
send_in 50000 11 "$WORK/in1.json" & p1=$!
send_out 30000 22 "$WORK/out1.json" & p2=$!
wait $p1 && wait $p2 || bail "both generators sent their packets"
settle || bail "two windows closed after the traffic"
IN_P=$(jq .total_packets "$WORK/in1.json"); IN_B=$(jq .total_bytes "$WORK/in1.json")
OUT_P=$(jq .total_packets "$WORK/out1.json"); OUT_B=$(jq .total_bytes "$WORK/out1.json")
check "in: the windows hold exactly the $IN_P packets, $IN_B bytes received ($(jq -c '[.totals.packets, .totals.bytes]' "$WORK/st.json"))" \
	jqe --argjson p "$IN_P" --argjson b "$IN_B" '.totals.packets == $p and .totals.bytes == $b' "$WORK/st.json"
check "in: rx and sketched exactly $IN_P, each frame once ($(fe ingress '[.rx, .sketched]' | tr -d ' \n'))" \
	[ "$(fe ingress .rx)" = "$IN_P" -a "$(fe ingress .sketched)" = "$IN_P" ]
check "out: exactly the $OUT_P packets sent out ($(fe egress '[.rx, .totals.packets]' | tr -d ' \n'))" \
	[ "$(fe egress .rx)" = "$OUT_P" -a "$(fe egress .totals.packets)" = "$OUT_P" ]
check "$VETH_RX's counts: in exactly the $IN_P packets, $IN_B bytes received, out the $OUT_P, $OUT_B sent ($(ifc))" \
	[ "$(ifc)" = "$IN_P $IN_B $OUT_P $OUT_B" ]
check "nothing unattributed ($(unattributed))" [ "$(unattributed)" = "[0,0,0,0]" ]
check "nothing malformed ($(jq .counters.malformed_total "$WORK/st.json"))" \
	jqe '.counters.malformed_total == 0' "$WORK/st.json"

top_ok() {
	cli top --span 60 -n 10 --direction in --json >"$WORK/top.json" || return 1
	jq -rn --slurpfile top "$WORK/top.json" --argjson w "$CMS_W" \
		'input as $truth |
		 ($truth.flows | map({("\(.src) \(.dst) \(.sport) \(.dport) \(.proto_num)"): .}) | add) as $t |
		 (2.718281828459045 / $w * $truth.total_packets) as $eps |
		 $top[0].flows[] | ("\(.src) \(.dst) \(.sport) \(.dport) \(.proto_num)") as $k |
		 if .direction != "in" then "\($k): direction \(.direction)"
		 elif $t[$k] == null then "\($k): not sent"
		 elif (.packets < $t[$k].packets or .packets > $t[$k].packets + $eps) then "\($k): \(.packets) packets, sent \($t[$k].packets)"
		 else empty end' "$1" >"$WORK/top.bad"
	[ ! -s "$WORK/top.bad" ] && [ "$(jq '.flows | length' "$WORK/top.json")" -eq 10 ]
}
check "top --direction in: 10 received flows, each within its bound" top_ok "$WORK/in1.json"
diag <"$WORK/top.bad"

# ---------------------------------------------------------------- SIGKILL
send_in 50000 33 "$WORK/in2.json" & p1=$!
sleep 1.2
fsd_kill
sleep 0.4
fsd_start --ingress tracepoint || bail "a restart after SIGKILL answers status"
check "the restart adopts the datapath and keeps the pinned tracepoint link" \
	jqe '.adopted == true and .frontends[0].attached == true' "$WORK/st.json"
grep -q "kept the pinned receive tracepoint link" "$WORK/daemon.log"
check "the daemon says it kept the link" [ $? = 0 ]
wait $p1 || bail "the generator sent its packets across the kill"
settle || bail "two windows closed after the traffic"
IN_P=$((IN_P + $(jq .total_packets "$WORK/in2.json")))
IN_B=$((IN_B + $(jq .total_bytes "$WORK/in2.json")))
check "in: totals across the SIGKILL exact ($(jq .totals.packets "$WORK/st.json") vs $IN_P sent)" \
	[ "$(jq .totals.packets "$WORK/st.json")" = "$IN_P" ]
check "$VETH_RX's counts went on across the SIGKILL: in all $IN_P packets, $IN_B bytes sent, out still $OUT_P, $OUT_B ($(ifc))" \
	[ "$(ifc)" = "$IN_P $IN_B $OUT_P $OUT_B" ]
check "nothing unattributed ($(unattributed))" [ "$(unattributed)" = "[0,0,0,0]" ]

# ---------------------------------------------------------------- modes
# After a switch the counts start from 0: FRONTEND SEED TRUTH
counts_since_switch() {
	local p b
	send_in 20000 "$2" "$WORK/$3" || bail "the generator sent its packets"
	settle || bail "two windows closed after the traffic"
	p=$(jq .total_packets "$WORK/$3"); b=$(jq .total_bytes "$WORK/$3")
	check "$1 after the switch counts exactly what was sent since ($(jq .totals.packets "$WORK/st.json") vs $p)" \
		[ "$(jq .totals.packets "$WORK/st.json")" = "$p" ]
	check "... $VETH_RX's counts too, from 0: in $p packets, $b bytes, out nothing ($(ifc))" \
		[ "$(ifc)" = "$p $b 0 0" ]
}
fsd_kill
fsd_run >"$WORK/bad.out" 2>&1; rc=$?
check "a restart with --ingress xdp on the tracepoint datapath: exit 1, names --ingress ($(grep -m1 ingress "$WORK/bad.out" | head -c 160))" \
	eval '[ "$rc" = 1 ] && grep -q -- "--ingress tracepoint" "$WORK/bad.out"'
check "... and changed nothing: the tracepoint link still pinned, no XDP" \
	bash -c "test -e '$PIN_DIR/tp_ingress' && ! ip -n '$NS_RX' link show dev '$VETH_RX' | grep -q xdp"

fsd_start --replace || bail "--replace --ingress xdp answers status"
check "--replace switches to XDP: xdp frontend, XDP on $VETH_RX, no tracepoint link left" \
	bash -c "jq -e '.frontends[0].name == \"xdp\"' '$WORK/st.json' >/dev/null && ip -n '$NS_RX' link show dev '$VETH_RX' | grep -q xdp && test ! -e '$PIN_DIR/tp_ingress'"
counts_since_switch XDP 44 in3.json
# Killed, so its XDP links stay pinned, counting: the replace must drop
# them once the tracepoint counts.
fsd_kill
check "after SIGKILL the XDP datapath is still pinned and attached" \
	bash -c "ls '$PIN_DIR' | grep -q '^link_' && ip -n '$NS_RX' link show dev '$VETH_RX' | grep -q xdp"
fsd_start --replace --ingress tracepoint || bail "--replace --ingress tracepoint answers status"
check "--replace back to the tracepoint: no XDP on $VETH_RX, no XDP link pinned" \
	bash -c "! ip -n '$NS_RX' link show dev '$VETH_RX' | grep -q xdp && ! ls '$PIN_DIR' | grep -q '^link_'"
counts_since_switch "the tracepoint" 55 in4.json
check "nothing unattributed ($(unattributed))" [ "$(unattributed)" = "[0,0,0,0]" ]

# ---------------------------------------------------------------- stop
fsd_stop; rc=$?
check "SIGTERM: exit 0 (got $rc)" [ "$rc" = 0 ]
check "SIGTERM without --keep: no pin directory left ($(ls "$PIN_DIR" 2>/dev/null | tr "\n" " "))" [ ! -e "$PIN_DIR" ]
finish
