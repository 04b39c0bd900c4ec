#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# top_screen.sh - `flowsketch top` on a terminal: the full-screen view.
#
# The CLI runs in a pseudo-terminal (python3's pty) against
# tools/fs-fake-daemon, whose canned answer and request log are the
# oracle: what the screen shows follows from the answer, what each key did
# from the requests logged.  Keys pressed: b (sort bytes), d (direction
# in), d (out), + (span 10 s), c (sort connections, direction dropped),
# p, q.  Checked: the screen has the
# header (span, totals, bound, distinct counts), the flows and the state
# line; every key changed the next request as it should; q ends it with
# status 0 and the terminal restored (the alternate screen left); SIGINT
# ends it with status 0 too; not on a terminal, top prints plain tables;
# with no daemon the view says so and keeps asking.
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/fake_daemon.sh

fake_test top-screen python3
cat >"$T/top.json" <<'EOT'
{"span_seconds":10, "windows":2, "window_seconds":5, "window_end":1700000000,
 "sort":"packets", "total_packets":1234567, "total_bytes":987654321,
 "error_bound":{"epsilon":0.00066, "delta":0.0067, "packets":815, "bytes":651852},
 "distinct_flows":4989, "distinct_sources":3393, "distinct_destinations":1536,
 "relative_standard_error":0.0081, "hll_precision":14,
 "flows":[
  {"src":"10.0.0.1", "dst":"10.0.0.2", "sport":40000, "dport":80,
   "proto":"tcp", "proto_num":6, "family":4,
   "packets":600000, "bytes":800000000, "share":0.486}]}
EOT
fake_serve top "$T/top.json" || bail "the fake daemon listens"

# drive KEYS...: run top in a pty, 0.5 s between keys; the raw screen
# bytes to $T/screen, the exit status to $T/rc.  A key "INT" sends SIGINT.
drive() {
	python3 - "$CLI" "$T/top.sock" "$T/screen" "$T/rc" "$@" <<'EOP'
import os, pty, signal, sys, time, select
cli, sock, screen, rcfile, keys = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "xterm"
    os.environ["LC_ALL"] = "C.UTF-8"
    os.environ["LINES"], os.environ["COLUMNS"] = "30", "160"
    os.execv(cli, [cli, "--socket", sock, "top"])
out = b""
def pump(t):
    global out
    end = time.time() + t
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                out += os.read(fd, 65536)
            except OSError:	# EIO: the child closed the terminal
                time.sleep(max(0, end - time.time()))
                return
pump(1.0)
for k in keys:
    if k == "INT":
        os.kill(pid, signal.SIGINT)
    else:
        os.write(fd, k.encode())
    pump(0.5)
rc = None
for _ in range(50):
    p, st = os.waitpid(pid, os.WNOHANG)
    if p:
        rc = os.waitstatus_to_exitcode(st)
        break
    pump(0.1)
if rc is None:
    os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0); rc = "hung"
pump(0.2)
open(screen, "wb").write(out)
open(rcfile, "w").write(str(rc))
EOP
}

drive b d d + c p q; cp "$T/screen" "$T/screen-keys"
check "q ends the view with status 0 ($(cat "$T/rc"))" [ "$(cat "$T/rc")" = 0 ]
check "the header: span, totals, bound and distinct counts" \
	bash -c "grep -aq 'last 10 s (2 windows of 5 s' '$T/screen' && grep -aq '1,234,567 packets' '$T/screen' && grep -aq 'at most +815 packets' '$T/screen' && grep -aq '4,989 flows' '$T/screen'"
check "the flow" grep -aq '10.0.0.1:40000' "$T/screen"
check "the state line with the keys" grep -aq 'p b c sort, d direction, +/- span, q quit' "$T/screen"
check "the ± of the distinct counts' error is drawn as UTF-8 (a UTF-8 locale)" \
	grep -aq '±0.81% at 1 sigma' "$T/screen"
check "the terminal is restored: the alternate screen is left" grep -aq $'\e\[?1049l' "$T/screen"
# The requests, in order, as (sort, direction, span).
jq -rc '[.sort, (.direction // "-"), (.span // 0)] | join(" ")' "$T/top.log" | uniq >"$T/seq"
diag <"$T/seq"
want=$'packets - 0\nbytes - 0\nbytes in 0\nbytes out 0\nbytes out 10\nconnections - 10\npackets - 10'
check "each key changed the next request: b, d, d, +, c (no direction), p" \
	[ "$(cat "$T/seq")" = "$want" ]

: >"$T/top.log"
drive INT; cp "$T/screen" "$T/screen-int"
check "SIGINT ends the view with status 0 ($(cat "$T/rc"))" [ "$(cat "$T/rc")" = 0 ]
check "... with the terminal restored" grep -aq $'\e\[?1049l' "$T/screen"

"$CLI" --socket "$T/top.sock" top -n 5 >"$T/plain.out" 2>&1 &
p=$!
sleep 1.2
kill -INT "$p"; wait "$p"; rc=$?
check "not on a terminal: plain tables, no escape sequence (exit $rc)" \
	bash -c "[ '$rc' = 0 ] && grep -q '10.0.0.1:40000' '$T/plain.out' && ! grep -q $'\e' '$T/plain.out'"

kill "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=""
drive q
check "no daemon: the view says so on its last line and goes on until q (status $(cat "$T/rc"))" \
	bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && grep -aq '(asking again)' '$T/screen'"
finish
