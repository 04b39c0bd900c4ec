#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# load.sh - flowsketchd under the fastest traffic this machine pushes
# through a veth pair, for LOAD_SECONDS (default 60) with 1 s windows.
#
#   NS_TX [fs-gen, --rate 0] --veth--> NS_RX [XDP datapath, flowsketchd]
#
# Ground truth is what fs-gen says it sent (--truth), the veths' own
# counters, and the daemon's stated worst case; never the daemon's claim
# about itself.  Checked:
#   - totals exact: the datapath sketched exactly the frames sent, and the
#     finished windows add up to every packet and byte sent (no window lost
#     or postponed, nothing counted twice while windows rotate under load);
#   - every report accounted for: the datapath's "reports" (records put in
#     the ring buffer) equal the daemon's reports_received once drained,
#     received is the sum of its outcomes, and reports_dropped (ring full)
#     is stated and must be 0 at this ring size;
#   - memory flat: the daemon's VmRSS, sampled every second, grows by at
#     most RSS_GROWTH_KIB after WARMUP seconds (the history, HISTORY
#     windows, is full by then; see below for what may still grow);
#   - large-span queries during the flood: top -n 10000 and flows over the
#     whole history answer, repeatedly, while RSS stays within the daemon's
#     own worst case (status memory.history_bytes_max, which includes the
#     query threads' scratch) plus RSS_ALLOWANCE_KIB for the process
#     itself; and a small `status` sent all along comes back within 1 s.
# Output: TAP ("ok N - ..."), diagnostics as "# ..." lines.
#
# LOAD_SECONDS (default 60, the run takes about 15 s more) can shorten it.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

GEN_PID=""
SAMPLER_PID=""

LOAD_SECONDS=${LOAD_SECONDS:-60}
FLOWS=${LOAD_FLOWS:-100000}
ZIPF=1.1
SEED=7
WINDOW=1
# Five windows of history: full after five seconds, so the ten-second
# warm-up below ends with the ring at its final size and the query
# threads' scratch touched (see the queries below).
HISTORY=5
WARMUP=10
# After the warm-up the history allocates nothing new (its windows and
# spare exist), and query scratch was allocated at start and touched in
# the warm-up.  A query's answer is built and freed on a query thread,
# which hands the memory back (malloc_trim), so RSS rises while a big
# answer is built and falls after: the peak is checked against the
# daemon's stated worst case, and the trend, the lowest RSS of the last
# 10 s against the lowest of the 10 s after the warm-up, may grow by at
# most RSS_GROWTH_KIB.  A leak does not fall back: one sketch per window
# (320 KiB) grows it by 10 MiB in 30 s, 1 KiB per report by far more.  And
# RSS may rise in at most two seconds per query round plus two.
RSS_GROWTH_KIB=${RSS_GROWTH_KIB:-4096}
# The process beside its history and query scratch: code and libraries,
# libbpf's object and BTF, thread stacks, the ring buffer's mapping
# (2 x 256 KiB), json-c answers being built.  Measured at about 10 MiB.
RSS_ALLOWANCE_KIB=${RSS_ALLOWANCE_KIB:-32768}
STATUS_MAX_MS=1000

test_cleanup() {
	fs_daemon_stop "$SAMPLER_PID"
	fs_daemon_stop "$GEN_PID"
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }
delta() { # delta FIELD: status1 - status0 of a counters field
	jq -n --slurpfile a "$WORK/status0.json" --slurpfile b "$WORK/status1.json" \
		"\$b[0].counters.$1 - \$a[0].counters.$1"
}

# ---------------------------------------------------------------- set-up
[[ "$LOAD_SECONDS" =~ ^[0-9]+$ ]] && [ "$LOAD_SECONDS" -ge $((WARMUP + 5)) ] ||
	bail "LOAD_SECONDS ($LOAD_SECONDS) is a whole number >= $((WARMUP + 5))"
fs_test load "$GEN" jq
fs_test_pair
ok "namespaces $NS_TX, $NS_RX joined by $VETH_TX <-> $VETH_RX"

# DAEMON_PID is the daemon's pid, whose /proc/PID/status the sampler reads.
if fsd_start --window "$WINDOW" --history "$HISTORY" &&
	cp "$WORK/st.json" "$WORK/status0.json" &&
	jq -e '.counters' "$WORK/status0.json" >/dev/null 2>&1; then
	ok "flowsketchd on $VETH_RX answers status"
else
	bail "flowsketchd on $VETH_RX answers status"
fi
MAX_BYTES=$(jq '.memory.history_bytes_max' "$WORK/status0.json")
[[ "$MAX_BYTES" =~ ^[0-9]+$ ]] || bail "status gives memory.history_bytes_max (got '$MAX_BYTES')"
RSS_LIMIT_KIB=$((MAX_BYTES / 1024 + RSS_ALLOWANCE_KIB))
echo "# history_bytes_max $MAX_BYTES B; RSS limit $RSS_LIMIT_KIB KiB (+ $RSS_ALLOWANCE_KIB KiB for the process)"

# ---------------------------------------------------------------- flood
# The daemon's memory every second from the flood's start: "SECONDS VmRSS
# RssAnon RssFile RssShmem" in KiB (the kinds, to tell a heap that grows
# from mappings such as the ring buffer's pages becoming resident).
sampler() {
	local s=0 kib
	while :; do
		kib=$(awk '/^(VmRSS|RssAnon|RssFile|RssShmem):/ {printf "%s ", $2}' \
			"/proc/$DAEMON_PID/status" 2>/dev/null) || break
		[ -n "$kib" ] || break
		echo "$s $kib"
		sleep 1
		s=$((s + 1))
	done
}

mac=$(fs_mac "$NS_RX" "$VETH_RX")
rx_link0=$(fs_link_stat "$NS_RX" "$VETH_RX" rx packets)
cli status --json >"$WORK/status0.json" || bail "status before the flood"
sampler >"$WORK/rss.txt" &
SAMPLER_PID=$!
start_ms=$(now_ms)
fs_in "$NS_TX" "$GEN" -i "$VETH_TX" --dst-mac "$mac" --flows "$FLOWS" \
	--rate 0 --duration "$LOAD_SECONDS" --zipf "$ZIPF" --seed "$SEED" \
	--truth "$WORK/truth.json" 2>"$WORK/gen.log" &
GEN_PID=$!

# Small status requests all through the flood, timed one by one.
status_loop() {
	local t0 t1
	while [ "$(($(now_ms) - start_ms))" -lt $((LOAD_SECONDS * 1000)) ]; do
		t0=$(now_ms)
		if cli status --json >/dev/null 2>&1; then
			t1=$(now_ms)
			echo "ok $((t1 - t0))"
		else
			t1=$(now_ms)
			echo "fail $((t1 - t0))"
		fi
		sleep 0.2
	done
}
status_loop >"$WORK/status_lat.txt" &
status_pid=$!

# Large-span queries over the whole history, during the flood: each round
# sends two tops and a flows at once, so that both query threads
# (workers.h) work.  Three rounds of four tops in the warm-up, once the
# history is full: a thread's scratch is allocated at start but its pages
# become resident only when a first query touches them, and the answer of
# up to 10000 flows is built in the thread's own malloc arena, which keeps
# what it once held (measured: about 7 MiB the first time a thread
# answers a top here).  That is not growth, but it happens only once every
# thread has answered a top, and a round of two could land on one thread.
# Then a round every 5 s until the flood ends, inside the measured time.
q=0
top_n=0
top_ok=0
flows_ok=0
query_round() { # query_round NTOPS
	local ntops=$1 pids=() i
	q=$((q + 1))
	for i in $(seq "$ntops"); do
		cli top --span "$HISTORY" -n 10000 --json --once \
			>"$WORK/top$q.$i.json" 2>"$WORK/top$q.$i.err" &
		pids+=($!)
	done
	cli flows --span "$HISTORY" --json \
		>"$WORK/flows$q.json" 2>"$WORK/flows$q.err" &
	pids+=($!)
	for i in $(seq "$ntops"); do
		top_n=$((top_n + 1))
		wait "${pids[$((i - 1))]}" &&
			jq -e '(.flows | length) > 0 and (.flows | length) <= 10000 and
				.windows >= 1' "$WORK/top$q.$i.json" >/dev/null 2>&1 &&
			top_ok=$((top_ok + 1))
	done
	wait "${pids[$ntops]}" && jq -e '.distinct_flows > 0' "$WORK/flows$q.json" \
		>/dev/null 2>&1 && flows_ok=$((flows_ok + 1))
}
sleep $((HISTORY + 1))
for _ in 1 2 3; do
	query_round 4
	sleep 0.5
done
while [ "$(($(now_ms) - start_ms))" -lt $((WARMUP * 1000 + 500)) ]; do
	sleep 0.2
done
rounds=0
while [ "$(($(now_ms) - start_ms))" -lt $(((LOAD_SECONDS - 3) * 1000)) ]; do
	rounds=$((rounds + 1))
	query_round 2
	sleep 5
done
wait "$GEN_PID"
gen_rc=$?
GEN_PID=""
wait "$status_pid"

if [ "$gen_rc" -eq 0 ] && [ -s "$WORK/truth.json" ]; then
	ok "fs-gen flooded for $LOAD_SECONDS s"
else
	diag <"$WORK/gen.log"
	bail "fs-gen flooded for $LOAD_SECONDS s"
fi
sent=$(jq .total_packets "$WORK/truth.json")
sent_bytes=$(jq .total_bytes "$WORK/truth.json")
elapsed=$(jq .elapsed_seconds "$WORK/truth.json")
pps=$(jq -n --argjson n "$sent" --argjson s "$elapsed" '$n / $s | floor')
echo "# sent $sent packets, $sent_bytes bytes, $(jq .distinct_flows "$WORK/truth.json") flows in $elapsed s: $pps packets/s, $(jq .send_retries "$WORK/truth.json") send retries"
tx_dropped=$(fs_link_stat "$NS_TX" "$VETH_TX" tx dropped)
check "the sending veth dropped nothing (tx dropped $tx_dropped)" [ "$tx_dropped" = 0 ]

# Every window holding traffic closed: two more rotations after the flood.
fsd_settle || bail "status after the flood"
cp "$WORK/st.json" "$WORK/status1.json"
fs_daemon_stop "$SAMPLER_PID"
SAMPLER_PID=""

# ---------------------------------------------------------------- totals
d_sketched=$(delta sketched)
d_rx=$(delta rx)
d_link=$(( $(fs_link_stat "$NS_RX" "$VETH_RX" rx packets) - rx_link0 ))
got_p=$(jq .totals.packets "$WORK/status1.json")
got_b=$(jq .totals.bytes "$WORK/status1.json")
check "datapath sketched exactly the $sent packets sent (got $d_sketched)" \
	[ "$d_sketched" = "$sent" ]
check "datapath saw exactly the veth's received frames ($d_rx vs $d_link)" \
	[ "$d_rx" = "$d_link" ]
check "finished windows total the packets sent ($got_p vs $sent)" [ "$got_p" = "$sent" ]
check "finished windows total the bytes sent ($got_b vs $sent_bytes)" [ "$got_b" = "$sent_bytes" ]
lost=$(jq -r '[.counters.windows_lost, .counters.rotations_postponed] | map(tostring) | join(" ")' \
	"$WORK/status1.json")
check "no window lost or postponed (got $lost)" [ "$lost" = "0 0" ]
echo "# rotations late: $(jq .counters.rotations_late "$WORK/status1.json"), worst $(jq .counters.rotation_late_max_us "$WORK/status1.json") us"

# ---------------------------------------------------------------- reports
c() { jq ".counters.$1" "$WORK/status1.json"; }
reports=$(c reports)
received=$(c reports_received)
dropped=$(c reports_dropped)
outcomes=$(jq '.counters | .reports_filed + .reports_duplicate + .reports_stray +
	.reports_refused + .reports_malformed' "$WORK/status1.json")
echo "# reports: $reports put in the ring, $received received ($(c reports_filed) filed, $(c reports_duplicate) duplicate, $(c reports_stray) stray, $(c reports_refused) refused, $(c reports_malformed) malformed), $dropped dropped"
check "the datapath reported flows ($reports)" [ "$reports" -gt 0 ]
check "every report the datapath put in the ring was received ($received of $reports)" \
	[ "$received" = "$reports" ]
check "every report received has one outcome ($outcomes of $received)" \
	[ "$outcomes" = "$received" ]
check "no report dropped for a full ring ($dropped)" [ "$dropped" = 0 ]

# ---------------------------------------------------------------- memory
n_samples=$(wc -l <"$WORK/rss.txt")
base=$(awk -v w="$WARMUP" '$1 == w {print $2}' "$WORK/rss.txt")
summary=$(awk -v w="$WARMUP" 'NR == 1 {first = $2}
	{ if (min == "" || $2 < min) min = $2; if ($2 > max) max = $2;
	  if ($1 >= w) { if (pmin == "" || $2 < pmin) pmin = $2; if ($2 > pmax) pmax = $2 } last = $2 }
	END { printf "first %d, min %d, max %d, last %d; after warm-up min %d, max %d KiB",
	      first, min, max, last, pmin, pmax }' "$WORK/rss.txt")
echo "# RSS ($n_samples samples): $summary"
echo "# RSS series (s:KiB): $(awk '{printf "%s:%s ", $1, $2}' "$WORK/rss.txt")"
echo "# anon/file/shmem series (s:KiB): $(awk '{printf "%s:%s/%s/%s ", $1, $3, $4, $5}' "$WORK/rss.txt")"
if [ -n "$base" ] && [ "$n_samples" -ge $((LOAD_SECONDS - 2)) ]; then
	last_s=$(tail -1 "$WORK/rss.txt" | awk '{print $1}')
	early=$(awk -v a="$WARMUP" -v b=$((WARMUP + 10)) '$1 >= a && $1 < b && (m == "" || $2 < m) {m = $2} END {print m + 0}' "$WORK/rss.txt")
	late=$(awk -v a=$((last_s - 10)) '$1 > a && (m == "" || $2 < m) {m = $2} END {print m + 0}' "$WORK/rss.txt")
	check "RSS flat after ${WARMUP} s: lowest of the last 10 s $late KiB, of the 10 s after warm-up $early KiB (bound +$RSS_GROWTH_KIB KiB)" \
		[ $((late - early)) -le "$RSS_GROWTH_KIB" ]
	rises=$(awk -v w="$WARMUP" '$1 > w && $2 > prev {n++} {prev = $2} END {print n + 0}' "$WORK/rss.txt")
	measured=$(awk -v w="$WARMUP" '$1 > w {n++} END {print n + 0}' "$WORK/rss.txt")
	check "RSS does not climb: rose in $rises of $measured seconds after warm-up (at most $((2 * rounds + 2)), for $rounds query rounds)" \
		[ "$rises" -le $((2 * rounds + 2)) ]
	max_all=$(awk '$2 > m {m = $2} END {print m + 0}' "$WORK/rss.txt")
	check "RSS within the stated worst case: peak $max_all KiB <= $RSS_LIMIT_KIB KiB" \
		[ "$max_all" -le "$RSS_LIMIT_KIB" ]
else
	not_ok "RSS sampled every second during the flood ($n_samples samples)"
fi

# ---------------------------------------------------------------- queries
check "top --span $HISTORY -n 10000 answered during the flood ($top_ok of $top_n)" \
	test "$q" -gt 2 -a "$top_ok" = "$top_n"
check "flows --span $HISTORY answered during the flood ($flows_ok of $q)" \
	test "$q" -gt 2 -a "$flows_ok" = "$q"
[ -s "$WORK/top$q.1.json" ] &&
	echo "# last round: top $(jq '.flows | length' "$WORK/top$q.1.json") flows of $(jq .windows "$WORK/top$q.1.json") windows ($(jq .total_packets "$WORK/top$q.1.json") packets); flows $(jq .distinct_flows "$WORK/flows$q.json" 2>/dev/null) distinct"
n_status=$(wc -l <"$WORK/status_lat.txt")
n_fail=$(grep -c '^fail' "$WORK/status_lat.txt")
worst=$(awk '$2 > m {m = $2} END {print m + 0}' "$WORK/status_lat.txt")
echo "# status during the flood: $n_status requests, worst $worst ms, median $(awk '{print $2}' "$WORK/status_lat.txt" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}') ms"
check "every status during the flood answered ($n_fail of $n_status failed)" \
	test "$n_status" -gt 0 -a "$n_fail" = 0
check "every status during the flood answered within $STATUS_MAX_MS ms (worst $worst ms)" \
	[ "$worst" -le "$STATUS_MAX_MS" ]
check "the daemon is still running" kill -0 "$DAEMON_PID"
finish
