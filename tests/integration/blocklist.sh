#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# blocklist.sh - the blocklist end to end: datagrams from many source
# addresses through a veth pair, counted per source by a UDP receiver
# behind the daemon's XDP program; blocked sources must lose everything,
# every other source nothing.
#
#   NS_TX [blocklist_traffic.py send] --veth--> NS_RX [XDP, flowsketchd --blocklist FILE]
#                                                     [blocklist_traffic.py recv, UDP :PORT]
#
# The oracle is the traffic: the sender writes what the kernel accepted
# from each source, the receiver what reached its socket, and the sources
# a list must block follow from the CIDRs this script has added and
# deleted (its own model, MODEL below, checked by Python's ipaddress, not
# by the daemon).  The daemon's numbers are used only where its counters
# are what is tested (per-entry packets and bytes, status' dropped_packets),
# and then against the truth.
#
# Addresses.  The sender spoofs its sources (AF_PACKET frames to the
# receiving veth's MAC): 76 IPv4 sources, most of them 16 to a /24, some
# on the edges of the entries (10.1.0.0, 10.1.255.255 inside 10.1.0.0/16,
# 10.0.255.255 and 10.2.0.0 just outside it, ...), and 19 IPv6 sources in
# four /64s, including the last address of fd00:1:0:1::/64 and the ones on
# either side of it.  The receiving veth holds the destinations, 10.255.0.1
# and fd00:ff::1 (IPv6 enabled on it alone, no DAD; netns.sh leaves it
# disabled everywhere else), and has rp_filter off, so that the stack
# accepts sources it has no route to (IPv6 has no reverse-path filter).
# Nothing answers: the receiver only reads, and the sending namespace has
# no addresses at all.
#
# Synchronisation.  Every datagram of every family goes to one dual-stack
# socket, so the receiver reads them in the order the veth's single queue
# delivered them.  After a phase's last datagram the sender sends an end
# marker from 10.99.0.1 (never blocked); when the receiver has read the
# marker it has read everything of that phase that got through, and writes
# its counts.  No sleeps stand in for "the traffic has arrived".
#
# What is shown, in order (TAP, with a plan):
#   1. a missing list file is an empty list; with it, every source
#      receives every datagram (the harness loses nothing by itself);
#   2. after `block add` returns with a /32, a /24 over 16 sources, an IPv6
#      /64 and /128, and overlapping pairs (a /24 inside a /16, a /32
#      inside a /24), the covered sources receive nothing and all others
#      everything; the IP stack of the receiving namespace saw only the
#      latter; per-entry counters and status' dropped_packets agree with
#      the datagrams lost;
#   3. deleting one of two overlapping entries keeps its sources blocked;
#      deleting the other restores exactly the sources nothing else covers;
#   4. the list file follows every change, and a daemon restarted on it
#      lists the same entries and blocks the same sources; a list file
#      with a bad line 3 makes the daemon refuse to start, naming the
#      file and the line, with no XDP program left on the interface;
#   5. while traffic flows, entries are added and deleted (overlapping
#      ones, IPv4 and IPv6, and the /32 between two never-listed
#      neighbours): never-listed sources lose no datagram; a churned
#      source's datagrams sent after the add covering it returned are all
#      dropped, those sent after the last del covering it returned all
#      arrive (each send() and each CLI call is timed; a datagram sent
#      within CHURN_SLACK of the next change's call may go either way);
#   6. bad CIDRs (host bits, /33, /129, garbage, empty) in `block add` and
#      `block del` fail with one line naming the argument's position and
#      apply nothing of their request; `block load` of a bad file applies
#      nothing; `block clear` lets everything through; `block load` of a
#      good file blocks its sources again; a source the verdict cache
#      passed is dropped when the 255th add after it covers it (the
#      generation has come round: the caches were zeroed on the way);
#   7. a daemon killed with SIGKILL leaves the datapath pinned: its list
#      is still enforced with no daemon running; the list file is edited
#      (one entry removed, one added, the others kept, one of them inside
#      the removed one), and a daemon started again on the same pin and
#      state directories adopts (status .adopted) while traffic flows
#      through the restart: the kept entries' sources receive nothing
#      before, during or after it, never-listed ones everything; the
#      removed entry's source is dropped until the daemon is launched and
#      passes from its first status answer on, the added entry's the other
#      way round; `block list` is the file; the kept entries' counters go
#      on from where they were (at least their count before the kill plus
#      their sources' losses with no daemon and after the new one answered),
#      and those of entries overlapping no other equal the datagrams their
#      sources lost since they were listed.
# Runs in about 23 s.  Only the namespaces and the veth pair made here are
# touched; they, the pins (with `flowsketchd --detach` when a killed daemon
# left them) and the work directory go on every exit.
set -u
export LC_ALL=C	# EPOCHREALTIME with a decimal point
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

HELPER=tests/integration/blocklist_traffic.py
DST4=10.255.0.1
DST6=fd00:ff::1
PORT=9999
COUNT=40		# datagrams per source in a phase
RATE=20000		# datagrams per second, all sources together
CHURN_SECONDS=6
CHURN_RATE=8000
CHURN_GAP=0.3		# seconds between two changes while traffic flows
CHURN_SLACK=0.05	# how long a frame may wait between send() and XDP
STATE=""		# phase 7's --state-dir
RECV_PID=""
SEND_PID=""

# Sources, by what the list will do to them.
A=$(printf '10.1.1.%d ' $(seq 1 16))		# 10.1.1.0/24 and 10.1.0.0/16
B="$(printf '10.1.2.%d ' $(seq 1 14))10.1.0.0 10.1.255.255"	# 10.1.0.0/16 only
C=$(printf '10.2.3.%d ' $(seq 1 16))		# 10.2.3.0/24; .5 also 10.2.3.5/32
D=$(printf '10.3.4.%d ' $(seq 1 16))		# .7: 10.3.4.7/32; the rest never
EDGE4="10.0.255.255 10.2.0.0 10.2.2.255 10.2.4.0"	# never: just outside
X4=$(printf '10.5.0.%d ' $(seq 1 8))		# churn: 10.5.0.0/29 (.1-.7), 10.5.0.4/32
E6="$(printf 'fd00:1:0:1::%x ' $(seq 1 8))fd00:1:0:1:ffff:ffff:ffff:ffff"	# fd00:1:0:1::/64
F6=$(printf 'fd00:1:0:2::%x ' $(seq 1 4))	# ::3: fd00:1:0:2::3/128
EDGE6="fd00:1:0:0:ffff:ffff:ffff:ffff fd00:1:0:2::"	# never: either side of the /64
X6=$(printf 'fd00:5::%x ' $(seq 1 4))		# churn: fd00:5::/126 (::1-::3)
SRC4=$(echo "$A $B $C $D $EDGE4 $X4" | tr -s " " ,)
SRC6=$(echo "$E6 $F6 $EDGE6 $X6" | tr -s " " ,)

test_cleanup() {
	[ -n "$SEND_PID" ] && kill "$SEND_PID" 2>/dev/null
	[ -n "$RECV_PID" ] && kill "$RECV_PID" 2>/dev/null && wait "$RECV_PID" 2>/dev/null
	rm -rf "$PIN_BAD"
}

helper() { python3 "$HELPER" "$@"; }

# daemon_start [ARG...]: flowsketchd on VETH_RX with the list in $LIST (and
# ARG...), until it answers status and its program is on the interface.
# T_ANS: when the status answer was in (EPOCHREALTIME).
daemon_start() {
	fsd_start --blocklist "$LIST" "$@" || return 1
	T_ANS=$FSD_ANSWERED
	fs_until 100 --while "$DAEMON_PID" attached_answering
}
# XDP on VETH_RX; if not yet, T_ANS is a fresh status answer's.
attached_answering() { xdp_attached || { fsd_status && T_ANS=$FSD_ANSWERED; return 1; }; }

# wait_recv N: the receiver has read phase N's end marker.
wait_recv() { fs_until 100 test -f "$T/recv-$1.json"; }

# send_phase: one phase of traffic, COUNT datagrams from every source,
# up to its end marker.  Sets SENT and RECV to the phase's files.  With
# SEND_CPU set, the sender runs on that CPU alone (and so does XDP, in the
# sender's softirq): what one CPU's verdict cache sees.
PHASE=0
SEND_CPU=""
send_phase() {
	PHASE=$((PHASE + 1))
	SENT=$T/sent-$PHASE.json
	RECV=$T/recv-$PHASE.json
	fs_in "$NS_TX" ${SEND_CPU:+taskset -c "$SEND_CPU"} python3 "$HELPER" send -i "$VETH_TX" --dst-mac "$MAC" \
		--src4 "$SRC4" --src6 "$SRC6" --dst4 "$DST4" --dst6 "$DST6" \
		--port "$PORT" --phase "$PHASE" --count "$COUNT" --rate "$RATE" \
		--out "$SENT" 2>"$T/send.err" || { diag <"$T/send.err"; return 1; }
	wait_recv "$PHASE"
}

# expect WHAT: after send_phase, the sources MODEL covers received
# nothing, all others all they were sent.  Two TAP lines.
expect() {
	local v=$T/verdict-$PHASE.json
	helper verdict --sent "$SENT" --recv "$RECV" "${MODEL[@]}" >"$v" ||
		{ not_ok "$1: verdict"; return; }
	read -r bs bsent brecv os osent orecv < <(jq -r \
		'"\(.blocked.sources) \(.blocked.sent) \(.blocked.received) \(.open.sources) \(.open.sent) \(.open.received)"' "$v")
	check "$1: the $bs blocked sources received nothing ($brecv of $bsent)" \
		jqe '.blocked.received == 0 and ([.violations[] | select(test(" is blocked"))] | length == 0)' "$v"
	check "$1: the $os other sources received every datagram ($orecv of $osent)" \
		jqe '.open.received == .open.sent and ([.violations[] | select(test(" is blocked") | not)] | length == 0) and .late == 0 and .stray == 0' "$v"
	jq -r '.violations[]' "$v" | head -20 | diag
}

# list_is WHAT: `block list --json` holds exactly MODEL.
list_is() {
	local out
	if ! cli block list --json >"$T/list.json" 2>"$T/list.err"; then
		not_ok "$1: block list --json answers"; diag <"$T/list.err"; return
	fi
	if out=$(helper same --list-json "$T/list.json" "${MODEL[@]}"); then
		ok "$1: block list shows the ${#MODEL[@]} entries"
	else
		not_ok "$1: block list shows the ${#MODEL[@]} entries"; echo "$out" | diag
	fi
}

# file_is WHAT: the list file holds exactly MODEL.
file_is() {
	local out
	if [ ! -f "$LIST" ] && [ ${#MODEL[@]} -gt 0 ]; then
		not_ok "$1: the list file exists"; return
	fi
	if out=$(helper same --list-file "$LIST" "${MODEL[@]}"); then
		ok "$1: the list file holds the ${#MODEL[@]} entries"
	else
		not_ok "$1: the list file holds the ${#MODEL[@]} entries"; echo "$out" | diag
	fi
}

# block CMD ARGS...: a change that must succeed; MODEL is updated by the caller.
block() {
	if cli block "$@" >"$T/block.out" 2>"$T/block.err"; then
		ok "block $*"
	else
		not_ok "block $* (exit $?)"; diag <"$T/block.err"
	fi
}

status_field() { cli status --json | jq -r "$1"; }
# status' blocklist.entries may be a count or the entries themselves.
status_entries() { status_field '.blocklist.entries | if type == "array" then length else . end'; }

# snmp NAME: a counter of the receiving namespace's IP stack.
snmp() {
	case $1 in
	Ip6*) fs_in "$NS_RX" awk -v k="$1" '$1 == k { print $2 }' /proc/net/snmp6 ;;
	*) fs_in "$NS_RX" awk -v k="$1" '$1 == "Ip:" && !h { for (i = 2; i <= NF; i++) f[$i] = i; h = 1; next }
		$1 == "Ip:" { print $f[k] }' /proc/net/snmp ;;
	esac
}

# ---------------------------------------------------------------- set-up
fs_test bl jq python3
T=$WORK PIN_BAD=$PIN_DIR-bad
LIST=$T/blocklist	# does not exist yet: an empty list
fs_test_pair
fs_rx_addresses "$NS_RX" "$VETH_RX" "$DST4" "$DST6" ||
	bail "$DST4 and $DST6 on $VETH_RX, any source accepted"
MAC=$(fs_mac "$NS_RX" "$VETH_RX")
ok "namespaces $NS_TX, $NS_RX joined by $VETH_TX <-> $VETH_RX, $DST4 and $DST6 on $VETH_RX"

nsenter --net="/run/netns/$NS_RX" python3 "$HELPER" recv --port "$PORT" --dir "$T" \
	--ready "$T/ready" 2>"$T/recv.err" &
RECV_PID=$!
fs_until 100 test -f "$T/ready" || { diag <"$T/recv.err"; bail "the receiver listens on UDP $PORT"; }

daemon_start || bail "flowsketchd starts on $VETH_RX with --blocklist $LIST (missing)"
ok "flowsketchd starts on $VETH_RX with --blocklist naming a missing file"

# ---------------------------------------------------------------- 1. empty list
MODEL=()
list_is "missing file"
check "status: blocklist.entries is 0 (got $(status_entries))" [ "$(status_entries)" = 0 ]
send_phase || bail "phase $PHASE: traffic sent and its end marker received"
expect "empty list"

# ---------------------------------------------------------------- 2. add
MODEL=(10.1.0.0/16 10.1.1.0/24 10.2.3.0/24 10.2.3.5/32 10.3.4.7/32 fd00:1:0:1::/64 fd00:1:0:2::3/128)
block add 10.1.0.0/16 10.1.1.0/24 10.2.3.0/24
block add 10.2.3.5/32 10.3.4.7/32 fd00:1:0:1::/64 fd00:1:0:2::3/128
list_is "after add"
file_is "after add"
check "status: blocklist.entries is ${#MODEL[@]} (got $(status_entries))" [ "$(status_entries)" = ${#MODEL[@]} ]
drop0=$(status_field '.blocklist.dropped_packets')
[[ $drop0 =~ ^[0-9]+$ ]] || drop0=-1000000000	# no counter: fails below
ip0=$(snmp InReceives)
ip60=$(snmp Ip6InReceives)
send_phase || bail "phase $PHASE: traffic sent and its end marker received"
expect "/16 with a /24 inside, /24 with a /32 inside, /32, IPv6 /64 and /128"
v=$T/verdict-$PHASE.json
# The stack behind XDP: exactly the datagrams of the sources not blocked
# (and the 3 end markers), none of the blocked ones.
read -r open4 open6 < <(jq -r '"\(.open_sent_by_family["4"]) \(.open_sent_by_family["6"])"' "$v")
d_ip=$(( $(snmp InReceives) - ip0 ))
d_ip6=$(( $(snmp Ip6InReceives) - ip60 ))
check "the receiving stack got only the open sources' datagrams: IPv4 $d_ip of $((open4 + 3)), IPv6 $d_ip6 of $open6" \
	[ "$d_ip" = $((open4 + 3)) -a "$d_ip6" = "$open6" ]
dropped=$(jq .dropped_packets "$v")
drop1=$(status_field '.blocklist.dropped_packets')
[[ $drop1 =~ ^[0-9]+$ ]] || drop1=-1000000000
check "status: blocklist.dropped_packets grew by the $dropped datagrams lost (got $((drop1 - drop0)))" \
	[ $((drop1 - drop0)) = "$dropped" ]
cli block list --json >"$T/list.json" 2>/dev/null
helper counters --sent "$SENT" --recv "$RECV" --list-json "$T/list.json" >"$T/counters.json"
check "block list: the entries' packets add up to the $dropped datagrams lost (got $(jq .sum_packets "$T/counters.json"))" \
	jqe '.sum_packets == .total_dropped' "$T/counters.json"
check "block list: each entry overlapping no other ($(jq -r '.lone | join(", ")' "$T/counters.json")) counted its sources' lost datagrams and frame bytes" \
	jqe '(.lone | length) == 3 and (.violations | length) == 0' "$T/counters.json"
jq -r '.violations[], (.longest_match[] | "counter " + .)' "$T/counters.json" | diag

# ---------------------------------------------------------------- 3. del
block del 10.1.1.0/24
MODEL=(10.1.0.0/16 10.2.3.0/24 10.2.3.5/32 10.3.4.7/32 fd00:1:0:1::/64 fd00:1:0:2::3/128)
list_is "after del of the /24 inside the /16"
send_phase || bail "phase $PHASE: traffic sent"
expect "10.1.1.0/24 deleted, 10.1.0.0/16 still covers its sources"
block del 10.1.0.0/16 10.2.3.0/24
MODEL=(10.2.3.5/32 10.3.4.7/32 fd00:1:0:1::/64 fd00:1:0:2::3/128)
list_is "after del of the /16 and of the /24 around a /32"
file_is "after del"
send_phase || bail "phase $PHASE: traffic sent"
expect "10.1.0.0/16 and 10.2.3.0/24 deleted: all their sources back but 10.2.3.5"

# ---------------------------------------------------------------- 4. restart
block add 10.1.0.0/16 10.1.1.0/24
MODEL=(10.1.0.0/16 10.1.1.0/24 10.2.3.5/32 10.3.4.7/32 fd00:1:0:1::/64 fd00:1:0:2::3/128)
list_is "before restart"
rc=0
fsd_stop || rc=$?
check "flowsketchd exits 0 on SIGTERM (got $rc)" [ "$rc" = 0 ]
file_is "after the daemon stopped"

# A bad line 3, while no daemon holds the interface: refused, nothing attached.
printf '# a list with a bad line\n10.6.0.0/16\n10.0.0.1/8\nfd00:6::/64\n' >"$T/bad.list"
sum0=$(sha256sum <"$T/bad.list")
fs_in "$NS_RX" timeout -s TERM 20 "$FSD" -i "$VETH_RX" --pin-dir "$PIN_BAD" \
	--socket "$T/bad.sock" --blocklist "$T/bad.list" >"$T/bad.out" 2>&1
rc=$?
check "a list file with a bad line 3: flowsketchd refuses to start (exit $rc)" [ "$rc" != 0 -a "$rc" != 124 ]
check "... naming the file and line 3" \
	grep -Eq "$T/bad.list(:3([^0-9]|\$)|.*line 3([^0-9]|\$))" "$T/bad.out"
diag <"$T/bad.out"
check "... with no XDP program on $VETH_RX (ip -d link show)" eval '! xdp_attached'
check "... nothing pinned, no socket" [ -z "$(ls -A "$PIN_BAD" 2>/dev/null)" -a ! -e "$T/bad.sock" ]
check "... and the file as it was" [ "$(sha256sum <"$T/bad.list")" = "$sum0" ]

daemon_start || bail "flowsketchd restarts with the same --blocklist"
ok "flowsketchd restarts with the same --blocklist"
list_is "after restart"
check "status after restart: blocklist.entries is ${#MODEL[@]} (got $(status_entries))" [ "$(status_entries)" = ${#MODEL[@]} ]
send_phase || bail "phase $PHASE: traffic sent"
expect "after restart"

# ---------------------------------------------------------------- 5. churn
# Changes while traffic flows, each stamped with when it was called and
# when it returned (the helper's send times are the same clock).
: >"$T/events"
churn_failed=0
churn() {
	local kind=$1 t0 t1; shift
	t0=$EPOCHREALTIME
	if cli block "$kind" "$@" >/dev/null 2>>"$T/churn.err"; then
		t1=$EPOCHREALTIME
		echo "$kind $t0 $t1 $*" >>"$T/events"
	else
		churn_failed=$((churn_failed + 1))
		echo "block $kind $* failed" >>"$T/churn.err"
	fi
	sleep "$CHURN_GAP"
}
INITIAL=("${MODEL[@]}")
PHASE=$((PHASE + 1))
SENT=$T/sent-$PHASE.json
RECV=$T/recv-$PHASE.json
nsenter --net="/run/netns/$NS_TX" python3 "$HELPER" send -i "$VETH_TX" --dst-mac "$MAC" \
	--src4 "$SRC4" --src6 "$SRC6" --dst4 "$DST4" --dst6 "$DST6" --port "$PORT" \
	--phase "$PHASE" --duration "$CHURN_SECONDS" --rate "$CHURN_RATE" --stamps \
	--out "$SENT" 2>"$T/send.err" &
SEND_PID=$!
sleep "$CHURN_GAP"
churn add 10.5.0.0/29
churn add 10.5.0.4/32 fd00:5::/126
churn del 10.5.0.0/29			# 10.5.0.4 stays blocked
churn del 10.3.4.7/32			# between never-listed 10.3.4.6 and .8
churn del 10.5.0.4/32
churn add 10.5.0.0/29 10.5.0.4/32 10.3.4.7/32
churn del fd00:5::/126
churn del 10.5.0.4/32 10.5.0.0/29
churn add fd00:5::/126 10.5.0.0/29
churn del 10.5.0.0/29
churn add 10.5.0.4/32
churn del fd00:5::/126 10.5.0.4/32
rc=0
wait "$SEND_PID" || rc=$?
SEND_PID=""
[ "$rc" = 0 ] || { diag <"$T/send.err"; bail "traffic under churn sent (exit $rc)"; }
wait_recv "$PHASE" || bail "traffic under churn: end marker received"
check "$(wc -l <"$T/events") changes while traffic flowed, none failed" [ "$churn_failed" = 0 ]
[ -s "$T/churn.err" ] && diag <"$T/churn.err"
helper churn --sent "$SENT" --recv "$RECV" --events "$T/events" --slack "$CHURN_SLACK" "${INITIAL[@]}" >"$T/churn.json"
read -r nls nlsent nlrecv bd ba od om tr < <(jq -r \
	'"\(.never_listed.sources) \(.never_listed.sent) \(.never_listed.received) \(.blocked.datagrams) \(.blocked.arrived) \(.open.datagrams) \(.open.missing) \(.transition)"' "$T/churn.json")
check "under churn: the $nls sources no entry covered meanwhile lost no datagram ($nlrecv of $nlsent)" \
	jqe '.never_listed.received == .never_listed.sent and .never_listed.sources > 0 and ([.violations[] | select(startswith("never"))] | length == 0) and .late == 0 and .stray == 0' "$T/churn.json"
check "under churn: of $bd datagrams sent while their source was surely blocked, none arrived (got $ba)" \
	[ "$ba" = 0 -a "$bd" -gt 0 ]
check "under churn: of $od datagrams of listed sources sent while surely unblocked, none lost (lost $om; $tr in transitions)" \
	[ "$om" = 0 -a "$od" -gt 0 ]
jq -r '.violations[]' "$T/churn.json" | head -20 | diag
list_is "after churn"
file_is "after churn"

# ---------------------------------------------------------------- 6. bad input
# bad_add POS BAD: BAD at position POS of `block add`, after POS - 1 good
# CIDRs; one line naming POS, nothing applied.  POS is chosen so that it is
# not a digit of BAD, whose text the message may quote.
GOOD=(10.6.0.0/16 10.7.1.0/24 fd00:6::/64 10.8.0.1/32)
bad_request() {
	local kind=$1 pos=$2 bad=$3 desc=$4; shift 4
	local args=("$@" "$bad") rc=0 lines out
	cli block "$kind" "${args[@]}" >"$T/bad.out" 2>"$T/bad.err" || rc=$?
	lines=$(awk 'END { print NR }' "$T/bad.err")
	check "block $kind with $desc at position $pos: exit non-zero (got $rc)" [ "$rc" != 0 ]
	check "... one line on stderr ($lines) naming position $pos" \
		eval "[ $lines = 1 ] && grep -Eq '(^|[^0-9])$pos([^0-9]|\$)' '$T/bad.err'"
	diag <"$T/bad.err"
	list_is "... nothing applied"
}
bad_request add 2 10.0.0.1/8 "host bits set (10.0.0.1/8)" "${GOOD[@]:0:1}"
bad_request add 5 1.2.3.4/33 "1.2.3.4/33" "${GOOD[@]:0:4}"
bad_request add 3 ::/129 "::/129" "${GOOD[@]:0:2}"
bad_request add 1 garbage "garbage"
bad_request add 4 "" "an empty argument" "${GOOD[@]:0:3}"
bad_request del 2 garbage "garbage after a listed entry" 10.3.4.7/32
file_is "after the bad requests"
printf '10.6.0.0/16\n# comment\n1.2.3.4/33\n' >"$T/bad-load.list"
rc=0
cli block load "$T/bad-load.list" >/dev/null 2>"$T/bad.err" || rc=$?
check "block load of a file with a bad line: exit non-zero (got $rc)" [ "$rc" != 0 ]
diag <"$T/bad.err"
list_is "... nothing applied"
check "status: blocklist.entries still ${#MODEL[@]} (got $(status_entries))" [ "$(status_entries)" = ${#MODEL[@]} ]

cp "$LIST" "$T/saved.list"
block clear
SAVED=("${MODEL[@]}")
MODEL=()
list_is "after clear"
file_is "after clear"
check "status after clear: blocklist.entries is 0 (got $(status_entries))" [ "$(status_entries)" = 0 ]
send_phase || bail "phase $PHASE: traffic sent"
expect "after clear"
block load "$T/saved.list"
MODEL=("${SAVED[@]}")
list_is "after load"
file_is "after load"
SEND_CPU=0
send_phase || bail "phase $PHASE: traffic sent"
expect "after load of the saved list"

# The verdict cache's generation comes round (include/flowsketch/bloom.h,
# "The verdict cache"): the phase above passed 10.3.4.8, next to
# 10.3.4.7/32, on CPU 0, whose cache kept the pass under the generation of
# that moment.  254 adds later (of hosts no source uses) the generation has
# gone through all 255 values, and the 255th add, 10.3.4.8/32, brings it
# back to that one: only the caches zeroed when it wrapped keep the old
# pass from answering.
wrap_failed=0
for i in $(seq 1 254); do
	cli block add "192.0.2.$i/32" >/dev/null 2>>"$T/wrap.err" || wrap_failed=$((wrap_failed + 1))
done
check "254 adds of one host each, none failed" [ "$wrap_failed" = 0 ]
[ -s "$T/wrap.err" ] && diag <"$T/wrap.err"
block add 10.3.4.8/32
WRAPPED=($(printf '192.0.2.%d/32 ' $(seq 1 254)) 10.3.4.8/32)
MODEL=("${SAVED[@]}" "${WRAPPED[@]}")
send_phase || bail "phase $PHASE: traffic sent"
expect "the 255th add since 10.3.4.8 passed, covering it"
SEND_CPU=""
wrap_failed=0
for i in $(seq 0 50 254); do	# a request holds 4096 bytes of CIDRs
	cli block del "${WRAPPED[@]:$i:50}" >/dev/null 2>>"$T/wrap.err" || wrap_failed=$((wrap_failed + 1))
done
check "the 255 entries deleted again, 50 a request, none failed" [ "$wrap_failed" = 0 ]
[ -s "$T/wrap.err" ] && diag <"$T/wrap.err"
MODEL=("${SAVED[@]}")
list_is "after the 255 adds are deleted"

# A list longer than one answer page (FS_BLOCK_LIST_PAGE, 50,000) is
# listed whole: the CLI reads it a page at a time.  The 60,000 hosts are
# in 100.64.0.0/10, which no test source uses.
python3 - "$T/big.list" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(60000):
        f.write("100.%d.%d.%d/32\n" % (64 + (i >> 16), (i >> 8) & 255, i & 255))
PY
block load "$T/big.list"
cli block list --json >"$T/big.json" 2>"$T/big.err" || diag <"$T/big.err"
want=$((60000 + ${#MODEL[@]}))
check "a list of $want entries, longer than one answer page, is listed whole and once" \
	jqe "(.entries | length) == $want and .total == $want and ([.entries[].cidr] | unique | length) == $want" "$T/big.json"

# ---------------------------------------------------------------- end
rc=0
fsd_stop || rc=$?
check "flowsketchd exits 0 on SIGTERM (got $rc)" [ "$rc" = 0 ]
check "XDP detached from $VETH_RX after exit" eval '! xdp_attached'

# ---------------------------------------------------------------- 7. adoption
# A daemon killed with SIGKILL leaves its XDP link pinned; one started
# again on the same pin directory adopts the maps, the blocklist's too,
# and loads the list file over them (blocklist.c, adopt_maps()).  The
# file is edited while no daemon runs: STALE goes, FRESH comes, the rest
# is kept, among them 10.1.1.0/24 inside STALE (a source both lists block)
# and 10.5.0.0/16 in the exact /16 bitmap.  The restart happens under
# traffic from a few sources of each kind; the daemon's start is a change
# called when it was launched and returned when it answered status,
# judged by `helper churn` as the changes of phase 5 are.
STATE=$T/state
STALE=10.1.0.0/16
FRESH=10.3.0.0/16
OLD=(10.1.0.0/16 10.1.1.0/24 10.2.3.0/24 10.5.0.0/16 fd00:1:0:1::/64 fd00:1:0:2::3/128)
NEW=(10.1.1.0/24 10.2.3.0/24 10.3.0.0/16 10.5.0.0/16 fd00:1:0:1::/64 fd00:1:0:2::3/128)
R_KEPT="10.2.3.1 10.1.1.1 10.5.0.1 fd00:1:0:1::1 fd00:1:0:2::3"	# kept entries (10.1.1.1: STALE too)
R_STALE=10.1.2.1
R_FRESH=10.3.4.1
R_NEVER="10.2.4.0 fd00:1:0:2::1"
RESTART_RATE=9000
RESTART_AFTER=1		# seconds of traffic after the daemon answered
LIST=$T/blocklist-7
printf '# phase 7, first part of the list\n10.1.0.0/16\n10.2.3.0/24\nfd00:1:0:1::/64\n' >"$LIST"
daemon_start --state-dir "$STATE" ||
	bail "flowsketchd starts on a fresh $PIN_DIR with --state-dir $STATE"
ok "flowsketchd starts on a fresh $PIN_DIR with --state-dir $STATE"
check "a fresh datapath: status .adopted false (got $(jq .adopted "$T/st.json"))" \
	jqe '.adopted == false' "$T/st.json"
block add 10.1.1.0/24 10.5.0.0/16 fd00:1:0:2::3/128
MODEL=("${OLD[@]}")
list_is "before the kill"
file_is "before the kill"
send_phase || bail "phase $PHASE: traffic sent"
expect "before the kill"
SENT_A=$SENT RECV_A=$RECV
cli block list --json >"$T/list-before.json" 2>/dev/null
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=""
check "after SIGKILL: XDP still on $VETH_RX, its link pinned ($PIN_DIR/link_$VETH_RX)" \
	eval "xdp_attached && [ -e '$PIN_DIR/link_$VETH_RX' ]"
send_phase || bail "phase $PHASE: traffic sent"
expect "no daemon running, the pinned program"
SENT_B=$SENT RECV_B=$RECV
# The file edited while no daemon runs.
{ grep -vxF "$STALE" "$LIST"; echo "$FRESH"; } >"$T/edited" && mv "$T/edited" "$LIST"
MODEL=("${NEW[@]}")
file_is "edited while no daemon ran: $STALE removed, $FRESH added"

PHASE=$((PHASE + 1))
SENT=$T/sent-$PHASE.json
RECV=$T/recv-$PHASE.json
r4=$(for s in $R_KEPT $R_STALE $R_FRESH $R_NEVER; do echo "$s"; done | grep -v : | paste -sd,)
r6=$(for s in $R_KEPT $R_STALE $R_FRESH $R_NEVER; do echo "$s"; done | grep : | paste -sd,)
nsenter --net="/run/netns/$NS_TX" python3 "$HELPER" send -i "$VETH_TX" --dst-mac "$MAC" \
	--src4 "$r4" --src6 "$r6" --dst4 "$DST4" --dst6 "$DST6" --port "$PORT" \
	--phase "$PHASE" --duration 30 --rate "$RESTART_RATE" --stamps \
	--started "$T/started-$PHASE" --out "$SENT" 2>"$T/send.err" &
SEND_PID=$!
# Every source is sending before the launch (the sender may take long
# to start on a loaded machine).
fs_until 200 --while "$SEND_PID" test -e "$T/started-$PHASE" || { diag <"$T/send.err"; bail "phase $PHASE: every source sending before the restart"; }
# Half a second of that traffic before the launch, well past CHURN_SLACK,
# so that each source's datagrams before it are judged, not in transition.
sleep 0.5
T_START=$EPOCHREALTIME
daemon_start --state-dir "$STATE"
started=$?
[ "$started" = 0 ] && sleep "$RESTART_AFTER"
kill -TERM "$SEND_PID" 2>/dev/null
rc=0
wait "$SEND_PID" || rc=$?
SEND_PID=""
[ "$started" = 0 ] || bail "flowsketchd restarts on $PIN_DIR under traffic"
[ "$rc" = 0 ] || { diag <"$T/send.err"; bail "traffic through the restart sent (exit $rc)"; }
wait_recv "$PHASE" || bail "traffic through the restart: end marker received"
ok "flowsketchd restarts on $PIN_DIR, $STATE and $LIST under traffic (answered $(awk "BEGIN { printf \"%.3f\", $T_ANS - $T_START }") s after its launch)"
check "status .adopted true (got $(jq .adopted "$T/st.json"))" jqe '.adopted == true' "$T/st.json"
SENT_C=$SENT RECV_C=$RECV
printf 'del %s %s %s\nadd %s %s %s\n' "$T_START" "$T_ANS" "$STALE" "$T_START" "$T_ANS" "$FRESH" >"$T/events-7"
# restart_churn NAME SOURCES: helper churn over these sources' datagrams only.
restart_churn() {
	local name=$1; shift
	jq --arg s "$*" '($s | split(" ")) as $k | .sources |= with_entries(select(.key | IN($k[])))' \
		"$SENT_C" >"$T/sent-7-$name.json"
	helper churn --sent "$T/sent-7-$name.json" --recv "$RECV_C" --events "$T/events-7" \
		--slack "$CHURN_SLACK" "${OLD[@]}" >"$T/churn-7-$name.json"
	jq -r '.violations[]' "$T/churn-7-$name.json" | head -10 | diag
}
n_sent() { jq '[.sources[].sent] | add // 0' "$T/sent-7-$1.json"; }
restart_churn kept $R_KEPT
read -r kd ka kt < <(jq -r '"\(.blocked.datagrams) \(.blocked.arrived) \(.transition)"' "$T/churn-7-kept.json")
check "through the restart: the kept entries' sources ($R_KEPT) received none of their $(n_sent kept) datagrams, before, during or after (blocked $kd, arrived $ka)" \
	[ "$ka" = 0 -a "$kt" = 0 -a "$kd" = "$(n_sent kept)" -a "$kd" -gt 0 ]
restart_churn never $R_NEVER
check "through the restart: the never-listed sources ($R_NEVER) received every datagram ($(jq -r '"\(.never_listed.received) of \(.never_listed.sent)"' "$T/churn-7-never.json"))" \
	jqe '.never_listed.received == .never_listed.sent and .never_listed.sources == 2 and .late == 0 and .stray == 0' "$T/churn-7-never.json"
restart_churn stale $R_STALE
read -r sd sa od om < <(jq -r '"\(.blocked.datagrams) \(.blocked.arrived) \(.open.datagrams) \(.open.missing)"' "$T/churn-7-stale.json")
check "$R_STALE ($STALE only, gone from the file): none of the $sd datagrams sent before the daemon's launch arrived (got $sa)" \
	[ "$sa" = 0 -a "$sd" -gt 0 ]
check "... all $od sent after the daemon answered status arrived (lost $om)" \
	[ "$om" = 0 -a "$od" -gt 0 ]
restart_churn fresh $R_FRESH
read -r od om bd ba < <(jq -r '"\(.open.datagrams) \(.open.missing) \(.blocked.datagrams) \(.blocked.arrived)"' "$T/churn-7-fresh.json")
check "$R_FRESH ($FRESH, new in the file): all $od datagrams sent before the daemon's launch arrived (lost $om)" \
	[ "$om" = 0 -a "$od" -gt 0 ]
check "... none of the $bd sent after the daemon answered status arrived (got $ba)" \
	[ "$ba" = 0 -a "$bd" -gt 0 ]
list_is "after the adoption"
file_is "after the adoption"

# Per-entry counters across the kill, from what the sources lost in the
# three parts of this phase (the list before the kill, with no daemon,
# through the restart).  Every kept entry: at least its count before the
# kill plus what its sources lost while no daemon ran (the second part,
# and the restart's datagrams sent before the launch) and after the
# daemon answered, sources another entry covered then left out.  Every
# entry no other one overlaps, before or after: exactly its sources'
# losses since it was listed, in packets and frame bytes.
cli block list --json >"$T/list-after.json" 2>"$T/list.err" || diag <"$T/list.err"
python3 - "$T/list-before.json" "$T/list-after.json" "${OLD[*]}" "${NEW[*]}" \
	"$T_START" "$T_ANS" "$CHURN_SLACK" \
	"$SENT_A" "$RECV_A" "$SENT_B" "$RECV_B" "$SENT_C" "$RECV_C" >"$T/counters-7.json" <<'PY'
import ipaddress, json, sys
net, ip = ipaddress.ip_network, ipaddress.ip_address
load = lambda p: json.load(open(p))
def entries(p):
    try:
        return {net(e["cidr"]): e for e in load(p)["entries"]}
    except Exception:
        return {}
before, after = entries(sys.argv[1]), entries(sys.argv[2])
old, new = [net(c) for c in sys.argv[3].split()], [net(c) for c in sys.argv[4].split()]
t_start, t_ans, slack = (float(x) for x in sys.argv[5:8])
# Lost datagrams by source: all of each part; of the restart's, those
# sent before the launch ("pre") and after the answer ("post").
parts, pre, post = [], {}, {}
for s, r in zip(sys.argv[8::2], sys.argv[9::2]):
    sent, recv = load(s), load(r)
    part = {}
    for src, e in sent["sources"].items():
        got = recv["sources"].get(src, {}).get("seqs", [])
        part[src] = e["sent"] - len(got)
        if "stamps" in e:
            got = set(got)
            pre[src] = sum(1 for q, u in enumerate(e["sent_by"]) if u + slack < t_start and q not in got)
            post[src] = sum(1 for q, t in enumerate(e["stamps"]) if t > t_ans and q not in got)
    parts.append(part)
flen = {4: sent["frame_len"]["4"], 6: sent["frame_len"]["6"]}
def lost(part, n, unless=()):
    return sum(d for s, d in part.items() if ip(s).version == n.version and ip(s) in n and
               not any(ip(s).version == m.version and ip(s) in m for m in unless))
def others(n, lst):
    return [m for m in lst if m != n and m.version == n.version and m.overlaps(n)]
out = {"at_least": [], "exact": [], "below": [], "inexact": []}
for n in new:
    a = after.get(n)
    if a is None:
        out["inexact"].append("%s is not in block list" % n)
        continue
    f = flen[n.version]
    if n in old:
        b = before.get(n)
        p = lost(parts[1], n, others(n, old)) + lost(pre, n, others(n, old)) + lost(post, n, others(n, new))
        out["at_least"].append(str(n))
        if b is None:
            out["below"].append("%s was not in block list before the kill" % n)
        elif a["packets"] < b["packets"] + p or a["bytes"] < b["bytes"] + p * f:
            out["below"].append("%s: %d packets, %d bytes after the restart; %d, %d before the kill, and its sources lost %d more with no daemon or after the answer"
                                % (n, a["packets"], a["bytes"], b["packets"], b["bytes"], p))
        since = parts
    else:
        since = parts[2:]
    if others(n, old + new):
        continue
    p = sum(lost(part, n) for part in since)
    out["exact"].append(str(n))
    if a["packets"] != p or a["bytes"] != p * f:
        out["inexact"].append("%s: %d packets, %d bytes; its sources lost %d datagrams, %d frame bytes since it was listed (%s; %s before the kill)"
                              % (n, a["packets"], a["bytes"], p, p * f,
                                 " + ".join("%d" % lost(part, n) for part in since),
                                 before[n]["packets"] if n in before else "none"))
json.dump(out, sys.stdout)
PY
check "block list after the restart: each kept entry ($(jq -r '.at_least | join(", ")' "$T/counters-7.json")) counted at least its drops before the kill, with no daemon and after the answer" \
	jqe '(.at_least | length) == 5 and (.below | length) == 0' "$T/counters-7.json"
check "... each entry overlapping no other ($(jq -r '.exact | join(", ")' "$T/counters-7.json")) counted exactly its sources' lost datagrams and frame bytes since it was listed" \
	jqe '(.exact | length) == 5 and (.inexact | length) == 0' "$T/counters-7.json"
jq -r '.below[], .inexact[]' "$T/counters-7.json" | diag
rc=0
fsd_stop || rc=$?
check "the adopting daemon exits 0 on SIGTERM (got $rc)" [ "$rc" = 0 ]
check "... XDP detached from $VETH_RX, $PIN_DIR gone" eval "! xdp_attached && [ ! -e '$PIN_DIR' ]"
check "the receiver saw nothing but test datagrams" \
	jqe -s 'map(.stray + .late) | add == 0' "$T"/recv-*.json
finish
