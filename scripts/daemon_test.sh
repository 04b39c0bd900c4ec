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
#                                   FSD_STATE FSD_LIST FSD_LOG FSD_ST  its
#                                            state directory, list file,
#                                            log and last status, in WORK
#                                   FS_NAMESPACES  (NS_TX NS_RX): a test
#                                            adds the others it makes
#                                 bails on anything missing
#   fs_test_pair                  NS_TX and NS_RX joined by VETH_TX <-> VETH_RX
#                                 (fs_pair_create), or bail
#   fs_until TRIES [--while PID] CMD...
#                                 CMD every 0.1 s until it succeeds, at most
#                                 TRIES times and while PID lives: waits for
#                                 an event, never for a time
#   fs_gone PID                   0 once PID has exited (fs_until's CMD)
#   fs_stoppable PID              0 once PID has left this shell (exec) and
#                                 no longer ignores SIGINT (or is gone), 1
#                                 if not after ~1 s: a background job of
#                                 this non-interactive shell ignores SIGINT
#                                 from just after the fork until `env
#                                 --default-signal=INT` resets it, and a
#                                 SIGINT sent then is dropped by the kernel,
#                                 lost before any daemon exists.  Send an
#                                 early SIGINT only after it.
#   gen_in ARG...                 fs-gen on VETH_TX to VETH_RX's MAC with
#                                 ARG..., its stderr in $WORK/gen.log
#   gen_out ARG...                the same from VETH_RX to VETH_TX
#   cli_run ARG... / cli_fails STATUS TEXT ARG... / holds FILE JQ-ARG...
#                                 the CLI's outputs in $WORK/out, err, $rc;
#                                 a refusal of one line; a JSON answer's
#                                 property (defined below, beside cli)
#
# The daemon (FSD CLI default to build/flowsketchd, build/flowsketch; GEN
# to build/tools/fs-gen; a test may set them before fs_test):
#
#   tap_on_failure                a failed run (tap.sh's finish) shows the
#                                 end of each daemon's log; a test may
#                                 define its own after sourcing this
#   fsd_cleanup                   the EXIT trap's part: stop the daemons,
#                                 --detach what is pinned, namespaces,
#                                 pins and WORK gone (FS_TEST_KEEP=1
#                                 keeps WORK, for a look at the logs)
#   fsd_run [OPTION...]           the daemon in NS_RX, in the foreground,
#                                 with the options fsd_start gives it
#   fsd_start [OPTION...]         start the daemon in NS_RX on FSD_IFACES
#                                 (one-second windows, its own list file)
#                                 in the background, DAEMON_PID the daemon
#                                 itself; 0 once it answers status (in
#                                 FSD_ST, FSD_ANSWERED when), 1 if it died
#                                 or never did
#   fsd_launch [OPTION...]        fsd_start without waiting for an answer
#   fsd_stop                      SIGTERM (SIGKILL if it is not gone in 5 s),
#                                 reaped; its exit status (0: a clean stop)
#   fsd_kill                      SIGKILL, reaped
#   fsd_settle [FRONTEND...]      status until two more windows closed in
#                                 XDP's and each FRONTEND's history (egress,
#                                 conn): what was sent before is in
#                                 finished windows
#   fsd_front NAME JQ             JQ of frontend NAME in FSD_ST
#   xdp_attached                  an XDP program is on VETH_RX
#   cli ARG...                    the CLI on the daemon's socket
#   fsd_ask                       stdin's bytes, as they are, to the
#                                 daemon's socket; its answer (UTF-8, or
#                                 fail) until it closes, on stdout
#   jqe ARG...                    jq -e, quiet
#   fsd_refused DESC TEXT OPTION...
#                                 a daemon in NS_RX with OPTION... on pins,
#                                 state and socket of its own (-bad) must
#                                 exit 1 with one line holding TEXT and
#                                 leave none of them: ok DESC or not_ok
#
# More daemons than one, each with paths of its own:
#   fsd_daemon NAME NS IFACE      daemon NAME runs in NS on IFACE
#   fsd_as NAME CMD...            CMD (fsd_start, cli, fsd_kill...) on
#                                 daemon NAME: pins $PIN_DIR-NAME, socket
#                                 $WORK/NAME.sock, $WORK/state-NAME,
#                                 $WORK/blocklist-NAME, $WORK/daemon-NAME.log,
#                                 status $WORK/st-NAME.json
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
	FS_NAMESPACES=("$NS_TX" "$NS_RX")	# fsd_cleanup deletes them
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
	FSD_STATE=$WORK/state FSD_LIST=$WORK/blocklist
	FSD_LOG=$WORK/daemon.log FSD_ST=$WORK/st.json
}

_fs_test_exit() {
	declare -F test_cleanup >/dev/null && test_cleanup
	fsd_cleanup
}

fs_test_pair() {
	fs_pair_create "$NS_TX" "$NS_RX" "$VETH_TX" "$VETH_RX" || bail "namespaces and veth pair"
}

fs_gone() { ! kill -0 "$1" 2>/dev/null; }

# A tight loop of builtin tests and reads (no fork, some 20 us a look):
# the wait is for an event a millisecond or so away, and the test's early
# signal must follow it closely.  Just forked, the job is still this shell
# with its dispositions (SIGINT not ignored yet): it must have exec'd
# (another program, -ef) before SigIgn means anything.  SigIgn is
# hexadecimal, SIGINT bit 1.
fs_stoppable() {
	local pid=$1 i line ign
	for ((i = 0; i < 50000; i++)); do
		[ "/proc/$pid/exe" -ef "/proc/$BASHPID/exe" ] && continue
		ign=""
		while read -r line; do
			[[ $line == SigIgn:* ]] && { ign=${line#SigIgn:}; break; }
		done 2>/dev/null <"/proc/$pid/status" || return 0
		ign=${ign//[[:space:]]/}
		[ -n "$ign" ] || return 0
		(( (16#$ign >> 1) & 1 )) || return 0
	done
	return 1
}

gen_in() { _fs_gen "$NS_TX" "$VETH_TX" "$NS_RX" "$VETH_RX" "$@"; }
gen_out() { _fs_gen "$NS_RX" "$VETH_RX" "$NS_TX" "$VETH_TX" "$@"; }
_fs_gen() {
	local mac
	mac=$(fs_mac "$3" "$4") || return 1
	fs_in "$1" "$GEN" -i "$2" --dst-mac "$mac" "${@:5}" >/dev/null 2>>"$WORK/gen.log"
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
declare -A FSD_AT FSD_PIDS

tap_on_failure() {
	local log
	[ -n "$WORK" ] || return 0
	for log in "$WORK"/daemon*.log; do
		[ -s "$log" ] && { echo "${log##*/}, its end:"; tail -n 30 "$log"; } | diag
	done
	return 0
}

fsd_cleanup() {
	local name
	for name in "${!FSD_AT[@]}"; do fsd_as "$name" _fsd_remove; done
	_fsd_remove
	fs_pair_destroy "${FS_NAMESPACES[@]}"
	[ -n "$WORK" ] && [ -z "${FS_TEST_KEEP:-}" ] && rm -rf "$WORK"
}

# The daemon stopped (SIGTERM first: it detaches itself), what it pinned
# and the tmpfs a test may have mounted on its state directory gone.
_fsd_remove() {
	fs_daemon_stop "$DAEMON_PID"
	DAEMON_PID=""
	pkill -KILL -f -- "--pin-dir $PIN_DIR( |\$)" 2>/dev/null
	[ -n "$WORK" ] || return 0
	if [ -e "/run/netns/$NS_RX" ] && [ -e "$PIN_DIR" ]; then
		fs_in "$NS_RX" timeout 10 "$FSD" --detach --pin-dir "$PIN_DIR" \
			--state-dir "$FSD_STATE" >/dev/null 2>&1
	fi
	rm -rf "$PIN_DIR"
	mountpoint -q "$FSD_STATE" && umount "$FSD_STATE"
	return 0
}

fsd_stop() {
	local pid=$DAEMON_PID
	DAEMON_PID=""
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	fs_until 50 fs_gone "$pid" || kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}
fsd_kill() { kill -KILL "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=""; }

fsd_daemon() { FSD_AT[$1]="$2 $3"; }

# Bash's dynamic scope: the locals below are what the fsd_* functions and
# cli that CMD calls see, and DAEMON_PID is NAME's own.
fsd_as() {
	local name=$1 rc; shift
	local NS_RX=${FSD_AT[$name]%% *} iface=${FSD_AT[$name]#* }
	local PIN_DIR=$PIN_DIR-$name SOCK=$WORK/$name.sock FSD_STATE=$WORK/state-$name
	local FSD_LIST=$WORK/blocklist-$name FSD_LOG=$WORK/daemon-$name.log
	local FSD_ST=$WORK/st-$name.json DAEMON_PID=${FSD_PIDS[$name]:-}
	local FSD_IFACES=(-i "$iface")
	"$@"; rc=$?
	FSD_PIDS[$name]=$DAEMON_PID
	return $rc
}

cli() { "$CLI" --socket "$SOCK" "$@"; }
# cli_run ARGS...: the CLI with ARGS (its own --socket, if any), its
# stdout, stderr and status in $WORK/out, $WORK/err and $rc.
cli_run() { "$CLI" "$@" >"$WORK/out" 2>"$WORK/err"; rc=$?; }
# cli_fails STATUS TEXT ARGS...: cli_run exits STATUS with one stderr
# line holding TEXT, and nothing on stdout.
cli_fails() {
	local status=$1 text=$2; shift 2
	cli_run "$@"
	[ "$rc" -eq "$status" ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] &&
		grep -qF -- "$text" "$WORK/err" && [ ! -s "$WORK/out" ]
}
# holds FILE JQ-ARGS...: jq -e on FILE, which must hold an answer (jq 1.6
# exits 0 on an empty input, which a failed request leaves).
holds() {
	local file=$1; shift
	[ -s "$file" ] && jq -e "$@" "$file" >/dev/null
}
jqe() { jq -e "$@" >/dev/null; }

fsd_refused() {
	local what=$1 text=$2 rc; shift 2
	fs_in "$NS_RX" "$FSD" -i "$VETH_RX" --pin-dir "$PIN_DIR-bad" \
		--state-dir "$WORK/bad-state" --socket "$WORK/bad.sock" \
		--blocklist "$WORK/blocklist" "$@" >/dev/null 2>"$WORK/bad.err"
	rc=$?
	if [ "$rc" = 1 ] && [ "$(wc -l <"$WORK/bad.err")" = 1 ] &&
	   grep -qF -- "$text" "$WORK/bad.err" && [ ! -e "$PIN_DIR-bad" ] &&
	   [ ! -e "$WORK/bad-state" ] && [ ! -e "$WORK/bad.sock" ]; then
		ok "$what: exit 1, \"$(cat "$WORK/bad.err")\", nothing left"
	else
		not_ok "$what: exit $rc, one line with \"$text\", nothing left"
		diag <"$WORK/bad.err"
	fi
}

fsd_ask() {
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(sys.argv[1])
s.sendall(sys.stdin.buffer.read())
out = b""
while True:
    b = s.recv(1 << 20)
    if not b:
        break
    out += b
sys.stdout.write(out.decode())' "$SOCK"
}

# FSD_ARGV: the daemon in NS_RX with the test's own paths, then OPTION...
# A list file of the test's own, never the host's default; but --ingress
# tracepoint reads none, and refuses one.
_fsd_argv() {
	local list=(--blocklist "$FSD_LIST")

	case " $* " in *" --ingress tracepoint "*) list=() ;; esac
	FSD_ARGV=(nsenter --net="/run/netns/$NS_RX" "$FSD" "${FSD_IFACES[@]}" --window 1 \
		--pin-dir "$PIN_DIR" --state-dir "$FSD_STATE" --socket "$SOCK" "${list[@]}" "$@")
}

fsd_run() { _fsd_argv "$@"; "${FSD_ARGV[@]}"; }

fsd_launch() {
	_fsd_argv "$@"
	# exec: $! is the daemon (nsenter execs it), for the signal tests.
	(exec "${FSD_ARGV[@]}" >>"$FSD_LOG" 2>&1) &
	DAEMON_PID=$!
}

fsd_start() {
	fsd_launch "$@"
	fs_until 150 --while "$DAEMON_PID" fsd_status
}

# fsd_status: the daemon's status in $WORK/st.json; 0 if it answered, and
# FSD_ANSWERED the moment it did ($EPOCHREALTIME).
fsd_status() { cli status --json >"$FSD_ST" 2>/dev/null && FSD_ANSWERED=$EPOCHREALTIME; }

fsd_front() { jq -r "(.frontends[] | select(.name == \"$1\")) | $2" "$FSD_ST"; }
xdp_attached() { ip -n "$NS_RX" -d link show dev "$VETH_RX" | grep -q 'prog/xdp'; }

# The fewest windows finished of XDP's history and the named frontends'.
fsd_windows_done() {
	local f sel=".counters.windows_finished"

	for f in "$@"; do
		sel="$sel, (.frontends[] | select(.name == \"$f\") | .windows_finished)"
	done
	jq "[$sel] | min" "$FSD_ST"
}

fsd_settle() {
	local n0 n

	cli status --json >"$FSD_ST" || return 1
	n0=$(fsd_windows_done "$@")
	for _ in $(seq 60); do
		sleep 0.2
		cli status --json >"$FSD_ST" || return 1
		n=$(fsd_windows_done "$@")
		[ "$n" -ge $((n0 + 2)) ] && return 0
	done
	return 1
}

# fleet_hosts TAG SHORT: two hosts for the fleet tests: A on the harness's
# pair (NS_TXA, NS_RXA, VETH_TXA, VETH_RXA), B on one more of its own
# (namespaces fs-TAG-txb-ID, fs-TAG-rxb-ID, veths SHORTtbID, SHORTrbID), a
# daemon a and b on them (fsd_as), and one fleet secret in $WORK/secret.
fleet_hosts() {
	NS_TXA=$NS_TX NS_RXA=$NS_RX VETH_TXA=$VETH_TX VETH_RXA=$VETH_RX
	NS_TXB="fs-$1-txb-$ID" NS_RXB="fs-$1-rxb-$ID" VETH_TXB="$2tb$ID" VETH_RXB="$2rb$ID"
	FS_NAMESPACES+=("$NS_TXB" "$NS_RXB")
	fs_test_pair
	fs_pair_create "$NS_TXB" "$NS_RXB" "$VETH_TXB" "$VETH_RXB" || bail "namespaces and veth pair B"
	fsd_daemon a "$NS_RXA" "$VETH_RXA"
	fsd_daemon b "$NS_RXB" "$VETH_RXB"
	head -c 16 /dev/urandom >"$WORK/secret"
}
