#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# e2e.sh - flowsketch end to end: real packets through a veth pair, the
# daemon's answers checked against the traffic generator's ground truth.
#
#   NS_TX [fs-gen] --veth--> NS_RX [XDP datapath, flowsketchd]    CLI on host
#
# The sender (tools/fs-gen) writes what it sent, per flow, to a JSON file;
# every assertion compares the CLI's answer with that file, using the bounds
# the daemon itself states for its parameters:
#   - top-10: equal to the true top-10, order respected wherever two true
#     counts differ by more than the Count-Min bound eps*N; every count in
#     [truth, truth + eps*N] for packets and bytes (Count-Min never
#     undercounts; it overcounts by more than eps*N with probability
#     <= delta per flow);
#   - distinct flows, sources, destinations within 3 relative standard
#     errors (1.04/sqrt(m)) of the exact counts;
#   - totals exact: the veths carry no IP traffic of their own (netns.sh),
#     so the datapath must have sketched exactly the frames fs-gen sent,
#     seen exactly the frames the veth received, and the span's windows
#     must add up to all of them (nothing lost or counted twice when
#     windows rotate under load).
# Output: TAP ("ok N - ..."), diagnostics as "# ..." lines.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/netns.sh

ID=$$
NS_TX="fs-e2e-tx-$ID"
NS_RX="fs-e2e-rx-$ID"
VETH_TX="fse2et$ID"
VETH_RX="fse2er$ID"
PIN_DIR="/sys/fs/bpf/fs-e2e-$ID"
WORK=""
DAEMON_PID=""

# Traffic: 200k packets of 2000 Zipf(1.2) flows in 4 s, 30 % IPv6.  With
# s = 1.2 the 10th and 11th flows differ by ~10 % (hundreds of packets),
# well above eps*N = e/4096 * 200000 = 133 at the default width.
FLOWS=2000
PACKETS=200000
RATE=50000
ZIPF=1.2
SEED=42
SPAN=30
WINDOW=1

FSD=build/flowsketchd
CLI=build/flowsketch
GEN=build/tools/fs-gen

t=0
failed=0
ok() { t=$((t + 1)); echo "ok $t - $*"; }
not_ok() { t=$((t + 1)); failed=$((failed + 1)); echo "not ok $t - $*"; }
check() { # check "description" test-command...
	local what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}
diag() { sed 's/^/# /'; }
bail() { not_ok "$*"; finish; }
finish() {
	echo "1..$t"
	[ "$failed" -eq 0 ] && exit 0
	exit 1
}

cleanup() {
	fs_daemon_stop "$DAEMON_PID"
	fs_pair_destroy "$NS_TX" "$NS_RX"
	rm -rf "$PIN_DIR"
	[ -n "$WORK" ] && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cli() { "$CLI" --socket "$SOCK" "$@"; }

# ---------------------------------------------------------------- set-up
fs_require_root
for b in "$FSD" "$CLI" "$GEN"; do
	[ -x "$b" ] || bail "$b is built (run make)"
done
command -v jq >/dev/null || bail "jq is installed (make deps)"
fs_bpffs_mount || bail "bpffs is mounted on /sys/fs/bpf"
WORK=$(mktemp -d /tmp/fs-e2e.XXXXXX) || bail "a work directory"
chmod 700 "$WORK"
SOCK="$WORK/flowsketchd.sock"

if fs_pair_create "$NS_TX" "$NS_RX" "$VETH_TX" "$VETH_RX"; then
	ok "namespaces $NS_TX, $NS_RX joined by $VETH_TX <-> $VETH_RX"
else
	bail "namespaces and veth pair created"
fi

# nsenter itself, not fs_in: a backgrounded function is a subshell, and
# $! must be the daemon (nsenter execs it) for the signal tests below.
nsenter --net="/run/netns/$NS_RX" "$FSD" -i "$VETH_RX" --window "$WINDOW" --pin-dir "$PIN_DIR" \
	--socket "$SOCK" >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 100); do
	cli status --json >"$WORK/status0.json" 2>/dev/null && break
	kill -0 "$DAEMON_PID" 2>/dev/null || break
	sleep 0.1
done
if jq -e '.counters' "$WORK/status0.json" >/dev/null 2>&1; then
	ok "flowsketchd on $VETH_RX answers status"
else
	diag <"$WORK/daemon.log"
	bail "flowsketchd on $VETH_RX answers status"
fi

mode=$(jq -r '.interfaces[0].xdp_mode' "$WORK/status0.json")
check "XDP attached in native mode (got $mode)" [ "$mode" = native ]

# ---------------------------------------------------------------- traffic
rx_link0=$(fs_link_stat "$NS_RX" "$VETH_RX" rx packets)
# The counters of status are since load; read them again right before
# sending so that the deltas below cover exactly the test traffic.
cli status --json >"$WORK/status0.json" || bail "status before traffic"
mac=$(fs_mac "$NS_RX" "$VETH_RX")
if fs_in "$NS_TX" "$GEN" -i "$VETH_TX" --dst-mac "$mac" --flows "$FLOWS" \
	--packets "$PACKETS" --rate "$RATE" --zipf "$ZIPF" --seed "$SEED" \
	--ipv6-share 0.3 --sources 700 --destinations 300 \
	--truth "$WORK/truth.json" 2>"$WORK/gen.log"; then
	ok "fs-gen sent $(jq .total_packets "$WORK/truth.json") packets of $(jq .distinct_flows "$WORK/truth.json") flows"
else
	diag <"$WORK/gen.log"
	bail "fs-gen sent its traffic"
fi
sent=$(jq .total_packets "$WORK/truth.json")
sent_bytes=$(jq .total_bytes "$WORK/truth.json")
tx_dropped=$(fs_link_stat "$NS_TX" "$VETH_TX" tx dropped)
check "the sending veth dropped nothing (tx dropped $tx_dropped)" [ "$tx_dropped" = 0 ]

# Wait until every window holding test traffic has been closed: at least
# two rotations, and the finished windows' total has stopped growing.
sleep $((2 * WINDOW))
prev=-1
for _ in $(seq 50); do
	cli status --json >"$WORK/status1.json" || bail "status after traffic"
	cur=$(jq '.totals.packets' "$WORK/status1.json")
	[ "$cur" = "$prev" ] && [ "$cur" -ge "$sent" ] && break
	prev=$cur
	sleep "$WINDOW"
done

# ---------------------------------------------------------------- totals
d_sketched=$(jq -n --slurpfile a "$WORK/status0.json" --slurpfile b "$WORK/status1.json" \
	'$b[0].counters.sketched - $a[0].counters.sketched')
d_rx=$(jq -n --slurpfile a "$WORK/status0.json" --slurpfile b "$WORK/status1.json" \
	'$b[0].counters.rx - $a[0].counters.rx')
d_link=$(( $(fs_link_stat "$NS_RX" "$VETH_RX" rx packets) - rx_link0 ))
check "datapath sketched exactly the $sent packets sent (got $d_sketched)" \
	[ "$d_sketched" = "$sent" ]
check "datapath saw exactly the veth's received frames ($d_rx vs $d_link)" \
	[ "$d_rx" = "$d_link" ]
check "finished windows total the packets sent ($(jq .totals.packets "$WORK/status1.json") vs $sent)" \
	[ "$(jq .totals.packets "$WORK/status1.json")" = "$sent" ]
check "finished windows total the bytes sent ($(jq .totals.bytes "$WORK/status1.json") vs $sent_bytes)" \
	[ "$(jq .totals.bytes "$WORK/status1.json")" = "$sent_bytes" ]
bad=$(jq -nr --slurpfile a "$WORK/status0.json" --slurpfile b "$WORK/status1.json" \
	'[$b[0].counters.malformed_total - $a[0].counters.malformed_total,
	  $b[0].counters.update_errors - $a[0].counters.update_errors,
	  $b[0].counters.reports_dropped - $a[0].counters.reports_dropped] | map(tostring) | join(" ")')
check "no malformed packets, update errors or dropped reports (got $bad)" [ "$bad" = "0 0 0" ]

# ---------------------------------------------------------------- top-10
if cli top -n 10 --json --once --span "$SPAN" >"$WORK/top.json" 2>"$WORK/top.err"; then
	ok "top -n 10 --json --once --span $SPAN answers"
else
	diag <"$WORK/top.err"
	not_ok "top -n 10 --json --once --span $SPAN answers"
fi
check "top: span total_packets equals the packets sent ($(jq .total_packets "$WORK/top.json") vs $sent)" \
	[ "$(jq .total_packets "$WORK/top.json")" = "$sent" ]
check "top: span total_bytes equals the bytes sent" \
	[ "$(jq .total_bytes "$WORK/top.json")" = "$sent_bytes" ]

# One jq program joins the CLI's flows with the truth by five-tuple and
# returns the list of violated properties (empty = all hold).
top_check() {
	jq -rn --slurpfile top "$WORK/top.json" --slurpfile truth "$WORK/truth.json" \
		--arg what "$1" '
	def key: "\(.src)|\(.dst)|\(.sport)|\(.dport)|\(.proto)";
	($truth[0].flows | map({(key): .}) | add) as $t |
	($truth[0].flows) as $tf |
	$top[0].error_bound as $eb |
	$top[0].flows as $got |
	if $what == "count" then
		[ $got | length | select(. != 10) | "returned \(.) flows, not 10" ]
	elif $what == "packets" or $what == "bytes" then
		[ $got[] | . as $f | ($t[$f | key][$what] // 0) as $true |
		  select($f[$what] < $true or $f[$what] > $true + $eb[$what]) |
		  "\($f | key): \($what) \($f[$what]) not in [\($true), \($true + $eb[$what])]" ]
	elif $what == "set" then
		# Any flow whose true count is more than the bound below the
		# 10th must be absent; any more than the bound above the 11th
		# must be present.  With the gap > bound this is set equality.
		($tf[9].packets) as $t10 | ($tf[10].packets // 0) as $t11 |
		($got | map(key)) as $keys |
		[ ($got[] | . as $f | ($t[$f | key].packets // 0) |
		   select(. < $t10 - $eb.packets) | "\($f | key) (true \(.)) is not a top-10 flow") ,
		  ($tf[:10][] | select(.packets > $t11 + $eb.packets) | key as $k |
		   select($keys | any(. == $k) | not) | "true top flow \($k) (\(.packets)) is missing") ]
	elif $what == "order" then
		[ range(0; $got | length) as $i | range($i + 1; $got | length) as $j |
		  ($t[$got[$i] | key].packets // 0) as $a | ($t[$got[$j] | key].packets // 0) as $b |
		  select($b > $a + $eb.packets) |
		  "position \($i + 1) (true \($a)) ranked above position \($j + 1) (true \($b))" ]
	else ["unknown check"] end | .[]' 2>&1
}
top_assert() {
	local out
	out=$(top_check "$1")
	if [ -z "$out" ]; then ok "$2"; else not_ok "$2"; echo "$out" | diag; fi
}
bound_p=$(jq .error_bound.packets "$WORK/top.json")
gap=$(jq '.flows[9].packets - .flows[10].packets' "$WORK/truth.json")
echo "# error bound: $bound_p packets, $(jq .error_bound.bytes "$WORK/top.json") bytes; true gap between 10th and 11th: $gap packets"
top_assert count "top returns 10 flows"
top_assert set "top-10 flows are the true top-10"
top_assert order "top-10 order respects true counts that differ by more than the bound"
top_assert packets "every top-10 packet count in [truth, truth + eps*N]"
top_assert bytes "every top-10 byte count in [truth, truth + eps*N]"

# ---------------------------------------------------------------- distinct
if cli flows --json --span "$SPAN" >"$WORK/flows.json" 2>"$WORK/flows.err"; then
	ok "flows --json --span $SPAN answers"
else
	diag <"$WORK/flows.err"
	not_ok "flows --json --span $SPAN answers"
fi
for what in flows sources destinations; do
	est=$(jq ".distinct_$what" "$WORK/flows.json")
	truth=$(jq ".distinct_$what" "$WORK/truth.json")
	within=$(jq -n --slurpfile f "$WORK/flows.json" --argjson e "$est" --argjson t "$truth" \
		'(($e - $t) | fabs) <= 3 * $f[0].relative_standard_error * $t')
	check "distinct $what $est within 3 standard errors of $truth" [ "$within" = true ]
	check "top reports the same distinct $what as flows over the same span" \
		[ "$(jq ".distinct_$what" "$WORK/top.json")" = "$est" ]
done

# ---------------------------------------------------------------- bpftool
if bpftool -j map dump pinned "$PIN_DIR/ctl" >"$WORK/ctl.json" 2>&1; then
	seq=$(jq '[.. | objects | select(has("window_seq")) | .window_seq][0] // "none"' "$WORK/ctl.json")
	check "bpftool shows ctl with its BTF field window_seq ($seq)" \
		bash -c "jq -e '[.. | objects | select(has(\"window_seq\"))] | length > 0 and (.[0].window_seq > 0)' '$WORK/ctl.json' >/dev/null"
else
	diag <"$WORK/ctl.json"
	not_ok "bpftool map dump pinned $PIN_DIR/ctl"
fi
check "bpftool shows totals as BTF-typed packets/bytes per CPU" \
	bash -c "bpftool -j map dump pinned '$PIN_DIR/totals' | jq -e '[.. | objects | select(has(\"packets\") and has(\"bytes\"))] | length > 0' >/dev/null"
check "bpftool shows cms with BTF" \
	bash -c "bpftool -j map show pinned '$PIN_DIR/cms' | jq -e '.btf_id > 0' >/dev/null"

# ---------------------------------------------------------------- shutdown
kill -TERM "$DAEMON_PID"
rc=0
wait "$DAEMON_PID" || rc=$?
DAEMON_PID=""
check "flowsketchd exits 0 on SIGTERM (got $rc)" [ "$rc" = 0 ]
xdp=$(ip -n "$NS_RX" -j link show dev "$VETH_RX" | jq '.[0].xdp // empty')
check "XDP detached from $VETH_RX after exit" [ -z "$xdp" ]
[ "$failed" -gt 0 ] && tail -n 30 "$WORK/daemon.log" | diag
finish
