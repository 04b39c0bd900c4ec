#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# connections.sh - the connection frontend (bpf/conn.bpf.c): who opens TCP
# connections, from tp_btf/inet_sock_set_state.
#
#   NS_TX [clients, listener :7000] --veth-- NS_RX [flowsketchd, clients, listeners :8000, [::]:8001]
#
# The test opens connections whose every count it knows:
#   A  NS_TX -> NS_RX:8000          30 opened, 30 established (passive opens)
#   B  NS_RX -> NS_TX:7000          12 opened, 12 established (active opens)
#   C  NS_RX -> NS_TX:7001 (closed)  7 opened,  0 established (refused: RST)
#   M  NS_TX -> NS_RX [::]:8001      5 opened,  5 established, on an IPv6
#                                     socket: keyed as the IPv4 it is
#   X  NS_TX -> its own 127.0.0.1    9, in another namespace: not counted
# A and B run at the same time (state changes in process context and in
# softirq on the same CPUs).  Checked against that truth: the totals
# exactly, every listed key one of A, B, C, M with its counts in [truth,
# truth + e/w * N] (src the side that opened it, sport 0, dport the port
# connected to), the distinct sources that opened connections (2), the
# status counters; a SIGKILL and connections opened while no daemon runs,
# counted after the restart (the pinned link counted on); the CLI's
# refusal of --direction with --sort connections; no pin left on stop.
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

ADDR_TX=10.97.0.2
ADDR_RX=10.97.0.1
PIDS=()

test_cleanup() { [ ${#PIDS[@]} -gt 0 ] && kill -KILL "${PIDS[@]}" 2>/dev/null; }

cn() { fsd_front conn "$1"; }
settle() { fsd_settle conn; }

# listen NS FAMILY ADDR PORT: accept and close until killed.
listen() {
	(exec nsenter --net="/run/netns/$1" python3 -c '
import socket, sys
s = socket.socket(int(sys.argv[1]))
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if s.family == socket.AF_INET6:
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind((sys.argv[2], int(sys.argv[3]))); s.listen(128)
print("ready", flush=True)
while True:
    c, _ = s.accept(); c.close()' "$2" "$3" "$4" >"$WORK/listen-$4.out" 2>&1) &
	PIDS+=($!)
	disown $!	# killed by cleanup(), without a job notice
	fs_until 50 grep -qs ready "$WORK/listen-$4.out"
}
# connect NS ADDR PORT N: N connections one after the other; prints how
# many were established and how many refused.
connect() {
	fs_in "$1" python3 -c '
import socket, sys
ok = refused = 0
for _ in range(int(sys.argv[3])):
    try:
        c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
        ok += 1; c.close()
    except ConnectionRefusedError:
        refused += 1
print(ok, refused)' "$2" "$3" "$4"
}

fs_test con python3
fs_test_pair
fs_pair_addresses "$NS_TX" "$NS_RX" "$VETH_TX" "$VETH_RX" "$ADDR_TX" "$ADDR_RX" ||
	bail "addresses on the veth pair"
listen "$NS_RX" 2 "$ADDR_RX" 8000 && listen "$NS_RX" 10 "::" 8001 &&
	listen "$NS_TX" 2 "$ADDR_TX" 7000 && listen "$NS_TX" 2 127.0.0.1 9000 ||
	bail "the listeners"

fsd_start || bail "flowsketchd answers status"
ok "flowsketchd on $VETH_RX answers status"
CMS_W=$(jq .params.cms_width "$WORK/st.json")
check "status lists the conn frontend (tp_btf/inet_sock_set_state, attached)" \
	jqe '[.frontends[] | select(.name == "conn")][0] | .hook == "tp_btf/inet_sock_set_state" and .attached == true and .direction == "connections"' "$WORK/st.json"
check "its link and maps are pinned under $PIN_DIR/conn" \
	test -e "$PIN_DIR/conn/link" -a -e "$PIN_DIR/conn/cms" -a -e "$PIN_DIR/conn/ctl"

connect "$NS_TX" "$ADDR_RX" 8000 30 >"$WORK/a.out" & a=$!
connect "$NS_RX" "$ADDR_TX" 7000 12 >"$WORK/b.out" & b=$!
wait $a && wait $b || bail "A and B connected"
connect "$NS_RX" "$ADDR_TX" 7001 7 >"$WORK/c.out" || bail "C tried"
connect "$NS_TX" "$ADDR_RX" 8001 5 >"$WORK/m.out" || bail "M connected"
connect "$NS_TX" 127.0.0.1 9000 9 >"$WORK/x.out" || bail "X connected"
check "the connections went as planned (A $(cat "$WORK/a.out"), B $(cat "$WORK/b.out"), C $(cat "$WORK/c.out"), M $(cat "$WORK/m.out"), X $(cat "$WORK/x.out"))" \
	[ "$(cat "$WORK/a.out")" = "30 0" -a "$(cat "$WORK/b.out")" = "12 0" -a "$(cat "$WORK/c.out")" = "0 7" -a "$(cat "$WORK/m.out")" = "5 0" -a "$(cat "$WORK/x.out")" = "9 0" ]
settle || bail "two windows closed after the connections"
OPENED=$((30 + 12 + 7 + 5)); EST=$((30 + 12 + 5))
check "totals: exactly $OPENED opened and $EST established ($(cn '.totals | [.connections, .established]' | tr -d ' \n'))" \
	[ "$(cn .totals.connections)" = "$OPENED" -a "$(cn .totals.established)" = "$EST" ]
check "status: every state change counted once, none of the other namespace ($(cn '[.rx, .sketched, .recursion_misses]' | tr -d ' \n'))" \
	[ "$(cn .rx)" = $((OPENED + EST)) -a "$(cn .sketched)" = $((OPENED + EST)) ]

cli status >"$WORK/status.txt"
check "the status table's conn line says $OPENED connections opened, $EST established" \
	grep -q "conn (tp_btf/inet_sock_set_state, [a-z]*): $((OPENED + EST)) state changes, $OPENED connections opened, $EST established" "$WORK/status.txt"
cli top --sort connections --span 60 -n 10 --json >"$WORK/top.json" || bail "top --sort connections answers"
# The truth, keyed like the answer: src dst dport -> opened established.
cat >"$WORK/truth.json" <<EOT
{"$ADDR_TX $ADDR_RX 8000": [30, 30], "$ADDR_RX $ADDR_TX 7000": [12, 12],
 "$ADDR_RX $ADDR_TX 7001": [7, 0], "$ADDR_TX $ADDR_RX 8001": [5, 5]}
EOT
jq -r --slurpfile t "$WORK/truth.json" --argjson w "$CMS_W" --argjson n "$OPENED" --argjson e "$EST" '
	(2.718281828459045 / $w) as $eps |
	if .total_connections != $n or .total_established != $e then "totals \(.total_connections)/\(.total_established)" else empty end,
	(.flows[] | "\(.src) \(.dst) \(.dport)" as $k | $t[0][$k] as $v |
	 if $v == null then "\($k): not opened by the test"
	 elif .sport != 0 or .proto != "tcp" or .family != 4 then "\($k): sport \(.sport), proto \(.proto), family \(.family)"
	 elif .connections < $v[0] or .connections > $v[0] + $eps * $n then "\($k): \(.connections) opened, truth \($v[0])"
	 elif .established < $v[1] or .established > $v[1] + $eps * $e then "\($k): \(.established) established, truth \($v[1])"
	 else empty end)' "$WORK/top.json" >"$WORK/top.bad"
check "top --sort connections: all four keys, each within [truth, truth + e/w * N]" \
	[ ! -s "$WORK/top.bad" -a "$(jq '.flows | length' "$WORK/top.json")" = 4 ]
diag <"$WORK/top.bad"
check "... first the source that opened the most ($ADDR_TX to :8000)" \
	jqe --arg s "$ADDR_TX" '.flows[0] | .src == $s and .dport == 8000' "$WORK/top.json"
check "... the refused ones opened and never established, the IPv6 socket's keyed as IPv4" \
	jqe '([.flows[] | select(.dport == 7001)][0].established == 0) and ([.flows[] | select(.dport == 8001)][0].family == 4)' "$WORK/top.json"
cli top --sort connections --span 60 --once >"$WORK/top.txt"
check "the table names its columns opened and established" grep -q "opened  established" "$WORK/top.txt"
cli flows --span 60 --json >"$WORK/flows.json"
check "flows: 2 distinct sources opened connections, to 2 destinations; $OPENED opened, $EST established" \
	jqe --argjson n "$OPENED" --argjson e "$EST" '.connections | .distinct_sources == 2 and .distinct_destinations == 2 and .opened == $n and .established == $e' "$WORK/flows.json"
cli top --sort connections --direction in >"$WORK/bad.out" 2>&1; rc=$?
check "--direction with --sort connections: exit 2, says why" \
	eval '[ "$rc" = 2 ] && grep -q "does not apply" "$WORK/bad.out"'

# ---------------------------------------------------------------- SIGKILL
fsd_kill
connect "$NS_TX" "$ADDR_RX" 8000 10 >"$WORK/d.out" || bail "connections while no daemon runs"
fsd_start || bail "a restart after SIGKILL answers status"
check "the restart adopts the connection frontend" jqe '[.frontends[] | select(.name == "conn")][0].adopted == true' "$WORK/st.json"
settle || bail "two windows closed after the restart"
check "the 10 opened while no daemon ran are counted ($(cn .totals.connections) vs $((OPENED + 10)))" \
	[ "$(cn .totals.connections)" = $((OPENED + 10)) -a "$(cn .totals.established)" = $((EST + 10)) ]

kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID"; rc=$?; DAEMON_PID=""
check "SIGTERM: exit 0 (got $rc)" [ "$rc" = 0 ]
check "SIGTERM without --keep: no pin directory left" [ ! -e "$PIN_DIR" ]
finish
