#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# daemon_errors.sh - flowsketchd refuses bad input and never leaves the
# host half-configured.
#
# Each refusal must exit non-zero with one precise message, and afterwards
# the host must be as before: nothing pinned under the test's pin
# directory, no XDP program on the test veth (`ip -d link show`), no
# socket.  The names, namespaces, veth pair and cleanup are the harness's
# (scripts/daemon_test.sh).
# Output: TAP ("ok N - ..."), diagnostics as "# ..." lines.
set -u
cd "$(dirname "$0")/../.." || exit 2
FSD=$PWD/build/flowsketchd
. scripts/daemon_test.sh

tap_on_not_ok() { [ -s "$WORK/err" ] && sed 's/^/# stderr: /' "$WORK/err" | head -10; }
# The refused attaches leave empty pin directories beside PIN_DIR.
test_cleanup() { rm -rf "$PIN_DIR"-*; }

# fsd ARGS...: run the daemon in the receiving namespace to completion;
# stderr in $WORK/err, status in $rc.  Every call here expects a refusal, so a
# daemon that starts after all is stopped (SIGTERM, its clean exit) after
# 20 s and the check fails on its message instead of hanging the suite.
# Every daemon here gets a list file of its own (never the host's).
fsd() {
	fs_in "$NS_RX" timeout -s TERM 20 "$FSD" --blocklist "$FSD_LIST" "$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
}

no_pins() { [ -z "$(ls -A "$1" 2>/dev/null)" ]; }
no_xdp() { ! xdp_attached; }
one_line() { [ "$(wc -l <"$WORK/err")" -eq 1 ]; }
says() { grep -qF -- "$1" "$WORK/err"; }
failed_with() { [ "$rc" -ne 0 ] && one_line && says "$1"; }
host_clean() { no_pins "$1" && no_xdp && [ ! -e "$SOCK" ]; }

fs_test err
fs_test_pair

base=(--pin-dir "$PIN_DIR" --socket "$SOCK" --blocklist "$FSD_LIST")

# --- input errors: one message, nothing touched --------------------------
fsd -i no-such-if0 "${base[@]}"
check "unknown interface refused with one message" failed_with 'no interface named "no-such-if0"'
check "unknown interface: host clean" host_clean "$PIN_DIR"

for bad in "--width 8" "--width 8388608" "--width x" "--depth 0" "--depth 9" \
	   "--precision 3" "--precision 19" "--window 0" "--window -1" \
	   "--history 0" "--epsilon 0" "--hh-fraction 2" "--ringbuf-kib 100" \
	   "--xdp-mode turbo" "--max-candidates 0" "--max-candidates x" \
	   "--max-candidates 4194305" "--detect spread:2x131072" "--detect prefixes:0x1024" \
	   "--detect prefixes:2x1024:1/512" "--detect spread:2x512:1/3" "--detect spread:" \
	   "--detect prefixes:2x"; do
	# shellcheck disable=SC2086
	fsd -i "$VETH_RX" "${base[@]}" $bad
	opt=${bad%% *}
	check "$bad refused with one message" failed_with "${opt}"
	check "$bad: host clean" host_clean "$PIN_DIR"
done

fsd -i "$VETH_RX" "${base[@]}" --window 10 --history 5
check "history shorter than a window refused" failed_with "--history (5 s) must be at least one window (10 s)"
fsd -i "$VETH_RX" "${base[@]}" --epsilon 0.01
check "--epsilon without --delta refused" failed_with "--epsilon and --delta go together"
fsd -i "$VETH_RX" "${base[@]}" --width 65536 --depth 8 --precision 18 --history 3600
check "history over the memory cap refused" failed_with "more than the"
check "memory cap: host clean" host_clean "$PIN_DIR"
# An hour of 1 s windows: 1.3 GiB of sketches fits the 8 GiB cap, but with
# 65536 candidates a window (6 MiB of table each when full) it does not.
fsd -i "$VETH_RX" "${base[@]}" --history 3600
check "history whose candidate sets would pass the memory cap refused" \
	failed_with "with 65536 candidates each, more than the 8192 MiB cap"
check "candidate cap: host clean" host_clean "$PIN_DIR"

fs_in "$NS_RX" setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$FSD" -i "$VETH_RX" "${base[@]}" >"$WORK/out" 2>"$WORK/err"
rc=$?
check "non-root refused with one message" failed_with "must run as root"
check "non-root: host clean" host_clean "$PIN_DIR"

echo -n 0123456789 >"$WORK/short-secret"
fsd -i "$VETH_RX" "${base[@]}" --secret-file "$WORK/short-secret"
check "secret file of 10 bytes refused" failed_with "must hold exactly 16 bytes"
check "bad secret: host clean" host_clean "$PIN_DIR"

fsd -i "$VETH_RX" --pin-dir "$WORK/pins" --socket "$SOCK"
check "pin directory outside bpffs refused with one message" \
	failed_with "pin directory $WORK/pins is not on a bpf filesystem"
check "pin directory outside bpffs: removed again" test ! -e "$WORK/pins"
check "pin directory outside bpffs: host clean" host_clean "$PIN_DIR"

# A --socket naming a file that is not a socket: refused, the file kept.
# (connect() refuses on a regular file as on a dead daemon's socket.)
echo keep >"$WORK/not-a-socket"
fs_in "$NS_RX" timeout 10 "$FSD" -i "$VETH_RX" --pin-dir "$PIN_DIR" \
	--socket "$WORK/not-a-socket" --blocklist "$FSD_LIST" >"$WORK/out" 2>"$WORK/err"
rc=$?
check "--socket on a regular file refused with one message" \
	failed_with "$WORK/not-a-socket exists and is not a socket"
check "--socket on a regular file: the file is kept" \
	test "$(cat "$WORK/not-a-socket" 2>/dev/null)" = keep
check "--socket on a regular file: host clean" host_clean "$PIN_DIR"

# --- a running daemon, and what may not happen next to it ----------------
if fsd_start && xdp_attached; then
	ok "daemon starts and attaches"
else
	not_ok "daemon starts and attaches"
	sed 's/^/# daemon: /' "$FSD_LOG"
fi
first=$DAEMON_PID
pins_before=$(ls "$PIN_DIR" | sort | tr '\n' ' ')
pins_want=$(printf '%s\n' barrier bfilter block4 block6 bsummary bstats cms cms_narrow ctl hits hll hll_packed hot prefix sample spread \
	conn egress ifaces ifcount ifslot kfunc_args "link_$VETH_RX" params prog_xdp reports stats | sort | tr '\n' ' ')
check "every map, the program and the interface's link are pinned" \
	test "$pins_before" = "$pins_want"
check "dump of a pinned map shows BTF field names" \
	sh -c "bpftool map dump pinned '$PIN_DIR/ctl' | grep -q window_seq"

# A client that sends its request a byte at a time is cut off once the
# request's time (server.h, 200 ms) is up, however steadily it trickles;
# else it could hold the event loop, and the windows, for minutes.
# Prints the seconds until the answer, then the answer.
trickle() {
	python3 - "$1" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.settimeout(0.05)
t0 = time.monotonic()
answer = b""
closed = False
while time.monotonic() - t0 < 3 and b"\n" not in answer and not closed:
    try:
        s.send(b" ")
    except OSError:
        # The daemon gave up on us and closed; its answer may still be
        # waiting in our receive queue, so read it below.
        closed = True
    try:
        chunk = s.recv(4096)
        answer += chunk
        closed = closed or not chunk
    except socket.timeout:
        pass
    except OSError:
        closed = True
elapsed = time.monotonic() - t0
s.settimeout(5)
try:
    if not closed and b"\n" not in answer:
        s.send(b'{"cmd":"status"}\n')
    while b"\n" not in answer:
        chunk = s.recv(4096)
        if not chunk:
            break
        answer += chunk
except OSError:
    pass
print("%.2f" % elapsed)
print(answer.decode(errors="replace").strip())
PY
}
trickle "$SOCK" >"$WORK/trickle"
check "a trickling client is answered within a second" \
	awk 'NR == 1 { exit !($1 < 1) }' "$WORK/trickle"
check "a trickling client gets a timeout error" \
	grep -qF '"error":"request not complete within 200 ms"' "$WORK/trickle"

# Requests the parser must refuse with one {"error": ...} naming the
# problem (request.c, jsoncheck.c), however json-c would have read them.
# refused DESC REQUEST(printf format) TEXT: one line, an object whose only
# key is "error", its sentence containing TEXT.
refused() {
	local what=$1 text=$3
	# shellcheck disable=SC2059
	printf "$2" >"$WORK/request"
	fsd_ask <"$WORK/request" >"$WORK/answer" 2>"$WORK/err"
	if [ "$(wc -l <"$WORK/answer")" -eq 1 ] &&
	   jq -e 'keys == ["error"]' "$WORK/answer" >/dev/null 2>&1 &&
	   jq -r .error "$WORK/answer" | grep -qF -- "$text"; then
		ok "$what"
	else
		not_ok "$what"
		sed 's/^/# answer: /' "$WORK/answer"
	fi
}
refused "a NUL byte in the request is named, with its offset" \
	'{"cmd":"sta\0tus"}\n' 'request contains a NUL byte at byte 11'
refused "a NUL byte after the object is named too" \
	'{"cmd":"status"}\0\n' 'request contains a NUL byte at byte 16'
refused "a duplicate key is refused, not the last one kept" \
	'{"cmd":"top","cmd":"status"}\n' 'request has the key "cmd" twice in one object'
refused "a duplicate key spelled with an escape is the same key" \
	'{"cmd":"status","\\u0063md":"top"}\n' 'request has the key "cmd" twice'
refused "a duplicate key inside a nested value is refused too" \
	'{"cmd":"status","x":{"a":1,"a":2}}\n' 'request has the key "a" twice'
refused "invalid UTF-8 (a stray 0xff) is named with its offset" \
	'{"cmd":"st\377"}\n' 'request is not valid UTF-8 at byte 10'
refused "an overlong UTF-8 form (C0 AF for /) is invalid UTF-8" \
	'{"cmd":"status","span":"\300\257"}\n' 'request is not valid UTF-8 at byte 24'
refused "a UTF-16 surrogate in UTF-8 (ED A0 80) is invalid UTF-8" \
	'{"cmd":"\355\240\200"}\n' 'request is not valid UTF-8 at byte 8'
refused "single-quoted strings are not JSON (json-c would take them)" \
	"{'cmd':'status'}\\n" 'request is not valid JSON'
refused "NaN is not JSON (json-c would take it)" \
	'{"cmd":"top","span":NaN}\n' 'request is not valid JSON'
refused "a raw control character inside a string is refused" \
	'{"cmd":"sta\ttus"}\n' 'raw control character 0x09'
refused "still strict: an unknown key" \
	'{"cmd":"status","bogus":1}\n' 'unknown key "bogus" for cmd "status"'
refused "still strict: a value of the wrong type" \
	'{"cmd":"top","n":"5"}\n' '"n" must be an integer from 1 to 10000'
refused "still strict: data after the object" \
	'{"cmd":"status"} {}\n' 'request has data after its JSON value'
printf '{"cmd":"status"}\n' >"$WORK/request"
fsd_ask <"$WORK/request" >"$WORK/answer" 2>"$WORK/err"
check "after all those, a well-formed request is answered" \
	eval 'jq -e ".pid > 0 and (has(\"error\") | not)" "$WORK/answer" >/dev/null'

fsd -i "$VETH_RX" --pin-dir "$PIN_DIR" --socket "$WORK/sock2"
check "second daemon on the same pins refused with one message" \
	failed_with "another flowsketchd is using $PIN_DIR (pid $first)"
check "first daemon's pins untouched" \
	test "$(ls "$PIN_DIR" | sort | tr '\n' ' ')" = "$pins_before"
check "first daemon still attached" xdp_attached
check "second daemon left no socket" test ! -e "$WORK/sock2"

fsd -i "$VETH_RX" --pin-dir "$PIN_DIR-2" --socket "$WORK/sock2"
check "attach over an existing XDP program refused" \
	sh -c "[ $rc -ne 0 ] && grep -q '$VETH_RX already has an XDP program' '$WORK/err'"
check "failed attach unpinned everything" no_pins "$PIN_DIR-2"
check "failed attach left no socket" test ! -e "$WORK/sock2"
check "failed attach left the first daemon attached" xdp_attached

fsd -i "$VETH_RX" --pin-dir "$PIN_DIR-3" --socket "$SOCK"
check "second daemon on a live socket refused" failed_with "another daemon is listening on $WORK/sock"
check "live socket: its pins are gone" no_pins "$PIN_DIR-3"

check "SIGTERM stops the daemon with status 0" fsd_stop
check "after SIGTERM: no pins, no XDP, no socket" host_clean "$PIN_DIR"

# SIGINT during real setup (loading the datapath takes some 50 ms here)
# and right after it: at fixed delays from the start, and once the socket
# is open but nothing is attached yet (the load is under way).  Each run
# must end with status 0 and "Interrupt: stopping" in the log, followed by
# nothing but the detach, and leave no pin, no XDP and no socket.  The one
# other acceptable end is a SIGINT that lands before the daemon has
# blocked it (at 0 ms, in nsenter or option parsing): killed by the
# signal, with an empty log, since nothing was touched yet.
# env --default-signal: a background job of a non-interactive shell starts
# with SIGINT ignored, which would hide exactly the early case; the signal
# goes once env has reset it (fs_stoppable), "0 s" meaning at once after.
sigint_run() { # sigint_run WHEN: a delay in seconds, or "socket"
	local when=$1 pid rc="" st phase
	rm -f "$SOCK"
	env --default-signal=INT nsenter --net="/run/netns/$NS_RX" \
		"$FSD" -i "$VETH_RX" "${base[@]}" >"$WORK/out" 2>"$WORK/err" &
	pid=$!
	# Not before env has made SIGINT deadly again: sent earlier, the
	# shell's ignored SIGINT is dropped and the daemon runs on (seen once).
	fs_stoppable "$pid"
	if [ "$when" = socket ]; then
		for _ in $(seq 1000); do
			[ -S "$SOCK" ] && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.001
		done
	else
		sleep "$when"
	fi
	# Where setup was when the signal went (attach is its last step).
	if xdp_attached; then phase="after attach"; elif [ -S "$SOCK" ]; then phase="during load"; else phase="early"; fi
	kill -INT "$pid"
	fs_until 100 fs_gone "$pid" || { kill -KILL "$pid"; rc=timeout; }
	wait "$pid"
	st=$?
	[ "$rc" = timeout ] || rc=$st
	[ "$phase" = "during load" ] && during_load=$((during_load + 1))
	sigint_outcome "$when" "$phase" "$rc"
}
# The log after a SIGINT: the stop line once, then only detaches.
sigint_log_ok() {
	awk -v ifn="$VETH_RX" '
		/[Ee]rror|[Ff]ail|[Cc]annot|[Ww]arn/ { bad = 1 }
		$0 == "flowsketchd: Interrupt: stopping" { stops++; after = 1; next }
		after && $0 != "flowsketchd: detached from " ifn { bad = 1 }
		END { exit !(stops == 1 && !bad) }' "$WORK/err"
}
sigint_outcome() {
	local when=$1 phase=$2 rc=$3 what="SIGINT at ${1}${1:+ s}"
	[ "$when" = socket ] && what="SIGINT once the socket is open"
	what="$what ($phase)"
	if [ "$rc" = 130 ] && [ ! -s "$WORK/err" ] && [ "$phase" = early ]; then
		ok "$what: killed before setup began, nothing logged"
		ok "$what: log empty"
	else
		check "$what: exits 0 (got $rc)" [ "$rc" = 0 ]
		check "$what: log says Interrupt: stopping, then only the detach" sigint_log_ok
	fi
	check "$what: no pins, no XDP on $VETH_RX, no socket" host_clean "$PIN_DIR"
}
during_load=0
for when in 0 0.005 0.01 0.02 0.03 0.05 0.1 0.2 socket; do
	sigint_run "$when"
done
check "$during_load of the SIGINTs arrived during the load" [ "$during_load" -gt 0 ]

# A secret from a pipe arrives in the pieces its writer makes: read it all.
if fsd_start --secret-file <(printf 01234567; sleep 0.3; printf 89abcdef); then
	ok "secret read from a pipe in two pieces"
	check "secret from a pipe: SIGTERM stops the daemon" fsd_stop
else
	not_ok "secret read from a pipe in two pieces"
	sed 's/^/# daemon: /' "$FSD_LOG"
fi
finish
