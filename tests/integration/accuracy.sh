#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# accuracy.sh - the keyed sample live (issue 22): `flowsketch accuracy`
# against a flowsketchd --sample-rate, between namespaces.
#
#   NS_TX [fs-gen] --veth--> NS_RX [XDP, flowsketchd --sample-rate 1/R]
#
# The oracle is fs-gen's truth file, never the daemon's figures:
#   1. a daemon of the default options keeps a sample of 1 in 1,024 in
#      128 buckets; one with --sample-rate off none, and accuracy exits 1
#      with the daemon's sentence naming --sample-rate; bad options exit 2
#      before any connection;
#   2. a daemon with --sample-rate 1/16 and 4,096 buckets (no bucket
#      fills: some 1,250 sampled flows in 28,672 entries), sent 20,000
#      flows (Zipf 1.1, IPv4 and IPv6, TCP and UDP): over a span of all
#      the traffic,
#        - every sampled flow is a flow sent, its exact packets and bytes
#          what was sent of it, its estimates never below them;
#        - the sample's size X is within 4 binomial standard deviations of
#          F / R, F the distinct flows sent, and no bucket was full;
#        - the sample's distinct estimate is within 4 sqrt(F (R - 1)) of F,
#          the HyperLogLog's within 4 of its standard errors 1.04 / sqrt(m);
#        - no undercount, the share of flows over eps N (eps, delta from
#          status: e / w, e^-d) at most delta + 4 sqrt(delta / X), and no
#          alarm;
#        - the table says the same in words;
#   3. the sample exported (native format 4): the file's parameters
#      name it and no value in it has more than one bit (no raw hash
#      leaves); `merge a.fsk accuracy` gives the daemon's sampled flows
#      with their exact counts, and `merge a.fsk a.fsk accuracy` each
#      with twice what was sent, estimates never below;
#   4. every window is checked as it closes: status (JSON and table) and
#      /metrics say no alarm and no undercount.
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

R=16
BUCKETS=4096
METRICS_PORT=9110	# in NS_RX, whose ports are all free
FLOWS=20000

fs_test acc
NONE=(--socket "$WORK/no-daemon.sock")
check "accuracy --span x is refused before any connection (exit 2)" \
	cli_fails 2 "--span" "${NONE[@]}" accuracy --span x
check "accuracy --direction sideways is refused (exit 2)" \
	cli_fails 2 "--direction" "${NONE[@]}" accuracy --direction sideways
check "accuracy with an extra word is refused (exit 2)" \
	cli_fails 2 "accuracy" "${NONE[@]}" accuracy extra

fs_test_pair
fsd_daemon none "$NS_RX" "$VETH_RX"
fsd_as none fsd_start || bail "flowsketchd of the default options answers status"
check "by default a sample of 1 flow in 1024 in 128 buckets ($(jq -c .params.sample "$WORK/st-none.json"))" \
	holds "$WORK/st-none.json" '.params.sample.rate == 1024 and .params.sample.buckets == 128'
cli_run --socket "$WORK/none.sock" accuracy
check "... which accuracy reads (exit $rc)" test "$rc" -eq 0
fsd_as none fsd_stop
fsd_as none fsd_start --sample-rate off || bail "flowsketchd --sample-rate off answers status"
check "with --sample-rate off: accuracy exits 1 with the daemon's sentence" \
	cli_fails 1 "flowsketchd --sample-rate 1/N" --socket "$WORK/none.sock" accuracy
fsd_as none fsd_stop

fsd_start --sample-rate "1/$R" --sample-buckets "$BUCKETS" --history 60 \
	--metrics "127.0.0.1:$METRICS_PORT" ||
	bail "flowsketchd --sample-rate 1/$R --sample-buckets $BUCKETS answers status"
ok "flowsketchd --sample-rate 1/$R --sample-buckets $BUCKETS on $VETH_RX"
check "status gives the sample's rate and buckets" \
	holds "$FSD_ST" --argjson r "$R" --argjson b "$BUCKETS" \
	'.params.sample.rate == $r and .params.sample.buckets == $b'
W=$(jq .params.cms_width "$FSD_ST")
D=$(jq .params.cms_depth "$FSD_ST")
P=$(jq .params.hll_precision "$FSD_ST")

gen_in --flows "$FLOWS" --packets 200000 --zipf 1.1 --ipv6-share 0.3 --sources 5000 \
	--destinations 500 --seed 22 --truth "$WORK/truth.json" || bail "fs-gen sent its packets"
fsd_settle || bail "two windows closed after the traffic"
F=$(jq .distinct_flows "$WORK/truth.json")
N=$(jq .total_packets "$WORK/truth.json")

cli_run --socket "$SOCK" accuracy --span 60 --direction in --json
cp "$WORK/out" "$WORK/acc.json"
check "accuracy --json exits 0 ($rc)" test "$rc" -eq 0
check "... over all the $N packets sent (span totals)" \
	holds "$WORK/acc.json" --argjson n "$N" '.total_packets == $n'
X=$(jq '.flows | length' "$WORK/acc.json")
# Each sampled flow found in the truth by its five-tuple.
# match ANSWER OUT: each sampled flow of ANSWER with the truth's flow of
# its five-tuple (null if none), as {f, s}.
match() {
	jq --slurpfile t "$WORK/truth.json" '
		($t[0].flows | map({key: "\(.proto) \(.src) \(.sport) \(.dst) \(.dport)", value: .}) |
		 from_entries) as $sent |
		[.flows[] | {f: ., s: $sent["\(.proto) \(.src) \(.sport) \(.dst) \(.dport)"]}]' "$1" >"$2"
}
match "$WORK/acc.json" "$WORK/matched.json"
check "every one of the $X sampled flows is a flow sent" \
	holds "$WORK/matched.json" 'length > 0 and all(.[]; .s != null)'
check "... its exact packets and bytes what was sent of it" \
	holds "$WORK/matched.json" 'all(.[]; .f.exact_packets == .s.packets and .f.exact_bytes == .s.bytes)'
check "... its estimates never below them" \
	holds "$WORK/matched.json" 'all(.[]; .f.packets >= .f.exact_packets and .f.bytes >= .f.exact_bytes)'
check "the sample's size $X is within 4 binomial sd of $F / $R, no bucket full" \
	holds "$WORK/acc.json" --argjson f "$F" --argjson r "$R" --argjson x "$X" '
		($f / $r) as $m | (($f * (1 / $r) * (1 - 1 / $r)) | sqrt) as $sd |
		(($x - $m) | fabs) <= 4 * $sd and .sample.full == 0 and .sample.flows == $x'
check "its distinct estimate within 4 sqrt(F (R - 1)) of the $F flows sent" \
	holds "$WORK/acc.json" --argjson f "$F" --argjson r "$R" '
		((.sample_distinct - $f) | fabs) <= 4 * (($f * ($r - 1)) | sqrt)'
check "the HyperLogLog's within 4 standard errors (1.04 / sqrt(2^$P)) of them" \
	holds "$WORK/acc.json" --argjson f "$F" --argjson p "$P" '
		((.hll - $f) | fabs) <= 4 * 1.04 / (pow(2; $p) | sqrt) * $f'
check "no undercount, no alarm" \
	holds "$WORK/acc.json" '.undercounts == 0 and .packets.undercounts == 0 and
		.bytes.undercounts == 0 and .alarm == false and .alarms == []'
check "the share of flows over eps N at most delta + 4 sqrt(delta / X) (w $W, d $D)" \
	holds "$WORK/acc.json" --argjson w "$W" --argjson d "$D" --argjson x "$X" '
		(1 / (2.718281828459045 | pow(.; $d))) as $delta |
		(2.718281828459045 / $w * .total_packets) as $epsn |
		([.flows[] | select(.packets - .exact_packets > $epsn)] | length / $x) as $share |
		$share <= $delta + 4 * (($delta / $x) | sqrt) and
		((.packets.over_bound_share - $share) | fabs) < 1e-9 and
		.over_bound_share >= .packets.over_bound_share'

cli_run --socket "$SOCK" accuracy --span 60 --direction in
check "accuracy (table): the sample, no undercount, no alarm" \
	eval '[ "$rc" -eq 0 ] && grep -qE "^flowsketch accuracy: last .*, [0-9,]+ sampled flows, received only, 1 in $R " "$WORK/out" &&
	      grep -q "^Count-Min: 0 undercounts" "$WORK/out" && grep -q "^alarm: none" "$WORK/out"'

# The sample in an export (native.h format 4) and merged (`merge ...
# accuracy`): at R = 16 with no bucket full every limit is 2^60, a power
# of two, so the file keeps every sampled flow; merged with itself, each
# flow's exact counts are twice what was sent.
cli_run --socket "$SOCK" export --format native --span 60 --direction in -o "$WORK/a.fsk"
check "export --format native of a daemon with a sample exits 0 ($rc)" test "$rc" -eq 0
python3 - "$WORK/a.fsk" "$BUCKETS" >"$WORK/leak.txt" <<'PY'
import math, struct, sys
b = open(sys.argv[1], "rb").read()
q = int(sys.argv[2])
bad = []
if b[30] != int(math.log2(q)) or b[31] != 4:
    bad.append("params bytes 14, 15: %d %d" % (b[30], b[31]))
f = len(b) - 4 - 512 * q - 8
if struct.unpack_from("<Q", b, f)[0] != q:
    bad.append("sample buckets: %d" % struct.unpack_from("<Q", b, f)[0])
# Every entry's value one bit at most (sample.h, "Exports"): no raw hash.
for i in range(q):
    for w in range(1, 8):
        s = struct.unpack_from("<Q", b, f + 8 + 512 * i + 64 * w + 40)[0]
        if s & (s - 1):
            bad.append("bucket %d entry %d: value %#x" % (i, w, s))
if bad:
    print("\n".join(bad[:5]))
PY
check "the file's sample: its sizes in the parameters, no value of more than one bit" \
	test ! -s "$WORK/leak.txt"
cli_run merge "$WORK/a.fsk" accuracy --json
cp "$WORK/out" "$WORK/m1.json"
check "merge a.fsk accuracy: the daemon's sampled flows, their exact counts" \
	holds "$WORK/m1.json" --slurpfile d "$WORK/acc.json" '
		def k: "\(.proto) \(.src) \(.sport) \(.dst) \(.dport) \(.exact_packets) \(.exact_bytes)";
		([.flows[] | k] | sort) == ([$d[0].flows[] | k] | sort) and .alarm == false'
cli_run merge "$WORK/a.fsk" "$WORK/a.fsk" accuracy --json
cp "$WORK/out" "$WORK/m2.json"
match "$WORK/m2.json" "$WORK/m2matched.json"
check "merge a.fsk a.fsk accuracy: the same $X flows, each twice what was sent, never above its estimate" \
	holds "$WORK/m2matched.json" --argjson x "$X" 'length == $x and all(.[]; .s != null and
		.f.exact_packets == 2 * .s.packets and .f.exact_bytes == 2 * .s.bytes and
		.f.packets >= .f.exact_packets and .f.bytes >= .f.exact_bytes)'
cli_run merge "$WORK/a.fsk" "$WORK/a.fsk" accuracy
check "merge ... accuracy (table): 2 exports, the sample, no alarm" \
	eval '[ "$rc" -eq 0 ] && grep -q "^flowsketch merge: 2 exports" "$WORK/out" &&
	      grep -q "^Count-Min: 0 undercounts" "$WORK/out" && grep -q "^alarm: none" "$WORK/out"'

# Every window checked as it closes: status and /metrics.
cli status --json >"$FSD_ST"
check "status: the windows' checks, no alarm, no undercount ($(jq -c .accuracy "$FSD_ST"))" \
	holds "$FSD_ST" '.accuracy.alarm == false and .accuracy.alarms == [] and
		.accuracy.windows >= 2 and .accuracy.undercounts == 0 and .accuracy.hll_windows >= 1'
cli_run --socket "$SOCK" status
check "status (table): the sample's parameters and an accuracy line saying ok" \
	eval 'grep -q "^sample: *1 flow in $R counted exactly too, $BUCKETS buckets" "$WORK/out" &&
	      grep -q "^accuracy: *ok (" "$WORK/out"'
fs_in "$NS_RX" curl -s "http://127.0.0.1:$METRICS_PORT/metrics" >"$WORK/metrics.txt"
check "/metrics: the accuracy families, no alarm of any kind, no undercount" \
	eval 'grep -q "^flowsketch_accuracy_undercounts_total 0$" "$WORK/metrics.txt" &&
	      [ "$(grep -c "^flowsketch_accuracy_alarm{kind=\"[a-z]*\"} 0$" "$WORK/metrics.txt")" = 3 ] &&
	      grep -q "^flowsketch_accuracy_windows_total [1-9]" "$WORK/metrics.txt" &&
	      grep -q "^flowsketch_accuracy_delta " "$WORK/metrics.txt"'
finish
