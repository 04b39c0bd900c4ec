#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# cli.sh - the `flowsketch` command line without a real daemon.
#
# Rendering is checked against canned daemon answers served by
# tools/fs-fake-daemon: every expected string below follows from the
# numbers in those answers and the CLI's documented formats (SI units for
# traffic, grouped digits, addresses with ports, IPv6 in brackets), so a
# wrong field, unit or rounding fails.  The requests the CLI sends are
# logged by the fake and checked against the protocol (user/lib/protocol.h).
# Error paths: every bad argument must give exit 2, one line on stderr and
# nothing on stdout; daemon failures exit 1 with one line.  `size` rows are
# checked against the published tables (the seeds text), to the precision
# printed there.
# Output: TAP ("ok N - ..."), diagnostics as "# ..." lines.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/fake_daemon.sh

tap_on_not_ok() {
	[ -s "$T/out" ] && sed 's/^/# stdout: /' "$T/out" | head -40
	[ -s "$T/err" ] && sed 's/^/# stderr: /' "$T/err" | head -10
}

# run ARGS...: the CLI's stdout, stderr and status in $T/out, $T/err, $rc.
run() { "$CLI" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
out_has() { grep -qE -- "$1" "$T/out"; }
err_has() { grep -qF -- "$1" "$T/err"; }
one_err_line() { [ "$(wc -l <"$T/err")" -eq 1 ]; }
no_out() { [ ! -s "$T/out" ]; }

fake_test cli-test

# serve NAME FILE [FAKE OPTIONS...]: a fake daemon on $T/NAME.sock
# answering FILE, logging requests to $T/NAME.log.
serve() { fake_serve "$@" || { echo "# fake daemon on $T/$1.sock did not start"; return 1; }; }

# usage_error DESC ARGS...: exit 2, exactly one stderr line, empty stdout.
usage_error() {
	local d=$1; shift
	run "$@"
	if [ "$rc" -eq 2 ] && one_err_line && no_out; then
		ok "usage error: $d"
	else
		echo "# exit status $rc"
		not_ok "usage error: $d"
	fi
}

# runtime_error DESC TEXT ARGS...: exit 1, one stderr line containing TEXT,
# empty stdout.
runtime_error() {
	local d=$1 text=$2; shift 2
	run "$@"
	if [ "$rc" -eq 1 ] && one_err_line && err_has "$text" && no_out; then
		ok "$d"
	else
		echo "# exit status $rc, wanted 1 and '$text' on stderr"
		not_ok "$d"
	fi
}

# served_error NAME DESC TEXT ARGS...: runtime_error on a fake daemon
# answering $T/NAME.json on $T/NAME.sock.
served_error() {
	serve "$1" "$T/$1.json" || exit 1
	runtime_error "$2" "$3" --socket "$T/$1.sock" "${@:4}"
}

# ---------------------------------------------------------------- arguments
usage_error "no command" 
usage_error "unknown command" frobnicate
usage_error "unknown global option" --bogus top
usage_error "--socket without a value" --socket
usage_error "--timeout 0" --timeout 0 status
usage_error "--timeout with a bad unit" --timeout 5x status
usage_error "--timeout longer than a day" --timeout 25h status
usage_error "unknown top option" top --frob
usage_error "top -n abc" top -n abc
usage_error "top -n 0" top -n 0
usage_error "top -n -3" top -n -3
usage_error "top -n without a value" top -n
usage_error "top negative span" top --span -5
usage_error "top span 0" top --span 0
usage_error "top span with a bad unit" top --span 5x
usage_error "top unknown sort key" top --sort flows
usage_error "top stray argument" top extra
usage_error "top unknown direction" top --direction sideways
usage_error "top --by a KEY of neither side" top --by foo
usage_error "top --by an IPv4 length the sketch does not keep" top --by src4/23
usage_error "top --by --sort connections" top --by src --sort connections
usage_error "spread without --by" spread
usage_error "spread --by a prefix" spread --by src4/24
usage_error "spread -n 0" spread --by src -n 0
usage_error "flows unknown direction" flows --direction up
usage_error "flows span 0" flows --span 0
usage_error "flows unknown option" flows -x
usage_error "status stray argument" status now
usage_error "size --hll-p out of range" size --hll-p 30
usage_error "size --cms-epsilon 0" size --cms-epsilon 0
usage_error "size --cms-epsilon 1" size --cms-epsilon 1
usage_error "size --cms-epsilon too small for 2^22 columns" size --cms-epsilon 1e-9
usage_error "size --cms-delta alone" size --cms-delta 0.01
usage_error "size --bloom-n without --bloom-p" size --bloom-n 1000
usage_error "size --bloom-p 2" size --bloom-n 1000 --bloom-p 2
usage_error "size --items not a number" size --cms-epsilon 0.01 --items lots
usage_error "size --blocklist-max 0" size --blocklist-max 0
usage_error "size --blocklist of a missing file" size --blocklist "$T/no-such-list"

run top -n abc
check "the -n error names the bad value" err_has "'abc'"
run top --sort flows
check "the --sort error names the bad key" err_has "'flows'"
run top --direction sideways
check "the --direction error names the bad value" err_has "'sideways'"
run top --once=3
check "a value given to a flag says the flag takes none" \
	eval '[ "$rc" -eq 2 ] && one_err_line && err_has "option --once takes no value"'

for cmd in "" top spread flows status size; do
	# shellcheck disable=SC2086
	run $cmd --help
	check "--help for '${cmd:-flowsketch}' prints usage and exits 0" \
		eval '[ "$rc" -eq 0 ] && out_has "^Usage: flowsketch" && [ ! -s "$T/err" ]'
done

# ------------------------------------------------------------ missing daemon
runtime_error "missing daemon: the precise message" \
	"cannot connect to flowsketchd at $T/none.sock: No such file or directory (is the daemon running?)" \
	--socket "$T/none.sock" top --once

# ------------------------------------------------------------------- top
cat >"$T/top.json" <<'EOF'
{"span_seconds":10, "windows":2, "window_seconds":5, "window_end":1700000000,
 "sort":"packets", "total_packets":1234567, "total_bytes":987654321,
 "error_bound":{"epsilon":0.00066, "delta":0.0067, "packets":815, "bytes":651852},
 "distinct_flows":4989, "distinct_sources":3393, "distinct_destinations":1536,
 "relative_standard_error":0.0081, "hll_precision":14,
 "flows":[
  {"src":"10.0.0.1", "dst":"10.0.0.2", "sport":40000, "dport":80,
   "proto":"tcp", "proto_num":6, "family":4,
   "packets":600000, "bytes":800000000, "share":0.486},
  {"src":"2001:db8::1", "dst":"2001:db8::2", "sport":5353, "dport":443,
   "proto":"udp", "proto_num":17, "family":6,
   "packets":1500, "bytes":2100000, "share":0.0012},
  {"src":"10.0.0.3", "dst":"10.0.0.4", "sport":0, "dport":2048,
   "proto":"icmp", "proto_num":1, "family":4,
   "packets":999, "bytes":98000, "share":0.0008}]}
EOF
serve top "$T/top.json" || exit 1
S=(--socket "$T/top.sock")

run "${S[@]}" top --once -n 3 --sort packets --span 1m
check "top --once exits 0" eval '[ "$rc" -eq 0 ] && [ ! -s "$T/err" ]'
check "top header: span, windows, totals" \
	out_has "last 10 s \(2 windows of 5 s.*1,234,567 packets, 988 MB"
check "top header: the error bound in words" \
	out_has "counts are upper bounds, at most \+815 packets \(\+652 KB\) over the truth with probability 99\.3%"
check "top header: distinct flows, sources, destinations with their error" \
	out_has "distinct: 4,989 flows, 3,393 sources, 1,536 destinations \(HyperLogLog, .0\.81% at 1 sigma\)"
check "top row 1: IPv4 endpoints with ports, SI units, share in %" \
	out_has "^ *1 +10\.0\.0\.1:40000 +10\.0\.0\.2:80 +tcp +600K +800 MB +48\.6%$"
check "top row 2: IPv6 endpoints in brackets" \
	out_has "^ *2 +\[2001:db8::1\]:5353 +\[2001:db8::2\]:443 +udp +1\.5K +2\.1 MB +0\.1%$"
check "top row 3: ICMP without ports, type/code from dport" \
	out_has "^ *3 +10\.0\.0\.3 +10\.0\.0\.4 +icmp 8/0 +999 +98 KB +0\.1%$"
check "top lists rows in the daemon's order" \
	eval '[ "$(awk "/^ *[0-9]+  /{ print \$2 }" "$T/out" | tr "\n" " ")" = "10.0.0.1:40000 [2001:db8::1]:5353 10.0.0.3 " ]'
check "top request: cmd, n, sort and span in seconds" \
	eval 'tail -1 "$T/top.log" | jq -e ".cmd == \"top\" and .n == 3 and .sort == \"packets\" and .span == 60 and (keys | length) == 4" >/dev/null'

run "${S[@]}" top --json --sort bytes
check "top --json is the daemon's object, exact integers" \
	eval '[ "$rc" -eq 0 ] && jq -e ".flows[0].bytes == 800000000 and .total_packets == 1234567 and (.flows | length) == 3" "$T/out" >/dev/null'
check "top without --span sends no span (the daemon's one window)" \
	eval 'tail -1 "$T/top.log" | jq -e ".sort == \"bytes\" and .n == 10 and has(\"span\") == false" >/dev/null'
run "${S[@]}" top --json --direction out
check "top --direction out asks for it" \
	eval 'tail -1 "$T/top.log" | jq -e ".direction == \"out\"" >/dev/null'

# Ports only where the datapath keys them (TCP, UDP); ICMP type/code only
# for the family's own ICMP.
jq '.flows = [
  {src:"10.0.0.5", dst:"10.0.0.6", sport:0, dport:0, proto:"sctp",
   proto_num:132, family:4, packets:10, bytes:1000, share:0.5},
  {src:"2001:db8::5", dst:"2001:db8::6", sport:0, dport:0, proto:"icmp",
   proto_num:1, family:6, packets:9, bytes:900, share:0.45},
  {src:"2001:db8::7", dst:"2001:db8::8", sport:0, dport:33024, proto:"icmpv6",
   proto_num:58, family:6, packets:1, bytes:100, share:0.05}]' \
	"$T/top.json" >"$T/portless.json"
serve portless "$T/portless.json" || exit 1
run --socket "$T/portless.sock" top --once
check "top: SCTP (keyed without ports) prints bare addresses" \
	out_has "^ *1 +10\.0\.0\.5 +10\.0\.0\.6 +sctp +10 "
check "top: ICMPv4 inside IPv6 has no type/code" \
	out_has "^ *2 +2001:db8::5 +2001:db8::6 +icmp +9 "
check "top: ICMPv6 type/code from dport (129/0, echo reply)" \
	out_has "^ *3 +2001:db8::7 +2001:db8::8 +icmpv6 129/0 +1 "

# Without --once: one block per window until SIGINT, exit 0; no screen
# clearing when stdout is not a terminal.  window_end is long past, so the
# CLI falls back to sleeping one window (1 s) between blocks.
jq '.window_seconds = 1' "$T/top.json" >"$T/top1.json"
serve top1 "$T/top1.json" || exit 1
timeout --preserve-status -s INT 2.5 "$CLI" --socket "$T/top1.sock" top >"$T/out" 2>"$T/err"
rc=$?
blocks=$(grep -c "^flowsketch top:" "$T/out")
check "top redraws every window until SIGINT, then exits 0 ($blocks blocks)" \
	eval '[ "$rc" -eq 0 ] && [ "$blocks" -ge 2 ] && [ "$blocks" -le 4 ]'
check "top does not clear the screen when stdout is not a tty" \
	eval '! grep -q $'"'"'\033'"'"' "$T/out"'

# On a terminal (script(1) provides one) top is the full-screen view
# (top_screen.sh drives it); one ncurses cannot drive (no TERM) gets the
# plain view, each block after clearing the screen.
if command -v script >/dev/null; then
	TERM=xterm timeout --preserve-status -s INT 1.5 \
		script -qec "$CLI --socket $T/top1.sock top" /dev/null >"$T/out" 2>"$T/err"
	check "top on a tty: the full-screen view (alternate screen, the table)" \
		eval 'grep -q $'"'"'\033\[?1049h'"'"' "$T/out" && grep -aq "flowsketch top:" "$T/out"'
	env -u TERM timeout --preserve-status -s INT 1.5 \
		script -qec "$CLI --socket $T/top1.sock top" /dev/null >"$T/out" 2>"$T/err"
	check "top on a tty ncurses cannot drive (no TERM): plain blocks, each after clearing the screen" \
		eval 'grep -q $'"'"'^\033\[H\033\[2Jflowsketch top:'"'"' "$T/out"'
fi

# Right after the daemon starts no window has finished: say so, no table.
jq '.windows = 0 | .span_seconds = 0 | .flows = []' "$T/top.json" >"$T/top0.json"
serve top0 "$T/top0.json" || exit 1
run --socket "$T/top0.sock" top --once
check "top before the first window: a sentence, no table" \
	eval '[ "$rc" -eq 0 ] && out_has "^flowsketch top: no 5 s window has finished yet$" && [ "$(wc -l <"$T/out")" -eq 1 ]'

# ------------------------------------------------- top --by KEY, spread
# Answers shaped as protocol.h's "prefixes" and "spread", their bounds
# worked from the numbers: N = 100,000 packets, w = 1024, d = 2, V = 8,
# z = 3: C = ceil(4 e N / w) = 1,062; for E = 40,000, U = ceil(3 sqrt(7 E))
# = 1,588, O = C + U = 2,650, E - O = 37,350; for E = 800, U = 225,
# O = 1,287, E - O < 0 so 0; bytes: ceil(8 e B / w) = 1,359,141 for B =
# 64 MB.  1 - e^-2 - Phi(-3) = 86.3 %.  Spread: F =
# 50,000, w = 512: S = ceil(e F / w) = 266; sigma(5012.4) =
# sqrt(1.04^2 / 90 + 7 / 5012.4) = 11.6 %, low floor(5012.4 / (1 + 3 sigma)
# - S) = 3,453.
cat >"$T/prefixes.json" <<'EOF'
{"span_seconds":10, "windows":2, "window_seconds":5, "window_end":1700000000,
 "window_start":1699999990, "window_start_ns":1699999990000000000,
 "window_end_ns":1700000000000000000,
 "direction":"both", "by":"src4/24", "sort":"packets",
 "total_packets":100000, "total_bytes":64000000,
 "error_bound":{"z":3, "scale":8, "collisions":1062, "bytes_collisions":1359141,
                "collisions_probability":0.1353352832, "depth":2, "width":1024},
 "prefixes":[
  {"prefix":"198.51.100.0/24", "packets":40000, "bytes":25600000, "share":0.4,
   "packets_low":37350, "error_bound":{"packets_over":2650, "packets_under":1588}},
  {"prefix":"203.0.113.0/24", "packets":800, "bytes":51200, "share":0.008,
   "packets_low":0, "error_bound":{"packets_over":1287, "packets_under":225}}]}
EOF
serve prefixes "$T/prefixes.json" || exit 1
run --socket "$T/prefixes.sock" top --by src4/24 -n 2 --span 10
check "top --by exits 0, one table (no redraw loop)" \
	eval '[ "$rc" -eq 0 ] && [ ! -s "$T/err" ] && [ "$(grep -c "^flowsketch top" "$T/out")" -eq 1 ]'
check "top --by header: the key, span, totals" \
	out_has "^flowsketch top --by src4/24: last 10 s \(2 windows of 5 s, ending [0-9:]{8}\), 100,000 packets, 64 MB, by packets$"
check "top --by header: the stated error (scale, probability, z, collisions)" \
	eval 'out_has "one of 8 levels sampled.* probability about 86\.3%" && out_has "z = 3 .*at most 1,062 packets and 1\.4 MB, more with probability 13\.53%"'
check "top --by row 1: prefix, packets, packets ≥, -over/+under, bytes, share" \
	out_has "^1 +198\.51\.100\.0/24 +40K +37K +-2\.7K/\+1\.6K +26 MB +40\.0%$"
check "top --by row 2: a lower end of 0" \
	out_has "^2 +203\.0\.113\.0/24 +800 +0 +-1\.3K/\+225 +51 KB +0\.8%$"
check "top --by columns line up under the ≥ title (widths in characters)" \
	eval '[ "$(grep "^#" "$T/out" | awk "{ print index(\$0, \"≥\") }")" -gt 0 ] &&
	      [ "$(grep "^#" "$T/out" | sed "s/≥/>/" | awk "{ print length(\$0) }")" = "$(grep "^1 " "$T/out" | awk "{ print length(\$0) }")" ]'
check "top --by request: cmd prefixes, by, n, sort, span" \
	eval 'tail -1 "$T/prefixes.log" | jq -e ". == {\"cmd\":\"prefixes\",\"by\":\"src4/24\",\"n\":2,\"sort\":\"packets\",\"span\":10}" >/dev/null'
# --by implies --once: on a terminal too, one table and no full screen.
if command -v script >/dev/null; then
	TERM=xterm timeout 5 script -qec "$CLI --socket $T/prefixes.sock top --by src4/24" \
		/dev/null >"$T/out" 2>"$T/err"
	rc=$?
	check "top --by on a tty: one table, no full-screen view, exit 0" \
		eval '[ "$rc" -eq 0 ] && [ "$(grep -ac "^flowsketch top --by src4/24:" "$T/out")" -eq 1 ] &&
		      ! grep -q $'"'"'\033\[?1049h'"'"' "$T/out"'
fi
run --socket "$T/prefixes.sock" top --by dst6/48 --sort bytes --direction in --json
check "top --by --json: the daemon's object as is, the request with sort and direction" \
	eval '[ "$rc" -eq 0 ] && jq -e ".prefixes[0].packets_low == 37350" "$T/out" >/dev/null &&
	      tail -1 "$T/prefixes.log" | jq -e ".by == \"dst6/48\" and .sort == \"bytes\" and .direction == \"in\" and .n == 10" >/dev/null'
jq 'del(.prefixes[1].packets_low)' "$T/prefixes.json" >"$T/prefixes-bad.json"
served_error prefixes-bad "top --by: an entry without packets_low is refused, naming it" \
	'"packets_low"' top --by src4/24
jq '.prefixes[0].packets_low = 40001' "$T/prefixes.json" >"$T/prefixes-low.json"
served_error prefixes-low "top --by: a lower end above the estimate is refused" \
	"198.51.100.0/24 at 40000 packets, at least 40001" top --by src4/24

cat >"$T/spread.json" <<'EOF'
{"span_seconds":10, "windows":2, "window_seconds":5, "window_end":1700000000,
 "window_start":1699999990, "window_start_ns":1699999990000000000,
 "window_end_ns":1700000000000000000,
 "direction":"in", "by":"dst", "distinct_flows":50000,
 "error_bound":{"z":3, "sharing":266, "sharing_probability":0.1353352832,
                "sample_rate":8, "registers":90, "depth":2, "width":512},
 "spreaders":[
  {"dst":"192.0.2.7", "distinct":5012.4, "error":0.11582, "distinct_low":3453},
  {"dst":"2001:db8::1", "distinct":120, "error":0.26524, "distinct_low":0}]}
EOF
serve spread "$T/spread.json" || exit 1
run --socket "$T/spread.sock" spread --by dst --direction in -n 5
check "spread exits 0" eval '[ "$rc" -eq 0 ] && [ ! -s "$T/err" ]'
check "spread header: the key, span, distinct flows, direction" \
	out_has "^flowsketch spread --by dst: last 10 s \(2 windows of 5 s, ending [0-9:]{8}\), 50,000 distinct flows, destinations by distinct sources, received only$"
check "spread header: the error's terms (registers, sampling, z, sharing, probability)" \
	eval 'out_has "HyperLogLog of 90 registers, 1 in 8 peers sampled" && out_has "at z = 3 and less up to 266 peers .*probability 13\.53%"'
check "spread row 1: destination, distinct, ±error, distinct ≥" \
	out_has "^1 +192\.0\.2\.7 +5,012 +±11\.6% +3,453$"
check "spread row 2: IPv6, a lower end of 0" \
	out_has "^2 +2001:db8::1 +120 +±26\.5% +0$"
check "spread request: cmd spread, by, n, direction" \
	eval 'tail -1 "$T/spread.log" | jq -e ". == {\"cmd\":\"spread\",\"by\":\"dst\",\"n\":5,\"direction\":\"in\"}" >/dev/null'
run --socket "$T/spread.sock" spread --by src --json
check "spread --json: the daemon's object as is" \
	eval '[ "$rc" -eq 0 ] && jq -e ".spreaders[0].distinct_low == 3453" "$T/out" >/dev/null'
jq '.by = "src"' "$T/spread.json" >"$T/spread-key.json"
served_error spread-key "spread: entries without the key the answer is by are refused" \
	'"src"' spread --by src
runtime_error "an answer to spread is not taken for one to prefixes" \
	'"sort"' --socket "$T/spread.sock" top --by src

# ----------------------------------------------------------------- flows
cat >"$T/flows.json" <<'EOF'
{"span_seconds":5, "windows":1, "distinct_flows":12345,
 "distinct_sources":678, "distinct_destinations":9,
 "relative_standard_error":0.008125, "hll_precision":14}
EOF
serve flows "$T/flows.json" || exit 1
run --socket "$T/flows.sock" flows --span 5
check "flows exits 0" eval '[ "$rc" -eq 0 ] && [ ! -s "$T/err" ]'
# 12345 * 0.008125 = 100.3; 678 * 0.008125 = 5.5 -> 6; 9 * 0.008125 -> 0
check "flows: distinct flows with relative and absolute error" \
	out_has "^ +flows +12,345 +± 0\.81% \(± 100 at 1 sigma\)$"
check "flows: distinct sources" \
	out_has "^ +sources +678 +± 0\.81% \(± 6 at 1 sigma\)$"
check "flows: distinct destinations" \
	out_has "^ +destinations +9 +± 0\.81% \(± 0 at 1 sigma\)$"
check "flows header: span, precision, 2-sigma error" \
	eval 'out_has "last 5 s \(1 window\), HyperLogLog p = 14" && out_has "±1\.63% at 2 sigma"'
check "flows request" \
	eval 'tail -1 "$T/flows.log" | jq -e ". == {\"cmd\":\"flows\",\"span\":5}" >/dev/null'
run --socket "$T/flows.sock" flows --json
check "flows --json parses" \
	eval '[ "$rc" -eq 0 ] && jq -e ".distinct_flows == 12345" "$T/out" >/dev/null'

# ---------------------------------------------------------------- status
cat >"$T/status.json" <<'EOF'
{"pid":4242, "pin_dir":"/sys/fs/bpf/flowsketch", "datapath":"bpf",
 "adopted":true, "keep":true, "state_dir":"/run/flowsketch/flowsketch",
 "windows_restored":57, "windows_stored":80, "windows_store_errors":1,
 "state_dir_usable":true, "journal_errors":0,
 "interfaces":[{"name":"veth0", "state":"attached", "ifindex":7,
                "xdp_mode":"native", "reattached":0},
               {"name":"veth1", "state":"attached", "ifindex":9,
                "xdp_mode":"generic", "reattached":1},
               {"name":"veth2", "state":"gone", "ifindex":0,
                "xdp_mode":"generic", "reattached":2},
               {"name":"veth3", "state":"failed", "ifindex":12,
                "xdp_mode":"generic", "reattached":0,
                "error":"Device or resource busy"}],
 "window_seconds":5, "history_seconds":300, "windows_kept":60,
 "params":{"cms_width":4096, "cms_depth":5, "epsilon":0.000663,
           "delta":0.0067, "conservative":false, "hll_precision":14,
           "hll_relative_standard_error":0.008125},
 "memory":{"datapath_bytes_per_cpu":655360, "datapath_bytes":1310720,
           "history_bytes":31457280, "history_bytes_max":2147483648,
           "sketch_lines_per_packet":8, "fixed_lines_per_packet":2,
           "packet_bytes_per_cpu":121244},
 "totals":{"packets":5000000, "bytes":3500000000},
 "counters":{"rx":5000010, "sketched":5000000, "non_ip":4, "fragments":17,
             "malformed":{"trunc_eth":0, "trunc_ipv4":3, "bad_ihl":0,
                          "bad_tcp_doff":2},
             "malformed_total":5, "reports":321, "reports_dropped":2,
             "update_errors":0, "windows_finished":12, "windows_lost":0,
             "rotations_postponed":0, "rotations_late":1,
             "rotation_late_max_us":12500, "clients_refused":0,
             "client_timeouts":3}}
EOF
serve status "$T/status.json" || exit 1
run --socket "$T/status.sock" status
check "status exits 0" eval '[ "$rc" -eq 0 ] && [ ! -s "$T/err" ]'
check "status: daemon, datapath, pin dir" \
	out_has "pid 4242, datapath bpf, maps pinned in /sys/fs/bpf/flowsketch"
check "status: adoption, windows read back and stored, --keep" \
	out_has "^restarts: +adopted the pinned datapath; 57 windows read back, 80 stored in /run/flowsketch/flowsketch \(1 could not be\); a stop keeps it all \(--keep\)$"
check "status: interfaces and XDP mode" \
	out_has "veth0 \(ifindex 7, XDP native\), veth1 \(ifindex 9, XDP generic, re-attached 1 time\)"
check "status: a gone interface is not counted" \
	out_has "veth2 \(gone, not counted, re-attached 2 times\)"
check "status: a failed attach says why" \
	out_has "veth3 \(ifindex 12, failed: Device or resource busy, not counted\)"
check "status: window and history" \
	out_has "5 s each, history 300 s \(60 windows kept\)"
check "status: rotations, lost and late ones, with the worst lateness" \
	out_has "^rotations: +12 windows closed, 0 lost, 0 put off, 1 late \(10 ms or more; latest by at most 12\.5 ms\)$"
check "status: cache lines a packet touches" \
	out_has "^per packet: +8 cache lines random per flow \(d Count-Min cells, 3 HyperLogLog registers\), 2 the same for all$"
check "status: the working set a packet can touch (binary units)" \
	out_has "^working set: +118 KiB per CPU a packet can touch "
check "status: clients refused and dropped" \
	out_has "^clients: +0 refused \(too many at once\), 3 dropped at their deadline$"
check "status: Count-Min parameters" \
	out_has "width 4,096 x depth 5, epsilon 0\.066%, delta 0\.67%, conservative update off"
check "status: Count-Min bound in words" \
	eval 'out_has "never below the truth, and above it by at most 0\.066% of" && out_has "probability 99\.3%"'
check "status: HyperLogLog precision and error" \
	eval 'out_has "p = 14 \(16,384 registers" && out_has "±0\.81% at 1 sigma"'
check "status: memory per CPU, total, history (binary units)" \
	out_has "640 KiB per CPU in the datapath, 1\.3 MiB on all CPUs, 30 MiB of history \(at most 2 GiB\)"
check "status: totals" out_has "5,000,000 packets, 3\.5 GB"
check "status: datapath counters" \
	out_has "5,000,010 frames seen, 5,000,000 sketched, 4 not IP, 17 fragments"
check "status: only the non-zero malformed reasons" \
	eval 'out_has "malformed: +5 \(trunc_ipv4 3, bad_tcp_doff 2\)$"'
check "status: reports and dropped reports" \
	out_has "321 heavy-hitter reports, 2 dropped"
check "status request" \
	eval 'tail -1 "$T/status.log" | jq -e ". == {\"cmd\":\"status\"}" >/dev/null'
run --socket "$T/status.sock" status --json
check "status --json parses, slashes unescaped" \
	eval '[ "$rc" -eq 0 ] && jq -e ".params.cms_width == 4096" "$T/out" >/dev/null && grep -q "\"/sys/fs/bpf/flowsketch\"" "$T/out"'

# ---------------------------------------------------------- daemon errors
echo '{"error":"span 900 s is more than the 300 s of history kept"}' >"$T/error.json"
serve error "$T/error.json" || exit 1
for cmd in "top --once" flows status; do
	# shellcheck disable=SC2086
	runtime_error "$cmd: the daemon's error sentence, exit 1" \
		"span 900 s is more than the 300 s of history kept" \
		--socket "$T/error.sock" $cmd
done

printf '{not json' >"$T/garbage.json"
served_error garbage "malformed JSON from the socket" "malformed JSON" status

printf '{"span_seconds":5, "windows"' >"$T/cut.json"
served_error cut "truncated JSON from the socket" "ends in the middle" flows

: >"$T/empty.json"
served_error empty "no answer at all" "without answering" flows

jq 'del(.distinct_sources)' "$T/flows.json" >"$T/partial.json"
served_error partial "an answer without a field the table needs" \
	'no number "distinct_sources"' flows

jq '.flows[1].packets = -5' "$T/top.json" >"$T/negative.json"
served_error negative "a negative count is refused before printing any row" \
	'no non-negative integer "packets"' top --once

jq '.window_end = 9223372036854775807' "$T/top.json" >"$T/farend.json"
served_error farend "a window_end no calendar can show is refused, not a crash" \
	'window_end that is not a time' top --once

jq '.window_seconds = 18446744073709551615' "$T/top.json" >"$T/hugewin.json"
served_error hugewin "a window longer than a day is refused" \
	'a window of 18446744073709551615 seconds' top --once

jq '.flows[0].dport = 65616' "$T/top.json" >"$T/bigport.json"
served_error bigport "a port above 65535 is refused, not printed as another port" \
	'port, protocol or family out of range' top --once

jq '.params.hll_precision = 70' "$T/status.json" >"$T/badp.json"
served_error badp "status: a HyperLogLog precision outside 4..18 is refused" \
	'"params.hll_precision" 70, not 4 to 18' status

echo '[1, 2]' >"$T/array.json"
served_error array "an answer that is not an object" "not a JSON object" status

# ------------------------------------------- answers of the wrong shape
# Each command checks the answer for what it asked, with --json too: an
# answer to status shaped like one to top is refused, nothing printed.
serve topforstatus "$T/top.json" || exit 1
runtime_error "status answered with a top-shaped object is refused, naming status" \
	"flowsketchd's answer to status has no non-negative integer \"pid\"" \
	--socket "$T/topforstatus.sock" status
runtime_error "status --json refuses the top-shaped answer too" \
	"flowsketchd's answer to status has no non-negative integer \"pid\"" \
	--socket "$T/topforstatus.sock" status --json
serve statusfortop "$T/status.json" || exit 1
runtime_error "top --json answered with a status-shaped object is refused" \
	"flowsketchd's answer to top has no non-negative integer \"span_seconds\"" \
	--socket "$T/statusfortop.sock" top --json
jq '.distinct_flows = "many"' "$T/flows.json" >"$T/flowsstr.json"
served_error flowsstr "flows --json: a field of the wrong type is refused" \
	"flowsketchd's answer to flows has no number \"distinct_flows\"" flows --json
jq '.counters.malformed["bad\u001b[31m"] = 1' "$T/status.json" >"$T/badreason.json"
served_error badreason "status: a malformed reason that is not a name is refused" \
	"malformed reason that is not a name" status

# -------------------------------------------- control characters on screen
# Strings from the daemon never reach the terminal raw: C0 controls (ESC,
# BEL), DEL, C1 controls (U+009B is CSI on some terminals), bidirectional
# overrides and invalid UTF-8 each print as '?' in the tables; --json
# escapes them and stays the same JSON value.
# no_raw_ctl FILE: no control byte but newline, no C1, no bidi override.
no_raw_ctl() {
	python3 -c '
import re, sys
d = open(sys.argv[1], "rb").read()
sys.exit(1 if re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]", d) else 0)' "$1"
}
jq '.pin_dir = "/sys/fs/bpf/\u001b[2Jx\u0007" | .datapath = "bpf\u009b31m" |
    .interfaces[0].name = "veth\u202e0\u007f" | .interfaces[1].xdp_mode = "gen\u0000eric"' \
	"$T/status.json" >"$T/ctlstatus.json"
serve ctlstatus "$T/ctlstatus.json" || exit 1
run --socket "$T/ctlstatus.sock" status
check "status with control characters in its strings exits 0" \
	eval '[ "$rc" -eq 0 ] && [ ! -s "$T/err" ]'
check "status: no control character reaches the terminal" no_raw_ctl "$T/out"
check "status: ESC and BEL print as '?', the rest of the sequence as text" \
	out_has "maps pinned in /sys/fs/bpf/\?\[2Jx\?$"
check "status: C1 CSI, bidi override, DEL and NUL print as '?'" \
	eval 'out_has "datapath bpf\?31m," && out_has "veth\?0\? \(ifindex 7" && out_has "XDP gen\?eric[,)]"'
run --socket "$T/ctlstatus.sock" status --json
check "status --json: no raw control character either" \
	eval '[ "$rc" -eq 0 ] && no_raw_ctl "$T/out"'
check "status --json: the same JSON value as the daemon sent" \
	eval '[ "$(jq -cS . "$T/out")" = "$(jq -cS . "$T/ctlstatus.json")" ]'

jq '.flows[0].src = "10.0.0.1\u001b]0;owned\u0007" | .flows[1].proto = "u\u001b[1mdp" | .sort = "pack\u0085ets"' \
	"$T/top.json" >"$T/ctltop.json"
serve ctltop "$T/ctltop.json" || exit 1
run --socket "$T/ctltop.sock" top --once
check "top: no control character from flow strings reaches the terminal" \
	eval '[ "$rc" -eq 0 ] && no_raw_ctl "$T/out"'
check "top: a title-setting sequence in an address prints as text" \
	out_has "^ *1 +10\.0\.0\.1\?\]0;owned\?:40000 "
check "top: the sort key and protocol are cleaned too" \
	eval 'out_has "by pack\?ets$" && out_has " u\?\[1mdp "'

printf '{"error":"no \\u001b[2Jway\\u009b"}\n' >"$T/ctlerror.json"
served_error ctlerror "the daemon's error sentence is cleaned before it is printed" \
	"flowsketchd: no ?[2Jway?" flows
check "the cleaned error sentence holds no control character" no_raw_ctl "$T/err"

printf '{"error":"a\0b"}\n' >"$T/nul.json"
served_error nul "an answer with a NUL byte is refused, with its offset" \
	"flowsketchd's answer contains a NUL byte at byte 11" status
printf '{"error":"caf\351"}\n' >"$T/latin1.json"
served_error latin1 "an answer that is not UTF-8 is refused, with its offset" \
	"flowsketchd's answer is not valid UTF-8 at byte 13" status

# ------------------------------------------------ --socket that is no socket
echo keep >"$T/regular"
runtime_error "--socket naming a regular file says so" \
	"cannot connect to flowsketchd at $T/regular: it is a regular file, not a socket (check --socket)" \
	--socket "$T/regular" status
mkdir "$T/adir"
runtime_error "--socket naming a directory says so" \
	"at $T/adir: it is a directory, not a socket" --socket "$T/adir" flows
check "--socket on a regular file leaves it as it was" \
	test "$(cat "$T/regular")" = keep
runtime_error "--socket naming nothing says it does not exist" \
	"at $T/nothing/here.sock: No such file or directory (is the daemon running?)" \
	--socket "$T/nothing/here.sock" status

# The CLI's timeout covers the whole answer, not each read: a daemon that
# trickles 16 bytes out at one per 100 ms (1.6 s in all) is given up on
# after --timeout 1 although every single read returns within 0.1 s, and
# is waited for with --timeout 5.
printf '{"error":"busy"}' >"$T/slow.json"
serve slow "$T/slow.json" --drip 100 || exit 1
start=$(date +%s%N)
runtime_error "--timeout 1: a trickled 1.6 s answer times out" \
	"did not answer within 1 s" --socket "$T/slow.sock" --timeout 1 status
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "--timeout 1 gave up after about 1 s (took $ms ms)" \
	eval '[ "$ms" -ge 900 ] && [ "$ms" -lt 3000 ]'
runtime_error "--timeout 5: the same answer arrives whole" \
	"flowsketchd: busy" --socket "$T/slow.sock" --timeout 5 status

# ------------------------------------------------------------------ tools
# The test tools refuse bad arguments as the CLI does, instead of running
# with a default nobody asked for (a fake that never exits, here).
timeout 5 "$FAKE" --count abc "$T/count.sock" "$T/flows.json" >"$T/out" 2>"$T/err"
rc=$?
check "fs-fake-daemon --count abc: exit 2, one line, no socket" \
	eval '[ "$rc" -eq 2 ] && one_err_line && err_has "--count" && [ ! -e "$T/count.sock" ]'

# fs-gen reads numbers in decimal ("010" is ten, not octal eight) and
# writes the seed it was given, all 64 bits, into the truth file.  It
# sends on the loopback of a network namespace of its own.
GEN=build/tools/fs-gen
if [ "$(id -u)" = 0 ] && [ -x "$GEN" ] && command -v unshare >/dev/null; then
	unshare --net bash -c 'ip link set dev lo up && exec "$0" -i lo --flows 010 --packets 50 --seed 18446744073709551615 --truth "$1"' \
		"$GEN" "$T/truth.json" >"$T/out" 2>"$T/err"
	rc=$?
	check "fs-gen: --flows 010 is ten flows, the 64-bit seed is kept" \
		eval '[ "$rc" -eq 0 ] && jq -e ".params.flows == 10 and .params.seed == 18446744073709551615 and .total_packets == 50" "$T/truth.json" >/dev/null'
fi

# The demo refuses a duration it cannot honour before it creates anything.
DEMO_SECONDS=abc timeout 60 bash scripts/demo.sh >"$T/out" 2>"$T/err"
rc=$?
check "demo: DEMO_SECONDS=abc is refused up front (exit 2, one line)" \
	eval '[ "$rc" -eq 2 ] && one_err_line && err_has "DEMO_SECONDS" && no_out'

# ------------------------------------------------------------------ size
# within VALUE PRINTED DECIMALS: VALUE rounds to the figure PRINTED.
within() { awk -v v="$1" -v p="$2" -v d="$3" 'BEGIN { exit !((v - p) ^ 2 <= (0.5 * 10 ^ -d) ^ 2 * 1.000001) }'; }
# row FIELD...: the first output line whose first fields are FIELD...
row() { awk -v want="$*" 'index($0, want) && $0 ~ "^ *" want { print; exit }' "$T/out"; }

run size
check "size exits 0" eval '[ "$rc" -eq 0 ] && [ ! -s "$T/err" ]'
# Bloom: target, bits per item, best k, memory for a billion items.
check "size: Bloom 10% row"   eval '[[ "$(row "10% ")"   =~ ^\ *10%\ +4\.8\ +3\ .*\ 0\.6\ GB ]]'
check "size: Bloom 1% row"    eval '[[ "$(row "1% ")"    =~ ^\ *1%\ +9\.6\ +7\ .*\ 1\.2\ GB ]]'
check "size: Bloom 0.1% row"  eval '[[ "$(row "0.1% ")"  =~ ^\ *0\.1%\ +14\.4\ +10\ .*\ 1\.8\ GB ]]'
check "size: Bloom 0.01% row" eval '[[ "$(row "0.01% ")" =~ ^\ *0\.01%\ +19\.2\ +13\ .*\ 2\.4\ GB ]]'
# Count-Min: width x depth, memory at 4-byte counters, overcount at 1e9,
# and flowsketch's power-of-two width with the 4-byte narrow cells a
# packet touches.
check "size: Count-Min 1% row" \
	out_has "272 x 5 +5\.4 KB +1 billion +10 million +\| +512 x 5 .* 10 KiB$"
check "size: Count-Min 0.1% row" \
	out_has "2,719 x 5 +54 KB +1 billion +1 million +\| +4,096 x 5 .* 80 KiB$"
check "size: Count-Min 0.001% row" \
	out_has "271,829 x 5 +5\.4 MB +1 billion +10,000 +\| +524,288 x 5 .* 10 MiB$"
# HyperLogLog: registers, standard error, memory at 6 bits (768 bytes,
# 3 KB, 12 KB, 48 KB in the table, KB there meaning 1024 bytes).
check "size: HLL p 10 row" out_has "^ +10 +1,024 +3\.25% +768 B "
check "size: HLL p 12 row" out_has "^ +12 +4,096 +1\.63% +3 KiB "
check "size: HLL p 14 row" out_has "^ +14 +16,384 +0\.81% +12 KiB "
check "size: HLL p 16 row" out_has "^ +16 +65,536 +0\.41% +48 KiB "
# Over capacity (sized for 1%, k = 7): bits set and false-positive rate.
overfill_ok() {
	local line set fp
	line=$(row "$1 ") || return 1
	set=$(awk '{ sub("%", "", $2); print $2 }' <<<"$line")
	fp=$(awk '{ sub("%", "", $3); print $3 }' <<<"$line")
	within "$set" "$2" 0 && within "$fp" "$3" "$4"
}
check "size: Bloom over capacity header names 1% and k = 7" \
	out_has "sized for 1%, k = 7"
check "size: over capacity 1x: 52%, 1.0%"     overfill_ok 1x 52 1.0 1
check "size: over capacity 1.25x: 60%, 2.8%"  overfill_ok 1.25x 60 2.8 1
check "size: over capacity 1.5x: 67%, 5.8%"   overfill_ok 1.5x 67 5.8 1
# The table's 15.8 is 15.745 rounded twice (its own code says 15.75).
check "size: over capacity 2x: 77%, 15.75%"   overfill_ok 2x 77 15.75 2
check "size: over capacity 3x: 89%, 44%"      overfill_ok 3x 89 44 0
# Detection at the daemon's sizes (prefix.h: d 2, w 1024, V 8; spread.h:
# d 2, w 512, m 90, R 8): 2 slots x d w x 64 B = 256 KiB and 2 slots x 2
# sides x d w x 64 B = 256 KiB; 4e/1024 = 1.06 %, 1 - e^-2 = 86.5 %;
# 3 sqrt(7 / 2000) = 17.7 %; e/512 = 0.53 %; sqrt(1.04^2/90 + 7/5000) = 11.6 %.
check "size: prefixes d 2 w 1024 V 8, 256 KiB" out_has "prefixes: d = 2, w = 1024, one of V = 8 .*: 256 KiB per CPU, 2 lines"
check "size: prefixes collisions 1.06% at 86.5%" out_has "at most 4e/w = 1\.06% of the packets, probability 86\.5%"
check "size: prefixes sampling 17.7% at 2,000" out_has "N = 2000: \+-17\.7%"
check "size: spread 256 KiB, 0.5 lines" out_has "spread: d = 2, w = 512 a side, m = 90 registers, 1 element in R = 8: 256 KiB per CPU, 0\.5 lines"
check "size: spread sharing 0.53%, 11.6% at 5,000" \
	eval 'out_has "at most e/w = 0\.53% of the distinct flows" && out_has "n = 5000: 11\.6%"'

run size --json
check "size --json: every table, parses with jq" \
	eval '[ "$rc" -eq 0 ] && jq -e "(.bloom | length) == 4 and (.count_min | length) == 3 and (.hyperloglog | length) == 4 and (.bloom_over_capacity.rows | length) == 5" "$T/out" >/dev/null'
check "size --json: Count-Min widths 272, 2719, 271829 -> 512, 4096, 524288" \
	eval 'jq -e "[.count_min[] | .width, .flowsketch.width] == [272, 512, 2719, 4096, 271829, 524288]" "$T/out" >/dev/null'
check "size --json: Bloom best k 3, 7, 10, 13" \
	eval 'jq -e "[.bloom[].hashes] == [3, 7, 10, 13]" "$T/out" >/dev/null'

run size --cms-epsilon 0.05% --cms-delta 0.001 --items 5e6 --json
# ceil(e / 0.0005) = 5437 -> 8192; ceil(ln 1000) = 7; overcount 0.0005 * 5e6.
check "size --cms-epsilon/--cms-delta/--items: one Count-Min row" \
	eval 'jq -e ".count_min | length == 1 and .[0].width == 5437 and .[0].depth == 7 and .[0].flowsketch.width == 8192 and .[0].overcount == 2500 and .[0].bytes_at_4_byte_counters == 152236" "$T/out" >/dev/null && [ "$(jq "keys" -c "$T/out")" = "[\"count_min\"]" ]'
run size --hll-p 11 --json
check "size --hll-p 11: 2048 registers, 1.04/sqrt(2048), 1536 bytes" \
	eval 'jq -e ".hyperloglog[0] | .registers == 2048 and .bytes_at_6_bits == 1536 and (.relative_standard_error - 0.022981 | fabs) < 1e-6" "$T/out" >/dev/null'
run size --bloom-n 1e6 --bloom-p 1%
check "size --bloom-n 1e6 --bloom-p 1%: 9.6 bits per item, k = 7, 1.2 MB" \
	out_has "^ +1% +9\.6 +7 +1 million +1\.2 MB "

# The blocklist's keys, by the rule of bloom.h's header: /16 and shorter
# are the summary's (none); longer, a group of four lengths keyed on its
# longest, 2^(end - length) keys: /24 1, /17 8 (/20s), /32 1, IPv6 /49 8
# (/52s), /128 1.  The maps for 100,000 entries: two filters of 2^14
# blocks (800,000 keys at 1 %) and 320 KiB of summary.
printf '%s\n' '# a list' 203.0.113.0/24 10.0.0.0/12 10.1.0.0/17 192.0.2.7 \
	2001:db8::/32 2001:db8:0:8000::/49 2001:db8::1 >"$T/list"
run size --blocklist "$T/list" --json
check "size --blocklist: 7 entries, 1 summary-only, 20 filter keys, maps 2 x 1 MiB + 320 KiB" \
	eval 'jq -e ".blocklist | .list.entries == 7 and .list.ipv4 == 4 and .list.summary_only == 1 and .list.filter_keys == 20 and .maps.filter_blocks == 16384 and .maps.bytes == 2 * 16384 * 64 + 327680" "$T/out" >/dev/null && [ "$(jq "keys" -c "$T/out")" = "[\"blocklist\"]" ]'
run size --blocklist "$T/list" --blocklist-max 6
check "size --blocklist longer than --blocklist-max: refused, the line named" \
	eval '[ "$rc" -eq 2 ] && err_has "list:8:"'

finish
