#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# clients.sh - misbehaving clients delay neither rotations nor others.
#
# A real flowsketchd (1 s windows) on a veth in a namespace; on its socket,
# in turn: 60 clients that connect and never send, 1000 concurrent idle
# clients re-connecting as they are dropped, clients that send one byte
# every 150 ms, clients that send a request and never read the answer,
# and clients that send a span query and close at once, hundreds a
# second.  Meanwhile a well-behaved `flowsketch status` (a span query in
# the last phase) runs again and again.
# Oracles, none taken from the daemon's own claims about itself:
#   - every CLI call answers, each within a bound measured here (1 s);
#   - the windows finished over the whole run match the wall time the
#     test measured (no rotation skipped: a late rotation makes one longer
#     window, so fewer windows), within one window at each end;
#   - the daemon counts no rotation as late (>= 10 ms after due) and the
#     misbehaving clients were really dropped (timeouts counted);
#   - `top --span 5` covers at most 6 s of windows (spans are time).
# The misbehaving clients are a Python script on AF_UNIX sockets.
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

HOG_PID=""

test_cleanup() {
	[ -n "$HOG_PID" ] && kill "$HOG_PID" 2>/dev/null && wait "$HOG_PID" 2>/dev/null
}

now_ms() { date +%s%3N; }

fs_test cl python3
T=$WORK
fs_test_pair
fsd_start
cli_quiet() { "$CLI" --socket "$SOCK" "$@" >/dev/null; }
check "flowsketchd answers status" cli_quiet status
start_ms=$(now_ms)
w0=$("$CLI" --socket "$SOCK" status --json | jq '.counters.windows_finished')

# The misbehaving clients: MODE for SECONDS, then exit.
cat >"$T/hog.py" <<'EOF'
import socket, sys, time
path, mode, count, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
end = time.monotonic() + seconds
socks = []
def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(True)
    try:
        s.connect(path)
    except OSError:
        s.close()
        return None
    if mode == "dead":
        # A span query, then gone at once: its job must not keep the
        # query threads busy or the queue full for those who wait.
        try:
            s.sendall(b'{"cmd":"top","n":10000,"span":10}\n')
        except OSError:
            pass
        s.close()
        return None
    if mode == "noread":
        # A request whose answer is never read; a tiny receive buffer so
        # the daemon's send would block if it waited for us.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        s.sendall(b'{"cmd":"top","n":10000,"span":5}\n')
    return s
while time.monotonic() < end:
    socks = [s for s in socks if s is not None]
    while len(socks) < count:
        s = connect()
        if s is None:
            if mode == "dead":
                count -= 1
                if count > 0:
                    continue
                count = int(sys.argv[3])
            time.sleep(0.01)
            break
        socks.append(s)
    if mode == "trickle":
        for s in socks:
            try:
                s.send(b' ')
            except OSError:
                s.close()
                socks.remove(s)
                break
        time.sleep(0.15)
    else:
        # Idle and noread clients: replace the ones the daemon dropped.
        time.sleep(0.05)
        for s in list(socks):
            s.setblocking(False)
            try:
                if s.recv(1, socket.MSG_PEEK) == b'':
                    s.close(); socks.remove(s)
            except BlockingIOError:
                pass
            except OSError:
                s.close(); socks.remove(s)
            else:
                if mode == "idle":
                    s.close(); socks.remove(s)
for s in socks:
    s.close()
EOF

# run_phase MODE COUNT SECONDS: hog the socket while the CLI asks status
# (a span query when MODE is dead) every 200 ms; prints the slowest CLI
# call in ms and the failures.
run_phase() {
	local mode=$1 count=$2 secs=$3 slowest=0 fails=0 t0 t1 end
	local ask=(status --json)
	[ "$mode" = dead ] && ask=(top --span 10 --json)
	# Niced: what is tested is that the daemon never waits on a client,
	# not that it outruns a CPU hog of the same priority on two CPUs (a
	# local process can always delay another by taking its CPU).
	nice -n 10 python3 "$T/hog.py" "$SOCK" "$mode" "$count" "$secs" 2>"$T/hog.err" &
	HOG_PID=$!
	sleep 0.5
	end=$(( $(now_ms) + secs * 1000 - 1000 ))
	while [ "$(now_ms)" -lt "$end" ]; do
		t0=$(now_ms)
		if ! "$CLI" --socket "$SOCK" --timeout 5 "${ask[@]}" >"$T/st.json" 2>"$T/st.err"; then
			fails=$((fails + 1))
			sed 's/^/# /' "$T/st.err" | head -2 >>"$T/diag"
		fi
		t1=$(now_ms)
		[ $((t1 - t0)) -gt "$slowest" ] && slowest=$((t1 - t0))
		sleep 0.2
	done
	wait "$HOG_PID"
	HOG_PID=""
	echo "$slowest $fails"
}

for phase in "idle 60 5" "idle 1000 6" "trickle 60 5" "noread 200 5" "dead 400 5"; do
	set -- $phase
	: >"$T/diag"
	read -r slowest fails < <(run_phase "$1" "$2" "$3")
	sort -u "$T/diag"
	echo "# $1 x $2: slowest status call ${slowest} ms, $fails failed"
	what=status
	[ "$1" = dead ] && what="top --span 10"
	check "$2 $1 clients: every $what call answered" [ "$fails" -eq 0 ]
	check "$2 $1 clients: no $what call took 1 s or more (${slowest} ms)" [ "$slowest" -lt 1000 ]
done

end_ms=$(now_ms)
"$CLI" --socket "$SOCK" status --json >"$T/status.json" || bail "status after the clients"
w1=$(jq '.counters.windows_finished' "$T/status.json")
late=$(jq '.counters.rotations_late' "$T/status.json")
timeouts=$(jq '.counters.client_timeouts' "$T/status.json")
elapsed=$(( (end_ms - start_ms) / 1000 ))
windows=$((w1 - w0))
echo "# $windows windows finished in ${elapsed} s of wall time; $late late; $timeouts client timeouts"
check "rotations kept time: $windows windows in ${elapsed} s" \
	[ "$windows" -ge $((elapsed - 1)) -a "$windows" -le $((elapsed + 1)) ]
check "no rotation late by 10 ms or more (daemon counted $late)" [ "$late" -eq 0 ]
check "clients that never finished were dropped at their deadline ($timeouts)" [ "$timeouts" -gt 0 ]

"$CLI" --socket "$SOCK" top --span 5 --json >"$T/top.json" || not_ok "top --span 5 answers"
covered=$(jq '.span_seconds' "$T/top.json")
wins=$(jq '.windows' "$T/top.json")
check "top --span 5 covers the last 5 s: $wins windows, $covered s" \
	[ "$covered" -ge 4 -a "$covered" -le 6 -a "$wins" -ge 4 -a "$wins" -le 5 ]

check "daemon stops cleanly" fsd_stop
check "no pins left" [ ! -e "$PIN_DIR" ]
finish
