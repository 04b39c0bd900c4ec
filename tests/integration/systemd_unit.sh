#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# systemd_unit.sh - dist/flowsketchd.service runs the daemon with least
# privilege, and what it grants is enough.  No systemd runs as PID 1 here,
# so the unit is judged three ways:
#
#   - `systemd-analyze security --offline=true`: exposure at most 3.0
#     (systemd's own scoring of the sandbox; 9.6 for the bare unit), and
#     `systemd-analyze verify` ignores no key or value of it;
#   - the unit against the daemon: its ExecStart options parse, and the
#     directories it makes writable hold the daemon's defaults as
#     `flowsketchd --help` states them (socket and state under
#     RuntimeDirectory, kept across restarts for --keep; the blocklist
#     under StateDirectory; the pin directory under ReadWritePaths);
#   - the capabilities: the daemon started with the unit's
#     CapabilityBoundingSet and no other (setpriv, as root: what systemd
#     does) loads, attaches XDP and both tracepoint frontends, rotates,
#     changes its blocklist and answers status; /proc says the set was the
#     unit's.  It runs under strace (when installed), and every system
#     call it made must pass the unit's SystemCallFilter.
#
#   NS_TX [fs-gen] --veth--> NS_RX [flowsketchd, the unit's capabilities]
#
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

UNIT=${UNIT:-dist/flowsketchd.service}	# another unit: UNIT=FILE
FSD_BIN=$PWD/build/flowsketchd

# The values of KEY in the unit's [Service] section, one a line.
unit_values() {
	awk -v k="$1" '/^\[/ { sec = $0 } sec == "[Service]" && index($0, k "=") == 1 {
		print substr($0, length(k) + 2) }' "$UNIT"
}
# Is PATH (a directory) under one of the words on stdin?
under_one() {
	local p=$1 w
	for w in $(cat); do
		case "$p/" in "${w%/}/"*) return 0 ;; esac
	done
	return 1
}

[ -f "$UNIT" ] || bail "$UNIT is there"
for b in "$FSD_BIN" "$CLI" "$GEN"; do
	[ -x "$b" ] || bail "$b is built (run make)"
done

# --- systemd's score ---------------------------------------------------------
if command -v systemd-analyze >/dev/null; then
	systemd-analyze security --offline=true "$UNIT" >/tmp/fs-unit-$ID.score 2>&1
	score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' /tmp/fs-unit-$ID.score)
	check "systemd-analyze security --offline: exposure ${score:-unknown}, at most 3.0" \
		awk -v s="$score" 'BEGIN { exit !(s != "" && s + 0 <= 3.0) }'
	[ -n "$score" ] || diag </tmp/fs-unit-$ID.score
	rm -f /tmp/fs-unit-$ID.score
	# A misspelt key or a bad value is ignored by systemd (and by the
	# score), with a line saying so: none may be said.
	bad=$(systemd-analyze verify "$UNIT" 2>&1 | grep -E 'Unknown|ignoring|Failed to parse|Invalid')
	check "systemd-analyze verify: every key known, every value parsed${bad:+ ($bad)}" [ -z "$bad" ]
else
	ok "# SKIP systemd-analyze is not installed: no exposure score"
fi

# --- the unit against the daemon's defaults ---------------------------------
help=$("$FSD_BIN" --help)
def_list=$(sed -n 's/.*(default \(\/[^;)]*\); missing: empty).*/\1/p' <<<"$help")
def_state=$(grep -A1 -- '--state-dir DIR' <<<"$help" | sed -n 's/^ *\(\/[^ ]*\)\/ and the pin.*/\1/p')
def_pins=$(grep -A1 -- '--pin-dir' <<<"$help" | grep -o '/sys/fs/bpf[^ )]*' | head -1)
def_sock=$(grep -A1 -- '--socket' <<<"$help" | grep -o '/run/[^ )]*' | head -1)
[ -n "$def_list" ] && [ -n "$def_state" ] && [ -n "$def_pins" ] && [ -n "$def_sock" ] ||
	bail "flowsketchd --help states its default paths (list '$def_list', state '$def_state', pins '$def_pins', socket '$def_sock')"
rt=$(unit_values RuntimeDirectory) st=$(unit_values StateDirectory)
check "RuntimeDirectory=$rt holds the default socket $def_sock and state $def_state" \
	bash -c '[ -n "$0" ] && case "$1/" in /run/"$0"/*) ;; *) exit 1 ;; esac &&
		case "$2/" in /run/"$0"/*) ;; *) exit 1 ;; esac' "$rt" "$def_sock" "$def_state"
check "RuntimeDirectoryPreserve=yes: the history --keep leaves survives a restart" \
	[ "$(unit_values RuntimeDirectoryPreserve)" = yes ]
check "StateDirectory=$st holds the default blocklist $def_list" \
	[ -n "$st" -a "$(dirname "$def_list")" = "/var/lib/$st" ]
pins_writable() { [ "$(unit_values ProtectSystem)" = strict ] && unit_values ReadWritePaths | under_one "$def_pins"; }
check "ProtectSystem=strict, and ReadWritePaths holds the default pin directory $def_pins" pins_writable
check "NoNewPrivileges=yes" [ "$(unit_values NoNewPrivileges)" = yes ]

# ExecStart as systemd would run it, with an interface that is not there:
# options are read in order, so a refusal naming the interface means every
# option before it was accepted.  Nothing is loaded or touched before it.
exec_start=$(unit_values ExecStart)
args=${exec_start#* }
args=${args//\$FLOWSKETCHD_ARGS/-i fs-no-such-if0}
# shellcheck disable=SC2086 # the unit's words, split as systemd does
"$FSD_BIN" $args >/tmp/fs-unit-$ID.out 2>&1; rc=$?
parsed() { [ "$rc" != 0 ] && grep -q 'no interface named "fs-no-such-if0"' "/tmp/fs-unit-$ID.out"; }
check "ExecStart's options ($args) are the daemon's: it gets as far as the interface (exit $rc: $(head -c 100 /tmp/fs-unit-$ID.out))" \
	parsed
rm -f /tmp/fs-unit-$ID.out

# --- the capabilities are enough ---------------------------------------------
caps=$(unit_values CapabilityBoundingSet | tr ' ' '\n' | grep . | sort -u)
[ -n "$caps" ] || bail "the unit has a CapabilityBoundingSet"
check "the bounding set is CAP_BPF CAP_CHOWN CAP_NET_ADMIN CAP_PERFMON CAP_SYS_ADMIN CAP_SYS_NICE and nothing else" \
	[ "$(tr '\n' ' ' <<<"$caps")" = "CAP_BPF CAP_CHOWN CAP_NET_ADMIN CAP_PERFMON CAP_SYS_ADMIN CAP_SYS_NICE " ]
fs_test unit setpriv
bound=$(sed 's/^CAP_//' <<<"$caps" | tr 'A-Z' 'a-z' | sed 's/^/+/' | paste -sd,)
# The daemon as systemd starts it: root, bounding and inheritable sets
# cut to the unit's (nothing ambient), no new privileges.
# Under strace when it is there, for the system calls it makes (strace
# blocks SIGTERM: the daemon, its child, is stopped by pid).
tracer=""
command -v strace >/dev/null && tracer="strace -f -qq -o $WORK/trace"
cat >"$WORK/flowsketchd" <<EOF
#!/bin/sh
exec setpriv --bounding-set=-all,$bound --inh-caps=-all --no-new-privs -- $tracer "$FSD_BIN" "\$@"
EOF
chmod 755 "$WORK/flowsketchd"
FSD=$WORK/flowsketchd
fs_test_pair
# --read-group: the socket's chown must pass the bounding set and filter
# (its directory, the work directory, lets the group through).
chgrp nogroup "$WORK" && chmod 0750 "$WORK" || bail "the work directory is root:nogroup 0750"
fsd_start --read-group nogroup || bail "flowsketchd with the unit's capabilities answers status"
check "--read-group: the socket is root:nogroup 0660 ($(stat -c '%U:%G %a' "$WORK/sock"))" \
	[ "$(stat -c '%U:%G %a' "$WORK/sock")" = "root:nogroup 660" ]
ok "flowsketchd with the unit's capabilities ($bound) answers status"
DPID=$DAEMON_PID
[ -n "$tracer" ] && DPID=$(pgrep -P "$DAEMON_PID" | head -1)
want=$(capsh --decode="$(awk '/^CapBnd:/ { print $2 }' "/proc/$DPID/status")" 2>/dev/null |
	sed 's/.*=//' | tr ',' '\n' | tr 'a-z' 'A-Z' | sort -u)
check "its bounding set (/proc/$DPID/status) was the unit's ($(tr '\n' ' ' <<<"$want"))" \
	[ "$want" = "$caps" ]
check "XDP is attached to $VETH_RX" bash -c "ip -n '$NS_RX' -d link show dev '$VETH_RX' | grep -q 'prog/xdp'"
mac=$(fs_mac "$NS_RX" "$VETH_RX")
fs_in "$NS_TX" "$GEN" -i "$VETH_TX" --dst-mac "$mac" --flows 50 --packets 2000 \
	--rate 5000 --seed 3 --truth "$WORK/truth.json" >/dev/null 2>"$WORK/gen.log" ||
	bail "the generator sent its packets"
check "windows rotate in XDP's, egress's and conn's histories" fsd_settle egress conn
P=$(jq .total_packets "$WORK/truth.json")
check "the $P packets sent are counted (status's totals: $(jq -c .totals "$WORK/st.json" 2>/dev/null))" \
	jqe --argjson p "$P" '.totals.packets >= $p' "$WORK/st.json"
check "block add changes the list file and the datapath" \
	bash -c "'$CLI' --socket '$WORK/sock' block add 192.0.2.0/24 >/dev/null && grep -q '^192.0.2.0/24 ' '$WORK/blocklist'"
check "status reads the tracepoint programs' recursion misses (by program id)" \
	jqe '[.frontends[] | select(.name == "egress" or .name == "conn") | .recursion_misses | numbers] | length == 2' "$WORK/st.json"
cli flows --span 60 >/dev/null
kill -TERM "$DPID"
wait "$DAEMON_PID"; rc=$?
DAEMON_PID=""
check "SIGTERM: exit 0 ($rc)" [ "$rc" = 0 ]

# The system calls it made against the unit's SystemCallFilter= lines,
# applied in order as systemd does: the first an allow list, "~" ones
# taking away, the others adding; groups expanded by systemd-analyze.
expand() {
	local x
	for x in $(systemd-analyze syscall-filter "$1" 2>/dev/null | tail -n +2 |
		   awk '$1 !~ /^#/ && NF == 1 { print $1 }'); do
		case $x in @*) expand "$x" ;; *) echo "$x" ;; esac
	done
}
words() {
	local w
	for w in "$@"; do
		case $w in @*) expand "$w" ;; *) echo "$w" ;; esac
	done | sort -u
}
if [ -z "$tracer" ] || ! command -v systemd-analyze >/dev/null; then
	ok "# SKIP strace or systemd-analyze is not installed: system calls not checked"
else
	allowed=""
	while read -r line; do
		# shellcheck disable=SC2086 # a list of words
		case $line in
		"~"*) allowed=$(comm -23 <(echo "$allowed") <(words ${line#"~"})) ;;
		*) allowed=$({ echo "$allowed"; words $line; } | grep . | sort -u) ;;
		esac
	done < <(unit_values SystemCallFilter)
	used=$(grep -oE '^[0-9]+ +[a-z0-9_]+\(' "$WORK/trace" | awk '{ sub(/\(/, "", $2); print $2 }' | sort -u)
	denied=$(comm -23 <(echo "$used") <(echo "$allowed") | tr '\n' ' ')
	n=$(grep -c . <<<"$used")
	check "the $n system calls it made are all in the unit's SystemCallFilter (outside: ${denied:-none})" \
		[ "$n" -gt 20 -a -z "$denied" ]
fi
finish
