#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# early_signals.sh - a stop signal at any moment of flowsketchd's start
# stops it, and the host is left as a clean stop leaves it.
#
# FS_EARLY_RUNS daemons (default 50) are started as daemon_errors.sh starts
# them (a background job with SIGINT made deadly again by env), and each is
# sent SIGINT, SIGTERM or SIGHUP at a random moment of its first 200 ms:
# a quarter of them within about a millisecond of the launcher's reset
# (before nsenter, before main, before the first log line), the rest up to
# 200 ms later (the load takes some 50 ms, so during setup, the attach and
# the first loop).  The oracle is the kernel's, not the daemon's: each
# process must be gone within 5 s (kill -0), then either a clean stop
# (status 0, the stop line logged once, then nothing but the detach) or
# killed by that very signal with an empty log (it landed before main:
# env, nsenter, the dynamic loader), and the host must show nothing of it:
# no pin under its pin directory (ls), no XDP on the veth (ip link), no
# socket.
#
# It fails on the start it guards against: FS_EARLY_MUTANT=no_wait sends the
# signal without fs_stoppable, as daemon_errors.sh did; a signal then meets
# the job while SIGINT is still ignored and a daemon runs on (about 1 run
# in 10 here: "not ok ... every daemon gone").  Run time ~30 s.
# Output: TAP ("ok N - ..."), diagnostics as "# ..." lines.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

fs_test esig
fs_test_pair

runs=${FS_EARLY_RUNS:-50}
base=(--pin-dir "$PIN_DIR" --socket "$SOCK" --state-dir "$FSD_STATE"
      --blocklist "$FSD_LIST")
sigs=(INT INT TERM HUP)
declare -A signo=([INT]=2 [TERM]=15 [HUP]=1)
declare -A stop_line=([INT]=Interrupt [TERM]=Terminated [HUP]=Hangup)

lost=0 unclean=0 left=0 clean_stops=0 killed=0 early=0 loading=0
# The log after a stop signal: the stop line once, then only detaches.
log_ok() { # log_ok SIG
	awk -v stop="flowsketchd: ${stop_line[$1]}: stopping" -v ifn="$VETH_RX" '
		/[Ee]rror|[Ff]ail|[Cc]annot|[Ww]arn/ { bad = 1 }
		$0 == stop { stops++; after = 1; next }
		after && $0 != "flowsketchd: detached from " ifn { bad = 1 }
		END { exit !(stops == 1 && !bad) }' "$WORK/err"
}
# The daemon waits on the secret's FIFO: in open() (wchan) or with it open.
fifo_waiting() {
	local f
	[ "$(cat "/proc/$1/wchan" 2>/dev/null)" = wait_for_partner ] && return 0
	for f in /proc/"$1"/fd/*; do
		[ "$f" -ef "$WORK/secret.fifo" ] && return 0
	done 2>/dev/null
	return 1
}
host_clean() { [ -z "$(ls -A "$PIN_DIR" 2>/dev/null)" ] && ! xdp_attached && [ ! -e "$SOCK" ]; }

# Launched with the three stop signals at their default: a background
# job inherits SIGINT ignored, and a test run under nohup SIGHUP, and a
# signal ignored before main is the launcher's doing (README, "Signals"),
# not the daemon's.
for ((run = 1; run <= runs; run++)); do
	sig=${sigs[RANDOM % 4]}
	rm -f "$SOCK"
	env --default-signal=INT,HUP,TERM nsenter --net="/run/netns/$NS_RX" \
		"$FSD" -i "$VETH_RX" "${base[@]}" >"$WORK/out" 2>"$WORK/err" &
	pid=$!
	[ "${FS_EARLY_MUTANT:-}" = no_wait ] || fs_stoppable "$pid"
	if ((RANDOM % 4 == 0)); then
		# 0 to ~1 ms of builtin arithmetic: no fork to blur it.
		for ((k = RANDOM % 1500; k > 0; k--)); do :; done
	else
		sleep "$(printf '0.%03d' $((RANDOM % 201)))"
	fi
	[ -s "$WORK/err" ] || early=$((early + 1))
	kill -"$sig" "$pid"
	if fs_until 50 fs_gone "$pid"; then
		wait "$pid"
		st=$?
	else
		lost=$((lost + 1))
		echo "# run $run: SIG$sig lost, the daemon runs on: $(grep -E '^Sig(Ign|Blk)' "/proc/$pid/status" | tr '\n\t' '  ')"
		fs_daemon_stop "$pid"
		st=lost
	fi
	if [ "$st" = 0 ] && log_ok "$sig"; then
		clean_stops=$((clean_stops + 1))
		grep -q "loaded the BPF datapath" "$WORK/err" && loading=$((loading + 1))
	elif [ "$st" = $((128 + ${signo[$sig]})) ] && [ ! -s "$WORK/err" ]; then
		killed=$((killed + 1))
	elif [ "$st" != lost ]; then
		unclean=$((unclean + 1))
		echo "# run $run: SIG$sig: status $st, log: $(head -c 300 "$WORK/err" | tr '\n' '|')"
	fi
	if ! host_clean; then
		left=$((left + 1))
		echo "# run $run: SIG$sig left pins, XDP or the socket behind"
		fs_in "$NS_RX" "$FSD" --detach --pin-dir "$PIN_DIR" --state-dir "$FSD_STATE" >/dev/null 2>&1
		rm -f "$SOCK"
	fi
done

# A stop while setup waits: --secret-file a FIFO whose writer never comes.
# Blocked since main, the signals must still end that wait (the daemon
# polls its signalfd there): status 0 and the stop line alone, nothing
# pinned.  Sent at once or up to 200 ms after the launcher's reset, so
# before main (killed, empty log) or in the wait; one run without a
# delay at the wait itself.  The old daemon sat in open() for good (its
# signals blocked, pending): "not ok ... a secret that never comes".
fifo_lost=0 fifo_bad=0 fifo_waited=0
fifo_runs=${FS_EARLY_FIFO_RUNS:-6}
for ((run = 1; run <= fifo_runs; run++)); do
	sig=${sigs[RANDOM % 4]}
	rm -f "$SOCK" "$WORK/secret.fifo"
	mkfifo -m 0600 "$WORK/secret.fifo"
	env --default-signal=INT,HUP,TERM nsenter --net="/run/netns/$NS_RX" \
		"$FSD" -i "$VETH_RX" "${base[@]}" --secret-file "$WORK/secret.fifo" \
		>"$WORK/out" 2>"$WORK/err" &
	pid=$!
	fs_stoppable "$pid"
	if ((run == 1)); then
		# The wait itself: the daemon has the FIFO open (the new one)
		# or sits in open() on it (the old), its signals blocked.
		fs_until 50 --while "$pid" fifo_waiting "$pid" && fifo_waited=1
	else
		sleep "$(printf '0.%03d' $((RANDOM % 201)))"
	fi
	kill -"$sig" "$pid"
	if fs_until 50 fs_gone "$pid"; then
		wait "$pid"
		st=$?
	else
		fifo_lost=$((fifo_lost + 1))
		echo "# fifo run $run: SIG$sig ignored in the secret's wait: $(grep -E '^Sig(Blk|Pnd)|^ShdPnd' "/proc/$pid/status" | tr '\n\t' '  ')"
		# The secret after all: setup goes on, the pending signal stops it.
		timeout 5 sh -c 'printf 0123456789abcdef >"$1"' sh "$WORK/secret.fifo"
		fs_daemon_stop "$pid"
		st=lost
	fi
	if ! { [ "$st" = 0 ] && log_ok "$sig" && [ "$(wc -l <"$WORK/err")" -eq 1 ]; } &&
	   ! { [ "$st" = $((128 + ${signo[$sig]})) ] && [ ! -s "$WORK/err" ]; } &&
	   [ "$st" != lost ]; then
		fifo_bad=$((fifo_bad + 1))
		echo "# fifo run $run: SIG$sig: status $st, log: $(head -c 300 "$WORK/err" | tr '\n' '|')"
	fi
	host_clean || { left=$((left + 1)); echo "# fifo run $run: left pins, XDP or the socket behind"; }
done

echo "# $runs runs: $clean_stops clean stops ($loading after the load began), $killed killed before main, $early signalled before the first log line, $lost lost"
check "every daemon gone within 5 s of its signal ($lost of $runs ran on)" [ "$lost" -eq 0 ]
check "every end a clean stop, or killed with an empty log ($unclean other)" [ "$unclean" -eq 0 ]
check "no pin, no XDP, no socket left after any run ($left left)" [ "$left" -eq 0 ]
check "signals landed before the first log line ($early)" [ "$early" -gt 0 ]
check "signals landed after the load began ($loading)" [ "$loading" -gt 0 ]
check "a stop ends the wait for a secret that never comes ($fifo_lost of $fifo_runs ran on)" [ "$fifo_lost" -eq 0 ]
check "that stop is clean: status 0, the stop line alone, or killed before main ($fifo_bad other)" [ "$fifo_bad" -eq 0 ]
check "the daemon was seen waiting on the FIFO" [ "$fifo_waited" -eq 1 ]
finish
