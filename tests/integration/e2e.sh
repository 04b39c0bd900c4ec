#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# e2e.sh - flowsketch end to end: real packets through a veth pair, the
# daemon's answers checked against the traffic generator's ground truth.
#
#   NS_TX [fs-gen] --veth--> NS_RX [XDP datapath, flowsketchd]    CLI on host
#
# The sender (tools/fs-gen) writes what it sent, per flow, to a JSON file;
# every assertion compares the CLI's answer with that file, using bounds
# computed here from the daemon's parameters (status --json .params) and
# the totals sent, never the bound or error the daemon states:
#   eps*N = e / cms_width * N, N = the packets (bytes) fs-gen sent;
#   rse = 1.04 / sqrt(2^hll_precision).
#   - top-10: every listed flow one that fs-gen sent; equal to the true
#     top-10, order respected wherever two true
#     counts differ by more than the Count-Min bound eps*N; every count in
#     [truth, truth + eps*N] for packets and bytes (Count-Min never
#     undercounts; it overcounts by more than eps*N with probability
#     <= delta per flow);
#   - distinct flows, sources, destinations within 3 relative standard
#     errors (rse) of the exact counts;
#   - the same for the human-readable tables of top, flows and status,
#     parsed back (counts printed in SI units are allowed their rounding);
#   - totals exact: the veths carry no IP traffic of their own (netns.sh),
#     so the datapath must have sketched exactly the frames fs-gen sent,
#     seen exactly the frames the veth received, and the span's windows
#     must add up to all of them (nothing lost or counted twice when
#     windows rotate under load).
# Output: TAP ("ok N - ..."), diagnostics as "# ..." lines.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

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

# ---------------------------------------------------------------- set-up
fs_test e2e "$GEN" jq
fs_test_pair
ok "namespaces $NS_TX, $NS_RX joined by $VETH_TX <-> $VETH_RX"

if fsd_start --window "$WINDOW" && cp "$WORK/st.json" "$WORK/status0.json" &&
	jq -e '.counters' "$WORK/status0.json" >/dev/null 2>&1; then
	ok "flowsketchd on $VETH_RX answers status"
else
	bail "flowsketchd on $VETH_RX answers status"
fi

# The sketch's parameters, from which this test computes its own bounds.
CMS_W=$(jq '.params.cms_width' "$WORK/status0.json")
CMS_D=$(jq '.params.cms_depth' "$WORK/status0.json")
HLL_P=$(jq '.params.hll_precision' "$WORK/status0.json")
# A packet touches its d cells and 3 registers, and fs_ctl and fs_hot.
check "status: lines per packet are d + 3 random and 4 fixed ($(jq -c '[.memory.sketch_lines_per_packet, .memory.fixed_lines_per_packet]' "$WORK/status0.json"))" \
	jqe --argjson d "$CMS_D" '.memory.sketch_lines_per_packet == $d + 3 and .memory.fixed_lines_per_packet == 4' "$WORK/status0.json"
# Its working set, from the layout's definition (cms.h, hll.h): 4-byte
# narrow cells and 6-bit registers five to a 32-bit word, at most a third
# of the 16-byte cells and byte registers before them.
WIDE_BYTES=$((16 * CMS_D * CMS_W + 3 * (1 << HLL_P)))
check "status: a packet's working set is 4 d w + 4 ceil(3 2^p / 5) bytes, at most a third of $WIDE_BYTES ($(jq -c .memory.packet_bytes_per_cpu "$WORK/status0.json"))" \
	jqe --argjson d "$CMS_D" --argjson w "$CMS_W" --argjson p "$HLL_P" --argjson wide "$WIDE_BYTES" \
	'.memory.packet_bytes_per_cpu == 4 * $d * $w + 4 * ((3 * pow(2; $p) + 4) / 5 | floor) and .memory.packet_bytes_per_cpu * 3 <= $wide' "$WORK/status0.json"
if [[ "$CMS_W" =~ ^[0-9]+$ && "$CMS_D" =~ ^[0-9]+$ && "$HLL_P" =~ ^[0-9]+$ ]] &&
   [ $((CMS_W & (CMS_W - 1))) -eq 0 ] && [ "$CMS_W" -gt 1 ]; then
	ok "status gives the sketch's parameters (width $CMS_W, depth $CMS_D, p $HLL_P)"
else
	bail "status gives the sketch's parameters (got '$CMS_W' '$CMS_D' '$HLL_P')"
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
check "the truth's flows add up to its totals" \
	[ "$(jq '[.flows[].packets] | add' "$WORK/truth.json") $(jq '[.flows[].bytes] | add' "$WORK/truth.json")" = "$sent $sent_bytes" ]
# Count-Min: eps = e / w; N = what was sent.  HyperLogLog: 1.04 / sqrt(m).
BOUND_P=$(jq -n --argjson w "$CMS_W" --argjson n "$sent" '(1 | exp) / $w * $n')
BOUND_B=$(jq -n --argjson w "$CMS_W" --argjson n "$sent_bytes" '(1 | exp) / $w * $n')
RSE=$(jq -n --argjson p "$HLL_P" '1.04 / (pow(2; $p) | sqrt)')
tx_dropped=$(fs_link_stat "$NS_TX" "$VETH_TX" tx dropped)
check "the sending veth dropped nothing (tx dropped $tx_dropped)" [ "$tx_dropped" = 0 ]

# Wait until every window holding test traffic has been closed: two more
# rotations after the last packet sent.
fsd_settle || bail "status after traffic"
cp "$WORK/st.json" "$WORK/status1.json"

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
	jq -rn --slurpfile top "${2:-$WORK/top.json}" --slurpfile truth "$WORK/truth.json" \
		--argjson bp "$BOUND_P" --argjson bb "$BOUND_B" --arg what "$1" '
	def key: "\(.src)|\(.dst)|\(.sport)|\(.dport)|\(.proto)";
	($truth[0].flows | map({(key): .}) | add) as $t |
	($truth[0].flows) as $tf |
	{packets: $bp, bytes: $bb} as $eb |
	$top[0].flows as $got |
	# Parsed tables carry the half-unit their rounding may hide.
	def slack($w): (.slack // {})[$w] // 0;
	if $what == "count" then
		[ $got | length | select(. != 10) | "returned \(.) flows, not 10" ]
	elif $what == "known" then
		[ $got[] | key | select($t[.] == null) | "\(.) is not a flow fs-gen sent" ]
	elif $what == "packets" or $what == "bytes" then
		[ $got[] | . as $f | ($t[$f | key][$what] // 0) as $true | ($f | slack($what)) as $h |
		  select($t[$f | key] == null or
			 $f[$what] < $true - $h or $f[$what] > $true + $eb[$what] + $h) |
		  "\($f | key): \($what) \($f[$what]) not in [\($true), \($true + $eb[$what])]" +
		  (if $h > 0 then " +- \($h)" else "" end) +
		  (if $t[$f | key] == null then " (not a flow fs-gen sent)" else "" end) ]
	elif $what == "share" then
		# share (%) of the span total: [truth, truth + eps N] / N.
		[ $got[] | . as $f | ($t[$f | key].packets // 0) as $true |
		  select($f.share < 100 * $true / $truth[0].total_packets - 0.05 or
			 $f.share > 100 * ($true + $eb.packets) / $truth[0].total_packets + 0.05) |
		  "\($f | key): share \($f.share)% against true \(100 * $true / $truth[0].total_packets)%" ]
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
gap=$(jq '.flows[9].packets - .flows[10].packets' "$WORK/truth.json")
echo "# eps*N = e/$CMS_W * N: $BOUND_P packets, $BOUND_B bytes; true gap between 10th and 11th: $gap packets"
# The daemon's own statement of the bound is checked, never used.
check "top: the daemon's stated error bound is e/w*N, rounded up ($(jq -c .error_bound "$WORK/top.json"))" \
	jqe --argjson bp "$BOUND_P" --argjson bb "$BOUND_B" \
	'(.error_bound.packets - $bp | fabs) <= 1 and (.error_bound.bytes - $bb | fabs) <= 1' "$WORK/top.json"
top_assert count "top returns 10 flows"
top_assert known "every top-10 flow is one fs-gen sent"
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
	within=$(jq -n --argjson r "$RSE" --argjson e "$est" --argjson t "$truth" \
		'(($e - $t) | fabs) <= 3 * $r * $t')
	check "distinct $what $est within 3 standard errors of $truth" [ "$within" = true ]
	check "top reports the same distinct $what as flows over the same span" \
		[ "$(jq ".distinct_$what" "$WORK/top.json")" = "$est" ]
done

# ---------------------------------------------------------------- text
# The tables people read, from the same daemon, parsed back and held to the
# same truth.  Counts print in SI units ("11K", "4.8K", "7.9 MB": one
# decimal below 10, whole from 10 up), so a parsed figure carries the
# half-unit its rounding may hide; plain counts print exactly.
JQ_TEXT='
def num: gsub(","; "") | tonumber;
def si($n; $unit):
  ({"": 1, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18}[$unit | sub("B$"; "")]) as $s |
  ($n | tonumber) as $x |
  {v: ($x * $s), h: (if $s == 1 then 0 elif $x < 10 then 0.05 * $s else 0.5 * $s end)};
def endpoint:
  if startswith("[") then capture("^\\[(?<a>[^]]+)\\]:(?<p>[0-9]+)$")
  else capture("^(?<a>[0-9.]+):(?<p>[0-9]+)$") end | {a, p: (.p | tonumber)};
def within($v; $lo; $hi): $v >= $lo and $v <= $hi;
def line($re): [.[] | capture($re)] | .[0];
'
# top_text FILE: the table rows as top --json flows, with their slack.
top_text() {
	jq -Rn "$JQ_TEXT"'
	[inputs | select(test("^ *[0-9]+  ")) |
	 capture("^ *(?<rank>[0-9]+) +(?<src>\\S+) +(?<dst>\\S+) +(?<proto>[a-z0-9]+) +(?<pn>[0-9.]+)(?<pu>[KMGTPE]?) +(?<bn>[0-9.]+) (?<bu>[KMGTPE]?B) +(?<share>[0-9.]+)%$") |
	 (.src | endpoint) as $s | (.dst | endpoint) as $d |
	 si(.pn; .pu) as $pk | si(.bn; .bu) as $by |
	 {src: $s.a, dst: $d.a, sport: $s.p, dport: $d.p, proto, packets: $pk.v,
	  bytes: $by.v, slack: {packets: $pk.h, bytes: $by.h}, share: (.share | tonumber),
	  rank: (.rank | tonumber)}] | {flows: .}' "$1"
}
# text_check WHAT FILE: the violated properties of one text answer.
text_check() {
	jq -Rsr "$JQ_TEXT"'
	(split("\n")) as $l | $truth[0] as $tr |
	if $what == "top-header" then
		($l | line("^flowsketch top: last [0-9]+ s \\([0-9]+ windows? of [0-9]+ s, ending [0-9:]+\\), (?<p>[0-9,]+) packets, (?<bn>[0-9.]+) (?<bu>[KMGTPE]?B), by packets$")) as $h1 |
		($l | line("^counts are upper bounds, at most \\+(?<p>[0-9,]+) packets \\(\\+(?<bn>[0-9.]+) (?<bu>[KMGTPE]?B)\\) over the truth with probability (?<prob>[0-9.]+)% \\(epsilon (?<eps>[0-9.]+)% of the total\\)$")) as $h2 |
		($l | line("^distinct: (?<flows>[0-9,]+) flows, (?<sources>[0-9,]+) sources, (?<destinations>[0-9,]+) destinations \\(HyperLogLog, ±(?<rse>[0-9.]+)% at 1 sigma\\)$")) as $h3 |
		if $h1 == null or $h2 == null or $h3 == null then ["header lines missing or changed"]
		else
		[ ($h1.p | num | select(. != $tr.total_packets) | "total \(.) packets, sent \($tr.total_packets)"),
		  (si($h1.bn; $h1.bu) | select(within($tr.total_bytes; .v - .h; .v + .h) | not) | "total bytes \(.v) +- \(.h), sent \($tr.total_bytes)"),
		  ($h2.p | num | select((. - $bp | fabs) > 1) | "stated bound +\(.) packets, e/w*N = \($bp)"),
		  (si($h2.bn; $h2.bu) | select(within($bb; .v - .h - 1; .v + .h + 1) | not) | "stated bound +\(.v) bytes, e/w*N = \($bb)"),
		  ($h2.prob | tonumber | select((. - 100 * (1 - (-$d | exp)) | fabs) > 0.05) | "probability \(.)%, 1 - e^-d = \(100 * (1 - (-$d | exp)))%"),
		  ($h2.eps | tonumber | select((. - 100 * (1 | exp) / $w | fabs) > 0.0005) | "epsilon \(.)%, e/w = \(100 * (1 | exp) / $w)%"),
		  ($h3.rse | tonumber | select((. - 100 * $rse | fabs) > 0.005) | "rse \(.)%, 1.04/sqrt(m) = \(100 * $rse)%"),
		  ("flows", "sources", "destinations") as $k |
		  ($h3[$k] | num) as $e | $tr["distinct_" + $k] as $t |
		  select(($e - $t | fabs) > 3 * $rse * $t) | "distinct \($k) \($e), truth \($t)" ]
		end
	elif $what == "flows" then
		($l | line("HyperLogLog p = (?<p>[0-9]+)$")) as $hp |
		[ (if $hp == null or ($hp.p | tonumber) != $p then "header does not say p = \($p)" else empty end),
		  ("flows", "sources", "destinations") as $k |
		  ($l | line("^  \($k) +(?<e>[0-9,]+)  ± (?<r>[0-9.]+)% \\(± (?<a>[0-9,]+) at 1 sigma\\)$")) as $m |
		  if $m == null then "no line for \($k)" else
		  ($m.e | num) as $e | $tr["distinct_" + $k] as $t |
		  (select(($e - $t | fabs) > 3 * $rse * $t) | "distinct \($k) \($e), truth \($t)"),
		  (select(($m.r | tonumber) - 100 * $rse | fabs > 0.005) | "\($k): rse \($m.r)%, 1.04/sqrt(m) = \(100 * $rse)%"),
		  (select(($m.a | num) - $rse * $e | fabs > 1) | "\($k): +- \($m.a) at 1 sigma, rse * estimate = \($rse * $e)")
		  end ]
	elif $what == "status" then
		[ ($l | line("^flowsketchd: +pid (?<pid>[0-9]+), datapath (?<dp>bpf|kfunc), maps pinned in (?<pin>.*)$")) as $m |
		  if $m == null then "no daemon line" else
		  (select(($m.pid | tonumber) != $pid) | "pid \($m.pid), started \($pid)"),
		  (select($m.pin != $pin) | "pinned in \($m.pin), not \($pin)") end,
		  (select($l | any(. == "interfaces:   \($ifname) (ifindex \($ifindex), XDP native)") | not) |
		   "no interfaces line for \($ifname), ifindex \($ifindex), native"),
		  ($l | line("^count-min: +width (?<w>[0-9,]+) x depth (?<d>[0-9]+), epsilon (?<e>[0-9.]+)%, delta (?<dl>[0-9.]+)%, conservative update (on|off)$")) as $m |
		  if $m == null then "no count-min line" else
		  (select(($m.w | num) != $w or ($m.d | tonumber) != $d) | "width \($m.w) depth \($m.d), status --json says \($w), \($d)"),
		  (select(($m.e | tonumber) - 100 * (1 | exp) / $w | fabs > 0.0005) | "epsilon \($m.e)%, e/w = \(100 * (1 | exp) / $w)%"),
		  (select(($m.dl | tonumber) - 100 * (-$d | exp) | fabs > 0.005) | "delta \($m.dl)%, e^-d = \(100 * (-$d | exp))%") end,
		  ($l | line("^hyperloglog: +precision p = (?<p>[0-9]+) \\((?<m>[0-9,]+) registers per sketch\\)$")) as $m |
		  if $m == null then "no hyperloglog line" else
		  select(($m.p | tonumber) != $p or ($m.m | num) != pow(2; $p)) | "p \($m.p), \($m.m) registers; want \($p), 2^\($p)" end,
		  ($l | line("^totals: +(?<p>[0-9,]+) packets, (?<bn>[0-9.]+) (?<bu>[KMGTPE]?B) in finished windows$")) as $m |
		  if $m == null then "no totals line" else
		  (select(($m.p | num) != $tr.total_packets) | "totals \($m.p) packets, sent \($tr.total_packets)"),
		  (si($m.bn; $m.bu) | select(within($tr.total_bytes; .v - .h; .v + .h) | not) | "totals \(.v) +- \(.h) bytes, sent \($tr.total_bytes)") end,
		  ($l | line("^datapath: +(?<rx>[0-9,]+) frames seen, (?<sk>[0-9,]+) sketched, (?<nonip>[0-9,]+) not IP, (?<frag>[0-9,]+) fragments$")) as $m |
		  if $m == null then "no datapath line" else
		  select(($m.rx | num) != $rx or ($m.sk | num) != $sk or $m.nonip != "0" or $m.frag != "0") |
		  "datapath \($m.rx) seen, \($m.sk) sketched, \($m.nonip) not IP, \($m.frag) fragments; want \($rx), \($sk), 0, 0" end,
		  (select($l | any(test("^malformed: +0$")) | not) | "malformed is not 0"),
		  (select($l | any(test("^reports: +[0-9,]+ heavy-hitter reports, 0 dropped \\(ring buffer full\\), 0 update errors$")) | not) |
		   "reports line missing, or reports dropped or update errors") ]
	else ["unknown check"] end | .[]' \
		--slurpfile truth "$WORK/truth.json" --arg what "$1" \
		--argjson bp "$BOUND_P" --argjson bb "$BOUND_B" --argjson rse "$RSE" \
		--argjson w "$CMS_W" --argjson d "$CMS_D" --argjson p "$HLL_P" \
		--argjson pid "${DAEMON_PID:-0}" --arg pin "$PIN_DIR" --arg ifname "$VETH_RX" \
		--argjson ifindex "$(ip -n "$NS_RX" -j link show dev "$VETH_RX" | jq '.[0].ifindex')" \
		--argjson rx "${3:-0}" --argjson sk "${4:-0}" "$2" 2>&1
}
text_assert() { # text_assert WHAT FILE DESCRIPTION [RX SKETCHED]
	local out
	out=$(text_check "$1" "$2" "${@:4}")
	if [ -z "$out" ]; then ok "$3"; else not_ok "$3"; echo "$out" | diag; sed 's/^/  | /' "$2" | diag; fi
}

if cli top -n 10 --once --span "$SPAN" >"$WORK/top.txt" 2>"$WORK/top.err"; then
	ok "top -n 10 --once --span $SPAN (text) answers"
else
	diag <"$WORK/top.err"
	not_ok "top -n 10 --once --span $SPAN (text) answers"
fi
top_text "$WORK/top.txt" >"$WORK/top-text.json" 2>&1 || diag <"$WORK/top-text.json"
text_assert top-header "$WORK/top.txt" "top (text) header: totals sent, bound e/w*N, probability 1-e^-d, distinct within 3 rse"
top_text_assert() {
	local out
	out=$(top_check "$1" "$WORK/top-text.json")
	if [ -z "$out" ]; then ok "$2"; else not_ok "$2"; echo "$out" | diag; sed 's/^/  | /' "$WORK/top.txt" | diag; fi
}
top_text_assert count "top (text) has 10 rows"
top_text_assert known "top (text): every row is a flow fs-gen sent"
top_text_assert set "top (text) rows are the true top-10"
top_text_assert order "top (text) order respects true counts that differ by more than the bound"
top_text_assert packets "top (text): every packet count in [truth, truth + eps*N], give or take its rounding"
top_text_assert bytes "top (text): every byte count in [truth, truth + eps*N], give or take its rounding"
top_text_assert share "top (text): every share in [truth, truth + eps*N] / N"
check "top (text) lists the flows of top --json, ranked 1..10 in the same order" \
	jqe -n --slurpfile a "$WORK/top-text.json" --slurpfile b "$WORK/top.json" '
	def key: "\(.src)|\(.dst)|\(.sport)|\(.dport)|\(.proto)";
	($a[0].flows | map(key)) == ($b[0].flows | map(key)) and
	($a[0].flows | map(.rank)) == [range(1; ($b[0].flows | length) + 1)]'

if cli flows --span "$SPAN" >"$WORK/flows.txt" 2>"$WORK/flows.err"; then
	ok "flows --span $SPAN (text) answers"
else
	diag <"$WORK/flows.err"
	not_ok "flows --span $SPAN (text) answers"
fi
text_assert flows "$WORK/flows.txt" "flows (text): p, and each distinct count within 3 rse of the truth, with its error"

if cli status >"$WORK/status.txt" 2>"$WORK/status.err"; then
	ok "status (text) answers"
else
	diag <"$WORK/status.err"
	not_ok "status (text) answers"
fi
rx_now=$(( $(jq .counters.rx "$WORK/status0.json") + d_link ))
sk_now=$(( $(jq .counters.sketched "$WORK/status0.json") + sent ))
text_assert status "$WORK/status.txt" \
	"status (text): pid, pins, interface, parameters, totals sent, frames seen, nothing malformed or dropped" \
	"$rx_now" "$sk_now"

# ---------------------------------------------------------------- bpftool
if bpftool -j map dump pinned "$PIN_DIR/ctl" >"$WORK/ctl.json" 2>&1; then
	seq=$(jq '[.. | objects | select(has("window_seq")) | .window_seq][0] // "none"' "$WORK/ctl.json")
	check "bpftool shows ctl with its BTF field window_seq ($seq)" \
		bash -c "jq -e '[.. | objects | select(has(\"window_seq\"))] | length > 0 and (.[0].window_seq > 0)' '$WORK/ctl.json' >/dev/null"
else
	diag <"$WORK/ctl.json"
	not_ok "bpftool map dump pinned $PIN_DIR/ctl"
fi
check "bpftool shows hot as BTF-typed rx, sketched and tagged slot totals per CPU" \
	bash -c "bpftool -j map dump pinned '$PIN_DIR/hot' | jq -e '[.. | objects | select(has(\"rx\") and has(\"sketched\"))] | length > 0 and ([.. | objects | select(has(\"seq\") and has(\"packets\") and has(\"bytes\"))] | length > 0)' >/dev/null"
check "bpftool shows cms with BTF" \
	bash -c "bpftool -j map show pinned '$PIN_DIR/cms' | jq -e '.btf_id > 0' >/dev/null"
# The legacy byte registers (sketch_kind.h, "Legacy maps"): a fresh
# datapath keeps fs_hll pinned, under its name and BTF, at one 32 KiB
# element, which nothing writes.
check "bpftool shows hll, the legacy byte registers, as fs_hll with BTF at one 32 KiB element ($(bpftool -j map show pinned "$PIN_DIR/hll" 2>/dev/null | jq -c '[.name, .max_entries, .bytes_value]'))" \
	bash -c "bpftool -j map show pinned '$PIN_DIR/hll' | jq -e '.name == \"fs_hll\" and .btf_id > 0 and .max_entries == 1 and .bytes_value == 32768' >/dev/null"
# status's datapath memory a CPU is what the kernel says the per-CPU maps
# hold: entries times value bytes of each, summed.
pcpu=0
for pin in cms cms_narrow hll hll_packed prefix spread sample hot stats; do
	b=$(bpftool -j map show pinned "$PIN_DIR/$pin" 2>/dev/null | jq '.max_entries * .bytes_value')
	pcpu=$((pcpu + ${b:-0}))
done
check "status: datapath bytes a CPU are the pinned per-CPU maps' entries x value bytes ($(jq .memory.datapath_bytes_per_cpu "$WORK/status0.json") = $pcpu)" \
	jqe --argjson n "$pcpu" '.memory.datapath_bytes_per_cpu == $n' "$WORK/status0.json"

# ---------------------------------------------------------------- shutdown
kill -TERM "$DAEMON_PID"
rc=0
wait "$DAEMON_PID" || rc=$?
DAEMON_PID=""
check "flowsketchd exits 0 on SIGTERM (got $rc)" [ "$rc" = 0 ]
xdp=$(ip -n "$NS_RX" -j link show dev "$VETH_RX" | jq '.[0].xdp // empty')
check "XDP detached from $VETH_RX after exit" [ -z "$xdp" ]
finish
