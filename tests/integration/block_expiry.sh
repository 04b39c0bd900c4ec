#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# block_expiry.sh - `block add --for`: entries that expire, with who added
# them and when, through a veth pair, across restarts.
#
#   NS_TX [blocklist_traffic.py send] --veth--> NS_RX [XDP, flowsketchd --window 1]
#                                                     [blocklist_traffic.py recv]
#
# The oracle is the traffic and the clock: what each source got through
# (the receiver's counts behind XDP), and the times this script took
# around each CLI call.  Shown:
#   1. `block add --for 4s` and one for good: `block list` gives each its
#      origin (manual), when it was added (within the call), when it
#      expires (added + 4 s, or absent), and the list file holds the same
#      absolute times (blockfile.h's format);
#   2. while listed, its sources receive nothing; the entry leaves the
#      list within its expiry plus two windows, as block del takes it out:
#      then its sources receive everything, the permanent one's nothing;
#   3. a manual add of a listed entry renews it (--for sets its expiry,
#      without it the entry is kept for good), and the answer says so;
#   4. a restart keeps every entry's expiry to the second; an entry whose
#      time passed while no daemon ran is deleted at the new daemon's
#      first windows, and its sources pass again;
#   5. bad --for values (0, 10x, 366d, missing, twice, on del) exit 2 with
#      one line and change nothing; a raw request's "for" of 0, -1, a
#      string or above a year is refused; a list file whose line 2 has a
#      bad field stops the daemon's start, naming the file and line.
# Output: TAP.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

HELPER=tests/integration/blocklist_traffic.py
DST4=10.255.0.1
DST6=fd00:ff::1
PORT=9999
RECV_PID=""
A=$(printf '10.1.1.%d ' $(seq 1 8))	# 10.1.1.0/24 --for 4s
B="10.2.3.5"				# 10.2.3.5/32 for good
C=$(printf '10.3.4.%d ' $(seq 1 4))	# 10.3.4.0/30: expires while no daemon runs
O="10.9.9.9"				# never listed
SRC4=$(echo "$A $B $C $O" | tr -s " " ,)
SRC6="fd00:1:0:1::1,fd00:1:0:1::2"	# fd00:1:0:1::/64 --for 1h

test_cleanup() {
	[ -n "$RECV_PID" ] && kill "$RECV_PID" 2>/dev/null && wait "$RECV_PID" 2>/dev/null
	return 0
}
helper() { python3 "$HELPER" "$@"; }
daemon_start() {
	fsd_start --window 1 --blocklist "$LIST" "$@" &&
		fs_until 100 --while "$DAEMON_PID" xdp_attached
}
wait_recv() { fs_until 100 test -f "$T/recv-$1.json"; }
PHASE=0
send_phase() {
	PHASE=$((PHASE + 1))
	SENT=$T/sent-$PHASE.json
	RECV=$T/recv-$PHASE.json
	fs_in "$NS_TX" python3 "$HELPER" send -i "$VETH_TX" --dst-mac "$MAC" \
		--src4 "$SRC4" --src6 "$SRC6" --dst4 "$DST4" --dst6 "$DST6" \
		--port "$PORT" --phase "$PHASE" --count 20 --rate 5000 \
		--out "$SENT" 2>"$T/send.err" || { diag <"$T/send.err"; return 1; }
	wait_recv "$PHASE"
}
# expect WHAT CIDR...: after send_phase, the sources the CIDRs cover
# received nothing, every other source all it was sent.
expect() {
	local what=$1 v; shift
	v=$T/verdict-$PHASE.json
	helper verdict --sent "$SENT" --recv "$RECV" "$@" >"$v" || { not_ok "$what: verdict"; return; }
	check "$what: the $(jq .blocked.sources "$v") sources of [$*] received nothing, the $(jq .open.sources "$v") others all ($(jq -c '[.blocked.received, .open.received, .open.sent]' "$v"))" \
		jqe '.blocked.received == 0 and .open.received == .open.sent and (.violations | length) == 0' "$v"
}
list() { cli block list --json >"$T/list.json"; }
# entry CIDR FIELD: a field of the entry in $T/list.json ("null" if none).
entry() { jq -r --arg c "$1" ".entries[] | select(.cidr == \$c) | .$2" "$T/list.json"; }
listed() { list && [ -n "$(entry "$1" cidr)" ]; }
gone() { list && [ -z "$(entry "$1" cidr)" ]; }
# file_field CIDR NAME: NAME=T of the CIDR's line of the list file.
file_field() { awk -v c="$1" -v k="$2=" '$1 == c { for (i = 2; i <= NF; i++) if (index($i, k) == 1) print substr($i, length(k) + 1) }' "$LIST"; }

# ---------------------------------------------------------------- set-up
fs_test bx jq python3
T=$WORK
LIST=$T/blocklist
fs_test_pair
fs_rx_addresses "$NS_RX" "$VETH_RX" "$DST4" "$DST6" || bail "$DST4 and $DST6 on $VETH_RX"
MAC=$(fs_mac "$NS_RX" "$VETH_RX")
nsenter --net="/run/netns/$NS_RX" python3 "$HELPER" recv --port "$PORT" --dir "$T" \
	--ready "$T/ready" 2>"$T/recv.err" &
RECV_PID=$!
fs_until 100 test -f "$T/ready" || { diag <"$T/recv.err"; bail "the receiver listens on UDP $PORT"; }
daemon_start || bail "flowsketchd starts on $VETH_RX with --window 1"
ok "flowsketchd starts on $VETH_RX with --window 1 and --blocklist $LIST"

# ---------------------------------------------------------------- 1. add --for
t0=$(date +%s)
cli block add 10.1.1.0/24 --for 4s >"$T/add.out" 2>&1 &&
	cli block add 10.2.3.5 fd00:1:0:1::/64 >>"$T/add.out" 2>&1 &&
	cli block add --for=1h fd00:1:0:1::/64 >>"$T/add.out" 2>&1
rc=$?
t1=$(date +%s)
check "block add 10.1.1.0/24 --for 4s, then 10.2.3.5 and fd00:1:0:1::/64 for good, then the /64 --for=1h (exit $rc)" [ "$rc" = 0 ]
check "... the last renewed the listed /64: \"added 0, renewed 1\" ($(tail -1 "$T/add.out"))" \
	grep -q "added 0, renewed 1," "$T/add.out"
list || bail "block list --json"
added=$(entry 10.1.1.0/24 added_at) expires=$(entry 10.1.1.0/24 expires_at)
check "block list: 10.1.1.0/24 is manual, added within the call ($t0 <= $added <= $t1), expires 4 s after ($expires)" \
	[ "$(entry 10.1.1.0/24 origin)" = manual -a "$added" -ge "$t0" -a "$added" -le "$t1" -a "$expires" = $((added + 4)) ]
check "block list: 10.2.3.5/32 is manual and never expires ($(entry 10.2.3.5/32 expires_at))" \
	[ "$(entry 10.2.3.5/32 origin)" = manual -a "$(entry 10.2.3.5/32 expires_at)" = null ]
e6=$(entry fd00:1:0:1::/64 expires_at)
check "block list: fd00:1:0:1::/64 expires an hour after the renewal ($e6)" \
	[ "$e6" -ge $((t0 + 3600)) -a "$e6" -le $((t1 + 3600)) ]
check "the list file holds the same absolute times (added=$(file_field 10.1.1.0/24 added) expires=$(file_field 10.1.1.0/24 expires), the /32 none)" \
	[ "$(file_field 10.1.1.0/24 added)" = "$added" -a "$(file_field 10.1.1.0/24 expires)" = "$expires" \
	  -a "$(file_field fd00:1:0:1::/64 expires)" = "$e6" -a -z "$(file_field 10.2.3.5/32 expires)" ]
cli block list >"$T/list.txt"
check "block list's table says when each expires and who added it" \
	bash -c 'grep -E "^10\.1\.1\.0/24 .* in [0-9]+s +manual$" "$0" && grep -E "^10\.2\.3\.5/32 .* never +manual$" "$0"' "$T/list.txt"
diag <"$T/list.txt"

# ---------------------------------------------------------------- 2. expiry
send_phase || bail "phase $PHASE: traffic sent"
expect "while listed" 10.1.1.0/24 10.2.3.5/32 fd00:1:0:1::/64
fs_until 150 gone 10.1.1.0/24
tg=$(date +%s)
check "10.1.1.0/24 left the list by its expiry plus two windows ($tg <= $expires + 2)" \
	[ "$tg" -ge "$expires" -a "$tg" -le $((expires + 2)) ]
check "... and the list file (awk over $LIST)" [ -z "$(file_field 10.1.1.0/24 added)" ]
send_phase || bail "phase $PHASE: traffic sent"
expect "after the expiry" 10.2.3.5/32 fd00:1:0:1::/64

# ---------------------------------------------------------------- 3. renew
cli block add 10.2.3.5 --for 1h >"$T/renew.out" && cli block add fd00:1:0:1::/64 >>"$T/renew.out"
list
check "renewals: 10.2.3.5/32 now expires ($(entry 10.2.3.5/32 expires_at)), the /64 never ($(entry fd00:1:0:1::/64 expires_at))" \
	[ "$(entry 10.2.3.5/32 expires_at)" -ge $((t0 + 3600)) -a "$(entry fd00:1:0:1::/64 expires_at)" = null ]
cli block add 10.2.3.5 >/dev/null	# for good again

# ---------------------------------------------------------------- 4. restart
cli block add 10.3.4.0/30 --for 2s >/dev/null || bail "block add 10.3.4.0/30 --for 2s"
cli block add fd00:1:0:1::/64 --for 1h >/dev/null
list
e3=$(entry 10.3.4.0/30 expires_at) e6=$(entry fd00:1:0:1::/64 expires_at)
rc=0
fsd_stop || rc=$?
check "flowsketchd stops on SIGTERM (exit $rc), 10.3.4.0/30 listed still, to expire at $e3" \
	[ "$rc" = 0 -a "$(file_field 10.3.4.0/30 expires)" = "$e3" ]
# Until its time has passed with no daemon running.
fs_until 100 test "$(date +%s)" -gt "$e3"
daemon_start || bail "flowsketchd restarts on $LIST"
ok "flowsketchd restarts on $LIST after 10.3.4.0/30's time passed"
fs_until 50 gone 10.3.4.0/30
check "the entry that expired while no daemon ran is deleted at the new daemon's first windows" gone 10.3.4.0/30
check "the /64's expiry is kept to the second ($(entry fd00:1:0:1::/64 expires_at) = $e6), 10.2.3.5/32 still for good" \
	[ "$(entry fd00:1:0:1::/64 expires_at)" = "$e6" -a "$(entry 10.2.3.5/32 expires_at)" = null ]
send_phase || bail "phase $PHASE: traffic sent"
expect "after the restart" 10.2.3.5/32 fd00:1:0:1::/64

# ---------------------------------------------------------------- 5. refusals
cp "$LIST" "$T/list.before"
for bad in "--for 0" "--for 10x" "--for 366d" "--for -1s" "--for" "--for 1m --for 2m" "--forever 1m"; do
	# shellcheck disable=SC2086
	cli block add 10.7.0.0/16 $bad >"$T/bad.out" 2>&1
	rc=$?
	check "block add 10.7.0.0/16 $bad: exit 2, one line ($(head -c 160 "$T/bad.out"))" \
		[ "$rc" = 2 -a "$(wc -l <"$T/bad.out")" = 1 ]
done
cli block del 10.2.3.5 --for 1m >"$T/bad.out" 2>&1
rc=$?
check "block del ... --for 1m: exit 2 ($(head -c 120 "$T/bad.out"))" [ "$rc" = 2 ]
for v in 0 -1 '"1h"' 31536001 1.5; do
	printf '{"cmd":"block_add","cidrs":["10.7.0.0/16"],"for":%s}\n' "$v" | fsd_ask >"$T/raw.json"
	check "a raw block_add with \"for\":$v is refused ($(jq -r .error "$T/raw.json" | head -c 100))" \
		jqe '.error | test("for")' "$T/raw.json"
done
check "none of them changed the list file" cmp -s "$LIST" "$T/list.before"
fsd_stop
printf '10.6.0.0/16 added=1796289499\n10.6.1.0/24 added=1796289499 expires=soon\n' >"$T/bad.list"
fs_in "$NS_RX" timeout -s TERM 20 "$FSD" -i "$VETH_RX" --pin-dir "$PIN_DIR-bad" \
	--socket "$T/bad.sock" --blocklist "$T/bad.list" >"$T/bad.out" 2>&1
rc=$?
check "a list file with a bad field on line 2: the daemon refuses to start (exit $rc), naming $T/bad.list:2" \
	bash -c '[ "$0" != 0 -a "$0" != 124 ] && grep -qF "$1:2:" "$2"' "$rc" "$T/bad.list" "$T/bad.out"
diag <"$T/bad.out"
rm -rf "$PIN_DIR-bad"
finish
