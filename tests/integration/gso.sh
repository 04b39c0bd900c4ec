#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# gso.sh - a GSO skb is counted as the packets and bytes it is on the wire.
#
#   NS_TX [TCP server] <--veth--> NS_RX [TCP client, flowsketchd --ingress tracepoint]
#
# TCP over a veth is sent as GSO super-packets (veth offers GSO): the
# transmit tracepoint sees one skb for dozens of segments.  The client
# sends BYTES of payload over one connection, then the server's side sends
# as many back.  The oracle is the sending kernel's own segment count
# (/proc/net/snmp Tcp OutSegs + RetransSegs of the sender's namespace:
# OutSegs leaves retransmissions out, which a loaded host makes; InSegs
# counts a received GSO skb once, so it is used for the ACKs only) and
# the bytes those segments are on the wire: payload + per segment 14
# (Ethernet) + 20 (IPv4) + 32 (TCP with timestamps), the SYN's 8 more
# option bytes, and up to a full segment (1514) per retransmission.  A
# frame the veth drops (its backlog full) was counted sent but is never
# received: its skb's segments, at most 64 each, are allowed for.
# Checked, both ways (the veth hands its GSO skbs to the peer's stack as
# they are, so the receive tracepoint sees them too): packets exactly the
# segments (one per skb would be ~40 times fewer), bytes within 0.2 % of
# the wire's (one header per skb would be ~4 % fewer), the ACKs' count
# exact; top lists the connection with at least its segments.  The same
# through a VXLAN tunnel over the veth, whose segments repeat the outer
# and the inner headers.  ARP is not keyed, and the namespaces carry no
# other IP traffic (netns.sh), so "exactly" is exact.  Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

ADDR_TX=10.99.0.2
ADDR_RX=10.99.0.1
PORT=5201
BYTES=$((24 * 1024 * 1024))
tcp_segs() {	# NS FIELD: the namespace's Tcp FIELD from /proc/net/snmp
	fs_in "$1" awk -v f="$2" '$1 == "Tcp:" { if (!n) { for (i = 2; i <= NF; i++) c[$i] = i; n = 1 } else print $c[f] }' /proc/net/snmp
}
settle() { fsd_settle egress; }
no_last_ack() { [ -z "$(fs_in "$1" ss -H -tn state last-ack)" ]; }

fs_test gso python3
fs_test_pair
fs_pair_addresses "$NS_TX" "$NS_RX" "$VETH_TX" "$VETH_RX" "$ADDR_TX" "$ADDR_RX" ||
	bail "addresses on the veth pair"
fsd_start --ingress tracepoint || bail "flowsketchd answers status"
ok "flowsketchd --ingress tracepoint on $VETH_RX answers status"
CMS_W=$(jq .params.cms_width "$WORK/st.json")

# transfer SERVER_NS SERVER_ADDR CLIENT_NS: BYTES over one connection;
# 0 once the server got them all.
transfer() {
	# Emptied here, not by the server's own redirection: that one runs
	# in the background job, and until it does, the last transfer's
	# "ready" would send the client to a port nobody listens on yet.
	rm -f "$WORK/server.out"
	fs_in "$1" python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(1)
print("ready", flush=True)
c, _ = s.accept(); n = 0
while True:
    b = c.recv(1 << 20)
    if not b: break
    n += len(b)
c.close(); print(n, flush=True)' "$2" "$PORT" >"$WORK/server.out" 2>&1 &
	local server=$!
	fs_until 50 grep -qs ready "$WORK/server.out" || { kill "$server"; return 1; }
	fs_in "$3" python3 -c '
import socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
buf = b"\xa5" * (1 << 20); left = int(sys.argv[3])
while left:
    n = c.send(buf[:min(left, len(buf))]); left -= n
c.shutdown(socket.SHUT_WR)
while c.recv(65536): pass
c.close()' "$2" "$PORT" "$BYTES" || return 1
	wait "$server"
	# The last ACK: the server's socket leaves LAST_ACK when it arrives.
	fs_until 30 no_last_ack "$1"
	[ "$(tail -1 "$WORK/server.out")" = "$BYTES" ]
}

# Out: NS_RX sends the data (GSO skbs through the transmit tracepoint).
segs_sent() { echo $(($(tcp_segs "$1" OutSegs) + $(tcp_segs "$1" RetransSegs))); }
retrans() { tcp_segs "$1" RetransSegs; }
# bytes_ok GOT SEGS RETRANS [HDR]: within 0.2 % of the wire's bytes with
# HDR bytes of headers a segment (66), retransmitted segments counted full
# or not at all.
bytes_ok() {
	awk -v g="$1" -v s="$2" -v r="$3" -v b="$BYTES" -v h="${4:-66}" 'BEGIN {
		lo = b + (s - r) * h + 8; hi = lo + r * 1514 + r * h;
		exit !(g >= lo * 0.998 && g <= hi * 1.002) }'
}
dropped() { fs_link_stat "$1" "$2" tx dropped; }
out0=$(segs_sent "$NS_RX"); r0=$(retrans "$NS_RX"); in0=$(tcp_segs "$NS_RX" InSegs)
transfer "$NS_TX" "$ADDR_TX" "$NS_RX"
check "out transfer: the server received all $BYTES bytes" [ $? = 0 ]
out1=$(segs_sent "$NS_RX"); in1=$(tcp_segs "$NS_RX" InSegs)
OUT=$((out1 - out0)); IN=$((in1 - in0)); R=$(($(retrans "$NS_RX") - r0))
settle || bail "two windows closed after the traffic"
eg() { fsd_front egress "$1"; }
WIRE=$((BYTES + OUT * 66 + 8))
echo "# sent $OUT segments ($R retransmitted), received $IN; egress skbs $(eg .rx), packets $(eg .totals.packets), bytes $(eg .totals.bytes) (wire $WIRE without retransmissions)"
check "the stack sent GSO skbs: fewer skbs than segments ($(eg .rx) skbs, $OUT segments)" \
	[ "$(eg .rx)" -lt $((OUT / 4)) ]
check "out: packets exactly the $OUT TCP segments sent ($(eg .totals.packets))" \
	[ "$(eg .totals.packets)" = "$OUT" ]
check "out: bytes within 0.2 % of the bytes the segments are on the wire ($(eg .totals.bytes))" \
	bytes_ok "$(eg .totals.bytes)" "$OUT" "$R"
check "in: packets exactly the $IN TCP segments received ($(jq .totals.packets "$WORK/st.json"))" \
	jqe --argjson n "$IN" '.totals.packets == $n' "$WORK/st.json"
cli top --span 60 -n 5 --direction out --json >"$WORK/top.json"
check "top --direction out: the connection first, with its $OUT segments at least and within e/w * N" \
	jqe --arg s "$ADDR_RX" --arg d "$ADDR_TX" --argjson n "$OUT" --argjson w "$CMS_W" \
	'.flows[0] | .src == $s and .dst == $d and .dport == 5201 and .packets >= $n and .packets <= $n + 2.718281828459045 / $w * $n' "$WORK/top.json"

# In: NS_TX sends the data; the veth hands its GSO skbs to NS_RX's stack
# as they are, through the receive tracepoint.
in_p0=$(jq .totals.packets "$WORK/st.json"); in_b0=$(jq .totals.bytes "$WORK/st.json")
in0=$(segs_sent "$NS_TX"); r0=$(retrans "$NS_TX"); d0=$(dropped "$NS_TX" "$VETH_TX")
transfer "$NS_RX" "$ADDR_RX" "$NS_TX"
check "in transfer: the server received all $BYTES bytes" [ $? = 0 ]
IN2=$(($(segs_sent "$NS_TX") - in0)); R2=$(($(retrans "$NS_TX") - r0))
D2=$(($(dropped "$NS_TX" "$VETH_TX") - d0))
settle || bail "two windows closed after the traffic"
WIRE2=$((BYTES + IN2 * 66 + 8))
got_p=$(($(jq .totals.packets "$WORK/st.json") - in_p0)); got_b=$(($(jq .totals.bytes "$WORK/st.json") - in_b0))
echo "# NS_TX sent $IN2 segments ($R2 retransmitted), the veth dropped $D2 skbs; ingress packets $got_p, bytes $got_b (wire $WIRE2), frames $(jq -r '.frontends[0].rx' "$WORK/st.json")"
check "in: packets the $IN2 TCP segments sent, exactly unless the veth dropped some ($got_p, $D2 skbs dropped)" \
	[ "$got_p" -le "$IN2" -a "$got_p" -ge $((IN2 - 64 * D2)) ]
check "in: bytes within 0.2 % of the bytes on the wire ($got_b)" \
	bytes_ok "$got_b" "$IN2" "$R2"

# Tunnelled: TCP inside VXLAN over the veth.  The stack hands the veth
# GSO skbs of encapsulated segments (gso_type UDP_TUNNEL), each segment
# repeating the outer Ethernet, IPv4, UDP and VXLAN headers and the inner
# Ethernet, IPv4 and TCP ones: 14 + 20 + 8 + 8 + 14 + 20 + 32 = 116 bytes.
# Measured from the outer transport header, the bytes would be ~4 % low.
for x in TX RX; do
	ns=NS_$x; ns=${!ns}; v=VETH_$x; v=${!v}
	if [ $x = TX ]; then me=$ADDR_TX peer=$ADDR_RX in=10.201.0.2
	else me=$ADDR_RX peer=$ADDR_TX in=10.201.0.1; fi
	fs_in "$ns" ip link add fsvx0 type vxlan id 7 local "$me" remote "$peer" dstport 4789 dev "$v" &&
		fs_in "$ns" ip addr add "$in/24" dev fsvx0 &&
		fs_in "$ns" ip link set fsvx0 up || bail "a VXLAN tunnel over the veth"
done
# The inner neighbours by hand: an inner ARP would be one more outer
# (UDP) packet, and exact counts are the point.
fs_in "$NS_RX" ip neigh replace 10.201.0.2 lladdr "$(fs_mac "$NS_TX" fsvx0)" dev fsvx0 nud permanent &&
	fs_in "$NS_TX" ip neigh replace 10.201.0.1 lladdr "$(fs_mac "$NS_RX" fsvx0)" dev fsvx0 nud permanent ||
	bail "the tunnel's neighbours"
out_p0=$(fsd_front egress .totals.packets); out_b0=$(fsd_front egress .totals.bytes)
o0=$(segs_sent "$NS_RX"); r0=$(retrans "$NS_RX")
transfer "$NS_TX" 10.201.0.2 "$NS_RX"
check "tunnelled transfer: the server received all $BYTES bytes" [ $? = 0 ]
OV=$(($(segs_sent "$NS_RX") - o0)); RV=$(($(retrans "$NS_RX") - r0))
settle || bail "two windows closed after the traffic"
vp=$(($(fsd_front egress .totals.packets) - out_p0)); vb=$(($(fsd_front egress .totals.bytes) - out_b0))
echo "# tunnelled: sent $OV inner segments ($RV retransmitted); egress packets $vp, bytes $vb"
check "tunnelled: packets exactly the $OV inner TCP segments sent ($vp)" [ "$vp" = "$OV" ]
check "tunnelled: bytes within 0.2 % of the wire's, 116 header bytes a segment ($vb)" \
	bytes_ok "$vb" "$OV" "$RV" 116

kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID"; rc=$?; DAEMON_PID=""
check "SIGTERM: exit 0 (got $rc)" [ "$rc" = 0 ]
finish
