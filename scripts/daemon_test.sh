#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# daemon_test.sh - the harness of the integration tests: a test of its own
# names, pins, state and socket, one flowsketchd in its receiving namespace,
# the CLI on that daemon, waits for events and the cleanup.  Every script
# in tests/integration that starts a daemon or makes namespaces sources it
# (it sources netns.sh and tap.sh) and calls fs_test first:
#
#   fs_test TAG [NEED...]         the set-up: the EXIT trap (the test's own
#                                 test_cleanup if it defines one, then
#                                 fsd_cleanup), root, FSD and CLI and each
#                                 NEED built (a path) or installed (a
#                                 command), bpffs, and the names
#                                   NS_TX NS_RX VETH_TX VETH_RX  fs-TAG-tx-PID..
#                                   PIN_DIR  /sys/fs/bpf/fs-TAG-PID
#                                   WORK     a fresh mode-0700 directory
#                                   SOCK     $WORK/sock, the daemon's socket
#                                   FSD_IFACES  (-i VETH_RX), the daemon's
#                                 bails on anything missing
#   fs_test_pair                  NS_TX and NS_RX joined by VETH_TX <-> VETH_RX
#                                 (fs_pair_create), or bail
#   fs_until TRIES [--while PID] CMD...
#                                 CMD every 0.1 s until it succeeds, at most
#                                 TRIES times and while PID lives: waits for
#                                 an event, never for a time
#
# The daemon (FSD CLI default to build/flowsketchd, build/flowsketch; GEN
# to build/tools/fs-gen; a test may set them before fs_test):
#
#   fsd_cleanup                   the EXIT trap's part: stop the daemon,
#                                 --detach what is pinned, namespaces,
#                                 pins and WORK gone (FS_TEST_KEEP=1
#                                 keeps WORK, for a look at the logs)
#   fsd_run [OPTION...]           the daemon in NS_RX, in the foreground,
#                                 with the options fsd_start gives it
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
. "${BASH_SOURCE[0]%/*}/netns.sh"
. "${BASH_SOURCE[0]%/*}/tap.sh"

FSD=${FSD:-build/flowsketchd}
CLI=${CLI:-build/flowsketch}
GEN=${GEN:-build/tools/fs-gen}
WORK=""
ID=$$

fs_test() {
	local tag=$1 need; shift

	NS_TX="fs-$tag-tx-$ID"
	NS_RX="fs-$tag-rx-$ID"
	VETH_TX="fs${tag:0:6}t$ID"	# IFNAMSIZ: 15 characters, pid <= 5 digits
	VETH_RX="fs${tag:0:6}r$ID"
	PIN_DIR="/sys/fs/bpf/fs-$tag-$ID"
	trap _fs_test_exit EXIT
	trap 'exit 130' INT TERM
	fs_require_root
	for need in "$CLI" "$@" "$FSD"; do
		case $need in
		*/*) [ -x "$need" ] || bail "$need is built (run make)" ;;
		*) command -v "$need" >/dev/null || bail "$need is installed (make deps)" ;;
		esac
	done
	fs_bpffs_mount || bail "bpffs is mounted on /sys/fs/bpf"
	WORK=$(mktemp -d "/tmp/fs-$tag.XXXXXX") || bail "a work directory"
	chmod 700 "$WORK"
	SOCK=$WORK/sock
	FSD_IFACES=(-i "$VETH_RX")
}

_fs_test_exit() {
	declare -F test_cleanup >/dev/null && test_cleanup
	fsd_cleanup
}

fs_test_pair() {
	fs_pair_create "$NS_TX" "$NS_RX" "$VETH_TX" "$VETH_RX" || bail "namespaces and veth pair"
}

fs_until() {
	local tries=$1 pid=""; shift
	[ "$1" = --while ] && { pid=$2; shift 2; }
	until "$@"; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		[ -z "$pid" ] || kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
}

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
	# A test may have mounted a tmpfs of some size on the state directory.
	[ -n "$WORK" ] && mountpoint -q "$WORK/state" && umount "$WORK/state"
	[ -n "$WORK" ] && [ -z "${FS_TEST_KEEP:-}" ] && rm -rf "$WORK"
}

cli() { "$CLI" --socket "$SOCK" "$@"; }
jqe() { jq -e "$@" >/dev/null; }

# FSD_ARGV: the daemon in NS_RX with the test's own paths, then OPTION...
# A list file of the test's own, never the host's default; but --ingress
# tracepoint reads none, and refuses one.
_fsd_argv() {
	local list=(--blocklist "$WORK/blocklist")

	case " $* " in *" --ingress tracepoint "*) list=() ;; esac
	FSD_ARGV=(nsenter --net="/run/netns/$NS_RX" "$FSD" "${FSD_IFACES[@]}" --window 1 \
		--pin-dir "$PIN_DIR" --state-dir "$WORK/state" --socket "$SOCK" "${list[@]}" "$@")
}

fsd_run() { _fsd_argv "$@"; "${FSD_ARGV[@]}"; }

fsd_start() {
	_fsd_argv "$@"
	# exec: $! is the daemon (nsenter execs it), for the signal tests.
	(exec "${FSD_ARGV[@]}" >>"$WORK/daemon.log" 2>&1) &
	DAEMON_PID=$!
	fs_until 150 --while "$DAEMON_PID" fsd_status
}

# fsd_status: the daemon's status in $WORK/st.json; 0 if it answered, and
# FSD_ANSWERED the moment it did ($EPOCHREALTIME).
fsd_status() { cli status --json >"$WORK/st.json" 2>/dev/null && FSD_ANSWERED=$EPOCHREALTIME; }

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
