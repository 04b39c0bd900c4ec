#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# daemon_test.sh - one flowsketchd in a test's receiving namespace, for the
# integration tests that run the real daemon against traffic they send.
# Source it after netns.sh and tap.sh; it defines functions only.  The
# test sets, before calling them:
#
#   NS_TX NS_RX VETH_RX PIN_DIR   its namespaces, the counted veth, pins
#   WORK                          its temporary directory (sock, logs,
#                                 state; the last status in $WORK/st.json)
#   FSD CLI                       build/flowsketchd, build/flowsketch
#
#   fsd_cleanup                   the EXIT trap's part: stop the daemon,
#                                 --detach what is pinned, namespaces,
#                                 pins and WORK gone (FS_TEST_KEEP=1
#                                 keeps WORK, for a look at the logs)
#   fsd_start [OPTION...]         start the daemon in NS_RX on VETH_RX
#                                 (one-second windows, its own blocklist
#                                 file $WORK/blocklist) in the background,
#                                 DAEMON_PID the daemon itself; 0 once it
#                                 answers status, 1 if it died or never
#   fsd_settle [FRONTEND...]      status until two more windows closed in
#                                 XDP's and each FRONTEND's history (egress,
#                                 conn): what was sent before is in
#                                 finished windows
#   fsd_front NAME JQ             JQ of frontend NAME in $WORK/st.json
#   cli ARG...                    the CLI on the daemon's socket
#   jqe ARG...                    jq -e, quiet
DAEMON_PID=""

fsd_cleanup() {
	fs_daemon_stop "$DAEMON_PID"	# SIGTERM first: it detaches itself
	pkill -KILL -f -- "--pin-dir $PIN_DIR( |\$)" 2>/dev/null
	if [ -n "$WORK" ] && [ -e "/run/netns/$NS_RX" ] && [ -e "$PIN_DIR" ]; then
		fs_in "$NS_RX" timeout 10 "$FSD" --detach --pin-dir "$PIN_DIR" \
			--state-dir "$WORK/state" >/dev/null 2>&1
	fi
	fs_pair_destroy "$NS_TX" "$NS_RX"
	rm -rf "$PIN_DIR"
	[ -n "$WORK" ] && [ -z "${FS_TEST_KEEP:-}" ] && rm -rf "$WORK"
}

cli() { "$CLI" --socket "$WORK/sock" "$@"; }
jqe() { jq -e "$@" >/dev/null; }

fsd_start() {
	# A list file of the test's own, never the host's default; but
	# --ingress tracepoint reads none, and refuses one.
	local list=(--blocklist "$WORK/blocklist")

	case " $* " in *" --ingress tracepoint "*) list=() ;; esac
	(exec nsenter --net="/run/netns/$NS_RX" "$FSD" -i "$VETH_RX" --window 1 \
		--pin-dir "$PIN_DIR" --state-dir "$WORK/state" --socket "$WORK/sock" \
		"${list[@]}" "$@" >>"$WORK/daemon.log" 2>&1) &
	DAEMON_PID=$!
	for _ in $(seq 150); do
		cli status --json >"$WORK/st.json" 2>/dev/null && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

fsd_front() { jq -r "(.frontends[] | select(.name == \"$1\")) | $2" "$WORK/st.json"; }

# The fewest windows finished of XDP's history and the named frontends'.
fsd_windows_done() {
	local f sel=".counters.windows_finished"

	for f in "$@"; do
		sel="$sel, (.frontends[] | select(.name == \"$f\") | .windows_finished)"
	done
	jq "[$sel] | min" "$WORK/st.json"
}

fsd_settle() {
	local n0 n

	cli status --json >"$WORK/st.json" || return 1
	n0=$(fsd_windows_done "$@")
	for _ in $(seq 60); do
		sleep 0.2
		cli status --json >"$WORK/st.json" || return 1
		n=$(fsd_windows_done "$@")
		[ "$n" -ge $((n0 + 2)) ] && return 0
	done
	return 1
}
