#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# ifwatch.sh - the daemon follows its interface as it goes and comes back.
#
#   NS_TX [fs-gen] --veth TX/RX--> NS_RX [flowsketchd -i RX]
#
# The daemon watches its own network namespace over rtnetlink (it runs
# there under nsenter --net, keeping the host's bpffs).  The veth is
#   1. deleted: status says "gone" within 2 s, the log says which ifindex
#      went away, and the daemon holds no link any more;
#   2. recreated under the same name: re-attached on the new ifindex (the
#      daemon's pinned program is on it), and traffic through it counted;
#   3. renamed away and back, then moved to the peer's namespace and back:
#      gone under the old name (or from this namespace), not left running
#      on the device, re-attached when the name returns;
#   4. deleted and recreated while the daemon is stopped (SIGSTOP) behind a
#      flood of link notifications, so that its socket overflows and the
#      changes are lost: on SIGCONT the daemon re-scans by name and attaches
#      to the new device.
# Totals must equal exactly what was sent in between; SIGTERM leaves no XDP
# and no pins.  Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

TX="fsiwt$ID"
RX="fsiwr$ID"
RX_RENAMED="fsiwn$ID"
STOPPED=""

tap_on_failure() { [ -n "$WORK" ] && diag <"$WORK/daemon.log"; }

# A stopped daemon would sit out fs_daemon_stop's SIGTERM.
test_cleanup() { [ -n "$STOPPED" ] && kill -CONT "$DAEMON_PID" 2>/dev/null; }

# The veth pair, as fs_pair_create makes it in namespaces that exist.
pair_add() { fs_veth_add "$NS_TX" "$NS_RX" "$TX" "$RX"; }

ifindex_of() { ip -n "$NS_RX" -j link show dev "$1" 2>/dev/null | jq -r '.[0].ifindex'; }
# The XDP program id on a device, or "none".
xdp_prog_of() {
	ip -n "$NS_RX" -j -d link show dev "$1" 2>/dev/null |
		jq -r '.[0].xdp.prog.id // "none"'
}
# Links the daemon's program has (defunct ones included).
links_of_prog() {
	bpftool -j link show | jq --argjson p "$PROG_ID" '[.[] | select(.prog_id == $p)] | length'
}

# iface FIELD: a field of the daemon's one interface, from a fresh status.
iface() {
	cli status --json >"$WORK/status.json" 2>"$WORK/cli.err" &&
		jq -r ".interfaces[0].$1" "$WORK/status.json"
}

# wait_state STATE [IFINDEX]: poll status for up to 2 s; true when the
# interface is in STATE (on IFINDEX if given).  Sets WAITED (tenths).
wait_state() {
	local want=$1 idx=${2:-} s
	for WAITED in $(seq 0 20); do
		s=$(iface state)
		if [ "$s" = "$want" ] && { [ -z "$idx" ] || [ "$(iface ifindex)" = "$idx" ]; }; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# send SEED PACKETS: traffic through the current pair; adds to SENT.
send() {
	fs_in "$NS_TX" "$GEN" -i "$TX" --dst-mac "$(fs_mac "$NS_RX" "$RX")" \
		--flows 100 --packets "$2" --seed "$1" --ipv6-share 0.3 \
		--truth "$WORK/truth-$1.json" 2>"$WORK/gen.log" ||
		{ diag <"$WORK/gen.log"; return 1; }
	SENT=$((SENT + $(jq .total_packets "$WORK/truth-$1.json")))
}

# log_has REGEX: the daemon's log says it (matched into a variable, not a
# pipe into grep -q: see PLATFORM.md).
log_has() { local n; n=$(grep -cE "$1" "$WORK/daemon.log"); [ "$n" -gt 0 ]; }

# totals_are N: once the windows holding the traffic are finished (two
# windows closed after the last packet), status totals are exactly N.
totals_are() {
	fsd_settle && [ "$(jq .totals.packets "$WORK/st.json")" = "$1" ]
}

fs_test iw "$GEN"
fs_pair_create "$NS_TX" "$NS_RX" "$TX" "$RX" || bail "veth pair $TX - $RX"

FSD_IFACES=(-i "$RX")
fsd_start
idx0=$(ifindex_of "$RX")
wait_state attached "$idx0" || bail "daemon runs attached to $RX (ifindex $idx0)"
PROG_ID=$(bpftool -j prog show pinned "$PIN_DIR/prog_xdp" | jq .id)
check "status: $RX attached on ifindex $idx0, never re-attached, program $PROG_ID on it" \
	eval '[ "$(iface reattached)" = 0 ] && [ "$(xdp_prog_of "$RX")" = "$PROG_ID" ]'

SENT=0
send 1 3000 || bail "traffic before the interface goes"

# ---- 1. deleted
ip -n "$NS_RX" link del dev "$RX" || bail "delete $RX"
if wait_state gone; then
	ok "status says gone $((WAITED * 100)) ms after the delete"
else
	not_ok "status says gone within 2 s (state $(iface state))"
fi
check "gone: ifindex 0, status text says not counted" \
	eval '[ "$(iface ifindex)" = 0 ] &&
	      [ "$(cli status | grep -c "$RX (gone, not counted)")" = 1 ]'
check "log: $RX (ifindex $idx0) went away" log_has "$RX \(ifindex $idx0\) went away"
check "the daemon holds no link of the deleted device" [ "$(links_of_prog)" = 0 ]

# ---- 2. recreated under the same name
pair_add || bail "recreate the pair $TX - $RX"
idx1=$(ifindex_of "$RX")
if wait_state attached "$idx1"; then
	ok "re-attached on the new ifindex $idx1 (was $idx0) after $((WAITED * 100)) ms"
else
	not_ok "re-attached on the new ifindex $idx1 (state $(iface state), ifindex $(iface ifindex))"
fi
check "status counts one re-attach" [ "$(iface reattached)" = 1 ]
check "ip link: the daemon's program $PROG_ID is on the new $RX" \
	[ "$(xdp_prog_of "$RX")" = "$PROG_ID" ]
check "log: $RX is back (ifindex $idx1): re-attached" \
	log_has "$RX is back \(ifindex $idx1\): re-attached \(native XDP\)"
send 2 5000 || bail "traffic through the recreated interface"
check "totals: exactly what was sent before and after ($SENT)" totals_are "$SENT"

# ---- 3. renamed away and back
ip -n "$NS_RX" link set dev "$RX" down &&
	ip -n "$NS_RX" link set dev "$RX" name "$RX_RENAMED" || bail "rename $RX to $RX_RENAMED"
check "renamed: status says gone" wait_state gone
check "log: $RX (ifindex $idx1) was renamed to $RX_RENAMED" \
	log_has "$RX \(ifindex $idx1\) was renamed to $RX_RENAMED"
check "the renamed device runs no XDP" [ "$(xdp_prog_of "$RX_RENAMED")" = none ]
ip -n "$NS_RX" link set dev "$RX_RENAMED" name "$RX" &&
	ip -n "$NS_RX" link set dev "$RX" up || bail "rename $RX_RENAMED back to $RX"
check "renamed back: attached again on ifindex $idx1, two re-attaches" \
	eval 'wait_state attached "$idx1" && [ "$(iface reattached)" = 2 ] &&
	      [ "$(xdp_prog_of "$RX")" = "$PROG_ID" ]'

# ---- 3b. moved to another namespace and back: the daemon sees its own
# namespace only, where the move is a delete, and must not leave its
# program running on the device elsewhere.
ip -n "$NS_RX" link set dev "$RX" netns "$NS_TX" || bail "move $RX to $NS_TX"
check "moved away: status says gone" wait_state gone
check "the moved device runs no XDP in $NS_TX" \
	eval '[ "$(ip -n "$NS_TX" -j -d link show dev "$RX" | jq -r ".[0].xdp.prog.id // \"none\"")" = none ]'
ip -n "$NS_TX" link set dev "$RX" netns "$NS_RX" &&
	ip -n "$NS_RX" link set dev "$RX" up || bail "move $RX back to $NS_RX"
idx1=$(ifindex_of "$RX")
check "moved back: attached again on ifindex $idx1, three re-attaches" \
	eval 'wait_state attached "$idx1" && [ "$(iface reattached)" = 3 ] &&
	      [ "$(xdp_prog_of "$RX")" = "$PROG_ID" ]'

# ---- 4. changes lost in a netlink overflow
kill -STOP "$DAEMON_PID" && STOPPED=1
# Each MTU change of lo is one RTM_NEWLINK to every listener: far more
# than the daemon's socket buffer (rmem_default) holds while it sleeps.
for i in $(seq 1500); do
	echo "link set dev lo mtu $((60000 + i % 2))"
done >"$WORK/churn.batch"
fs_in "$NS_RX" ip -batch "$WORK/churn.batch" || bail "link notification churn"
ip -n "$NS_RX" link del dev "$RX" && pair_add || bail "delete and recreate $RX while stopped"
idx2=$(ifindex_of "$RX")
kill -CONT "$DAEMON_PID" && STOPPED=""
# The kernel may give the new device the ifindex of the one deleted (here
# it does when the moved device kept a number the namespace's counter had
# not passed): the re-scan must then ask the link, not only the number.
was="was $idx1"
[ "$idx2" = "$idx1" ] && was="the same number, reused"
if wait_state attached "$idx2"; then
	ok "after the overflow: attached on the new device, ifindex $idx2 ($was)"
else
	not_ok "after the overflow: attached on the new ifindex $idx2 (state $(iface state), ifindex $(iface ifindex))"
fi
check "log: notifications lost, interfaces re-scanned, the old device went away" \
	eval '[ "$(sed -n "/link notifications were lost; re-scanning/,\$p" "$WORK/daemon.log" |
		  grep -c "$RX (ifindex $idx1) went away")" = 1 ]'
check "status counts four re-attaches, program $PROG_ID on the new $RX, one link" \
	eval '[ "$(iface reattached)" = 4 ] && [ "$(xdp_prog_of "$RX")" = "$PROG_ID" ] &&
	      [ "$(links_of_prog)" = 1 ]'
send 3 4000 || bail "traffic after the re-scan"
check "totals: exactly everything sent ($SENT)" totals_are "$SENT"

# ---- teardown
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID"
rc=$?
DAEMON_PID=""
check "SIGTERM stops the daemon (exit $rc)" [ "$rc" -eq 0 ]
check "XDP detached from $RX" [ "$(xdp_prog_of "$RX")" = none ]
check "no pins left, no link left" \
	eval '[ ! -e "$PIN_DIR" ] && [ "$(links_of_prog)" = 0 ]'
if [ "$tap_failed" -gt 0 ]; then
	echo "# daemon log:"
	diag <"$WORK/daemon.log"
fi
finish
