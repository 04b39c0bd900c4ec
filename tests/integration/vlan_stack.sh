#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vlan_stack.sh - no way round the blocklist behind stacked VLAN tags, with
# real frames between namespaces (issue 17, defect 1).
#
#   NS_TX [vlan_frames.py, AF_PACKET] --veth--> NS_RX [XDP, flowsketchd --blocklist]
#                                                     [nftables prerouting counters]
#
# The receiving stack strips priority tags (VID 0) and delivers the IPv4 or
# IPv6 packet inside, whatever the mix of 0x8100 and 0x88a8 (PLATFORM.md),
# so such a frame must be judged by its source.  (Linux 6.18 here delivers
# up to eight such tags and no frame with nine or more; the datapath does
# not count on that: past eight it drops while a list is in force.)  The
# oracle is what the receiving namespace's IP stack saw: an nftables
# counter per source in a prerouting chain (before routing, after the
# stack has taken the tags off).  Each phase ends with an untagged marker
# from a source never listed; once its counter moves, the veth's single
# queue has delivered everything sent before it, so no sleep stands in for
# "the traffic has arrived".
#
# Frames with a non-zero VID are sent too: this kernel has no 802.1Q
# driver, so the stack drops them (no VLAN device can claim them), and
# only the daemon's counters show their verdict; the BPF_PROG_TEST_RUN
# test (test_blocklist, test_deep_vlan_from_blocked_source) covers them
# verdict by verdict.
#
# Shown, in order (TAP, with a plan):
#   1. empty list: every stack of 3, 4, 8 tags (VID 0) reaches the
#      receiving IP stack, from every source (the control: these frames
#      are delivered); every frame, 9 and 12 tags too, is counted as
#      vlan_depth, none dropped;
#   2. after `block add` of an IPv4 /24 and an IPv6 /64: their sources'
#      frames behind 3, 4 and 8 tags never reach the stack, other sources'
#      all do; the 9- and 12-tag stacks are dropped unjudged (status and
#      /metrics count them); dropped_packets counts the listed sources'
#      frames, the non-zero-VID ones included;
#   3. after `block clear` the listed sources' frames reach the stack
#      again, and deep stacks are passed, not dropped.
# Runs in about 10 s.  Only the namespaces, veth pair, pins and work
# directory made here are touched, and all go on every exit.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

SEND=tests/integration/vlan_frames.py
COUNT=20
DST4=10.255.0.1
DST6=fd00:ff::1
# Sources: listed (bad), never listed (ok), the deep stacks' own (deep),
# and the end-of-phase marker.
BAD4=10.66.0.5 OK4=10.77.0.5 DEEP4=10.88.0.5 MARK4=10.99.0.1
BAD6=fd00:66::5 OK6=fd00:77::5 DEEP6=fd00:88::5
# Judged stacks (up to eight tags), VID 0, TPIDs mixed; then the same
# depths with a non-zero VID among them; then past eight.
JUDGED0="q:0,ad:0,q:0 ad:0,q:0,ad:0,q:0 q:0,ad:0,ad:0,q:0,q:0,ad:0,q:0,ad:0"
JUDGEDV="ad:0,q:100,q:0 q:7,q:0,ad:0,q:0 ad:0,q:0,q:0,ad:0,q:100,q:0,ad:0,q:4094"
DEEP="q:0,ad:0,q:0,ad:0,q:0,ad:0,q:0,ad:0,q:0 $(printf 'ad:0,%.0s' $(seq 11))q:0"

fs_test vl nft jq
fs_test_pair
fs_rx_addresses "$NS_RX" "$VETH_RX" "$DST4" "$DST6" ||
	bail "$DST4 and $DST6 on $VETH_RX, any source accepted"
MAC=$(fs_mac "$NS_RX" "$VETH_RX")

# One named counter per source, bumped in prerouting.
{
	echo "table inet fsvl {"
	for c in bad4 ok4 deep4 mark4 bad6 ok6 deep6; do
		echo "  counter $c { }"
	done
	echo "  chain pre {"
	echo "    type filter hook prerouting priority -300; policy accept;"
	echo "    ip saddr $BAD4 counter name bad4"
	echo "    ip saddr $OK4 counter name ok4"
	echo "    ip saddr $DEEP4 counter name deep4"
	echo "    ip saddr $MARK4 counter name mark4"
	echo "    ip6 saddr $BAD6 counter name bad6"
	echo "    ip6 saddr $OK6 counter name ok6"
	echo "    ip6 saddr $DEEP6 counter name deep6"
	echo "  }"
	echo "}"
} >"$WORK/rules.nft"
fs_in "$NS_RX" nft -f "$WORK/rules.nft" || bail "nftables counters in $NS_RX"
ok "namespaces, veth pair and prerouting counters ready"

seen() { fs_in "$NS_RX" nft -j list counter inet fsvl "$1" | jq '.nftables[] | select(.counter) | .counter.packets'; }

send() {	# send SRC DST STACK...
	local src=$1 dst=$2; shift 2
	fs_in "$NS_TX" /usr/bin/python3 "$SEND" "$VETH_TX" "$MAC" "$src" "$dst" "$COUNT" "$@" >/dev/null
}

# One phase: every source behind every stack, then the marker; returns
# once the marker has been seen (MARKS markers so far).
MARKS=0
phase() {
	send "$BAD4" "$DST4" $JUDGED0 $JUDGEDV &&
	send "$OK4" "$DST4" $JUDGED0 $JUDGEDV &&
	send "$BAD6" "$DST6" $JUDGED0 $JUDGEDV &&
	send "$OK6" "$DST6" $JUDGED0 $JUDGEDV &&
	send "$DEEP4" "$DST4" $DEEP &&
	send "$DEEP6" "$DST6" $DEEP || return 1
	fs_in "$NS_TX" /usr/bin/python3 "$SEND" "$VETH_TX" "$MAC" "$MARK4" "$DST4" 1 - >/dev/null || return 1
	MARKS=$((MARKS + 1))
	fs_until 100 marked
}
marked() { [ "$(seen mark4)" -ge "$MARKS" ]; }

declare -A BASE
snapshot() {
	local c
	for c in bad4 ok4 deep4 bad6 ok6 deep6; do BASE[$c]=$(seen "$c"); done
	cli status --json >"$WORK/st0.json" || return 1
}
delta() { echo $(( $(seen "$1") - ${BASE[$1]} )); }
sdelta() {	# sdelta JQ: status' value now minus at the snapshot
	echo $(( $(jq "$1" "$WORK/st.json") - $(jq "$1" "$WORK/st0.json") ))
}

N0=$((COUNT * 3))	# frames of a source the stack can take: VID 0 stacks
NJ=$((COUNT * 6))	# frames of a source behind judged stacks
ND=$((COUNT * 2))	# frames of a deep source

fsd_start || bail "flowsketchd starts on $VETH_RX"
ok "flowsketchd starts with its own, empty, blocklist file"

# ---------------------------------------------------------------- 1. empty list
snapshot || bail "status answers"
phase || bail "phase 1 sent and its marker seen"
cli status --json >"$WORK/st.json" || bail "status answers"
check "empty list: the stack took every VID-0 frame behind 3, 4 and 8 tags (bad4 $(delta bad4), ok4 $(delta ok4), bad6 $(delta bad6), ok6 $(delta ok6); want $N0)" \
	[ "$(delta bad4)" = $N0 -a "$(delta ok4)" = $N0 -a "$(delta bad6)" = $N0 -a "$(delta ok6)" = $N0 ]
echo "# this kernel delivered $(delta deep4) + $(delta deep6) of the $((2 * ND)) frames behind 9 and 12 priority tags (Linux 6.18 here: none)"
check "empty list: nothing was dropped unjudged ($(sdelta .blocklist.unjudged_dropped_packets))" \
	[ "$(sdelta .blocklist.unjudged_dropped_packets)" = 0 ]
check "empty list: vlan_depth counts the $((4 * NJ)) judged and $((2 * ND)) deep frames ($(sdelta .counters.malformed.vlan_depth))" \
	[ "$(sdelta .counters.malformed.vlan_depth)" = $((4 * NJ + 2 * ND)) ]

# ---------------------------------------------------------------- 2. listed
cli block add 10.66.0.0/24 fd00:66::/64 >/dev/null || bail "block add"
snapshot || bail "status answers"
phase || bail "phase 2 sent and its marker seen"
cli status --json >"$WORK/st.json" || bail "status answers"
check "listed: no frame of a listed source reached the stack behind 3, 4 or 8 tags (IPv4 $(delta bad4), IPv6 $(delta bad6))" \
	[ "$(delta bad4)" = 0 -a "$(delta bad6)" = 0 ]
check "listed: every frame of the other sources did (IPv4 $(delta ok4), IPv6 $(delta ok6); want $N0)" \
	[ "$(delta ok4)" = $N0 -a "$(delta ok6)" = $N0 ]
check "listed: stacks deeper than eight tags were dropped unjudged (deep4 $(delta deep4), deep6 $(delta deep6))" \
	[ "$(delta deep4)" = 0 -a "$(delta deep6)" = 0 ]
check "listed: dropped_packets counts the listed sources' $((2 * NJ)) frames, non-zero VIDs included ($(sdelta .blocklist.dropped_packets))" \
	[ "$(sdelta .blocklist.dropped_packets)" = $((2 * NJ)) ]
check "listed: unjudged_dropped_packets counts the $((2 * ND)) deep frames ($(sdelta .blocklist.unjudged_dropped_packets))" \
	[ "$(sdelta .blocklist.unjudged_dropped_packets)" = $((2 * ND)) ]
ST_TEXT=$(cli status 2>&1)
check "status says how many frames were dropped unjudged" \
	[ "$(grep -c "dropped unjudged" <<<"$ST_TEXT")" = 1 ]

# ---------------------------------------------------------------- 3. cleared
cli block clear >/dev/null || bail "block clear"
snapshot || bail "status answers"
phase || bail "phase 3 sent and its marker seen"
cli status --json >"$WORK/st.json" || bail "status answers"
check "cleared: every VID-0 frame of the listed sources reached the stack again (bad4 $(delta bad4), bad6 $(delta bad6))" \
	[ "$(delta bad4)" = $N0 -a "$(delta bad6)" = $N0 ]
check "cleared: nothing dropped unjudged any more (vlan_depth +$(sdelta .counters.malformed.vlan_depth), dropped unjudged +$(sdelta .blocklist.unjudged_dropped_packets))" \
	[ "$(sdelta .counters.malformed.vlan_depth)" = $((4 * NJ + 2 * ND)) -a "$(sdelta .blocklist.unjudged_dropped_packets)" = 0 ]

finish
