#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# stop_queries.sh - a stop while span queries run frees no window a query
# thread may still read.
#
# The daemon (XDP, egress and connections frontends) runs under gdb, which
# notes, in the order they happen, each history freed (fsd_history_free)
# and the query threads' stop (fsd_workers_stop, which joins them): the
# same thread makes both calls, so that order is the teardown's, whatever
# the timing.  Span queries over both directions and the connections run
# in a loop while SIGTERM arrives.  Oracles:
#   - no history is freed before the query threads are stopped, and all
#     three (in, out, connections) are freed after;
#   - the daemon exits 0 (a crash stops it under gdb, with no exit code).
# A test of the order rather than of a crash: a query thread reading a
# freed window does so only when the stop lands inside its few
# milliseconds of reading, and need not crash when it does.  Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

LOAD_PIDS=()
test_cleanup() {
	[ "${#LOAD_PIDS[@]}" -gt 0 ] || return 0
	kill "${LOAD_PIDS[@]}" 2>/dev/null
	wait "${LOAD_PIDS[@]}" 2>/dev/null
	LOAD_PIDS=()
}

fs_test sq gdb
fs_test_pair
REAL_FSD=$(realpath "$FSD")
cat >"$WORK/order.gdb" <<'EOF'
set pagination off
set confirm off
set startup-with-shell off
handle SIGPIPE SIGTERM SIGINT SIGHUP nostop noprint pass
dprintf fsd_workers_stop,"order: workers stop\n"
dprintf fsd_history_free,"order: history free\n"
run
printf "order: exit %d\n", $_exitcode
EOF
printf '#!/bin/sh\nexec gdb -batch -nx -x %s --args %s "$@"\n' \
	"$WORK/order.gdb" "$REAL_FSD" >"$WORK/fsd-gdb"
chmod 755 "$WORK/fsd-gdb"
FSD=$WORK/fsd-gdb fsd_start || { diag <"$FSD_LOG"; bail "flowsketchd under gdb answers status"; }
GDB_PID=$DAEMON_PID DAEMON_PID=$(pgrep -P "$GDB_PID")
fsd_settle egress conn || bail "two windows closed in every history"

query_loop() {
	while :; do
		cli top --span 60 -n 1000 --direction both --json
		cli top --span 60 --sort connections --json
		cli flows --span 60 --direction both --json
	done >/dev/null 2>&1
}
for _ in 1 2 3 4; do query_loop & LOAD_PIDS+=($!); done
sleep 1
kill -TERM "$DAEMON_PID"
gone() { ! kill -0 "$GDB_PID" 2>/dev/null; }
fs_until 300 gone || kill -KILL "$GDB_PID"
wait "$GDB_PID" 2>/dev/null
DAEMON_PID=""
test_cleanup

# gdb may place a breakpoint at more than one address of a function (a
# part split off by the compiler): repeated lines are one call.
order=$(sed -n 's/^order: //p' "$FSD_LOG" | uniq | tr '\n' ,)
freed=$(grep -c '^order: history free' "$FSD_LOG")
check "the daemon exits 0 while span queries run ($order)" \
	grep -qx "order: exit 0" "$FSD_LOG"
check "the three histories are freed after the query threads stopped ($freed frees; $order)" \
	[ "$order" = "workers stop,history free,exit 0," -a "$freed" -ge 3 ]
grep -q "^order: exit 0" "$FSD_LOG" || diag <"$FSD_LOG"
finish
