#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# skb_frames.sh - a million random, mutated and malformed frames through
# the real kernel stack into both tracepoint frontends, then another
# million into XDP, each frontend judged against an oracle that is not
# the datapath's parser.
#
#   NS_TX [fs-craft, AF_PACKET] -> VETH_TX ==veth==> VETH_RX  (NS_RX)
#          daemon A: -i VETH_TX              daemon B: -i VETH_RX
#          egress frontend (tp_btf/             1. --ingress tracepoint
#          net_dev_start_xmit), "out"              (tp_btf/netif_receive_skb), "in"
#                                               2. restarted with --replace:
#                                                  --ingress xdp (native), "in"
#
# tools/fs-craft builds every frame from --seed (well-formed IPv4/IPv6
# TCP/UDP/ICMP/other with VLAN tags, IPv4 options and IPv6 extension
# headers; cut at every header boundary; bad IHL, IPv4 total length, TCP
# data offset, IP lengths ending inside a header; three VLAN tags, seven
# extension headers, the wrong IP version; IPv4 and IPv6 fragments, first
# and non-first; ARP and other non-IP; well-formed IPv6 whose headers run
# past the frontends' 256-byte copy; frames with bytes changed; random
# bytes, behind an IP EtherType or not) and writes the verdict each must
# get: by construction (where the crafter put each header and which field
# it broke) for the classes it built, and by its own reference classifier
# (the protocols from their RFCs and flowsketch's documented contract, not
# bpf/parse.bpf.h) for the mutated and random ones; it judges every
# constructed frame with the classifier too and counts where the two
# oracles disagree (must be 0, or the oracle is wrong).  Checked, for each
# daemon:
#   - exactly once: frames sent == the veths' own counters == the
#     frontend's rx, and rx == sketched + non_ip + every malformed reason
#     + update_errors (status has no update_errors for the egress
#     frontend, nor fragments: both are read from its pinned stats map);
#   - each of those counters, fragments too, equal to the crafter's truth,
#     and skb_nonlinear 0 (the kernel builds what it sends and receives
#     here in the linear part);
#   - the windows' totals (packets and bytes sketched) exact;
#   - no key outside the frames' real headers: every flow `top` reports
#     (-n 50 by packets and by bytes, and -n 10000: every candidate) is a
#     key the crafter sketched, in the right direction, its counts in
#     [truth, truth + e/w * N];
#   - flows: distinct flows, sources, destinations within 4 rse (six
#     estimates: at 3 rse one run in 60 would fail by chance);
#   - quiet: nothing counted that the test did not send (A's XDP and B's
#     egress frontend see nothing, nor do the veths in the other way).
# Then B is killed and started again on its pin dir with --replace in its
# default mode, native XDP on VETH_RX, and a second run (another seed) is
# judged by fs-craft --no-copy-limit: the same kinds of frame, their
# verdicts read from the whole frame, as XDP parses it in place, not from
# the tracepoints' 256-byte copy (a deep frame is keyed, not truncated).
# B's XDP counts are checked like the tracepoint's above: exactly once
# (the veths, rx, the partition), every counter, the windows' totals,
# top's keys and bounds, flows, quiet.
# The seed is FS_SKB_SEED (default 1), the XDP run's FS_SKB_XDP_SEED
# (default the seed + 1), the rate FS_SKB_RATE frames/s (default 150000),
# the frames of each run FS_SKB_FRAMES (default 1000000).  Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

SEED=${FS_SKB_SEED:-1}
RATE=${FS_SKB_RATE:-150000}
FRAMES=${FS_SKB_FRAMES:-1000000}
COPY=256	# bytes a tracepoint frontend copies (FS_HDR_COPY, parse.bpf.h)
CRAFT=build/tools/fs-craft

cli_a() { fsd_as a cli "$@"; }
cli_b() { fsd_as b cli "$@"; }

# start a|b OPTIONS...: daemon A (in NS_TX on VETH_TX) or B (in NS_RX on
# VETH_RX) in the background, until it answers status ($WORK/st-a.json).
start() { fsd_as "$1" fsd_start "${@:2}"; }

# The windows each daemon finished for the direction it counts here.
windows_done() {
	local a b
	a=$(jq '.frontends[] | select(.name == "egress") | .windows_finished' "$WORK/st-a.json")
	b=$(jq '.counters.windows_finished' "$WORK/st-b.json")
	echo $((a < b ? a : b))
}
status_both() {
	cli_a --timeout 5 status --json >"$WORK/st-a.json" &&
		cli_b --timeout 5 status --json >"$WORK/st-b.json"
}
# Until two windows of both closed after now: every frame sent before is
# in a finished window.
settle() {
	local n0 n
	status_both || return 1
	n0=$(windows_done)
	for _ in $(seq 60); do
		sleep 0.2
		status_both || return 1
		n=$(windows_done)
		[ "$n" -ge $((n0 + 2)) ] && return 0
	done
	return 1
}

eg() { jq -r "(.frontends[] | select(.name == \"egress\")) | $1" "$WORK/st-a.json"; }
ig() { jq -r "(.frontends[] | select(.name == \"ingress\")) | $1" "$WORK/st-b.json"; }
# The truth and keys of the run being checked (fs-craft --truth, --keys).
TRUTH=""
KEYS=""
tr_() { jq -r "$1" "$TRUTH"; }
# pstat PIN INDEX: an fs_stats counter (enum fs_stat, maps.h) summed over
# the CPUs, read from the pinned map with bpftool (key: a little-endian u32).
pstat() {
	bpftool -j map lookup pinned "$1" key "$2" 0 0 0 |
		jq '[.formatted.values[].value] | add'
}

fs_test skb "$CRAFT" bpftool
fs_test_pair
PIN_A=$PIN_DIR-a PIN_B=$PIN_DIR-b
fsd_daemon a "$NS_TX" "$VETH_TX"
fsd_daemon b "$NS_RX" "$VETH_RX"

start a || bail "daemon A (egress on $VETH_TX) answers status"
start b --ingress tracepoint || bail "daemon B (--ingress tracepoint on $VETH_RX) answers status"
check "A counts what $VETH_TX sends: egress frontend attached on tp_btf/net_dev_start_xmit" \
	jqe '.frontends[] | select(.name == "egress") | .attached == true and .hook == "tp_btf/net_dev_start_xmit" and .direction == "out"' "$WORK/st-a.json"
check "B counts what $VETH_RX receives: ingress frontend attached on tp_btf/netif_receive_skb" \
	jqe '.frontends[0] | .name == "ingress" and .attached == true and .hook == "tp_btf/netif_receive_skb" and .direction == "in"' "$WORK/st-b.json"
CMS_W=$(jq .params.cms_width "$WORK/st-b.json")
HLL_P=$(jq .params.hll_precision "$WORK/st-b.json")

# ---------------------------------------------------------------- traffic
link() { fs_link_stat "$1" "$2" "$3" packets; }
tx0=$(link "$NS_TX" "$VETH_TX" tx); rx0=$(link "$NS_RX" "$VETH_RX" rx)
back_tx0=$(link "$NS_RX" "$VETH_RX" tx); back_rx0=$(link "$NS_TX" "$VETH_TX" rx)
mac_rx=$(fs_mac "$NS_RX" "$VETH_RX")
TRUTH="$WORK/truth.json"; KEYS="$WORK/keys.txt"
t0=$(date +%s.%N)
fs_in "$NS_TX" "$CRAFT" -i "$VETH_TX" --dst-mac "$mac_rx" --frames "$FRAMES" \
	--seed "$SEED" --rate "$RATE" --copy "$COPY" --truth "$TRUTH" \
	--keys "$KEYS" 2>"$WORK/craft.log" ||
	{ diag <"$WORK/craft.log"; bail "fs-craft sent its frames"; }
t1=$(date +%s.%N)
settle || bail "two windows of both daemons closed after the traffic"
SENT=$(tr_ .frames)
echo "# seed $SEED: $SENT frames in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s; classes $(tr_ '.classes | tostring')"
echo "# verdicts $(tr_ '.verdicts | tostring'); past the copy: $(tr_ .past_copy)"
check "fs-craft sent $FRAMES frames ($SENT)" [ "$SENT" = "$FRAMES" ]
check "the two oracles agree on every constructed frame ($(tr_ .disagreements) disagreements)" \
	[ "$(tr_ .disagreements)" = 0 ]
diag <"$WORK/craft.log"

# ---------------------------------------------------------------- exactly once
# A frame the kernel drops between the two hooks (the receive backlog
# full) is counted by A, not by B, and is in veth's "tx dropped" (it
# failed to hand it on), not in VETH_RX's rx packets: a loss of the
# kernel's, told apart from a frontend's.  (VETH_RX's "rx dropped" counts
# frames discarded after the tracepoint, such as EtherTypes no protocol
# takes: not a loss here.)
tx=$(( $(link "$NS_TX" "$VETH_TX" tx) - tx0 )); rx=$(( $(link "$NS_RX" "$VETH_RX" rx) - rx0 ))
check "the veths carried every frame: $VETH_TX sent $tx, $VETH_RX received $rx (handed on, dropped: $(fs_link_stat "$NS_TX" "$VETH_TX" tx dropped))" \
	[ "$tx" = "$SENT" -a "$rx" = "$SENT" ]
check "A (egress) saw each frame once: rx $(eg .rx), recursion_misses $(eg .recursion_misses)" \
	[ "$(eg .rx)" = "$SENT" -a "$(eg .recursion_misses)" = 0 ]
check "B (ingress) saw each frame once: rx $(ig .rx), recursion_misses $(ig .recursion_misses)" \
	[ "$(ig .rx)" = "$SENT" -a "$(ig .recursion_misses)" = 0 ]

# The egress frontend's fragments and update_errors, which status does not
# show, from its pinned stats (enum fs_stat: NON_IP 2, FRAGMENTS 3,
# UPDATE_ERRORS 17); NON_IP, which status shows, says the indexes are right.
EG_NONIP=$(pstat "$PIN_A/egress/stats" 2)
EG_FRAGS=$(pstat "$PIN_A/egress/stats" 3)
EG_UPDERR=$(pstat "$PIN_A/egress/stats" 17)
check "A's pinned egress stats read like status (non_ip $EG_NONIP)" [ "$EG_NONIP" = "$(eg .non_ip)" ]

# partition WHO: rx == sketched + non_ip + malformed_total + update_errors,
# and malformed_total is the sum of its reasons.
part_a() {
	jq -e --argjson u "$EG_UPDERR" '.frontends[] | select(.name == "egress") |
		.rx == .sketched + .non_ip + .malformed_total + $u and
		.malformed_total == ([.malformed[]] | add)' "$WORK/st-a.json" >/dev/null
}
part_b() {
	jq -e '.counters | .rx == .sketched + .non_ip + .malformed_total + .update_errors and
		.malformed_total == ([.malformed[]] | add)' "$WORK/st-b.json" >/dev/null
}
check "A: rx = sketched + non_ip + malformed + update_errors ($(eg '[.rx, .sketched, .non_ip, .malformed_total]' | tr -d ' \n') + $EG_UPDERR)" part_a
check "B: rx = sketched + non_ip + malformed + update_errors ($(jq -c '.counters | [.rx, .sketched, .non_ip, .malformed_total, .update_errors]' "$WORK/st-b.json"))" part_b

# verdicts WHO JSON-OF-COUNTERS: every counter against the truth; prints
# the ones that differ.
verdicts() {
	jq -rn --slurpfile t "$TRUTH" --argjson c "$1" '
		$t[0] as $t |
		([["sketched", $c.sketched, $t.sketched], ["non_ip", $c.non_ip, $t.non_ip],
		  ["fragments", $c.fragments, $t.fragments],
		  ["update_errors", $c.update_errors, 0]] +
		 [$t.malformed | keys[] as $k | [$k, $c.malformed[$k], $t.malformed[$k]]] +
		 [$c.malformed | keys[] as $k | select($t.malformed[$k] == null) | [$k, $c.malformed[$k], 0]]) |
		.[] | select(.[1] != .[2]) | "\(.[0]): counted \(.[1]), truth \(.[2])"'
}
A_C=$(jq -c --argjson f "$EG_FRAGS" --argjson u "$EG_UPDERR" \
	'.frontends[] | select(.name == "egress") | {sketched, non_ip, malformed, fragments: $f, update_errors: $u}' "$WORK/st-a.json")
B_C=$(jq -c '.counters | {sketched, non_ip, malformed, fragments, update_errors}' "$WORK/st-b.json")
verdicts "$A_C" >"$WORK/bad-a"
check "A: sketched, non_ip, fragments and every malformed reason as the truth says" [ ! -s "$WORK/bad-a" ]
diag <"$WORK/bad-a"
verdicts "$B_C" >"$WORK/bad-b"
check "B: sketched, non_ip, fragments and every malformed reason as the truth says" [ ! -s "$WORK/bad-b" ]
diag <"$WORK/bad-b"
check "both: skb_nonlinear 0 (A $(eg .malformed.skb_nonlinear), B $(jq .counters.malformed.skb_nonlinear "$WORK/st-b.json"))" \
	[ "$(eg .malformed.skb_nonlinear)" = 0 -a "$(jq .counters.malformed.skb_nonlinear "$WORK/st-b.json")" = 0 ]

P=$(tr_ .sketched); B=$(tr_ .sketched_bytes)
check "A: the out windows hold exactly the $P frames, $B bytes sketched ($(eg '[.totals.packets, .totals.bytes]' | tr -d ' \n'))" \
	[ "$(eg .totals.packets)" = "$P" -a "$(eg .totals.bytes)" = "$B" ]
check "B: the in windows hold exactly the $P frames, $B bytes sketched ($(jq -c '[.totals.packets, .totals.bytes]' "$WORK/st-b.json"))" \
	jqe --argjson p "$P" --argjson b "$B" '.totals.packets == $p and .totals.bytes == $b' "$WORK/st-b.json"

# ---------------------------------------------------------------- quiet
check "quiet: A's XDP on $VETH_TX received nothing ($(jq .counters.rx "$WORK/st-a.json")), nor did $VETH_TX ($(( $(link "$NS_TX" "$VETH_TX" rx) - back_rx0 )))" \
	[ "$(jq .counters.rx "$WORK/st-a.json")" = 0 -a "$(link "$NS_TX" "$VETH_TX" rx)" = "$back_rx0" ]
check "quiet: B's egress frontend saw nothing sent ($(jq -r '.frontends[] | select(.name == "egress") | .rx' "$WORK/st-b.json")), nor did $VETH_RX send ($(( $(link "$NS_RX" "$VETH_RX" tx) - back_tx0 )))" \
	[ "$(jq -r '.frontends[] | select(.name == "egress") | .rx' "$WORK/st-b.json")" = 0 -a "$(link "$NS_RX" "$VETH_RX" tx)" = "$back_tx0" ]

# ---------------------------------------------------------------- keys
# top_ok WHO DIR N SORT: every flow listed is a key sent, of direction DIR,
# its packets and bytes never below the truth (Count-Min never
# undercounts), and above truth + e/w * N (N the frames or bytes sketched)
# for at most ceil(delta * flows listed) of them: the bound holds for each
# flow with probability 1 - delta, so among 10000 light flows a few may
# pass it (one of 10000 was seen 16 % over), never more than delta of
# them but by a fault.
top_ok() {
	local who=$1 dir=$2 n=$3 sort=$4
	"$CLI" --socket "$WORK/$who.sock" --timeout 20 top --span 120 --direction "$dir" \
		-n "$n" --sort "$sort" --json >"$WORK/top.json" || return 1
	jq -r '.flows[] | "\(.src) \(.dst) \(.sport) \(.dport) \(.proto_num) \(.packets) \(.bytes) \(.direction)"' \
		"$WORK/top.json" >"$WORK/top.txt"
	TOP_N=$(wc -l <"$WORK/top.txt")
	awk -v dir="$dir" -v w="$CMS_W" -v np="$P" -v nb="$B" -v tp="$(jq .total_packets "$WORK/top.json")" \
		-v delta="$(jq .error_bound.delta "$WORK/top.json")" '
		BEGIN { ep = 2.718281828459045 / w * np; eb = 2.718281828459045 / w * nb }
		NR == FNR { t[$1 " " $2 " " $3 " " $4 " " $5] = $6 " " $7; next }
		FNR == 1 && tp != np { print "total_packets " tp ", sketched " np }
		{ k = $1 " " $2 " " $3 " " $4 " " $5; n++
		  if ($8 != dir) { print k ": direction " $8; next }
		  if (!(k in t)) { print k ": never sent"; next }
		  split(t[k], a, " ")
		  if ($6 < a[1] || $7 < a[2]) print k ": " $6 " packets, " $7 " bytes, below the " a[1] ", " a[2] " sent"
		  if ($6 > a[1] + ep || $7 > a[2] + eb)
			over[++o] = k ": " $6 " packets, " $7 " bytes, sent " a[1] ", " a[2] ", bound e/w*N " int(ep) ", " int(eb) }
		END { allowed = int(delta * n) + (delta * n > int(delta * n))
		      if (o > allowed) { print o " flows above the bound, at most " allowed " allowed"
					 for (i = 1; i <= o; i++) print over[i] }
		      else if (o) print "# " o " of " n " flows above e/w*N (at most " allowed " allowed): " over[1] > "/dev/stderr" }' \
		"$KEYS" "$WORK/top.txt" >"$WORK/top.bad" 2>"$WORK/top.note"
	[ ! -s "$WORK/top.bad" ] && [ "$TOP_N" -ge 1 ]
}
for who in a b; do
	[ "$who" = a ] && dir=out || dir=in
	for args in "50 packets" "50 bytes" "10000 packets"; do
		set -- $args
		top_ok "$who" "$dir" "$1" "$2"; rc=$?
		check "$who: top --direction $dir -n $1 --sort $2: $TOP_N flows of $(jq .candidates "$WORK/top.json") candidates, each a key sent, within its bounds" \
			[ "$rc" = 0 ]
		head -5 "$WORK/top.bad" | diag
		cat "$WORK/top.note"
	done
done
# The other direction of each daemon: nothing.
none() {
	"$CLI" --socket "$WORK/$1.sock" top --span 120 --direction "$2" -n 10 --json >"$WORK/top.json" &&
		jqe '(.flows | length) == 0 and .total_packets == 0' "$WORK/top.json"
}
check "a: top --direction in lists nothing" none a in
check "b: top --direction out lists nothing" none b out

# flows_ok WHO DIR: distinct flows, sources, destinations within 4 rse.
flows_ok() {
	"$CLI" --socket "$WORK/$1.sock" flows --span 120 --direction "$2" --json >"$WORK/flows.json" || return 1
	jq -rn --slurpfile t "$TRUTH" --slurpfile f "$WORK/flows.json" --argjson p "$HLL_P" '
		(4 * 1.04 / (pow(2; $p) | sqrt)) as $e |
		["distinct_flows", "distinct_sources", "distinct_destinations"][] as $k |
		$t[0][$k] as $w | $f[0][$k] as $g |
		"# \($k): \($g), truth \($w)" ,
		(if ($g < $w - $e * $w - 1 or $g > $w + $e * $w + 1) then "BAD" else empty end)' >"$WORK/flows.out"
	cat "$WORK/flows.out"
	! grep -q BAD "$WORK/flows.out"
}
check "a: flows --direction out within 4 rse of the truth" flows_ok a out
check "b: flows --direction in within 4 rse of the truth" flows_ok b in

# ---------------------------------------------------------------- XDP
# The third frontend, XDP, on live traffic like the other two: B again on
# its pin dir, in its default mode (--ingress xdp, native on the veth),
# with --replace, which discards the tracepoint datapath (its counters,
# windows and pinned link), so what B counts from here on is this run
# alone.  A SIGKILL first, which leaves that datapath pinned and counting
# as a crash would; from there --replace is what switches modes
# (ingress_tp.sh checks both ways).
fsd_as b fsd_kill
start b --replace || bail "daemon B (--replace, --ingress xdp on $VETH_RX) answers status"
check "B counts what $VETH_RX receives with native XDP, afresh: frontend xdp, no tracepoint link left, counters and totals 0" \
	jqe '.frontends[0].name == "xdp" and .frontends[0].hook == "xdp" and
		.interfaces[0].state == "attached" and .interfaces[0].xdp_mode == "native" and
		.counters.rx == 0 and .totals.packets == 0' "$WORK/st-b.json"
# ip's xdp.mode: 1 is XDP_ATTACHED_DRV (native), 2 generic (linux/if_link.h).
xdp_native() {
	ip -n "$NS_RX" -d -j link show dev "$VETH_RX" >"$WORK/link.json" &&
		jqe '.[0].xdp.mode == 1' "$WORK/link.json" && [ ! -e "$PIN_B/tp_ingress" ]
}
check "... and the host agrees: a native XDP program on $VETH_RX, no $PIN_B/tp_ingress" xdp_native

# XDP parses each frame in place, not a copy of its first $COPY bytes:
# fs-craft --no-copy-limit sends frames made as before (another seed) and
# judges them reading every byte, so a frame whose headers run past the
# copy (the deep class, some mutated ones) is keyed here where the
# tracepoint frontends count it truncated.
#
# Every frame reaches the program, so the oracle leaves none out.  With an
# XDP program on VETH_RX, veth_xmit() (drivers/net/veth.c) puts every skb
# from VETH_TX on VETH_RX's XDP ring, after the checks it makes without
# XDP too (a whole Ethernet header, the MTU: the tracepoint phase above
# shows every frame here passes them), instead of handing it to the
# stack; a full ring pushes back on VETH_TX's pfifo (NETDEV_TX_BUSY, since
# Linux 6.16; netns.sh), it does not drop.  veth's NAPI poll then runs the
# program on each frame from its MAC header on, before GRO and the stack,
# once it has copied the skb into a page of its own (AF_PACKET leaves less
# headroom than XDP's 256 bytes), linear, as any frame up to 1514 bytes
# fits.  What could still be lost is that copy failing for want of
# memory: the frame is then in VETH_RX's rx packets (which count what the
# ring gave the poll) but never parsed, so B's own rx, not the veths',
# says that XDP saw every frame; and a frame veth_xmit() dropped would be
# in VETH_TX's tx dropped.
SEED_X=${FS_SKB_XDP_SEED:-$((SEED + 1))}
TRUTH="$WORK/truth-xdp.json"; KEYS="$WORK/keys-xdp.txt"
tx0=$(link "$NS_TX" "$VETH_TX" tx); rx0=$(link "$NS_RX" "$VETH_RX" rx)
back_tx0=$(link "$NS_RX" "$VETH_RX" tx); back_rx0=$(link "$NS_TX" "$VETH_TX" rx)
txd0=$(fs_link_stat "$NS_TX" "$VETH_TX" tx dropped)
t0=$(date +%s.%N)
fs_in "$NS_TX" "$CRAFT" -i "$VETH_TX" --dst-mac "$mac_rx" --frames "$FRAMES" \
	--seed "$SEED_X" --rate "$RATE" --copy "$COPY" --no-copy-limit --truth "$TRUTH" \
	--keys "$KEYS" 2>"$WORK/craft-xdp.log" ||
	{ diag <"$WORK/craft-xdp.log"; bail "fs-craft sent its frames (XDP run)"; }
t1=$(date +%s.%N)
settle || bail "two windows of both daemons closed after the XDP run"
SENT=$(tr_ .frames)
echo "# XDP run, seed $SEED_X: $SENT frames in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s; classes $(tr_ '.classes | tostring')"
echo "# verdicts in place $(tr_ '.verdicts | tostring')"
check "XDP run: fs-craft sent $FRAMES frames ($SENT), judged in place (copy_limit $(tr_ .copy_limit))" \
	[ "$SENT" = "$FRAMES" -a "$(tr_ .copy_limit)" = false ]
check "XDP run: the two oracles agree on every constructed frame ($(tr_ .disagreements) disagreements)" \
	[ "$(tr_ .disagreements)" = 0 ]
check "XDP run: $(tr_ .past_copy) frames whose verdict a $COPY-byte copy would change" \
	[ "$(tr_ .past_copy)" -gt 0 ]
diag <"$WORK/craft-xdp.log"

tx=$(( $(link "$NS_TX" "$VETH_TX" tx) - tx0 )); rx=$(( $(link "$NS_RX" "$VETH_RX" rx) - rx0 ))
txd=$(( $(fs_link_stat "$NS_TX" "$VETH_TX" tx dropped) - txd0 ))
check "XDP run: the veths carried every frame: $VETH_TX sent $tx, $VETH_RX's XDP ring took $rx (dropped on the way: $txd)" \
	[ "$tx" = "$SENT" -a "$rx" = "$SENT" -a "$txd" = 0 ]
check "B (XDP) saw each frame once: rx $(jq .counters.rx "$WORK/st-b.json") (frontend xdp: $(jq .frontends[0].rx "$WORK/st-b.json"))" \
	[ "$(jq .counters.rx "$WORK/st-b.json")" = "$SENT" -a "$(jq .frontends[0].rx "$WORK/st-b.json")" = "$SENT" ]
check "B (XDP): rx = sketched + non_ip + malformed + update_errors ($(jq -c '.counters | [.rx, .sketched, .non_ip, .malformed_total, .update_errors]' "$WORK/st-b.json"))" part_b
B_C=$(jq -c '.counters | {sketched, non_ip, malformed, fragments, update_errors}' "$WORK/st-b.json")
verdicts "$B_C" >"$WORK/bad-x"
check "B (XDP): sketched, non_ip, fragments and every malformed reason as the in-place truth says (skb_nonlinear 0)" \
	[ ! -s "$WORK/bad-x" ]
diag <"$WORK/bad-x"
P=$(tr_ .sketched); B=$(tr_ .sketched_bytes)
check "B (XDP): the in windows hold exactly the $P frames, $B bytes sketched ($(jq -c '[.totals.packets, .totals.bytes]' "$WORK/st-b.json"))" \
	jqe --argjson p "$P" --argjson b "$B" '.totals.packets == $p and .totals.bytes == $b' "$WORK/st-b.json"
check "XDP run quiet: B's egress frontend saw nothing sent ($(jq -r '.frontends[] | select(.name == "egress") | .rx' "$WORK/st-b.json")), nor did $VETH_RX send ($(( $(link "$NS_RX" "$VETH_RX" tx) - back_tx0 ))), nor $VETH_TX receive ($(( $(link "$NS_TX" "$VETH_TX" rx) - back_rx0 )))" \
	[ "$(jq -r '.frontends[] | select(.name == "egress") | .rx' "$WORK/st-b.json")" = 0 -a \
	  "$(link "$NS_RX" "$VETH_RX" tx)" = "$back_tx0" -a "$(link "$NS_TX" "$VETH_TX" rx)" = "$back_rx0" ]
for args in "50 packets" "50 bytes" "10000 packets"; do
	set -- $args
	top_ok b in "$1" "$2"; rc=$?
	check "b (XDP): top --direction in -n $1 --sort $2: $TOP_N flows of $(jq .candidates "$WORK/top.json") candidates, each a key sent, within its bounds" \
		[ "$rc" = 0 ]
	head -5 "$WORK/top.bad" | diag
	cat "$WORK/top.note"
done
check "b (XDP): top --direction out lists nothing" none b out
check "b (XDP): flows --direction in within 4 rse of the in-place truth" flows_ok b in

finish
