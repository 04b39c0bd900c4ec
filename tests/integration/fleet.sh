#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# fleet.sh - two hosts' sketches exported and merged: by `flowsketch merge`,
# by a real redis-server and by a real PostgreSQL with postgresql-hll.
#
#   NS_TXA [fs-gen] --veth--> NS_RXA [flowsketchd A]   one --secret-file
#   NS_TXB [fs-gen] --veth--> NS_RXB [flowsketchd B]   for both
#
# Traffic is made so that the union is not either host's: 8 heavy flows
# sent to both hosts (about 850 to 1300 packets each on each), one heavy
# flow (2400) on A only and one on B only, 3 medium flows (1200 each) on
# each host alone, which rank in that host's top 10 but not in the
# union's, and a Zipf background of 3000 flows on A and 5000 on B whose
# first 3000 are A's (the same seed).  So the union's top 10 is the 8
# shared flows and the 2 single-host heavies, each host's top 10 is
# something else, and the union's distinct flows are about 5016.  What
# fs-gen wrote (--truth) is the truth of every check:
#   - merge a.fsk b.fsk top: the union's true top 10, every count within
#     [truth, truth + e/w * N], N the union's packets, and the total exact;
#     a host's own top 10 is not the union's (the union matters);
#   - the same through PostgreSQL: both hosts' pg-sql loaded, and
#     dist/fleet_top.sql gives merge's list, flow for flow and count for
#     count, with the same bound;
#   - distinct flows of the union by merge flows, by Redis (SET each
#     host's export, PFMERGE, PFCOUNT) and by hll_union_agg, each within
#     3 standard errors (1.04 / sqrt(2^p)) of the true union; PFCOUNT of
#     one host's export within 0.5 % of its `flowsketch flows`; the
#     pg-hll text is what PostgreSQL prints for the value loaded;
#   - merge refuses a file of another secret and one of another width
#     (a third daemon run, twice), naming the difference and both files;
#     PostgreSQL refuses to load the other width's span; merge refuses a
#     file with an unknown version and a truncated one;
#   - attacker model (hash.h, "What leaves the host"): no export of A (the
#     answer, native, Redis, pg-hll, pg-sql) holds a keyed hash of a flow
#     sent, and neither candidates nor heavy cells sit at the columns the
#     flows' hashes select.
# The servers run privately from a temporary directory (Redis on a unix
# socket, PostgreSQL on a unix socket only, as the postgres user) and are
# stopped on every exit.  Output: TAP.
#
# Mutants: FS_FLEET_CLI=PATH runs another CLI build, e.g. one whose
# merge.c was compiled with -DFS_MUTANT_MERGE_NO_UNION (only the first
# file's candidates) or -DFS_MUTANT_MERGE_FIRST_SKETCH (the first file's
# cells only), linked with the other objects of build/user/flowsketch;
# FS_FLEET_SQL=FILE another fleet query (say, max instead of sum over
# hosts).  The top checks must fail against each.
set -u
cd "$(dirname "$0")/../.." || exit 2
CLI=${FS_FLEET_CLI:-build/flowsketch}
. scripts/daemon_test.sh

FLEET_SQL=${FS_FLEET_SQL:-dist/fleet_top.sql}
REF_HASH=build/tools/fs-ref-hash
PG_BIN=/usr/lib/postgresql/15/bin
SPAN=300
PGDIR=""
REDIS_PID=""
PG_UP=""

test_cleanup() {
	if [ -n "$REDIS_PID" ]; then
		kill -TERM "$REDIS_PID" 2>/dev/null
		wait "$REDIS_PID" 2>/dev/null
	fi
	[ -n "$PG_UP" ] && runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PGDIR/data" \
		-m immediate -w stop >/dev/null 2>&1
	[ -n "$PGDIR" ] && rm -rf "$PGDIR"
}

# send NS VETH MAC FLOWS PACKETS ZIPF SEED TRUTH
send() {
	fs_in "$1" "$GEN" -i "$2" --dst-mac "$3" --flows "$4" --packets "$5" --zipf "$6" \
		--seed "$7" --rate 25000 --truth "$8" >/dev/null 2>>"$WORK/gen.log"
}

# within_rse GOT WANT K: |GOT - WANT| <= K relative standard errors of WANT.
within_rse() {
	awk -v g="$1" -v w="$2" -v k="$3" -v p="$HLL_P" \
		'BEGIN { e = k * 1.04 / sqrt(2 ^ p) * w; exit !(g >= w - e && g <= w + e) }'
}

fs_test fleet "$GEN" "$REF_HASH" redis-server redis-cli psql "$PG_BIN/initdb" "$PG_BIN/pg_ctl"
[ -f /usr/share/postgresql/15/extension/hll.control ] ||
	bail "postgresql-15-hll is installed (scripts/deps.sh)"
# Host A on the harness's pair, host B on one more of its own.
fleet_hosts fleet fsfl
head -c 16 /dev/urandom >"$WORK/other-secret"
fsd_as a fsd_start --secret-file "$WORK/secret" || bail "flowsketchd A answers status"
fsd_as b fsd_start --secret-file "$WORK/secret" || bail "flowsketchd B answers status"
ok "flowsketchd A on $VETH_RXA and B on $VETH_RXB, one secret file, answer status"
CMS_W=$(jq .params.cms_width "$WORK/st-a.json")
HLL_P=$(jq .params.hll_precision "$WORK/st-a.json")

# ---------------------------------------------------------------- traffic
mac_a=$(fs_mac "$NS_RXA" "$VETH_RXA")
mac_b=$(fs_mac "$NS_RXB" "$VETH_RXB")
(
	send "$NS_TXA" "$VETH_TXA" "$mac_a" 3000 30000 0.6 7 "$WORK/t-a-bg.json" &&
	send "$NS_TXA" "$VETH_TXA" "$mac_a" 8 8000 0.2 100 "$WORK/t-a-shared.json" &&
	send "$NS_TXA" "$VETH_TXA" "$mac_a" 1 2400 0 200 "$WORK/t-a-single.json" &&
	send "$NS_TXA" "$VETH_TXA" "$mac_a" 3 3600 0 400 "$WORK/t-a-local.json"
) & pa=$!
(
	send "$NS_TXB" "$VETH_TXB" "$mac_b" 5000 30000 0.6 7 "$WORK/t-b-bg.json" &&
	send "$NS_TXB" "$VETH_TXB" "$mac_b" 8 8000 0.2 100 "$WORK/t-b-shared.json" &&
	send "$NS_TXB" "$VETH_TXB" "$mac_b" 1 2400 0 300 "$WORK/t-b-single.json" &&
	send "$NS_TXB" "$VETH_TXB" "$mac_b" 3 3600 0 500 "$WORK/t-b-local.json"
) & pb=$!
wait $pa && wait $pb || { diag <"$WORK/gen.log"; bail "fs-gen sent the traffic of both hosts"; }
fsd_as a fsd_settle && fsd_as b fsd_settle || bail "two windows closed on each host after the traffic"
ok "traffic sent to both hosts, in finished windows"

# The truth: flows summed by key over the files given.
truth() {
	jq -s '[.[].flows[]] | group_by("\(.src) \(.dst) \(.sport) \(.dport) \(.proto_num)") |
	       map({key: "\(.[0].src) \(.[0].dst) \(.[0].sport) \(.[0].dport) \(.[0].proto_num)",
	            packets: (map(.packets) | add), bytes: (map(.bytes) | add)}) |
	       sort_by(-.packets)' "$@"
}
truth "$WORK"/t-a-*.json "$WORK"/t-b-*.json >"$WORK/truth-union.json"
truth "$WORK"/t-a-*.json >"$WORK/truth-a.json"
N_UNION=$(jq -s '[.[].total_packets] | add' "$WORK"/t-*.json)
BOUND=$(awk -v w="$CMS_W" -v n="$N_UNION" 'BEGIN { printf "%d", 2.718281828459045 / w * n + 0.999999 }')
TRUE_DISTINCT=$(jq length "$WORK/truth-union.json")
GAP=$(jq '.[9].packets - .[10].packets' "$WORK/truth-union.json")
echo "# union: $N_UNION packets, $TRUE_DISTINCT distinct flows, bound e/w*N = $BOUND, gap between true ranks 10 and 11 = $GAP"
check "the traffic separates the union's top 10 from the rest by more than the bound ($GAP > $BOUND)" \
	[ "$GAP" -gt "$BOUND" ]

# ---------------------------------------------------------------- exports
exports_ok=true
for h in a b; do
	for f in native:fsk redis:redis pg-hll:pghll; do
		fsd_as "$h" cli export --format "${f%%:*}" --span $SPAN -o "$WORK/$h.${f#*:}" \
			2>>"$WORK/export.err" || exports_ok=false
	done
	fsd_as "$h" cli export --format pg-sql --span $SPAN --host "host-$h" -o "$WORK/$h.sql" \
		2>>"$WORK/export.err" || exports_ok=false
done
check "export --format native, redis, pg-hll and pg-sql on both hosts" $exports_ok
diag <"$WORK/export.err"
check "the Redis export is the 12,304-byte dense string ($(stat -c %s "$WORK/a.redis") bytes)" \
	[ "$(stat -c %s "$WORK/a.redis")" = 12304 ]
check "the pg-hll export is a FULL hll as text (\\x14 8e ...)" \
	grep -qE '^\\x148e7f[0-9a-f]+$' "$WORK/a.pghll"

# ---------------------------------------------------------------- attacker model
# hash.h, "What leaves the host": an attacker who knows the flows (this
# test sent them) and reads every export of host A finds none of their
# keyed hashes (flow, source, destination, computed from the secret file
# by tests/unit/ref_hash.h, tools/fs-ref-hash) in any of them, as a
# number, as hex or as 8 bytes of a binary anywhere; the candidates are
# not at their raw columns (the columns the hash selects, cms.h), and
# the cells at the 10 heaviest flows' raw columns do not hold their counts
# (in the datapath's layout every one of them would).
printf '{"cmd":"export","span":%d}\n' "$SPAN" | fsd_as a fsd_ask >"$WORK/a.json" ||
	bail "the raw export answer of A"
jq -r '.flows[] | "\(.src) \(.dst) \(.sport) \(.dport) \(.proto_num)"' "$WORK"/t-a-*.json >"$WORK/a-flows"
"$REF_HASH" "$WORK/secret" "$(jq .params.cms_depth "$WORK/a.json")" \
	"$(jq .params.cms_log2_width "$WORK/a.json")" <"$WORK/a-flows" >"$WORK/a-ref" ||
	bail "the reference hashes of A's flows"
python3 - "$WORK/a-flows" "$WORK/a-ref" "$WORK/truth-a.json" "$WORK/a.json" "$WORK/a.fsk" \
	"$WORK/a.redis" "$WORK/a.pghll" "$WORK/a.sql" >"$WORK/leak" <<'EOF_PY'
import base64, json, re, struct, sys
flows, ref, truth, ans, fsk, redis, pghll, sql = sys.argv[1:]
keys = [l.strip() for l in open(flows)]
refs = [l.split() for l in open(ref)]
secret = {}                       # value -> what it is the hash of
cols = {}                         # flow key -> raw columns
for k, r in zip(keys, refs):
    for what, h in zip(("flow", "source", "destination"), r[:3]):
        secret[int(h, 16)] = "%s hash of %s" % (what, k)
    cols[k] = [int(c) for c in r[3:-1]]
bad = []
hits = {}                         # where -> [count, first example]
def found(name, what):
    h = hits.setdefault(name, [0, what])
    h[0] += 1
def scan_bytes(name, b):
    for i in range(len(b) - 7):
        for order in "<>":
            v = struct.unpack_from(order + "Q", b, i)[0]
            if v in secret:
                found(name, "the %s at byte %d" % (secret[v], i))
def scan_text(name, t):
    for m in re.finditer(r"[0-9a-fA-F]+", t):
        tok = m.group(0)
        for j in range(0, max(1, len(tok) - 15)):
            if len(tok) >= 16 and int(tok[j:j + 16], 16) in secret:
                found(name, "the %s as hex" % secret[int(tok[j:j + 16], 16)])
        if len(tok) > 16 and len(tok) % 2 == 0:
            scan_bytes(name + " (hex blob)", bytes.fromhex(tok))
    for m in re.finditer(r"[0-9]+", t):
        if len(m.group(0)) <= 20 and int(m.group(0)) in secret:
            found(name, "the %s as a number" % secret[int(m.group(0))])
a = json.load(open(ans))
text = open(ans).read()
scan_text("export answer", text)
scan_bytes("export answer's sketch", base64.b64decode(a["sketch"]["data"]))
if any("hash" in c for c in a["candidates"]):
    bad.append("export answer: a candidate has a \"hash\"")
scan_bytes("native file", open(fsk, "rb").read())
scan_bytes("redis string", open(redis, "rb").read())
scan_text("pg-hll text", open(pghll).read())
scan_text("pg-sql script", open(sql).read())
# Candidates at their raw columns (pg-sql's fs_candidate rows).
pairs = same = 0
for line in open(sql):
    f = line.rstrip("\n").split("\t")
    if len(f) == 9 and f[0] == "host-a":
        k = "%s %s %s %s %s" % (f[3], f[4], f[5], f[6], f[2])
        if k in cols:
            pairs += 1
            same += cols[k][int(f[7])] == int(f[8])
# The heaviest flows' counts in the native file's cells at their raw
# columns (the file's version says its candidates' size).
b = open(fsk, "rb").read()
version = struct.unpack_from("<I", b, 8)[0]
d, log2w = b[21], b[22]
ncand = struct.unpack_from("<Q", b, 88)[0]
off = 96 + ncand * (48 if version == 1 else 40 + 4 * d) + 8
cell = lambda r, c: struct.unpack_from("<Q", b, off + 16 * ((r << log2w) | c))[0]
heavy = sorted(json.load(open(truth)), key=lambda t: -t["packets"])[:10]
held = 0
for t in heavy:
    held += sum(cell(r, cols[t["key"]][r]) >= t["packets"] for r in range(d))
print("# %d candidate rows, %d at their raw column; %d of %d heavy cells at the raw columns"
      % (pairs, same, held, 10 * d), file=sys.stderr)
for name, (n, example) in sorted(hits.items()):
    bad.append("%s: %d hashes of flows sent, e.g. %s" % (name, n, example))
if pairs < 10:
    bad.append("only %d candidate rows of known flows in the pg-sql script" % pairs)
# A relabelled column equals the raw one with probability 1 / w: allow
# the mean and 6 standard deviations (in the datapath's layout all do).
chance = pairs / (1 << log2w)
if same > 3 + chance + 6 * chance ** 0.5:
    bad.append("%d of %d candidate rows name the raw column the hash selects (chance: %.1f)"
               % (same, pairs, chance))
if held > 3:
    bad.append("%d of %d cells at the 10 heaviest flows' raw columns hold their counts" % (held, 10 * d))
if bad:
    print("\n".join(bad))
EOF_PY
check "attacker model: no export of A holds a hash of a flow sent, or the raw columns of one" \
	[ ! -s "$WORK/leak" ]
diag <"$WORK/leak"

# ---------------------------------------------------------------- merge top
"$CLI" merge "$WORK/a.fsk" "$WORK/b.fsk" top -n 10 --json >"$WORK/merge-top.json" 2>"$WORK/merge-top.err"
rc=$?
check "merge a.fsk b.fsk top answers (exit $rc)" [ "$rc" = 0 ]
key='"\(.src) \(.dst) \(.sport) \(.dport) \(.proto_num)"'
top_keys() { jq -r ".flows[] | $key" "$1" | sort; }
jq -r ".[:10][] | .key" "$WORK/truth-union.json" | sort >"$WORK/truth-top10"
top_keys "$WORK/merge-top.json" >"$WORK/merge-top10"
check "merge top is the union's true top 10" cmp -s "$WORK/truth-top10" "$WORK/merge-top10"
diff "$WORK/truth-top10" "$WORK/merge-top10" | diag
bounds_ok() {
	jq -rn --slurpfile top "$1" --slurpfile t "$WORK/truth-union.json" --argjson b "$BOUND" \
		"(\$t[0] | map({(.key): .}) | add) as \$truth |
		 \$top[0].flows[] | ($key) as \$k |
		 if \$truth[\$k] == null then \"\(\$k): not sent\"
		 elif .packets < \$truth[\$k].packets or .packets > \$truth[\$k].packets + \$b
		 then \"\(\$k): \(.packets) packets, sent \(\$truth[\$k].packets)\" else empty end" >"$WORK/bad"
	[ ! -s "$WORK/bad" ]
}
check "merge top: every count within [truth, truth + $BOUND]" bounds_ok "$WORK/merge-top.json"
diag <"$WORK/bad"
check "merge top: the total is the union's ($N_UNION) and the bound e/w * N ($BOUND)" \
	jqe --argjson n "$N_UNION" --argjson b "$BOUND" \
	'.total_packets == $n and .error_bound.packets == $b and .files == 2' "$WORK/merge-top.json"
"$CLI" merge "$WORK/a.fsk" top -n 10 --json >"$WORK/a-top.json"
top_keys "$WORK/a-top.json" >"$WORK/a-top10"
check "host A's own top 10 is not the union's (the union matters)" \
	bash -c "! cmp -s '$WORK/a-top10' '$WORK/truth-top10'"
# Both hosts' spans are what the daemons' windows covered: equal when
# windows line up across hosts, else the difference said on stderr.
td=$(jq '[.time_difference.start_seconds, .time_difference.end_seconds] | max' "$WORK/merge-top.json")
if awk -v t="$td" 'BEGIN { exit !(t >= 0.001) }'; then
	check "spans $td s apart: merge says so on stderr ($(head -c 120 "$WORK/merge-top.err"))" \
		grep -q "cover different times: .*b.fsk starts .* than .*a.fsk" "$WORK/merge-top.err"
else
	check "spans within 1 ms: merge warns of nothing" [ ! -s "$WORK/merge-top.err" ]
fi
"$CLI" merge "$WORK/a.fsk" "$WORK/b.fsk" top -n 10 >"$WORK/merge-top.txt" 2>/dev/null
check "merge top prints the top table" grep -q "^ *10  " "$WORK/merge-top.txt"

# ---------------------------------------------------------------- merge flows
got=$("$CLI" merge "$WORK/a.fsk" "$WORK/b.fsk" flows --json 2>/dev/null | jq .distinct_flows)
check "merge flows: $got distinct flows, within 3 rse of the union's $TRUE_DISTINCT" \
	within_rse "$got" "$TRUE_DISTINCT" 3

# ---------------------------------------------------------------- Redis
redis-server --port 0 --unixsocket "$WORK/redis.sock" --unixsocketperm 700 --save '' \
	--appendonly no --dir "$WORK" --logfile "$WORK/redis.log" & REDIS_PID=$!
rcli() { redis-cli -s "$WORK/redis.sock" "$@"; }
redis_up() { [ "$(rcli ping 2>/dev/null)" = PONG ]; }
fs_until 50 --while "$REDIS_PID" redis_up || { diag <"$WORK/redis.log"; bail "a private redis-server on a unix socket"; }
ok "a private redis-server on a unix socket"
rcli -x set fs:a <"$WORK/a.redis" >/dev/null
rcli -x set fs:b <"$WORK/b.redis" >/dev/null
pf_a=$(rcli pfcount fs:a)
flows_a=$(fsd_as a cli flows --span $SPAN --json | jq .distinct_flows)
check "PFCOUNT of A's export ($pf_a) within 0.5 % of A's flows ($flows_a)" \
	awk -v a="$pf_a" -v b="$flows_a" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.005 * b) }'
rcli pfmerge fs:union fs:a fs:b >/dev/null
pf_u=$(rcli pfcount fs:union)
check "PFMERGE + PFCOUNT of both exports: $pf_u, within 3 rse of the union's $TRUE_DISTINCT" \
	within_rse "$pf_u" "$TRUE_DISTINCT" 3

# ---------------------------------------------------------------- PostgreSQL
PGDIR=$(mktemp -d /tmp/fs-fleet-pg.XXXXXX) && chown postgres: "$PGDIR" ||
	bail "a directory for PostgreSQL"
# PG_UP before the start: a start that times out may leave a server.
if runuser -u postgres -- "$PG_BIN/initdb" -D "$PGDIR/data" -A trust -U postgres \
	--no-sync -E UTF8 >"$PGDIR/initdb.log" 2>&1; then
	PG_UP=1
	runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w \
		-o "-k $PGDIR -c listen_addresses= -c fsync=off" start >/dev/null 2>&1
fi
pg() { psql -X -q -h "$PGDIR" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"; }
pg -c 'select 1' -o /dev/null ||
	{ cat "$PGDIR/initdb.log" "$PGDIR/server.log" 2>/dev/null | diag; bail "a private PostgreSQL on a unix socket"; }
ok "a private PostgreSQL on a unix socket"
check "host A's and B's pg-sql load" bash -c "psql -X -q -h '$PGDIR' -U postgres -d postgres -f '$WORK/a.sql' >/dev/null 2>'$WORK/pg.err' &&
	psql -X -q -h '$PGDIR' -U postgres -d postgres -f '$WORK/b.sql' >/dev/null 2>>'$WORK/pg.err'"
diag <"$WORK/pg.err"
# Load A again: it replaces A's span.
check "loading A again replaces its span" bash -c "psql -X -q -h '$PGDIR' -U postgres -d postgres -f '$WORK/a.sql' >/dev/null 2>&1"
pg --csv -v k=10 -f "$FLEET_SQL" >"$WORK/sql-top.csv" 2>"$WORK/pg.err"
diag <"$WORK/pg.err"
# src,dst,sport,dport,proto,packets,bytes of each, in order: the same list.
tail -n +2 "$WORK/sql-top.csv" | awk -F, '{ print $1, $2, $3, $4, $5, $7, $8 }' >"$WORK/sql-top"
jq -r '.flows[] | "\(.src) \(.dst) \(.sport) \(.dport) \(.proto_num) \(.packets) \(.bytes)"' \
	"$WORK/merge-top.json" >"$WORK/merge-top"
check "dist/fleet_top.sql gives merge top's list, flow for flow and count for count" \
	cmp -s "$WORK/merge-top" "$WORK/sql-top"
diff "$WORK/merge-top" "$WORK/sql-top" | head -20 | diag
sql_bound=$(tail -n +2 "$WORK/sql-top.csv" | cut -d, -f10 | sort -u)
check "its bound is merge's ($sql_bound packets)" \
	[ "$sql_bound" = "$(jq .error_bound.packets "$WORK/merge-top.json")" ]
pg_u=$(pg -At -c "select round(hll_cardinality(hll_union_agg(value))) from fs_hll where sketch = 'flows'")
check "hll_union_agg of both hosts' flows: $pg_u, within 3 rse of the union's $TRUE_DISTINCT" \
	within_rse "${pg_u:-0}" "$TRUE_DISTINCT" 3
check "PostgreSQL prints A's flows hll as the pg-hll export does" \
	bash -c "[ \"\$(psql -X -At -h '$PGDIR' -U postgres -d postgres -c \"select value from fs_hll where host = 'host-a' and sketch = 'flows'\")\" = \"\$(cat '$WORK/a.pghll')\" ]"
pg_a=$(pg -At -c "select round(hll_cardinality('$(cat "$WORK/a.pghll")'::hll))")
check "hll_cardinality of A's pg-hll text ($pg_a) within 0.5 % of A's flows ($flows_a)" \
	awk -v a="${pg_a:-0}" -v b="$flows_a" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.005 * b) }'

# ---------------------------------------------------------------- refusals
# A third daemon on B's veth: another secret, then another width.
fsd_as b fsd_stop
fsd_as b fsd_start --secret-file "$WORK/other-secret" ||
	bail "flowsketchd B with another secret answers status"
send "$NS_TXB" "$VETH_TXB" "$mac_b" 50 2000 1 9 "$WORK/t-c.json" && fsd_as b fsd_settle ||
	bail "traffic to the daemon of another secret"
fsd_as b cli export --format native --span $SPAN -o "$WORK/c-secret.fsk" || bail "an export of another secret"
fsd_as b fsd_stop
fsd_as b fsd_start --secret-file "$WORK/secret" --width 8192 --precision 12 ||
	bail "flowsketchd B of another width answers status"
send "$NS_TXB" "$VETH_TXB" "$mac_b" 50 2000 1 9 "$WORK/t-d.json" && fsd_as b fsd_settle ||
	bail "traffic to the daemon of another width"
fsd_as b cli export --format native --span $SPAN -o "$WORK/d-width.fsk" || bail "an export of another width"
fsd_as b cli export --format pg-sql --span $SPAN --host host-d -o "$WORK/d.sql" || bail "a pg-sql export of another width"

# refused WHAT PATTERN ARG...: merge exits 1 with one line matching PATTERN.
refused() {
	local what=$1 pat=$2; shift 2
	"$CLI" merge "$@" top >"$WORK/out" 2>"$WORK/err"
	rc=$?
	check "merge refuses $what (exit $rc: $(head -c 200 "$WORK/err"))" \
		bash -c "[ $rc = 1 ] && [ ! -s '$WORK/out' ] && [ \$(wc -l <'$WORK/err') = 1 ] && grep -qE -- '$pat' '$WORK/err'"
}
refused "a file of another secret, naming it" \
	'c-secret.fsk does not merge with .*a.fsk: it was made with another hash secret' \
	"$WORK/a.fsk" "$WORK/c-secret.fsk"
refused "a file of another width, naming it" \
	'd-width.fsk does not merge with .*a.fsk: its Count-Min width is 8192, .*a.fsk.s 4096' \
	"$WORK/a.fsk" "$WORK/b.fsk" "$WORK/d-width.fsk"
fsd_as b cli export --format redis --span $SPAN -o "$WORK/d.redis" 2>"$WORK/err"
check "export --format redis at p = 12 is refused, saying Redis has p = 14 only ($(cat "$WORK/err"))" \
	bash -c "[ ! -e '$WORK/d.redis' ] && grep -q 'precision 14 only' '$WORK/err'"
psql -X -q -h "$PGDIR" -U postgres -d postgres -f "$WORK/d.sql" >/dev/null 2>"$WORK/err"
rc=$?
check "PostgreSQL refuses the span of another width (exit $rc: $(grep -o 'fs_span_sketches_match_fs_fleet' "$WORK/err" | head -1))" \
	bash -c "[ $rc != 0 ] && grep -q fs_span_sketches_match_fs_fleet '$WORK/err'"
hosts=$(pg -At -c "select string_agg(host, ',' order by host) from fs_span")
check "... and keeps the fleet's tables as they were ($hosts)" [ "$hosts" = host-a,host-b ]
cp "$WORK/b.fsk" "$WORK/v5.fsk"
printf '\005' | dd of="$WORK/v5.fsk" bs=1 seek=8 conv=notrunc status=none
refused "a file of format version 5, naming it" 'v5.fsk: format version 5' "$WORK/a.fsk" "$WORK/v5.fsk"
head -c $(($(stat -c %s "$WORK/b.fsk") - 1000)) "$WORK/b.fsk" >"$WORK/short.fsk"
refused "a truncated file, naming it" 'short.fsk: truncated' "$WORK/a.fsk" "$WORK/short.fsk"
fsd_as a fsd_stop
fsd_as b fsd_stop
finish
