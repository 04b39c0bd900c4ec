#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# blocklist_big.sh - a blocklist of 1,000,000 entries changes without
# making a window rotation late, and every change is complete when its
# answer comes.
#
#   NS_TX --veth--> NS_RX [XDP, flowsketchd --window 1 --blocklist-max 1000000]
#
# In turn: `block load` of a file of 999,997 CIDRs (999,993 IPv4 /32s in
# 100.64.0.0/10 and 4 IPv6 /64s), `block add` of three more (1,000,000,
# the most --blocklist-max allows), `block del` of two, two pages of
# block_list (the first and the last, asked on the socket), `block
# clear`.  After each:
#   - the CLI answered (exit 0, within its own deadline) with the count it
#     changed;
#   - status --json: blocklist.entries is what this script's arithmetic
#     says; no rotation was 10 ms late (status' rotations_late), and no
#     window was lost or postponed;
#   - the list file the daemon keeps has exactly those entries (line
#     count, and sampled entries present or absent: grep, not the daemon);
#   - the datapath's tries (bpftool on the pinned fs_block4/fs_block6, not
#     the daemon) hold the sampled entries that are listed and not the
#     others.
# Also: a second change sent while the load is applied (status:
# blocklist.changing) is answered "busy" within a second and changes
# nothing; `block load` of a file with a bad line
# names FILE:LINE, exits non-zero and sends nothing; the daemon never
# opens a client-named file (a request naming one is refused); a SIGTERM
# while a load is applied lets it finish and keeps it, exits 0 and
# leaves no pin.
# Each request's wall time is printed as a diagnostic.
# Runs in about 45 s on two shared cores.  Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

N4=999993
N6=4
N=$((N4 + N6))


fs_test bb
LIST=$WORK/blocklist
fs_test_pair

# IPv4 host i (0 .. N4-1) of 100.64.0.0/10, and the file of them all.
host4() { echo "100.$((64 + ($1 >> 16))).$((($1 >> 8) & 255)).$(($1 & 255))"; }
awk -v n=$N4 'BEGIN {
	print "# 1,000,000 entries";
	for (i = 0; i < n; i++)
		printf "100.%d.%d.%d/32\n", 64 + int(i / 65536), int(i / 256) % 256, i % 256;
	for (i = 1; i <= 4; i++)
		printf "fd00:bb:%x::/64\n", i;
}' >"$WORK/big.list" || bail "the 1M-entry list"

fsd_start --blocklist "$LIST" --blocklist-max 1000000 || bail "flowsketchd started"

# status into $WORK/st.json; $1: what the late-rotation check is after.
status() { cli status --json >"$WORK/st.json" 2>"$WORK/st.err" || { diag <"$WORK/st.err"; return 1; }; }
# The daemon counts a rotation 10 ms or more after its timer as late
# (rotations_late) and keeps the worst (rotation_late_max_us).  The rule
# is the issue's: no rotation 10 ms late while the list changes (work on
# the loop shows as seconds: a 1M load there made one rotation 8.3 s
# late).  On a machine loaded by other work an idle daemon's loop is now
# and then woken 10-11 ms late by the scheduler alone; run this suite on
# a quiet machine, as CI does.
no_late() {
	status || { check "status answers after $1" false; return; }
	check "after $1: no rotation 10 ms late ($(jq .counters.rotations_late "$WORK/st.json") of $(jq .counters.windows_finished "$WORK/st.json"), worst $(jq .counters.rotation_late_max_us "$WORK/st.json") us), none lost or postponed" \
		jqe ".counters.rotations_late == 0 and .counters.windows_lost == 0 and .counters.rotations_postponed == 0" "$WORK/st.json"
}
status_entries() { [ -s "$WORK/st.json" ] && jqe ".blocklist.entries == $1" "$WORK/st.json"; }
entries_are() {
	# (jq -e on an empty file, a status that failed, is true)
	check "after $1: status says $2 entries (got $(jq .blocklist.entries "$WORK/st.json"))" \
		status_entries "$2"
	check "after $1: the list file holds $2 entries (got $(grep -vc '^#' "$LIST"))" \
		[ "$(grep -vc '^#' "$LIST")" = "$2" ]
}
# in_file CIDR: the daemon's list file has the line.
in_file() { awk -v c="$1" '$1 == c { f = 1 } END { exit !f }' "$LIST"; }
# in_trie CIDR: the pinned LPM trie has exactly this key (bpftool: its
# key is prefixlen (u32, host order) then the address bytes).
in_trie() {
	local cidr=$1 addr=${1%/*} len=${1#*/} key map
	if [[ $addr == *:* ]]; then
		map=fs_block6
		key=$(python3 -c 'import ipaddress,sys; print(" ".join(str(b) for b in ipaddress.IPv6Address(sys.argv[1]).packed))' "$addr")
	else
		map=fs_block4
		key=${addr//./ }
	fi
	bpftool map lookup pinned "$PIN_DIR/${map#fs_}" key $((len & 255)) $((len >> 8)) 0 0 $key >/dev/null 2>&1
}
# present WHAT CIDR... / absent WHAT CIDR...: file and trie agree.
present() {
	local what=$1 c bad=""; shift
	for c in "$@"; do in_file "$c" && in_trie "$c" || bad="$bad $c"; done
	check "after $what: listed in file and trie:$* ${bad:+(missing:$bad)}" [ -z "$bad" ]
}
absent() {
	local what=$1 c bad=""; shift
	for c in "$@"; do in_file "$c" || in_trie "$c" && bad="$bad $c"; done
	check "after $what: in neither file nor trie:$* ${bad:+(found:$bad)}" [ -z "$bad" ]
}
# timed NAME CLI-ARGS...: run the CLI, its answer in $WORK/out, its time
# in SECONDS_TAKEN (printed as a diagnostic).
timed() {
	local name=$1 t0 t1; shift
	t0=$(date +%s%N)
	cli "$@" >"$WORK/out" 2>"$WORK/err"
	RC=$?
	t1=$(date +%s%N)
	SECONDS_TAKEN=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	echo "$name: ${SECONDS_TAKEN} s, exit $RC: $(head -c 300 "$WORK/out" "$WORK/err" | tr '\n' ' ')" | diag
}

SAMPLE_IN="$(host4 0)/32 $(host4 77777)/32 $(host4 $((N4 - 1)))/32 fd00:bb:3::/64"
SAMPLE_OUT="$(host4 $N4)/32 100.64.0.0/24 fd00:bb:5::/64"

status || bail "first status"
check "the list starts empty" jqe '.blocklist.entries == 0' "$WORK/st.json"

# ------------------------------------------------------------ a bad file
printf '10.6.0.0/16\n# comment\n1.2.3.4/33\n' >"$WORK/bad.list"
timed "load of a bad file" block load "$WORK/bad.list"
check "block load of a file with a bad line 3: exit non-zero, FILE:LINE named" \
	eval '[ "$RC" != 0 ] && grep -qF "$WORK/bad.list:3:" "$WORK/err"'
status
check "... nothing sent: the list is still empty" jqe '.blocklist.entries == 0' "$WORK/st.json"

# ------------------------------------------------------------ load 1M
cli block load "$WORK/big.list" >"$WORK/load.out" 2>"$WORK/load.err" &
LOAD_PID=$!
t0=$(date +%s%N)
# Once the daemon applies it (status: blocklist.changing), a second
# change is refused at once, and changes nothing.
BUSY="" BUSY_RC=0 BUSY_MS=0
while kill -0 "$LOAD_PID" 2>/dev/null; do
	if status && jqe ".blocklist.changing == $N" "$WORK/st.json"; then
		tb0=$(date +%s%N)
		cli block add 198.51.100.0/24 >"$WORK/busy.out" 2>"$WORK/busy.err"
		BUSY_RC=$?
		BUSY_MS=$(( ($(date +%s%N) - tb0) / 1000000 ))
		BUSY="exit $BUSY_RC in $BUSY_MS ms: $(cat "$WORK/busy.err")"
		break
	fi
	sleep 0.05
done
wait "$LOAD_PID"
RC=$?
t1=$(date +%s%N)
SECONDS_TAKEN=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
echo "load of $N entries: ${SECONDS_TAKEN} s, exit $RC: $(cat "$WORK/load.out" "$WORK/load.err" | tr '\n' ' ')" | diag
echo "a change sent while it applied: $BUSY" | diag
check "block load of $N entries answers: added $N" \
	eval '[ "$RC" = 0 ] && grep -q "added $N," "$WORK/load.out"'
check "a change sent while the load applied is answered busy, in under a second" \
	eval '[ "$BUSY_RC" != 0 ] && [ "$BUSY_MS" -lt 1000 ] && grep -q "daemon busy" "$WORK/busy.err"'
no_late "block load of $N"
entries_are "block load" $N
present "block load" $SAMPLE_IN
absent "block load" $SAMPLE_OUT 198.51.100.0/24

# ------------------------------------------------------------ add
timed "add of 3 at $N" block add "$(host4 $N4)/32" 100.64.0.0/24 fd00:bb:5::/64
check "block add of 3 at $N entries: added 3" eval '[ "$RC" = 0 ] && grep -q "added 3," "$WORK/out"'
no_late "block add"
entries_are "block add" $((N + 3))
present "block add" $SAMPLE_OUT $SAMPLE_IN

# ------------------------------------------------------------ del
timed "del of 2 at $((N + 3))" block del "$(host4 77777)/32" 100.64.0.0/24
check "block del of 2: deleted 2" eval '[ "$RC" = 0 ] && grep -q "deleted 2," "$WORK/out"'
no_late "block del"
entries_are "block del" $((N + 1))
absent "block del" "$(host4 77777)/32" 100.64.0.0/24
present "block del" "$(host4 0)/32" "$(host4 $N4)/32" fd00:bb:5::/64

# ------------------------------------------------------------ list
# Two pages of block_list (on a query thread): the first and the last.
page() { printf '{"cmd":"block_list","offset":%d}\n' "$1" | fsd_ask; }
page 0 >"$WORK/p0.json"
page $((N + 1 - 8)) >"$WORK/p1.json"
check "block_list page 0: total $((N + 1)), 50000 entries from 100.64.0.0/32" \
	jqe ".total == $((N + 1)) and (.entries | length) == 50000 and .entries[0].cidr == \"100.64.0.0/32\" and ([.entries[].cidr] | index(\"100.64.0.1/32\")) == 1" "$WORK/p0.json"
check "block_list last page: the last 8 entries, IPv4 then IPv6 in order" \
	jqe "(.entries | length) == 8 and .entries[2].cidr == \"$(host4 $N4)/32\" and .entries[7].cidr == \"fd00:bb:5::/64\"" "$WORK/p1.json"
no_late "block list"

# ------------------------------------------------------------ clear
# Its progress shows in status while it runs (blocklist.changing: every
# entry goes); then its answer.
t0=$(date +%s%N)
cli block clear >"$WORK/out" 2>"$WORK/err" &
CLEAR_PID=$!
SEEN=""
while kill -0 "$CLEAR_PID" 2>/dev/null; do
	status && jqe ".blocklist.changing == $((N + 1))" "$WORK/st.json" && { SEEN=yes; break; }
	sleep 0.05
done
wait "$CLEAR_PID"
RC=$?
echo "clear of $((N + 1)): $(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }') s, exit $RC: $(cat "$WORK/out" "$WORK/err" | tr '\n' ' ')" | diag
check "while block clear runs, status shows blocklist.changing $((N + 1))" [ -n "$SEEN" ]
check "block clear: deleted $((N + 1))" eval '[ "$RC" = 0 ] && grep -q "deleted $((N + 1))," "$WORK/out"'
no_late "block clear"
entries_are "block clear" 0
absent "block clear" $SAMPLE_IN "$(host4 $N4)/32" fd00:bb:5::/64

# ------------------------------------------------------------ no path
ans=$(printf '{"cmd":"block_load","file":"/etc/shadow"}\n' | fsd_ask)
echo "a request naming a file: $ans" | diag
check "the daemon opens no file a request names (refused, nothing quoted)" \
	eval '[[ $ans == *error* && $ans != *root:* ]]'

status
check "the daemon still runs, nothing listed" jqe '.blocklist.entries == 0' "$WORK/st.json"

# ------------------------------------------------------------ stop mid-change
# SIGTERM while a load is applied on a query thread: the daemon lets the
# change finish before it closes the maps the change writes (closed
# first, the change failed on closed descriptors, or wrote through fs_ctl
# unmapped under it), keeps it in the list file, exits 0 and leaves
# nothing pinned.
head -n 300001 "$WORK/big.list" >"$WORK/part.list"
cli block load "$WORK/part.list" >"$WORK/part.out" 2>&1 &
PART_PID=$!
changing() { status && jqe '.blocklist.changing == 300000' "$WORK/st.json"; }
fs_until 100 --while "$PART_PID" changing
SEEN=$?
fsd_stop; RC=$?
wait "$PART_PID"
check "SIGTERM while a load of 300,000 is applied (seen in status: $([ "$SEEN" = 0 ] && echo yes || echo no)): the daemon exits 0 (got $RC)" \
	eval '[ "$SEEN" = 0 ] && [ "$RC" = 0 ]'
check "... and leaves no pin behind" [ ! -e "$PIN_DIR/params" ]
check "... and the load it let finish is in the list file: 300000 entries (got $(grep -vc '^#' "$LIST"))" \
	[ "$(grep -vc '^#' "$LIST")" = 300000 ]
finish
