#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# multi_iface.sh - one daemon, two interfaces, one set of sketches.
#
#   NS_TX [fs-gen] --veth A--> NS_RX [flowsketchd -i A -i B]
#         [fs-gen] --veth B-->
#
# The daemon loads the datapath once and attaches it to every -i; the
# sketches are host-wide, so the answers must cover the traffic of both
# links: status lists both, totals are the sum of what was sent on each,
# each link's heaviest flow is in the top list with a count within the
# bound, and every listed flow is one that was sent, its counts within
# [truth, truth + eps*N].  The bound is computed here, eps*N = e / width *
# N with the width from status --json .params and N the packets (bytes)
# the two truth files say were sent, never the daemon's error_bound.
# Per interface, status --json .interfaces[].in is exactly the packets
# and bytes (whole frames) the link's truth file says were sent on it,
# .out 0 (nothing is sent from NS_RX), .unattributed 0, and the status
# table prints the same per interface.  (Restarts that adopt these
# counters in another -i order: iface_counts.sh.)
# SIGTERM detaches both.  Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

A_TX="fsmiat$ID"
A_RX="fsmiar$ID"
B_TX="fsmibt$ID"
B_RX="fsmibr$ID"

# settle: status until two more windows closed (in $WORK/st.json):
# whatever was sent before is counted, in finished windows too.
settle() { fsd_settle; }

# send LINK_TX LINK_RX SEED PACKETS: skewed traffic on one link.
send() {
	fs_in "$NS_TX" "$GEN" -i "$1" --dst-mac "$(fs_mac "$NS_RX" "$2")" \
		--flows 200 --packets "$4" --zipf 1.3 --seed "$3" \
		--ipv6-share 0.3 --truth "$WORK/truth-$1.json" 2>"$WORK/gen.log"
}

fs_test mi "$GEN"
fs_pair_create "$NS_TX" "$NS_RX" "$A_TX" "$A_RX" || bail "first veth pair"
fs_veth_add "$NS_TX" "$NS_RX" "$B_TX" "$B_RX" || bail "second veth pair"
ok "two veth pairs between $NS_TX and $NS_RX"

FSD_IFACES=(-i "$A_RX" -i "$B_RX")
fsd_start
names=$(jq -r '[.interfaces[].name] | sort | join(" ")' "$WORK/st.json" 2>/dev/null)
want=$(printf '%s\n' "$A_RX" "$B_RX" | sort | tr '\n' ' ' | sed 's/ $//')
if [ "$names" = "$want" ]; then
	ok "status lists both interfaces ($names)"
else
	bail "status lists both interfaces (got '$names')"
fi

for link in "$A_RX" "$B_RX"; do
	check "XDP attached to $link in native mode" \
		sh -c "ip -n '$NS_RX' -d link show dev '$link' | grep -q 'prog/xdp' &&
		       [ \"\$(jq -r '.interfaces[] | select(.name == \"$link\") | .xdp_mode' '$WORK/st.json')\" = native ]"
done

send "$A_TX" "$A_RX" 1 20000 || { diag <"$WORK/gen.log"; bail "traffic on $A_TX"; }
send "$B_TX" "$B_RX" 2 30000 || { diag <"$WORK/gen.log"; bail "traffic on $B_TX"; }
sent=$(( $(jq .total_packets "$WORK/truth-$A_TX.json") + $(jq .total_packets "$WORK/truth-$B_TX.json") ))
ok "sent $sent packets over both links"

# Two windows after the last packet, everything is in finished windows.
settle || bail "two windows closed after the traffic"
cli top -n 50 --json --once --span 60 >"$WORK/top.json" 2>"$WORK/err" ||
	{ diag <"$WORK/err"; bail "top answers"; }
check "totals cover both links ($(jq .total_packets "$WORK/top.json") of $sent)" \
	[ "$(jq .total_packets "$WORK/top.json")" = "$sent" ]

width=$(jq '.params.cms_width' "$WORK/st.json")
[[ "$width" =~ ^[0-9]+$ ]] && [ "$width" -gt 0 ] || bail "status gives the Count-Min width (got '$width')"
# One truth for both links: flows summed by five-tuple (the two senders
# may draw the same tuple).
jq -s '{total_packets: (map(.total_packets) | add), total_bytes: (map(.total_bytes) | add),
	flows: ([.[].flows[]] | group_by([.src, .dst, .sport, .dport, .proto]) |
		map(.[0] + {packets: (map(.packets) | add), bytes: (map(.bytes) | add)}))}' \
	"$WORK/truth-$A_TX.json" "$WORK/truth-$B_TX.json" >"$WORK/truth.json"
bound=$(jq --argjson w "$width" '(1 | exp) / $w * .total_packets' "$WORK/truth.json")
bound_b=$(jq --argjson w "$width" '(1 | exp) / $w * .total_bytes' "$WORK/truth.json")
echo "# eps*N = e/$width * N: $bound packets, $bound_b bytes"
for link in "$A_TX" "$B_TX"; do
	# The link's heaviest flow, as fs-gen wrote it, found in top by key.
	found=$(jq -n --slurpfile tr "$WORK/truth-$link.json" --slurpfile top "$WORK/top.json" --argjson b "$bound" '
		($tr[0].flows | max_by(.packets)) as $f
		| [$top[0].flows[] | select(.src == $f.src and .dst == $f.dst and
			.sport == $f.sport and .dport == $f.dport)]
		| length == 1 and .[0].packets >= $f.packets and .[0].packets <= $f.packets + $b')
	check "the heaviest flow sent on $link is in top within the bound" [ "$found" = true ]
done
bad=$(jq -rn --slurpfile tr "$WORK/truth.json" --slurpfile top "$WORK/top.json" \
	--argjson bp "$bound" --argjson bb "$bound_b" '
	def key: "\(.src)|\(.dst)|\(.sport)|\(.dport)|\(.proto)";
	($tr[0].flows | map({(key): .}) | add) as $t |
	$top[0].flows[] | . as $f | $t[$f | key] as $true |
	if $true == null then "\($f | key) is not a flow either link carried"
	elif $f.packets < $true.packets or $f.packets > $true.packets + $bp or
	     $f.bytes < $true.bytes or $f.bytes > $true.bytes + $bb then
		"\($f | key): \($f.packets) packets, \($f.bytes) bytes; sent \($true.packets), \($true.bytes)"
	else empty end' 2>&1)
n_top=$(jq '.flows | length' "$WORK/top.json")
if [ -z "$bad" ] && [ "$n_top" -gt 0 ]; then
	ok "each of the $n_top flows in top was sent, packets and bytes in [truth, truth + eps*N]"
else
	not_ok "each of the $n_top flows in top was sent, packets and bytes in [truth, truth + eps*N]"
	echo "$bad" | diag
fi

# Per interface, since load: exactly what its truth file says was sent
# on that link (st.json is from settle, after the traffic).
for pair in "$A_TX $A_RX" "$B_TX $B_RX"; do
	set -- $pair
	tp=$(jq .total_packets "$WORK/truth-$1.json")
	tb=$(jq .total_bytes "$WORK/truth-$1.json")
	got=$(jq -c --arg n "$2" '[.interfaces[] | select(.name == $n) | .in.packets, .in.bytes]' "$WORK/st.json")
	check "status: $2 received exactly what was sent on it, $tp packets, $tb bytes (got $got)" \
		[ "$got" = "[$tp,$tb]" ]
	got=$(jq -c --arg n "$2" '[.interfaces[] | select(.name == $n) | .out.packets, .out.bytes]' "$WORK/st.json")
	check "status: $2 sent nothing, out 0 packets, 0 bytes (got $got)" [ "$got" = "[0,0]" ]
done
got=$(jq -c '[.unattributed.in.packets, .unattributed.in.bytes, .unattributed.out.packets]' "$WORK/st.json")
check "status: nothing unattributed (in packets, bytes, out packets: $got)" [ "$got" = "[0,0,0]" ]
# The table: "  NAME  in N packets (X)  out 0 packets (0 B)", N grouped.
cli status >"$WORK/status.txt" 2>&1
for pair in "$A_TX $A_RX" "$B_TX $B_RX"; do
	set -- $pair
	tp=$(jq .total_packets "$WORK/truth-$1.json" | sed ':a; s/\B[0-9]\{3\}\>/,&/; ta')
	check "the status table has $2's line: in $tp packets, out 0 ($(grep -m1 -- "^  $2 " "$WORK/status.txt"))" \
		grep -Eq -- "^  $2 +in +$tp packets \(.*\) +out +0 packets " "$WORK/status.txt"
done

kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID"
rc=$?
DAEMON_PID=""
check "SIGTERM stops the daemon (exit $rc)" [ "$rc" -eq 0 ]
for link in "$A_RX" "$B_RX"; do
	check "XDP detached from $link" \
		sh -c "! ip -n '$NS_RX' -d link show dev '$link' | grep -q 'prog/xdp'"
done
check "no pins left" [ ! -e "$PIN_DIR" ]
finish
