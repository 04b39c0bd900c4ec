#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# policy.sh - flowsketchd --policy (issue 21): sources above a rule are
# blocked, with expiry, allowlist, the host's own addresses, limit, dry run,
# restart and reload, through a veth pair into XDP.
#
#   NS_TX [blocklist_traffic.py send, fs-gen] --veth--> NS_RX [XDP, flowsketchd --window 1 --policy P]
#                                                            [blocklist_traffic.py recv]
#
# The oracle is the traffic this script sends and the clock: per source,
# what the receiver behind XDP got of what the sender's kernel took (each
# datagram stamped with its send time), the rates chosen here against the
# thresholds of the policy file written here, and the times this script
# took around each query.  The daemon's estimates are never read.  Rates
# (packets a second, one-second windows) and the rules they meet:
#   H     10.1.0.1         800  above "block src if packets > 300/s"
#   A     10.8.0.1         800  above it too, but "allow 10.8.0.0/16"
#   OWN   10.255.1.1       800  above it too, but an address of NS_RX
#   L     10.2.{1..4}.1     20  each: below every rule
#   P     10.5.5.{1..100}   30  each (below the src rule), 3000 together:
#                               above "block src4/24 if packets > 1.5k/s"
#   S     10.6.0.1         300  each to a new port: 300 distinct (dst, port)
#                               pairs a window, above "block src if spread > 60"
# The margins (prefix.h, spread.h at --detect's defaults, z = 3): a
# prefix of N packets in a window of T has a lower end of about
# N - 3 sqrt(7 N) - 0.011 T (sampling over V = 8 pairs; collisions,
# 4 e T / w at w = 1024 a row), about 500 for H (> 300), 2450 for P's /24
# (> 1500), while H's own /24 (800) and S's packets (300) stay below the
# rules they must not meet whatever the error.  A spread of n = 300
# distinct pairs has a lower end of n (1 - 3 sigma), sigma some 0.2 with
# 90 registers, about 120 (> 60).  (Those figures were looked at once, on
# a daemon with --detect and this traffic, to choose the rates; the
# checks never read an estimate.)
#
# Shown (TAP, with a plan):
#   1. a start with a bad policy file (a dst key, a bad rate) exits 1 with
#      one line naming FILE:LINE and leaves nothing (7);
#   2. dry run: on that traffic nothing is blocked (every source receives
#      all it sent), the list stays empty, and the decisions, counters and
#      log lines name H, P's /24 and S as "dry-run", A as "allowed", OWN
#      as "own address"; H is listed above its rule, its value between
#      the threshold and the rate sent;
#   3. the same traffic for real (1, 2, 3, 4): H is blocked within for + 2
#      windows of its first datagram (added_at), as a /32 whose origin is
#      the rule's text, expiring after the ban; its datagrams are dropped
#      from the moment the entry is seen until it is seen gone (churn: per
#      datagram, from its send time) and it passes again after the ban; P
#      is blocked as the one entry 10.5.5.0/24 (no /32 of it); S is blocked
#      by the spread rule; L, A and OWN are never listed and L and A
#      receive everything; the real run's blocked keys are the dry run's;
#      /metrics' flowsketch_policy_* families are policy --json's counters;
#   4. a restart on the same list file keeps the automatic bans, their
#      origin and expires_at, and the datapath drops them again (6);
#   5. a bad policy file is refused by `policy reload` (exit non-zero, one
#      line naming FILE:LINE) and by SIGHUP (logged), the rules unchanged,
#      reload_failures counted; a good one reloaded by both under traffic
#      takes effect and loses no datagram of L and A (7);
#   6. limit under a flood (5): fs-gen --round-robin, FLOOD_SOURCES =
#      10,000 distinct sources, each to FLOOD_PEERS distinct (destination,
#      port) peers, as fast as it sends (some 200,000 packets a second
#      here), above "block src if spread > FLOOD_T" in every window: the
#      truth file says each source had its FLOOD_PEERS peers, and the rate
#      sent gives each more than FLOOD_T peers a window.  For the daemon to
#      see them above too, the spread sketch is sized for the flood
#      (FLOOD_DETECT): the lower end a rule acts on is S / (1 + z sigma) -
#      e F / w (spread.h, "Error"), about 0.75 s - 0.41 s for s peers each
#      of 10,000 sources at w = 65,536; at the default w = 512 it is below
#      0 for every one of them.  The policy weighs each rule's 1,024
#      heaviest keys a window (FSD_POLICY_CANDIDATES), so the check is that
#      it found more than FLOOD_SEEN keys above in one window.  "limit
#      10/min": at every query the automatic entries are at most
#      10 + 10 t / 60, t the time since the daemon was launched (its
#      bucket cannot have been filled before), and the keys above it did
#      not block were counted and logged as limited; with a separate
#      daemon of --blocklist-max 10 and no effective limit, the list fills
#      and never holds more than 10 entries (answers and list file), the
#      refusals counted as full.
# FS_POLICY_OFF=1 starts the daemons without the policy options (only
# --detect): the traffic, the receiver and every wait still run, and
# every policy check fails (how the traffic was checked before the
# daemon had a policy).
# Runs in about two minutes, waiting for events (queries polled), never
# for fixed times.  Only the namespaces and veth pair made here are
# touched; they, the pins and the work directory go on every exit.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

HELPER=tests/integration/blocklist_traffic.py
DST4=10.255.0.1
DST6=fd00:ff::1
PORT=9999
METRICS_PORT=9108	# in NS_RX, whose ports are all free
SLACK=0.05		# s: a frame queued after send(), a list answer built after a change
H=10.1.0.1
A=10.8.0.1
OWN=10.255.1.1
L=10.2.1.1,10.2.2.1,10.2.3.1,10.2.4.1
P=$(seq -f '10.5.5.%g' -s , 1 100)
S=10.6.0.1
HOLD=2 BAN=6		# the src rule's "for" and "ban", seconds
R_SRC="block src if packets > 300/s for ${HOLD}s ban ${BAN}s"
R_SRC2="block src if packets > 320/s for ${HOLD}s ban ${BAN}s"	# the reload's
R_P24="block src4/24 if packets > 1.5k/s for 2s ban 1h"	# as the daemon writes it (policy_file.h)
R_SPREAD="block src if spread > 60 for 2s ban 1h"
FLOOD_SOURCES=10000 FLOOD_PEERS=20 FLOOD_T=2
FLOOD_WINDOW=2		# s: a window holds every source's peers at 100,000 packets/s
FLOOD_SECONDS=10
FLOOD_DETECT=spread:2x65536:1/1
FLOOD_SEEN=1000		# keys above in one window, of the 1,024 weighed
R_FLOOD="block src if spread > $FLOOD_T for ${FLOOD_WINDOW}s ban 1h"
LIMIT_N=10 LIMIT_SEC=60
LIST_MAX=10

declare -A SEND_PID SEND_PHASE
FLOOD_PID=""
RECV_PID=""

test_cleanup() {
	local pid
	for pid in "${SEND_PID[@]}" "$FLOOD_PID" "$RECV_PID"; do
		[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	return 0
}
helper() { python3 "$HELPER" "$@"; }
# jqs ARG... FILE: jq -e, failing on an empty FILE too (jq 1.6 -e passes
# one, and a request the daemon does not know leaves one).
jqs() { [ -s "${!#}" ] && jq -e "$@" >/dev/null; }

# policy_opts FILE [OPTION...]: the daemon's policy options, or with
# FS_POLICY_OFF the detection structures alone.
policy_opts() {
	if [ -n "${FS_POLICY_OFF:-}" ]; then
		POLICY_OPTS=(--detect "prefixes,spread")
	else
		POLICY_OPTS=(--policy "$@" --metrics "127.0.0.1:$METRICS_PORT")
	fi
}
daemon_start() {
	policy_opts "$@"
	T_LAUNCH=$EPOCHREALTIME
	fsd_start "${POLICY_OPTS[@]}" && fs_until 100 --while "$DAEMON_PID" xdp_attached
}

# send NAME SOURCES RATE ARG...: a sender of its own phase in the
# background, until its --count or --duration or SIGTERM (send_stop).
PHASE=0
send() {
	local name=$1 src=$2 rate=$3; shift 3
	PHASE=$((PHASE + 1))
	SEND_PHASE[$name]=$PHASE
	rm -f "$T/started-$name"
	(exec nsenter --net="/run/netns/$NS_TX" python3 "$HELPER" send -i "$VETH_TX" \
		--dst-mac "$MAC" --src4 "$src" --dst4 "$DST4" --dst6 "$DST6" --port "$PORT" \
		--phase "$PHASE" --rate "$rate" --started "$T/started-$name" \
		--out "$T/sent-$name.json" "$@" 2>"$T/send-$name.err") &
	SEND_PID[$name]=$!
}
# send_stop NAME...: SIGTERM, then its sent file and the receiver's count.
send_stop() {
	local name rc=0
	for name in "$@"; do
		kill -TERM "${SEND_PID[$name]}" 2>/dev/null
	done
	for name in "$@"; do
		wait "${SEND_PID[$name]}" 2>/dev/null
		SEND_PID[$name]=""
		[ -f "$T/sent-$name.json" ] || { diag <"$T/send-$name.err"; rc=1; continue; }
		fs_until 100 test -f "$T/recv-${SEND_PHASE[$name]}.json" || rc=1
		cp "$T/recv-${SEND_PHASE[$name]}.json" "$T/recv-$name.json" 2>/dev/null
	done
	return $rc
}
# send_all NAME SOURCES RATE ARG...: send and wait for the end.
send_all() {
	send "$@" && wait "${SEND_PID[$1]}" && SEND_PID[$1]="" &&
		fs_until 100 test -f "$T/recv-${SEND_PHASE[$1]}.json" &&
		cp "$T/recv-${SEND_PHASE[$1]}.json" "$T/recv-$1.json"
}
started() { local n; for n in "$@"; do [ -f "$T/started-$n" ] || return 1; done; }

# expect WHAT NAME CIDR...: the sources of NAME's phase that CIDR...
# cover received nothing, every other one all it was sent.
expect() {
	local what=$1 name=$2 v=$T/verdict-$2.json; shift 2
	helper verdict --sent "$T/sent-$name.json" --recv "$T/recv-$name.json" "$@" >"$v" ||
		{ not_ok "$what: verdict"; return; }
	check "$what: the $(jq .blocked.sources "$v") sources of [$*] received nothing, the $(jq .open.sources "$v") others all ($(jq -c '[.blocked.received, .open.received, .open.sent]' "$v"))" \
		jqs '.blocked.received == 0 and .open.received == .open.sent and .open.sent > 0 and (.violations | length) == 0' "$v"
	jq -r '.violations[]' "$v" | head -5 | diag
}

# list, pol: the answers in $T/list.json, $T/policy.json, or null there
# (every check on it fails) and 1; the CLI's complaint in $T/cli.err.
list() { cli block list --json >"$T/list.json" 2>"$T/cli.err" || { echo null >"$T/list.json"; return 1; }; }
entry() { jq -r --arg c "$1" ".entries[] | select(.cidr == \$c) | .$2" "$T/list.json"; }
# watch CIDR in|out Q0: poll the list until CIDR is (in) or is not (out)
# listed; WATCHED = "Q0' R1", Q0' when the last query that saw the other
# state was sent (Q0 if none did), R1 when the first that saw this one
# returned: the change happened in between.  Up to some 25 s.
watch() {
	local cidr=$1 want=$2 q0=$3 a b i have
	WATCHED=""
	for ((i = 0; i < 200; i++)); do
		a=$EPOCHREALTIME
		list || return 1
		b=$EPOCHREALTIME
		have=out
		[ -n "$(entry "$cidr" cidr)" ] && have=in
		[ "$have" = "$want" ] && { WATCHED="$q0 $b"; return 0; }
		q0=$a
		sleep 0.1
	done
	return 1
}
dropped_at_least() { list && [ "$(entry "$1" packets)" -ge "$2" ] 2>/dev/null; }

pol() { cli policy --json >"$T/policy.json" 2>"$T/cli.err" || { echo null >"$T/policy.json"; return 1; }; }
# decided ACTION KEY...: each KEY has a decision of ACTION in $T/policy.json.
decided() {
	local action=$1 k; shift
	for k in "$@"; do
		jqs --arg a "$action" --arg k "$k" 'any(.decisions[]; .action == $a and .key == $k)' \
			"$T/policy.json" || return 1
	done
}
# all_decided ACTION: H, P's /24 and S decided as ACTION, A allowed, OWN
# the host's own, all in one answer (the decisions kept may be a few).
all_decided() {
	pol && decided "$1" "$H/32" 10.5.5.0/24 "$S/32" && decided allowed "$A/32" &&
		decided "own address" "$OWN/32"
}
# keys ACTION [FILE]: the sorted keys of the decisions of ACTION.
keys() { jq -c --arg a "$1" '[.decisions[] | select(.action == $a) | .key] | unique' "${2:-$T/policy.json}" 2>/dev/null; }
# counter NAME: -1 if there is none (no answer), so that sums stay numbers.
counter() { jq -r ".counters.$1 // -1" "$T/policy.json" 2>/dev/null || echo -1; }
rules() { jq -c '[.rules[].rule]' "$T/policy.json" 2>/dev/null; }
# lines FILE: the entries of a list file (none if it is absent).
lines() { { grep -v -e '^#' -e '^$' "$1" 2>/dev/null || true; } | wc -l; }
# logged LOG KEY...: each KEY on a "policy:" line of LOG.
logged() {
	local log=$1 k; shift
	for k in "$@"; do grep "policy:" "$log" | grep -qF -- "$k" || return 1; done
}
# covered_by_none ADDR...: no entry of $T/list.json covers an ADDR.
covered_by_none() {
	python3 -c '
import ipaddress, json, sys
es = [ipaddress.ip_network(e["cidr"]) for e in json.load(open(sys.argv[1]))["entries"]]
bad = [a for a in sys.argv[2:] if any(ipaddress.ip_address(a) in n for n in es if n.version == 4)]
print(" ".join(bad)); sys.exit(1 if bad else 0)' "$T/list.json" "$@"
}

# Every source of the policy traffic, in phases of its own (a phase's
# sources share its rate equally), sending until send_stop.
traffic_start() {
	send H "$H" 800 --duration 60 --stamps
	send A "$A" 800 --duration 60
	send OWN "$OWN" 800 --duration 60
	send L "$L" 80 --duration 60 --stamps
	send P "$P" 3000 --duration 60 --stamps
	send S "$S" 300 --duration 60 --scan 5000
	fs_until 100 started H A OWN L P S
}
ALL=(H A OWN L P S)

# ---------------------------------------------------------------- set-up
fs_test pl jq python3 "$GEN"
T=$WORK
fs_test_pair
fs_rx_addresses "$NS_RX" "$VETH_RX" "$DST4" "$DST6" || bail "$DST4 and $DST6 on $VETH_RX"
ip -n "$NS_RX" addr add "$OWN/32" dev "$VETH_RX" || bail "$OWN on $VETH_RX"
MAC=$(fs_mac "$NS_RX" "$VETH_RX")
nsenter --net="/run/netns/$NS_RX" python3 "$HELPER" recv --port "$PORT" --dir "$T" \
	--ready "$T/ready" 2>"$T/recv.err" &
RECV_PID=$!
fs_until 100 test -f "$T/ready" || { diag <"$T/recv.err"; bail "the receiver listens on UDP $PORT"; }
POLICY=$T/policy
printf '%s\n' "# the test's policy" "$R_SRC" "$R_P24" "$R_SPREAD" \
	"allow 10.8.0.0/16   # A" "limit 100/min" >"$POLICY"

# ---------------------------------------------------------------- 1. bad file at start
printf '%s\n' "$R_SRC" "block dst if packets > 10/s for 2s ban 6s" >"$T/bad-dst"
fsd_refused "--policy with a dst rule on line 2" "$T/bad-dst:2" --policy "$T/bad-dst"
printf '%s\n' "allow 10.8.0.0/16" "" "block src if packets > 50q/s for 2s ban 6s" >"$T/bad-rate"
fsd_refused "--policy with a bad rate on line 3" "$T/bad-rate:3" --policy "$T/bad-rate"

# ---------------------------------------------------------------- 2. dry run
daemon_start "$POLICY" --policy-dry-run || bail "flowsketchd starts with --policy $POLICY --policy-dry-run"
ok "flowsketchd starts with --policy-dry-run"
pol
check "policy --json: the file, dry_run, the three rules in order, the allowlist, limit 100/min ($(rules))" \
	jqs --arg f "$POLICY" --arg a "$R_SRC" --arg b "$R_P24" --arg c "$R_SPREAD" \
	'.file == $f and .dry_run == true and [.rules[].rule] == [$a, $b, $c]
	 and [.rules[].line] == [2, 3, 4] and .allow == ["10.8.0.0/16"]
	 and .limit.n == 100 and .limit.per_seconds == 60' "$T/policy.json"
traffic_start || bail "the dry run's traffic starts"
fs_until 150 all_decided dry-run
cp "$T/policy.json" "$T/policy-dry.json"
check "the dry run decides on H, P's /24 and S ($(keys dry-run))" decided dry-run "$H/32" 10.5.5.0/24 "$S/32"
check "... A is allowed ($(keys allowed))" decided allowed "$A/32"
check "... OWN is the host's own address ($(keys "own address"))" decided "own address" "$OWN/32"
# H's value is the lower end of its rate's estimate: above the threshold
# it crossed, and at most what was sent, 800 a second (5 % for a window
# a little longer than 1 s and a lower end that fails at z = 3).
check "... above: H under the src rule for a second or more, its value in (300, 840] ($(jq -c --arg k "$H/32" '[.above[] | select(.key == $k)]' "$T/policy.json" 2>/dev/null))" \
	jqs --arg k "$H/32" --arg r "$R_SRC" \
	'any(.above[]; .key == $k and .rule == $r and .seconds >= 1 and .value > 300 and .value <= 840)' \
	"$T/policy.json"
send_stop "${ALL[@]}" || bail "the dry run's traffic ends"
pol
for n in H A L P; do expect "dry run, $n" "$n"; done
list
check "the dry run blocked nothing: the list is empty ($(jq -c '[.entries[].cidr]' "$T/list.json"))" \
	jqs '.entries == []' "$T/list.json"
check "its counters: dry_run $(counter dry_run) >= 3, blocked $(counter blocked), allowed $(counter allowed) >= 1, own $(counter own) >= 1" \
	jqs '.counters.dry_run >= 3 and .counters.blocked == 0 and .counters.allowed >= 1 and .counters.own >= 1' \
	"$T/policy.json"
check "its log has a policy: line for H, P's /24 and S" logged "$FSD_LOG" "$H/32" 10.5.5.0/24 "$S/32"
fsd_stop
mv "$FSD_LOG" "$T/daemon-dry.log"

# ---------------------------------------------------------------- 3. for real
daemon_start "$POLICY" || bail "flowsketchd starts with --policy $POLICY"
ok "flowsketchd starts with --policy $POLICY"
q0=$EPOCHREALTIME
traffic_start || bail "the traffic starts"
watch "$H/32" in "$q0" || not_ok "H ($H/32) is listed"
[ -n "$WATCHED" ] && echo "add $WATCHED $H/32" >"$T/events-H"
cp "$T/list.json" "$T/list-H.json"
h_added=$(entry "$H/32" added_at) h_expires=$(entry "$H/32" expires_at) h_origin=$(entry "$H/32" origin)
: "${h_added:=0}" "${h_expires:=0}"	# none: numbers for the checks that fail
# Enough of H's datagrams sent while it is listed for the churn's verdict.
fs_until 100 dropped_at_least "$H/32" 200
send_stop H
h_first=$(jq '.sources[].stamps[0] | floor' "$T/sent-H.json")
check "H is blocked within for + 2 windows of its first datagram ($h_first <= added_at $h_added <= $h_first + $HOLD + 2 + 1)" \
	[ "$h_added" -ge $((h_first + HOLD - 1)) -a "$h_added" -le $((h_first + HOLD + 3)) ]
check "... origin \"$h_origin\", the rule's text; expires_at $h_expires = added_at + $BAN" \
	[ "$h_origin" = "$R_SRC" -a "$h_expires" = $((h_added + BAN)) ]
watch 10.5.5.0/24 in "$q0" || not_ok "P's /24 is listed"
[ -n "$WATCHED" ] && echo "add $WATCHED 10.5.5.0/24" >"$T/events-P"
watch "$S/32" in "$q0" || not_ok "S is listed"
check "P is one entry, 10.5.5.0/24 by \"$R_P24\" ($(entry 10.5.5.0/24 origin)), S by the spread rule ($(entry "$S/32" origin))" \
	[ "$(entry 10.5.5.0/24 origin)" = "$R_P24" -a "$(entry "$S/32" origin)" = "$R_SPREAD" ]
fs_until 100 all_decided blocked
cp "$T/policy.json" "$T/policy-real.json"
fs_until 100 dropped_at_least 10.5.5.0/24 200
# H leaves the list at its expiry (within two windows).
watch "$H/32" out "$q0" || not_ok "H leaves the list"
[ -n "$WATCHED" ] && echo "del $WATCHED $H/32" >>"$T/events-H"
tg=$(date +%s)
check "H left the list by its expiry plus two windows ($h_expires <= $tg <= $h_expires + 2)" \
	[ "$tg" -ge "$h_expires" -a "$tg" -le $((h_expires + 2)) ]
send_stop A OWN L P S
# churn NAME: the datagrams of NAME's phase against the list changes
# watched ($T/events-NAME), in $T/churn-NAME.json (empty without them).
churn() {
	: >"$T/churn-$1.json"
	[ -s "$T/events-$1" ] || return 0
	helper churn --sent "$T/sent-$1.json" --recv "$T/recv-$1.json" --events "$T/events-$1" \
		--slack "$SLACK" >"$T/churn-$1.json"
}
churn H
check "H's datagrams: none arrived from the entry's add to its expiry ($(jq -c .blocked "$T/churn-H.json")), all before ($(jq -c .open "$T/churn-H.json"))" \
	jqs '.blocked.datagrams >= 100 and .blocked.arrived == 0 and .open.missing == 0 and (.violations | length) == 0' \
	"$T/churn-H.json"
jq -r '.violations[]' "$T/churn-H.json" | head -5 | diag
churn P
check "P's datagrams: none arrived once 10.5.5.0/24 was listed ($(jq -c .blocked "$T/churn-P.json")), all before" \
	jqs '.blocked.datagrams >= 100 and .blocked.arrived == 0 and .open.missing == 0 and (.violations | length) == 0' \
	"$T/churn-P.json"
send_all H2 "$H" 1000 --count 100 || not_ok "H's traffic after the ban"
expect "after the ban H passes again" H2
for n in A L; do expect "$n, never blocked" "$n"; done
list
check "no entry covers L, A or OWN ($(covered_by_none ${L//,/ } "$A" "$OWN"))" covered_by_none ${L//,/ } "$A" "$OWN"
check "the list is 10.5.5.0/24 and $S/32 alone: no /32 of P ($(jq -c '[.entries[].cidr]' "$T/list.json"))" \
	helper same --list-json "$T/list.json" 10.5.5.0/24 "$S/32"
DRY=$T/policy-dry.json REAL=$T/policy-real.json
check "blocked: the real run's keys ($(keys blocked "$REAL")) are the dry run's ($(keys dry-run "$DRY")), H, P's /24 and S" \
	[ "$(keys dry-run "$DRY")" = "$(keys blocked "$REAL")" -a "$(keys blocked "$REAL")" = "[\"$H/32\",\"10.5.5.0/24\",\"$S/32\"]" ]
check "allowed and own address: A's /32 and OWN's in both runs ($(keys allowed "$REAL"), $(keys "own address" "$REAL"))" \
	[ "$(keys allowed "$DRY")" = "[\"$A/32\"]" -a "$(keys allowed "$REAL")" = "[\"$A/32\"]" \
	  -a "$(keys "own address" "$DRY")" = "[\"$OWN/32\"]" -a "$(keys "own address" "$REAL")" = "[\"$OWN/32\"]" ]
pol
check "counters: blocked $(counter blocked) = 3, dry_run $(counter dry_run) = 0" \
	jqs '.counters.blocked == 3 and .counters.dry_run == 0' "$T/policy.json"
check "the log has a policy: line for H, P's /24 and S" logged "$FSD_LOG" "$H/32" 10.5.5.0/24 "$S/32"
cli policy >"$T/policy.txt" 2>&1
check "policy (tables) names the rules" grep -qF "$R_SPREAD" "$T/policy.txt"
# /metrics: the same counters (the page is made at each window boundary:
# until one page and the answer between agree).
metrics_agree() {
	local page=$T/metrics.prom
	fs_in "$NS_RX" curl -sf --max-time 5 -o "$page" "http://127.0.0.1:$METRICS_PORT/metrics" &&
		pol && awk -v b="$(counter blocked)" -v a="$(counter allowed)" -v o="$(counter own)" '
		{ k = substr($0, 1, length($0) - length($NF) - 1); v = $NF }	# a label may hold a blank
		k == "flowsketch_policy_decisions_total{action=\"blocked\"}" && v == b { n++ }
		k == "flowsketch_policy_decisions_total{action=\"allowed\"}" && v == a { n++ }
		k == "flowsketch_policy_decisions_total{action=\"own address\"}" && v == o { n++ }
		k == "flowsketch_policy_rules" && v == 3 { n++ }
		k == "flowsketch_policy_dry_run" && v == 0 { n++ }
		END { exit n != 5 }' "$page"
}
check "/metrics: flowsketch_policy_decisions_total by action, _rules and _dry_run are policy --json's" \
	fs_until 50 metrics_agree
grep '^flowsketch_policy' "$T/metrics.prom" | diag

# ---------------------------------------------------------------- 4. restart
list
p_exp=$(entry 10.5.5.0/24 expires_at) s_exp=$(entry "$S/32" expires_at)
rc=0
fsd_stop || rc=$?
check "flowsketchd stops on SIGTERM (exit $rc)" [ "$rc" = 0 ]
mv "$FSD_LOG" "$T/daemon-real.log"
daemon_start "$POLICY" || bail "flowsketchd restarts on the same list file"
ok "flowsketchd restarts with --policy on $FSD_LIST"
list
check "the automatic bans are kept, origin and expires_at ($(entry 10.5.5.0/24 expires_at) = $p_exp, $(entry "$S/32" expires_at) = $s_exp)" \
	[ -n "$p_exp" -a -n "$s_exp" -a "$(entry 10.5.5.0/24 expires_at)" = "$p_exp" -a "$(entry "$S/32" expires_at)" = "$s_exp" \
	  -a "$(entry 10.5.5.0/24 origin)" = "$R_P24" -a "$(entry "$S/32" origin)" = "$R_SPREAD" ]
send_all S2 "$S,10.6.1.1" 500 --count 50 || not_ok "S's traffic after the restart"
expect "after the restart S is dropped still" S2 "$S/32"

# ---------------------------------------------------------------- 5. reload
pol
rules0=$(rules) f0=$(counter reload_failures) r0=$(counter reloads)
RULES0=$(jq -cn --arg a "$R_SRC" --arg b "$R_P24" --arg c "$R_SPREAD" '[$a, $b, $c]')
check "before the reloads, the file's three rules ($rules0)" [ "$rules0" = "$RULES0" ]
printf '%s\n' "$R_SRC" "block dst if packets > 10/s for 2s ban 6s" >"$T/bad-policy"
cp "$T/bad-policy" "$POLICY"
cli policy reload >"$T/reload.out" 2>&1
rc=$?
check "policy reload of a bad file: exit $rc, one line naming $POLICY:2 ($(head -c 160 "$T/reload.out"))" \
	[ "$rc" != 0 -a "$(wc -l <"$T/reload.out")" = 1 -a -n "$(grep -F "$POLICY:2" "$T/reload.out")" ]
pol
check "... the rules unchanged ($(rules)), reload_failures $f0 + 1 ($(counter reload_failures))" \
	[ "$(rules)" = "$RULES0" -a "$(counter reload_failures)" = $((f0 + 1)) -a "$f0" -ge 0 ]
kill -HUP "$DAEMON_PID"
fs_until 100 --while "$DAEMON_PID" eval 'pol && [ "$(counter reload_failures)" = $((f0 + 2)) ]'
check "SIGHUP with the bad file: reload_failures $f0 + 2 ($(counter reload_failures)), rules unchanged, logged naming $POLICY:2" \
	[ "$(counter reload_failures)" = $((f0 + 2)) -a "$f0" -ge 0 -a "$(rules)" = "$RULES0" -a -n "$(grep -F "$POLICY:2" "$FSD_LOG")" ]
check "... the daemon runs on" kill -0 "$DAEMON_PID"
printf '%s\n' "$R_SRC2" "$R_P24" "$R_SPREAD" "allow 10.8.0.0/16" "limit 100/min" >"$POLICY"
send L2 "$L" 80 --duration 60 --stamps
send A2 "$A" 100 --duration 60
fs_until 100 started L2 A2
cli policy reload >"$T/reload.out" 2>&1
rc=$?
kill -HUP "$DAEMON_PID"
fs_until 100 --while "$DAEMON_PID" eval 'pol && [ "$(counter reloads)" = $((r0 + 2)) ]'
check "the good file reloaded under traffic by the CLI (exit $rc) and SIGHUP: reloads $r0 + 2 ($(counter reloads)), the new rule in force" \
	[ "$rc" = 0 -a "$r0" -ge 0 -a "$(counter reloads)" = $((r0 + 2)) -a "$(rules)" = "$(jq -cn --arg a "$R_SRC2" --arg b "$R_P24" --arg c "$R_SPREAD" '[$a, $b, $c]')" ]
fsd_settle	# two more windows of traffic after the reloads
send_stop L2 A2
for n in L2 A2; do expect "no datagram of the allowed sources $n lost across the reloads" "$n"; done
fsd_stop
mv "$FSD_LOG" "$T/daemon-reload.log"

# ---------------------------------------------------------------- 6. limit
# flood NAME LIST POLICY-TEXT [OPTION...]: a daemon on a list of its own,
# windows of FLOOD_WINDOW and the spread sketch at FLOOD_DETECT, then
# fs-gen's flood for FLOOD_SECONDS (FLOOD_PID), its truth in $T/NAME.json.
flood() {
	local name=$1 file=$2 text=$3; shift 3
	printf '%s\n' "$R_FLOOD" "$text" >"$T/policy-flood"
	FSD_LIST=$file daemon_start "$T/policy-flood" --window "$FLOOD_WINDOW" \
		--history $((2 * FLOOD_WINDOW)) --detect "$FLOOD_DETECT" "$@" || return 1
	(exec nsenter --net="/run/netns/$NS_TX" "$GEN" -i "$VETH_TX" --dst-mac "$MAC" \
		--round-robin --flows $((FLOOD_SOURCES * FLOOD_PEERS)) --sources "$FLOOD_SOURCES" \
		--destinations 1000000 --seed 3 --ipv6-share 0 --duration "$FLOOD_SECONDS" \
		--truth "$T/$name.json" >/dev/null 2>>"$T/gen.log") &
	FLOOD_PID=$!
}
flood_stop() {
	kill -TERM "$FLOOD_PID" 2>/dev/null
	wait "$FLOOD_PID" 2>/dev/null
	FLOOD_PID=""
}
# auto_count: the entries $T/list.json holds by the flood rule.
auto_count() { jq --arg r "$R_FLOOD" '[.entries[] | select(.origin == $r)] | length' "$T/list.json"; }
# most_seen LOG: the most keys the limit held back in one window (its log).
most_seen() {
	sed -n 's/.*reached: \([0-9]*\) keys above their rule not blocked this window.*/\1/p' "$1" |
		sort -n | tail -1
}
# flood_sent NAME: the truth's fewest distinct peers of a source, and the
# fewest a window held (packets a window over the sources, the round robin
# giving each source its share, less one for the window's edges).
flood_sent() {
	jq -r --argjson w "$FLOOD_WINDOW" --argjson s "$FLOOD_SOURCES" '
		([.flows | group_by(.src)[] | map("\(.dst) \(.dport)") | unique | length] | min) as $peers |
		[.distinct_sources, $peers,
		 ([$peers, (.total_packets / .elapsed_seconds * $w / $s | floor) - 1] | min)] | @tsv' \
		"$T/$1.json"
}

flood limit "$T/list-limit" "limit $LIMIT_N/min" || bail "flowsketchd starts with the flood policy"
ok "flowsketchd starts with \"$R_FLOOD\" and \"limit $LIMIT_N/min\" (--detect $FLOOD_DETECT), fs-gen floods"
# Until the flood ends (or ~40 s).
worst="" over=0 polls=0
for ((i = 0; i < 150; i++)); do
	list || break
	t=$EPOCHREALTIME
	c=$(auto_count)
	allow=$(awk -v t="$t" -v l="$T_LAUNCH" "BEGIN { print int($LIMIT_N + $LIMIT_N * (t - l) / $LIMIT_SEC) }")
	polls=$((polls + 1))
	[ "$c" -gt "$allow" ] && { over=$((over + 1)); worst="$c > $allow at +$(awk -v t="$t" -v l="$T_LAUNCH" 'BEGIN { printf "%.1f", t - l }')s"; }
	fs_gone "$FLOOD_PID" && break
	sleep 0.2
done
flood_stop
list
pol
read -r srcs peers per_window < <(flood_sent limit)
check "the flood: $srcs distinct sources sent, each to $peers distinct peers, each above $FLOOD_T a window ($per_window at least, from $(jq .total_packets "$T/limit.json") packets in $(jq '.elapsed_seconds | floor' "$T/limit.json") s)" \
	[ "$srcs" = "$FLOOD_SOURCES" -a "$peers" = "$FLOOD_PEERS" -a "$per_window" -gt "$FLOOD_T" ]
check "limit $LIMIT_N/min: at none of $polls queries were there more automatic entries than $LIMIT_N + $LIMIT_N t/$LIMIT_SEC (${worst:-never})" \
	[ "$polls" -gt 0 -a "$over" = 0 ]
check "... the bucket was used: $(auto_count) >= $LIMIT_N entries, counters.blocked $(counter blocked) the same" \
	[ "$(auto_count)" -ge "$LIMIT_N" -a "$(counter blocked)" = "$(auto_count)" ]
seen=$(most_seen "$FSD_LOG")
check "... the daemon saw the flood above its rule: ${seen:-no} keys held back by the limit in one window (> $FLOOD_SEEN), logged" \
	[ "${seen:-0}" -gt "$FLOOD_SEEN" ]
check "... and counted them: counters.limited $(counter limited) >= ${seen:-0}, with decisions \"limited\"" \
	bash -c '[ "$0" -ge "$1" ] && jq -e "any(.decisions[]; .action == \"limited\")" "$2" >/dev/null' \
	"$(counter limited)" "${seen:-1}" "$T/policy.json"
fsd_stop
mv "$FSD_LOG" "$T/daemon-limit.log"

flood max "$T/list-max" "limit 1000000/s" --blocklist-max "$LIST_MAX" || bail "flowsketchd starts with --blocklist-max $LIST_MAX"
ok "flowsketchd starts with --blocklist-max $LIST_MAX and no effective limit, fs-gen floods"
most=0 polls=0
for ((i = 0; i < 150; i++)); do
	list || break
	n=$(jq '.entries | length' "$T/list.json")
	polls=$((polls + 1))
	[ "$n" -gt "$most" ] && most=$n
	pol && [ "$(counter full)" -ge 1 ] && [ "$n" -ge "$LIST_MAX" ] && break
	fs_gone "$FLOOD_PID" && break
	sleep 0.2
done
flood_stop
list
pol
n=$(jq '.entries | length' "$T/list.json")
[ "$n" -gt "$most" ] && most=$n
check "--blocklist-max $LIST_MAX: at most $LIST_MAX entries at each of $polls queries (most $most), the list file too ($(lines "$T/list-max"))" \
	[ "$polls" -gt 0 -a "$most" -le "$LIST_MAX" -a "$(lines "$T/list-max")" -le "$LIST_MAX" ]
check "... it filled ($n) and the refusals were counted as full ($(counter full))" \
	jqs --argjson n "$n" ".counters.full >= 1 and \$n == $LIST_MAX" "$T/policy.json"
finish
