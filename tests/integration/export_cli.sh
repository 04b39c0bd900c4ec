#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# export_cli.sh - `flowsketch export` and `flowsketch merge` without a real
# daemon: tools/fs-fake-daemon serves export answers made here, whose every
# cell, register and candidate is known, so each output format is checked
# byte for byte against its documented layout (native.h, hll_export.h,
# pgsql.h) and merge's counts against the cells the candidates' exported
# columns name (one per row, export_perm.h).  Also: the request sent (protocol.h), every usage error (exit 2,
# one line, nothing on stdout), answers the CLI must refuse (bad base64,
# counts that disagree with the parameters, a register above its
# precision's largest rank, a fingerprint that is not hex), the detection
# sketches of a daemon with --detect into the file and merge's top --by and
# spread of them, no binary on
# a terminal, no partial file left by a failed -o, and merge's word on
# spans of different times.  No root needed.  Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/fake_daemon.sh

fake_test export-cli python3 jq

# answer FILE [KEY=VALUE...]: an export answer of depth 2, width 16,
# p = 14 with two candidates; KEY=VALUE change it (python expressions on
# the dict `a`, e.g. 'a["windows"]=0').
answer() {
	local out=$1; shift
	python3 - "$out" "$@" <<'EOF'
import base64, json, struct, sys
d, log2w, p = 2, 4, 14
# Candidate 1: row 0 column 1, row 1 column 2.
# Candidate 2: row 0 column 3, row 1 column 5.
cells = [(10 * i + 1, 1000 * i + 7) for i in range(d << log2w)]
cells[0] = (0, 0)                     # left out of pg-sql's fs_cms
cells[1] = (500, 70000)
cells[16 + 2] = (480, 71000)          # min over rows: 480 packets, 70000 bytes
cells[3] = (90, 9000)
cells[16 + 5] = (95, 8000)            # 90, 8000
regs = bytearray(3 << p)
for i in range(1 << p):
    regs[i] = (i * 7) % 20 + 1        # flows: every register 1..20
regs[(1 << p) + 5] = 3                # sources: one register
regs[(2 << p) + 9] = 51               # destinations: the largest rank at p = 14
raw = b''.join(struct.pack('<QQ', pk, by) for pk, by in cells) + bytes(regs)
a = {
    "span_seconds": 30, "windows": 30, "window_seconds": 1,
    "window_start": 1700000000, "window_end": 1700000030,
    "window_start_ns": 1700000000250000000, "window_end_ns": 1700000030250000000,
    "direction": "both",
    "params": {"cms_depth": d, "cms_log2_width": log2w, "cms_width": 1 << log2w,
               "hll_precision": p, "flags": 0, "conservative": False},
    "secret_fingerprint": "0123456789abcdef",
    "total_packets": 100000, "total_bytes": 90000000,
    "candidates": [
        {"src": "10.0.0.1", "dst": "10.0.0.2", "sport": 1234, "dport": 80,
         "proto": "tcp", "proto_num": 6, "family": 4,
         "columns": [1, 2], "packets": 480, "bytes": 70000, "direction": "in"},
        {"src": "2001:db8::1", "dst": "2001:db8::2", "sport": 53, "dport": 5353,
         "proto": "udp", "proto_num": 17, "family": 6,
         "columns": [3, 5], "packets": 90, "bytes": 8000, "direction": "both"},
    ],
    "sketch": {"encoding": "base64", "cells": d << log2w, "registers": 3 << p,
               "data": base64.b64encode(raw).decode()},
}
for edit in sys.argv[2:]:
    exec(edit)
json.dump(a, open(sys.argv[1], "w"))
EOF
}

# serve NAME FILE: a fake daemon on $T/NAME.sock answering FILE.
serve() { fake_serve "$@"; }

# run ARGS...: stdout, stderr, status in $T/out, $T/err, $rc.
run() { "$CLI" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
one_line() { [ "$(wc -l <"$T/err")" -eq 1 ]; }
jqe() { jq -e "$@" >/dev/null; }

usage_error() {
	local d=$1; shift
	run "$@"
	check "usage error: $d (exit $rc: $(head -c 160 "$T/err"))" \
		eval '[ "$rc" -eq 2 ] && one_line && [ ! -s "$T/out" ]'
}

# refused DESC TEXT ARGS...: exit 1, one line containing TEXT, no stdout.
refused() {
	local d=$1 text=$2; shift 2
	run "$@"
	check "$d (exit $rc: $(head -c 160 "$T/err"))" \
		eval '[ "$rc" -eq 1 ] && one_line && grep -qF -- "$text" "$T/err" && [ ! -s "$T/out" ]'
}

answer "$T/a.json"
serve a "$T/a.json" || bail "a fake daemon"
ex() { "$CLI" --socket "$T/a.sock" export "$@"; }

# ---------------------------------------------------------------- usage
usage_error "export without --format" --socket "$T/a.sock" export
usage_error "export --format unknown" export --format csv
usage_error "export --sketch unknown" export --format redis --sketch ports
usage_error "export --sketch with native" export --format native --sketch flows
usage_error "export --host with redis" export --format redis --host h
usage_error "export --host with a quote" export --format pg-sql --host "h'x"
usage_error "export --input with --span" export --format native --input x --span 60
usage_error "export --span 0" export --format native --span 0
usage_error "export --direction sideways" export --format native --direction sideways
usage_error "export stray argument" export --format native extra
usage_error "merge without a file" merge top
usage_error "merge without top or flows" merge a.fsk b.fsk
usage_error "merge with an option before top" merge --json a.fsk top
usage_error "merge flows -n" merge a.fsk flows -n 3
usage_error "merge top --sort connections" merge a.fsk top --sort connections
usage_error "merge top stray argument" merge a.fsk top extra

# ---------------------------------------------------------------- formats
ex --format native --span 60 --direction in -o "$T/a.fsk"
check "the request is protocol.h's export, span and direction given" \
	jqe -s '.[0] == {"cmd":"export","span":60,"direction":"in"}' "$T/a.log"
check "native: 96 + 2 * (40 + 2 * 4) + 8 + 16 * 32 + 8 + 3 * 16384 + 8 + 8 + 8 + 4 bytes" \
	[ "$(stat -c %s "$T/a.fsk")" = $((96 + 2 * 48 + 8 + 16 * 32 + 8 + 3 * 16384 + 8 + 8 + 8 + 4)) ]
python3 - "$T/a.fsk" "$T/a.json" >"$T/native.check" <<'EOF'
import base64, json, struct, sys, zlib
b = open(sys.argv[1], "rb").read()
a = json.load(open(sys.argv[2]))
bad = []
def want(what, got, exp):
    if got != exp:
        bad.append("%s: %r, not %r" % (what, got, exp))
want("magic", b[:8], b"FSEXPORT")
want("version, direction", struct.unpack_from("<II", b, 8), (4, 3))
want("params", b[16:32], b"FSK1" + bytes([1, 2, 4, 14, 0, 2]) + bytes(6))
want("fingerprint", struct.unpack_from("<Q", b, 32)[0], 0x0123456789abcdef)
want("times", struct.unpack_from("<QQQQ", b, 40),
     (a["window_start_ns"], a["window_end_ns"], 10**9, 30))
want("totals, candidates", struct.unpack_from("<QQQ", b, 72), (100000, 90000000, 2))
# Ascending key bytes: the IPv4 key (family 4) first.
want("candidate 0 key", b[96:104], bytes([4, 6, 0, 0]) + struct.pack(">HH", 1234, 80))
want("candidate 0 columns", struct.unpack_from("<II", b, 136), (1, 2))
want("candidate 1 columns", struct.unpack_from("<II", b, 184), (3, 5))
want("candidate 1 family", b[144], 6)
off = 96 + 96
want("cells", struct.unpack_from("<Q", b, off)[0], 32)
raw = base64.b64decode(a["sketch"]["data"])
# The answer has no detection sketch and no sample (its daemon says
# nothing of them): after the registers, three counts of 0 (prefix,
# spread and sample buckets).
want("cells and registers", b[off + 8:off + 8 + 512] + b[off + 8 + 512 + 8:-28], raw)
want("no prefix, spread or sample buckets", struct.unpack_from("<QQQ", b, len(b) - 28), (0, 0, 0))
want("registers", struct.unpack_from("<Q", b, off + 8 + 512)[0], 3 << 14)
want("crc", struct.unpack_from("<I", b, len(b) - 4)[0], zlib.crc32(b[:-4]))
if bad: print("\n".join(bad))
EOF
check "native: every field where native.h puts it" [ ! -s "$T/native.check" ]
diag <"$T/native.check"

ex --format redis -o "$T/a.redis"
python3 - "$T/a.redis" >"$T/redis.check" <<'EOF'
import sys
b = open(sys.argv[1], "rb").read()
bad = []
if len(b) != 12304: bad.append("length %d" % len(b))
if b[:4] != b"HYLL" or b[4] != 0 or b[15] != 0x80: bad.append("header %r" % b[:16])
bits = int.from_bytes(b[16:], "little")
for i in range(16384):
    if (bits >> (6 * i)) & 63 != (i * 7) % 20 + 1:
        bad.append("register %d" % i); break
if bad: print("\n".join(bad))
EOF
check "redis: 12,304 bytes, HYLL dense, stale cardinality, the flows registers LSB first" \
	[ ! -s "$T/redis.check" ]
diag <"$T/redis.check"
ex --format redis --sketch destinations -o "$T/d.redis"
check "redis --sketch destinations: register 9 is 51" \
	python3 -c "import sys; b=open('$T/d.redis','rb').read(); sys.exit((int.from_bytes(b[16:],'little') >> 54) & 63 != 51)"

ex --format pg-hll >"$T/a.pghll"
python3 - "$T/a.pghll" >"$T/pg.check" <<'EOF'
import sys
t = open(sys.argv[1]).read()
bad = []
if not t.startswith("\\x148e7f") or not t.endswith("\n"): bad.append("framing %r" % t[:10])
b = bytes.fromhex(t[2:].strip())
if len(b) != 3 + 16384 * 5 // 8: bad.append("length %d" % len(b))
bits = int.from_bytes(b[3:], "big")
n = 16384 * 5
for i in range(16384):
    if (bits >> (n - 5 * (i + 1))) & 31 != (i * 7) % 20 + 1:
        bad.append("register %d" % i); break
if bad: print("\n".join(bad))
EOF
check "pg-hll: \\x14 8e 7f, then the flows registers 5 bits each, MSB first" [ ! -s "$T/pg.check" ]
diag <"$T/pg.check"

ex --format pg-sql --host edge-1 -o "$T/a.sql"
check "pg-sql: the span row of host edge-1 with its parameters and totals" \
	grep -q "VALUES ('edge-1', '2023-11-14 22:13:20.250000+00', '2023-11-14 22:13:50.250000+00', 30, 1, 'both', 2, 4, 14, '0123456789abcdef', 100000, 90000000);" "$T/a.sql"
check "pg-sql: a candidate's rows name its exported columns (rows 0 and 1: 1, 2)" \
	bash -c "grep -qP '^edge-1\t4\t6\t10.0.0.1\t10.0.0.2\t1234\t80\t0\t1$' '$T/a.sql' &&
		grep -qP '^edge-1\t4\t6\t10.0.0.1\t10.0.0.2\t1234\t80\t1\t2$' '$T/a.sql'"
check "pg-sql: non-zero cells only, by row and column" \
	bash -c "grep -qP '^edge-1\t1\t2\t480\t71000$' '$T/a.sql' && ! grep -qP '^edge-1\t0\t0\t' '$T/a.sql'"

ex --format native -o "$T/back.fsk"
run export --format redis --input "$T/a.fsk" -o "$T/in.redis"
check "export --input a native file: the same Redis string as from the daemon" \
	cmp -s "$T/in.redis" "$T/a.redis"

# ---------------------------------------------------------------- merge
run merge "$T/a.fsk" top --json
check "merge of one file: the candidates at min over rows of their cells (480 and 90)" \
	jqe '[.flows[] | [.src, .packets, .bytes]] == [["10.0.0.1", 480, 70000], ["2001:db8::1", 90, 8000]]
	       and .total_packets == 100000 and .error_bound.packets == 16990 and .candidates == 2' "$T/out"
run merge "$T/a.fsk" "$T/back.fsk" top --json
check "merge of a file with itself: cells and totals add (960, 200000), the candidate union has 2" \
	jqe '[.flows[].packets] == [960, 180] and .total_packets == 200000 and .candidates == 2 and .files == 2' "$T/out"
check "... and the same span twice: no warning, time_difference 0" \
	eval '[ ! -s "$T/err" ] && jq -e ".time_difference == {\"start_seconds\": 0, \"end_seconds\": 0}" "$T/out" >/dev/null'
run merge "$T/a.fsk" "$T/back.fsk" flows --json
d1=$(jq .distinct_flows "$T/out")
run merge "$T/a.fsk" flows --json
check "merge flows: a file with itself counts what it counts alone ($d1), registers take the max" \
	[ "$d1" = "$(jq .distinct_flows "$T/out")" ]
run merge "$T/a.fsk" top -n 1 --sort bytes
check "merge top prints the table of top" \
	bash -c "grep -q '^flowsketch merge: 1 export$' '$T/out' && grep -q '^flowsketch top: last 30 s' '$T/out' &&
		grep -qE '^1  10.0.0.1:1234 +10.0.0.2:80 ' '$T/out' && [ \$(grep -c '^[0-9] ' '$T/out') = 1 ]"
answer "$T/late.json" 'a["window_start_ns"] += 1500000000' 'a["window_end_ns"] += 250000000'
serve late "$T/late.json" || bail "a fake daemon"
"$CLI" --socket "$T/late.sock" export --format native -o "$T/late.fsk"
run merge "$T/a.fsk" "$T/late.fsk" top --json
check "spans of different times: merge says by how much, on one stderr line" \
	eval '[ "$rc" -eq 0 ] && one_line && grep -q "late.fsk starts 1.500 s later and ends 0.250 s later than .*a.fsk" "$T/err"'
check "... and in --json (time_difference 1.5 s, 0.25 s)" \
	jqe '.time_difference == {"start_seconds": 1.5, "end_seconds": 0.25}' "$T/out"

# ---------------------------------------------------------------- detection sketches
# A daemon with --detect (protocol.h: params carry the prefix and spread
# sketches' sizes, sketch.data their buckets after the registers): depth
# 1, width 16, t = 0 (V = 8) and s = 0 (R = 1); prefix bucket 3 holds
# 198.51.100.0/24 (tag 3: source, IPv4, /24) with 10 packets, a lead of
# 6 and 1000 bytes; spread bucket 5 (source side, row 0) 172.16.9.9.
DETECT='import base64, struct
a["params"].update({"prefix_depth": 1, "prefix_log2_width": 4, "prefix_skip_shift": 0,
                    "spread_depth": 1, "spread_log2_width": 4, "spread_sample_shift": 0})
pb = bytearray(64 * 16)
pb[192:196] = bytes([198, 51, 100, 0]); pb[192 + 16] = 3
struct.pack_into("<QQQ", pb, 192 + 24, 10, 6, 1000)
sb = bytearray(64 * 32)
sb[320:324] = bytes([172, 16, 9, 9]); struct.pack_into("<H", sb, 320 + 16, 0x1234); sb[320 + 18] = 4
sb[320 + 19:384] = bytes([0x11]) * 45
raw = base64.b64decode(a["sketch"]["data"]) + bytes(pb) + bytes(sb)
a["sketch"].update({"prefix_buckets": 16, "spread_buckets": 32,
                    "data": base64.b64encode(raw).decode()})'
answer "$T/detect.json" "$DETECT"
serve detect "$T/detect.json" || bail "a fake daemon"
run --socket "$T/detect.sock" export --format native -o "$T/detect.fsk"
check "export --format native of a daemon with --detect (exit $rc: $(head -c 160 "$T/err"))" \
	[ "$rc" -eq 0 ]
check "its parameters record says so: prefix 2^4, depth 1, t 0; spread 2^4, depth 1, s 0" \
	[ "$(od -An -tx1 -j26 -N4 "$T/detect.fsk" | tr -d ' ')" = 04100410 ]
run merge "$T/detect.fsk" top --by src4/24 --json
check "merge top --by src4/24: the bucket's candidate, V (10 + 6) / 2 = 64 packets, 8000 bytes, from 1 row" \
	jqe '.prefixes == [.prefixes[0]] and .prefixes[0].prefix == "198.51.100.0/24" and
	     .prefixes[0].packets == 64 and .prefixes[0].bytes == 8000 and .prefixes[0].rows == 1' "$T/out"
run merge "$T/detect.fsk" top --by dst4/24 --json
check "merge top --by dst4/24: none (the bucket is the source side's)" jqe '.prefixes == []' "$T/out"
run merge "$T/detect.fsk" "$T/detect.fsk" spread --by src --json
check "merge spread --by src: 172.16.9.9, from 1 row" \
	jqe '.spreaders | length == 1 and .[0].src == "172.16.9.9" and .[0].rows == 1 and .[0].distinct > 0' "$T/out"
usage_error "merge spread without --by" merge "$T/detect.fsk" spread
usage_error "merge spread --by port" merge "$T/detect.fsk" spread --by port
usage_error "merge spread --sort" merge "$T/detect.fsk" spread --by src --sort bytes
usage_error "merge top --by src4/20" merge "$T/detect.fsk" top --by src4/20
refused "merge top --by refuses a file without a prefix sketch" "a.fsk holds no prefix sketch" \
	merge "$T/a.fsk" top --by src
refused "merge refuses files of other detection sketches" \
	"a.fsk does not merge with $T/detect.fsk: its prefix sketch (flowsketchd --detect) is none" \
	merge "$T/detect.fsk" "$T/a.fsk" flows

# ---------------------------------------------------------------- refusals
bad() {
	local name=$1 text=$2; shift 2
	answer "$T/$name.json" "$@"
	serve "$name" "$T/$name.json" || bail "a fake daemon"
	refused "export refuses an answer with $name" "$text" \
		--socket "$T/$name.sock" export --format native -o "$T/$name.fsk"
	check "... and leaves no file" [ ! -e "$T/$name.fsk" ]
}
bad "bad base64" "not 49664 bytes of base64" 'a["sketch"]["data"] = a["sketch"]["data"][:-4] + "A==="'
bad "short sketch" "not 49664 bytes of base64" 'a["sketch"]["data"] = a["sketch"]["data"][:-8]'
bad "the wrong cell count" "not the 32 and 49152" 'a["sketch"]["cells"] = 64'
bad "a register of 52 at p = 14" "register of 52" \
	'import base64; r = bytearray(base64.b64decode(a["sketch"]["data"])); r[600] = 52; a["sketch"]["data"] = base64.b64encode(bytes(r)).decode()'
bad "a fingerprint that is not hex" "not 16 hex digits" 'a["secret_fingerprint"] = "0123456789abcdeg"'
bad "an IPv6 address for family 4" "not IPv4 ones" 'a["candidates"][0]["src"] = "2001:db8::9"'
bad "a depth of 9" "params.cms_depth" 'a["params"]["cms_depth"] = 9'
bad "a column of 16 at width 16" "column in row 1 is not a whole number below the width 16" \
	'a["candidates"][0]["columns"] = [1, 16]'
bad "three columns at depth 2" "a candidate of 3 columns, not one per row (2)" \
	'a["candidates"][1]["columns"] = [1, 2, 3]'
bad "a candidate without columns" "columns" 'del a["candidates"][0]["columns"]'
bad "a prefix sketch of depth 9" "a prefix sketch of depth 9" "$DETECT" 'a["params"]["prefix_depth"] = 9'
refused "export -o into a directory that is not there" "cannot create a file beside" \
	--socket "$T/a.sock" export --format native -o "$T/nowhere/x.fsk"
if command -v script >/dev/null; then
	script -qec "$CLI --socket $T/a.sock export --format native" /dev/null >"$T/out" 2>&1
	check "export refuses to write a binary sketch to a terminal" \
		grep -q "not writing a binary sketch to a terminal" "$T/out"
fi
# A file of format version 1 (raw flow hashes, datapath order): refused,
# saying why and what to do.
{ printf 'FSEXPORT\001\000\000\000'; head -c 200 /dev/zero; } >"$T/v1.fsk"
refused "merge refuses a version 1 file, saying it carried the hashes" \
	"v1.fsk: format version 1, which carried raw keyed flow hashes (they give the hash key away) and cannot be read without the secret: export it again with this flowsketch" \
	merge "$T/v1.fsk" top
printf 'FSEXPORT\002\000\000\000' >"$T/short.fsk"
refused "merge names a truncated file" "short.fsk: truncated: 12 bytes, shorter than the 96-byte header" \
	merge "$T/short.fsk" top
refused "merge names a file that is not there" "missing.fsk: cannot be read: No such file" \
	merge "$T/a.fsk" "$T/missing.fsk" flows
refused "merge names a file that is not an export" "a.json: not a flowsketch export" \
	merge "$T/a.json" top
finish
