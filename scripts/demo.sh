#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# demo.sh - `make demo`: flowsketch watching skewed traffic, live.
#
# Two network namespaces joined by a veth pair; flowsketchd attaches XDP
# to one end, fs-gen sends Zipf-distributed IPv4 and IPv6 flows from the
# other, and `flowsketch top` redraws the top talkers every window for
# DEMO_SECONDS (default 20) or until Ctrl-C.  Then the distinct counts and
# the daemon's status are printed and everything created here is removed,
# whatever way the script ends.  Nothing touches the host's interfaces:
# the traffic only exists inside the two namespaces.
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/netns.sh

DEMO_SECONDS=${DEMO_SECONDS:-20}
ID=$$
NS_TX="fs-demo-tx-$ID"
NS_RX="fs-demo-rx-$ID"
VETH_TX="fsdemot$ID"
VETH_RX="fsdemor$ID"
PIN_DIR="/sys/fs/bpf/fs-demo-$ID"
WORK=""
DAEMON_PID=""
GEN_PID=""

cleanup() {
	fs_daemon_stop "$GEN_PID"
	fs_daemon_stop "$DAEMON_PID"
	fs_pair_destroy "$NS_TX" "$NS_RX"
	rm -rf "$PIN_DIR"
	[ -n "$WORK" ] && rm -rf "$WORK"
	echo "demo: removed namespaces $NS_TX, $NS_RX and pins $PIN_DIR."
}

die() {
	echo "demo: $*" >&2
	exit 1
}

# timeout(1) would read 0 as "no limit" and refuse "abc" only after the
# namespaces and the daemon are up; fs-gen's duration is derived from it.
[[ "$DEMO_SECONDS" =~ ^[1-9][0-9]{0,4}$ ]] || {
	echo "demo: DEMO_SECONDS must be a whole number of seconds from 1 to 99999, not '$DEMO_SECONDS'." >&2
	exit 2
}
fs_require_root
for b in build/flowsketchd build/flowsketch build/tools/fs-gen; do
	[ -x "$b" ] || die "$b is missing; run make first."
done
trap cleanup EXIT
trap 'exit 130' INT TERM
fs_bpffs_mount || die "cannot mount bpffs on /sys/fs/bpf."
WORK=$(mktemp -d /tmp/fs-demo.XXXXXX) || die "cannot create a work directory."
chmod 700 "$WORK"
SOCK="$WORK/flowsketchd.sock"
cli() { build/flowsketch --socket "$SOCK" "$@"; }

fs_pair_create "$NS_TX" "$NS_RX" "$VETH_TX" "$VETH_RX" ||
	die "cannot create the namespaces and veth pair."
echo "demo: $NS_TX/$VETH_TX -> $NS_RX/$VETH_RX"

# setsid and nsenter exec the program, so $! is the process to stop (a
# backgrounded shell function would be a subshell); the new session keeps
# Ctrl-C, which the terminal sends to its whole foreground process group,
# away from the daemon and the generator: it is meant for the live view.
setsid nsenter --net="/run/netns/$NS_RX" build/flowsketchd -i "$VETH_RX" --window 1 \
	--pin-dir "$PIN_DIR" --socket "$SOCK" --state-dir "$WORK/state" \
	--blocklist "$WORK/blocklist" >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 100); do
	cli status >/dev/null 2>&1 && break
	kill -0 "$DAEMON_PID" 2>/dev/null || break
	sleep 0.1
done
if ! cli status >/dev/null 2>&1; then
	cat "$WORK/daemon.log" >&2
	die "flowsketchd did not start."
fi
echo "demo: flowsketchd attached to $VETH_RX, maps pinned under $PIN_DIR"

# 5000 flows, Zipf 1.1: a handful of heavy talkers over a long tail;
# 40 % IPv6; 20k packets/s, a rate any machine sustains.  It runs a bit
# longer than the display so the last windows are still busy.
setsid nsenter --net="/run/netns/$NS_TX" build/tools/fs-gen -i "$VETH_TX" \
	--dst-mac "$(fs_mac "$NS_RX" "$VETH_RX")" --flows 5000 --zipf 1.1 \
	--ipv6-share 0.4 --sources 3000 --destinations 800 --rate 20000 \
	--duration $((DEMO_SECONDS + 5)) --seed "$ID" 2>"$WORK/gen.log" &
GEN_PID=$!

# Ctrl-C ends the live view only: top exits 0 on SIGINT (a trapped signal
# is reset to its default in children, and top installs its own handler),
# this shell's trap just prints a newline, and the summary and the
# clean-up still follow.
trap 'echo' INT
timeout --foreground "$DEMO_SECONDS" build/flowsketch --socket "$SOCK" top -n 15
trap 'exit 130' INT

echo
echo "=== flowsketch flows --span 60"
cli flows --span 60
echo
echo "=== flowsketch accuracy --span 60 (the sketches against the flows counted exactly)"
cli accuracy --span 60
echo
echo "=== flowsketch status"
cli status
exit 0
