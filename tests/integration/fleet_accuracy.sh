#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# fleet_accuracy.sh - two hosts' keyed samples exported and merged (issue
# 22): `flowsketch merge FILE... accuracy`, the fleet's sample against the
# fleet's merged sketches.
#
#   NS_TXA [fs-gen] --veth--> NS_RXA [flowsketchd A]   one --secret-file,
#   NS_TXB [fs-gen] --veth--> NS_RXB [flowsketchd B]   --sample-rate 1/16,
#                                                       --sample-buckets 1024
#
# Traffic is made so that the union is not either host's: fs-gen's flow i
# follows from (seed, i) alone (its key, not its packets), so a Zipf run of
# 3,000 flows on A and one of 5,000 on B with the same seed send the same
# 3,000 five-tuples to both hosts, with different packets each (the laws
# differ), then 2,000 flows to B only; a run of 1,500 flows of another
# seed goes to A only.  The union is some 6,500 flows, about 400 of them
# sampled at 1/16, some 190 of those sent to both hosts.
#
# The oracle is what fs-gen wrote (--truth), summed by five-tuple over
# both hosts, and which of those flows the keyed hash samples, computed
# here from the secret file: h_flow by tools/fs-ref-hash (the tests'
# reference, tests/unit/ref_hash.h), then sample.h's rule written out
# again, s = fmix64(h_flow ^ 0x6a09e667f3bcc908) (fmix64: MurmurHash3's
# finalizer), sampled when s < 2^(64 - k), its bucket s mod 2^b.  No
# bucket of the union holds more than 7 sampled flows (checked: that is
# what keeps every limit at 2^(64 - k), so no bucket is full anywhere, on
# a host, a CPU, a window or the merge, and the effective rate is R).
#   - each daemon's own sample (flowsketch accuracy) is exactly its flows
#     the rule selects, at what it was sent of each: the oracle's rule is
#     the datapath's;
#   - export --format native: format version 4, the params record's
#     bytes 14 and 15 (file offsets 30, 31) b = 10 and k = 4;
#   - merge a b accuracy --json: every sampled flow was sent; its
#     exact_packets and exact_bytes are the SUM of what was sent to A and
#     to B, its estimates (the merged Count-Min) never below; some of them
#     were sent to both hosts (so the sum is what is tested); the sampled
#     flows are exactly the union's flows the keyed hash selects (none
#     missing, none extra); their number X is within 4 binomial standard
#     deviations of F / R (F the union's distinct flows); the sample says
#     1 in R, b buckets, none full, effective rate R; totals the union's;
#     no undercount, no alarm; files 2;
#   - merge b a accuracy: the same flows and counts as merge a b;
#   - merge a accuracy: host A's file alone: its exact counts are A's own,
#     and they differ from the union's for the flows sent to both;
#   - merge a b accuracy prints the table;
#   - merge refuses, one line on stderr and a non-zero exit, naming the
#     file: accuracy with a file of no sample (B with --sample-rate off),
#     a file of another rate (1/32) and one of other buckets (512); top
#     merges files of other samples and of none (it leaves them out).
# Output: TAP.
#
# Mutants: FS_FLEET_CLI=PATH runs another CLI build, e.g. fleet.sh's
# -DFS_MUTANT_MERGE_FIRST_SKETCH (merge.c compiled with it, linked with
# the other objects of build/flowsketch: the first file's sketches only):
#   cc $CFLAGS -DFS_MUTANT_MERGE_FIRST_SKETCH -c user/flowsketch/merge.c -o m.o
#   cc ... build/user/flowsketch/*.o but merge.o, m.o, build/libflowsketch.a
# The sum, the estimates and the exact-set checks must fail against it
# (they do: 7 checks, with the size, the totals and the order); its alarm
# stays off, since sample and sketch lose B's file together: only the
# truth of what was sent sees that merge.
set -u
cd "$(dirname "$0")/../.." || exit 2
CLI=${FS_FLEET_CLI:-build/flowsketch}
. scripts/daemon_test.sh

REF_HASH=build/tools/fs-ref-hash
SPAN=300
R=16
K=4		# R = 2^K
BUCKETS=1024
LOG2B=10	# BUCKETS = 2^LOG2B
WAYS=7		# sample.h, FS_SAMPLE_WAYS
Z=4

fs_test fleetacc "$GEN" "$REF_HASH" python3 jq
fleet_hosts fleetacc fsfa
SAMPLE=(--sample-rate "1/$R" --sample-buckets "$BUCKETS")
fsd_as a fsd_start --secret-file "$WORK/secret" "${SAMPLE[@]}" ||
	bail "flowsketchd A with ${SAMPLE[*]} answers status"
fsd_as b fsd_start --secret-file "$WORK/secret" "${SAMPLE[@]}" ||
	bail "flowsketchd B with ${SAMPLE[*]} answers status"
ok "flowsketchd A on $VETH_RXA and B on $VETH_RXB, one secret file, ${SAMPLE[*]}"

# ---------------------------------------------------------------- traffic
# send NS VETH MAC FLOWS PACKETS ZIPF SEED TRUTH
send() {
	fs_in "$1" "$GEN" -i "$2" --dst-mac "$3" --flows "$4" --packets "$5" --zipf "$6" \
		--seed "$7" --ipv6-share 0.3 --truth "$8" >/dev/null 2>>"$WORK/gen.log"
}
mac_a=$(fs_mac "$NS_RXA" "$VETH_RXA")
mac_b=$(fs_mac "$NS_RXB" "$VETH_RXB")
(
	send "$NS_TXA" "$VETH_TXA" "$mac_a" 3000 24000 0.6 7 "$WORK/t-a-shared.json" &&
	send "$NS_TXA" "$VETH_TXA" "$mac_a" 1500 6000 0.3 11 "$WORK/t-a-own.json"
) & pa=$!
send "$NS_TXB" "$VETH_TXB" "$mac_b" 5000 36000 0.6 7 "$WORK/t-b-shared.json" & pb=$!
wait $pa && wait $pb || { diag <"$WORK/gen.log"; bail "fs-gen sent the traffic of both hosts"; }
fsd_as a fsd_settle && fsd_as b fsd_settle || bail "two windows closed on each host after the traffic"
ok "traffic sent to both hosts, in finished windows"

# ---------------------------------------------------------------- the truth
# Every flow sent, by five-tuple: its packets and bytes to A and to B, and
# whether the keyed hash samples it (sample.h's rule, written out again).
jq -r '.flows[] | "\(.src) \(.dst) \(.sport) \(.dport) \(.proto_num)"' "$WORK"/t-[ab]-*.json |
	sort -u >"$WORK/keys" || bail "the flows sent"
"$REF_HASH" "$WORK/secret" 1 16 <"$WORK/keys" >"$WORK/keys-ref" ||
	bail "the reference hashes of the flows sent"
python3 - "$K" "$LOG2B" "$WORK/keys" "$WORK/keys-ref" "$WORK"/t-[ab]-*.json \
	>"$WORK/truth.json" <<'EOF_PY' || bail "the union's truth"
import json, os, sys
k, log2b, keys, refs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
M = (1 << 64) - 1
def fmix64(x):
    x ^= x >> 33; x = (x * 0xff51afd7ed558ccd) & M
    x ^= x >> 33; x = (x * 0xc4ceb9fe1a85ec53) & M
    return x ^ (x >> 33)
s_of = {}
for key, ref in zip(open(keys), open(refs)):
    s_of[key.strip()] = fmix64(int(ref.split()[0], 16) ^ 0x6a09e667f3bcc908)
flows = {}
for path in sys.argv[5:]:
    host = "a" if os.path.basename(path).startswith("t-a-") else "b"
    for f in json.load(open(path))["flows"]:
        ref = "%s %s %d %d %d" % (f["src"], f["dst"], f["sport"], f["dport"], f["proto_num"])
        key = "%s %s %d %s %d" % (f["proto"], f["src"], f["sport"], f["dst"], f["dport"])
        e = flows.setdefault(key, {"packets": 0, "bytes": 0, "a": 0, "b": 0,
                                   "a_bytes": 0, "b_bytes": 0, "s": s_of[ref]})
        e["packets"] += f["packets"]; e["bytes"] += f["bytes"]
        e[host] += f["packets"]; e[host + "_bytes"] += f["bytes"]
limit = 1 << (64 - k)
buckets = {}
for e in flows.values():
    e["sampled"] = e["s"] < limit
    if e["sampled"]:
        b = e["s"] & ((1 << log2b) - 1)
        buckets[b] = buckets.get(b, 0) + 1
    del e["s"]                      # a raw hash: no need to keep it
json.dump({"flows": flows,
           "distinct": len(flows),
           "packets": sum(e["packets"] for e in flows.values()),
           "bytes": sum(e["bytes"] for e in flows.values()),
           "sampled": sorted(key for key, e in flows.items() if e["sampled"]),
           "both": sum(1 for e in flows.values() if e["a"] and e["b"]),
           "sampled_both": sum(1 for e in flows.values() if e["sampled"] and e["a"] and e["b"]),
           "fullest_bucket": max(buckets.values(), default=0)}, sys.stdout)
EOF_PY
F=$(jq .distinct "$WORK/truth.json")
N=$(jq .packets "$WORK/truth.json")
NB=$(jq .bytes "$WORK/truth.json")
S=$(jq '.sampled | length' "$WORK/truth.json")
echo "# union: $F distinct flows ($(jq .both "$WORK/truth.json") sent to both hosts), $N packets;" \
	"the keyed hash samples $S ($(jq .sampled_both "$WORK/truth.json") sent to both)"
check "no bucket of the union gets more than $WAYS sampled flows (fullest: $(jq .fullest_bucket "$WORK/truth.json")): no limit falls, the rate stays 1/$R" \
	holds "$WORK/truth.json" --argjson w "$WAYS" '.fullest_bucket <= $w'

# Each daemon's own sample (flowsketch accuracy) is its flows the keyed
# hash selects, at the counts it was sent: the oracle's rule is the
# datapath's, so what the merge is held to below is not the oracle's error.
for h in a b; do
	fsd_as "$h" cli accuracy --span $SPAN --json >"$WORK/acc-$h-daemon.json" 2>>"$WORK/acc-daemon.err"
	check "daemon ${h^^}'s own sample is its flows the keyed hash selects, at what it was sent of each" \
		holds "$WORK/acc-$h-daemon.json" --slurpfile t "$WORK/truth.json" --arg h "$h" '
			([.flows[] | "\(.proto) \(.src) \(.sport) \(.dst) \(.dport)"] | sort) ==
			($t[0].sampled | map(select($t[0].flows[.][$h] > 0))) and
			all(.flows[]; $t[0].flows["\(.proto) \(.src) \(.sport) \(.dst) \(.dport)"] as $s |
				.exact_packets == $s[$h] and .exact_bytes == $s[$h + "_bytes"])'
done
diag <"$WORK/acc-daemon.err"

# ---------------------------------------------------------------- exports
exports_ok=true
for h in a b; do
	fsd_as "$h" cli export --format native --span $SPAN -o "$WORK/$h.fsk" \
		2>>"$WORK/export.err" || exports_ok=false
done
check "export --format native on both daemons with ${SAMPLE[*]}" $exports_ok
diag <"$WORK/export.err"
$exports_ok || bail "the exports merge reads"
# native.h: format version at 8 (4 bytes); the params record at 16, its
# bytes 14 and 15 (params.h) the sample's log2 buckets and rate shift.
read -r VERSION < <(od -An -tu4 -j8 -N4 "$WORK/a.fsk")
read -r FB FK < <(od -An -tu1 -j30 -N2 "$WORK/a.fsk")
check "the export is format version 4 (got $VERSION), its sample 2^$FB buckets at 1/2^$FK (want 2^$LOG2B, 1/2^$K)" \
	[ "$VERSION" = 4 -a "$FB" = "$LOG2B" -a "$FK" = "$K" ]

# ---------------------------------------------------------------- merge accuracy
"$CLI" merge "$WORK/a.fsk" "$WORK/b.fsk" accuracy --json >"$WORK/acc.json" 2>"$WORK/acc.err"
rc=$?
check "merge a.fsk b.fsk accuracy --json answers (exit $rc)" [ "$rc" = 0 ]
diag <"$WORK/acc.err"
X=$(jq '.flows | length' "$WORK/acc.json")
# Each sampled flow beside the truth of its five-tuple.
jq --slurpfile t "$WORK/truth.json" '
	[.flows[] | {f: ., s: $t[0].flows["\(.proto) \(.src) \(.sport) \(.dst) \(.dport)"]}]' \
	"$WORK/acc.json" >"$WORK/matched.json"
check "every one of the $X sampled flows of the merge is a flow sent" \
	holds "$WORK/matched.json" 'length > 0 and all(.[]; .s != null)'
check "... its exact packets and bytes the sum of what was sent to A and to B" \
	holds "$WORK/matched.json" 'all(.[]; .f.exact_packets == .s.packets and .f.exact_bytes == .s.bytes)'
check "... its estimates (the merged Count-Min) never below that sum" \
	holds "$WORK/matched.json" 'all(.[]; .f.packets >= .s.packets and .f.bytes >= .s.bytes)'
BOTH=$(jq '[.[] | select(.s.a > 0 and .s.b > 0)] | length' "$WORK/matched.json")
check "$BOTH of them were sent to both hosts (the sum differs from either host's count)" \
	holds "$WORK/matched.json" '[.[] | select(.s.a > 0 and .s.b > 0 and
		.f.exact_packets > .s.a and .f.exact_packets > .s.b)] | length >= 1'
check "the sampled flows are exactly the $S of the union the keyed hash selects (none missing, none extra)" \
	holds "$WORK/acc.json" --slurpfile t "$WORK/truth.json" '
		[.flows[] | "\(.proto) \(.src) \(.sport) \(.dst) \(.dport)"] | sort == $t[0].sampled'
check "their number $X within $Z binomial sd of $F / $R" \
	awk -v x="$X" -v f="$F" -v r="$R" -v z="$Z" \
	'BEGIN { m = f / r; sd = sqrt(f / r * (1 - 1 / r)); exit !(x >= m - z * sd && x <= m + z * sd) }'
check "the sample: 1 in $R, $BUCKETS buckets, $X flows, none full, effective rate $R ($(jq -c .sample "$WORK/acc.json"))" \
	holds "$WORK/acc.json" --argjson r "$R" --argjson b "$BUCKETS" --argjson x "$X" '
		.sample.rate == $r and .sample.buckets == $b and .sample.flows == $x and
		.sample.full == 0 and
		.sample.rate_effective >= $r and .sample.rate_effective <= $r * (1 + 1e-9)'
check "the totals are the union's ($N packets, $NB bytes), over 2 files" \
	holds "$WORK/acc.json" --argjson n "$N" --argjson nb "$NB" '
		.total_packets == $n and .total_bytes == $nb and .files == 2'
check "no undercount, no alarm, the figures there (hll_z $(jq .hll_z "$WORK/acc.json"))" \
	holds "$WORK/acc.json" '.undercounts == 0 and .alarm == false and .alarms == [] and
		(.hll_z | type) == "number" and (.overcount_max_eps | type) == "number" and
		(.over_bound_share | type) == "number"'

# The merge is of the set of files: in the other order, the same flows
# at the same counts.
"$CLI" merge "$WORK/b.fsk" "$WORK/a.fsk" accuracy --json >"$WORK/acc-ba.json" 2>/dev/null
check "merge b.fsk a.fsk accuracy: the same sampled flows at the same exact counts and estimates" \
	holds "$WORK/acc-ba.json" --slurpfile ab "$WORK/acc.json" '
		def rows: [.flows[] | [.proto, .src, .sport, .dst, .dport, .exact_packets,
			.exact_bytes, .packets, .bytes]] | sort;
		(.flows | length) > 0 and rows == ($ab[0] | rows)'

# Host A's file alone: A's own counts, not the union's.
"$CLI" merge "$WORK/a.fsk" accuracy --json >"$WORK/acc-a.json" 2>/dev/null
jq --slurpfile t "$WORK/truth.json" '
	[.flows[] | {f: ., s: $t[0].flows["\(.proto) \(.src) \(.sport) \(.dst) \(.dport)"]}]' \
	"$WORK/acc-a.json" >"$WORK/matched-a.json"
check "host A's file alone: its sampled flows' exact counts are what A was sent, short of the union's for the flows sent to both" \
	holds "$WORK/matched-a.json" 'length > 0 and all(.[]; .s != null and .s.a > 0 and
		.f.exact_packets == .s.a and .f.exact_bytes == .s.a_bytes) and
		any(.[]; .s.b > 0 and .f.exact_packets < .s.packets)'

"$CLI" merge "$WORK/a.fsk" "$WORK/b.fsk" accuracy >"$WORK/acc.txt" 2>&1
rc=$?
check "merge a.fsk b.fsk accuracy (table): the sample 1 in $R, no undercount, no alarm, the flows" \
	eval '[ "$rc" -eq 0 ] && grep -qE "[0-9,]+ sampled flows.*, 1 in $R " "$WORK/acc.txt" &&
	      grep -q "^Count-Min: 0 undercounts" "$WORK/acc.txt" &&
	      grep -q "^alarm: none" "$WORK/acc.txt" && grep -q "^sampled flow (heaviest)" "$WORK/acc.txt"'
diag <"$WORK/acc.txt"

# ---------------------------------------------------------------- refusals
# refused WHAT FILE ARG...: merge exits non-zero with one line on stderr
# naming FILE, and nothing on stdout.
refused() {
	local what=$1 file=$2; shift 2
	"$CLI" merge "$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	check "merge refuses $what (exit $rc: $(head -c 200 "$WORK/err"))" \
		eval '[ "$rc" != 0 ] && [ ! -s "$WORK/out" ] && [ "$(wc -l <"$WORK/err")" = 1 ] &&
		      grep -qF -- "$file" "$WORK/err"'
}
# export_b FILE OPTION...: B restarted with OPTION..., its export.
export_b() {
	local file=$1; shift
	fsd_as b fsd_stop
	fsd_as b fsd_start --secret-file "$WORK/secret" "$@" ||
		bail "flowsketchd B with $* answers status"
	fsd_as b fsd_settle || bail "two windows closed on B with $*"
	fsd_as b cli export --format native --span $SPAN -o "$file" || bail "an export of B with $*"
}
export_b "$WORK/nosample.fsk" --sample-rate off
read -r NB0 NK0 < <(od -An -tu1 -j30 -N2 "$WORK/nosample.fsk")
check "an export of a daemon with --sample-rate off has no sample (bytes 30, 31: $NB0 $NK0)" \
	[ "$NB0" = 0 -a "$NK0" = 0 ]
refused "accuracy with a file of no sample, naming it" nosample.fsk \
	"$WORK/a.fsk" "$WORK/nosample.fsk" accuracy
export_b "$WORK/rate32.fsk" --sample-rate 1/32 --sample-buckets "$BUCKETS"
refused "accuracy with a file of another sample rate (1/32), naming it" rate32.fsk \
	"$WORK/a.fsk" "$WORK/rate32.fsk" accuracy
# top, flows and spread leave the samples out: files of any merge.
"$CLI" merge "$WORK/a.fsk" "$WORK/rate32.fsk" "$WORK/nosample.fsk" top --json >"$WORK/out" 2>"$WORK/err"
rc=$?
check "top merges files of other samples and of none (exit $rc, $(jq -c '[.total_packets, (.flows | length)]' "$WORK/out" 2>/dev/null))" \
	eval '[ "$rc" = 0 ] && jq -e ".flows | length > 0" "$WORK/out" >/dev/null'
export_b "$WORK/b512.fsk" --sample-rate "1/$R" --sample-buckets 512
refused "accuracy with a file of other sample buckets (512), naming it" b512.fsk \
	"$WORK/a.fsk" "$WORK/b512.fsk" accuracy
fsd_as a fsd_stop
fsd_as b fsd_stop
finish
