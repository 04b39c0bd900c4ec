#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# metrics.sh - flowsketchd --metrics: /metrics in the Prometheus text
# format, read by Prometheus's own parser and scraped by a real server.
#
#   NS_TX [fs-gen IN] --veth--> NS_RX [flowsketchd --metrics 127.0.0.1:PORT,
#   NS_TX             <--veth-- NS_RX  fs-gen OUT, prometheus, curl]
#
# Everything that talks HTTP runs in NS_RX, on its loopback.  Checks:
#   - bad --metrics values (no port, port out of range, a name that does
#     not resolve, an address not of this host, the port in use) exit 1
#     with one message, nothing pinned, no state, no socket;
#   - while traffic runs, the page's top talkers and distinct counts are
#     `top -n 10` and `flows --direction in|out` of the same window (the
#     page's windows_finished the same before and after the CLI asked);
#   - prometheus_client's parser reads the page, every family has HELP
#     and TYPE, counters end in _total;
#   - every value status --json shows is the page's: packets_total and
#     bytes_total have one series per interface and direction
#     ({interface="VETH_RX",direction="in|out"}, no interface="unknown"),
#     valued as status's .interfaces[].in/out, and they, status's counts
#     and the window totals are exactly what the generators sent; status's
#     .unattributed is 0 (the blocklist drops the IPv4 half, so its
#     counters are not 0);
#   - a prometheus server started here scrapes the daemon every second and
#     its /api/v1/query returns the series, valued as status;
#   - SIGKILL during traffic and a restart on the same pins: no counter
#     goes back, and the totals are exact again; SIGKILL with the stored
#     windows removed (as if the store had failed): status's window totals
#     restore less than was sent, but the per-interface counters (pinned
#     maps, not the windows) are still everything sent, on the page and in
#     status, no counter goes back, and they count on exactly what is sent
#     after;
#   - POST is 405, /nope 404, a 100 KB header a 4xx or a closed
#     connection; 200 clients that connect and send nothing delay no
#     window, and /metrics answers meanwhile;
#   - the verdict cache's counter (flowsketch_blocklist_cached_packets_total,
#     status's cached) moves as the traffic says: one source beside an
#     entry, NEAR packets, is NEAR - c cache hits (c: the CPUs that saw it
#     first), none dropped;
#   - SIGTERM without --keep leaves no state (the metrics state included);
#     --ingress tracepoint has no blocklist metrics, and its fresh datapath
#     starts the interface's series from 0.
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

PORT=9108		# in NS_RX, whose ports are all free
PROM_PORT=9090
PROM_PID=""
SLOW_PID=""	# FSD=PATH: another build of the daemon
PY=/usr/bin/python3	# Debian's, with python3-prometheus-client
CHECK=tests/integration/metrics_check.py

stop() { fs_daemon_stop "$1"; }

test_cleanup() {
	[ -n "$SLOW_PID" ] && kill -KILL "$SLOW_PID" 2>/dev/null
	stop "$PROM_PID"
	rm -rf "$PIN_DIR-bad"
}

rx() { fs_in "$NS_RX" "$@"; }
py() { rx "$PY" "$CHECK" "$@"; }
# metrics FILE: the page, or fail.
metrics() { rx curl -sf --max-time 5 -o "$1" "http://127.0.0.1:$PORT/metrics"; }
# code CURL_ARGS...: the HTTP status of one request.
code() { rx curl -s -o /dev/null --max-time 5 -w '%{http_code}' "$@"; }

start() {
	fsd_start --metrics "127.0.0.1:$PORT" --detect prefixes,spread "$@" &&
		fs_until 100 --while "$DAEMON_PID" metrics "$WORK/first.prom"
}

status_once() { cli status --json >"$WORK/st.json"; }
# Until two windows of each direction closed after now.
settle() { fsd_settle egress; }

# sandwich OUT CMD...: the page before and after CMD, until both show the
# same windows finished (CMD's answer is then of the page's window); the
# second page in OUT.
sandwich() {
	local out=$1 a b; shift
	for _ in $(seq 8); do
		metrics "$WORK/before.prom" || return 1
		"$@" || return 1
		metrics "$out" || return 1
		a=$(py finished "$WORK/before.prom")
		b=$(py finished "$out")
		[ -n "$a" ] && [ "$a" = "$b" ] && return 0
	done
	return 1
}

send_in() { gen_in --flows 300 --packets "$1" --rate "$2" --zipf 1.2 --seed "$3" --truth "$4"; }
send_out() { gen_out --flows 200 --packets "$1" --rate "$2" --zipf 1.2 --seed "$3" --truth "$4"; }

fs_test met "$GEN" "$PY" /usr/bin/prometheus /usr/bin/curl
"$PY" -c 'import prometheus_client.parser' 2>/dev/null ||
	bail "python3-prometheus-client is installed (scripts/deps.sh)"
fs_test_pair
start || bail "flowsketchd answers status and /metrics"
ok "flowsketchd answers status and /metrics on 127.0.0.1:$PORT"

# ---------------------------------------------------------------- refusals
# refused WHAT ARG TEXT: exit 1, one line naming TEXT, nothing left.
refused() { fsd_refused "--metrics $2 ($1)" "$3" --metrics "$2"; }
refused "no port" 127.0.0.1 "no port"
refused "port out of range" 127.0.0.1:65536 "from 1 to 65535"
refused "unresolvable" no-such-host.invalid:$PORT "cannot resolve"
refused "not this host's" 192.0.2.1:$PORT "not an address of this host"
refused "port in use" 127.0.0.1:$PORT "Address already in use"
# The running daemon's own pin directory and port: it is named, not the port.
rx "$FSD" -i "$VETH_RX" --pin-dir "$PIN_DIR" --state-dir "$WORK/bad-state" \
	--socket "$WORK/bad.sock" --blocklist "$WORK/blocklist" \
	--metrics "127.0.0.1:$PORT" >/dev/null 2>"$WORK/bad.err"
rc=$?
check "a second daemon on the pin directory and port: exit 1, one line naming the first ($(cat "$WORK/bad.err"))" \
	bash -c '[ "$0" = 1 ] && [ "$(wc -l <"$1")" = 1 ] && grep -qF "another flowsketchd is using $2 (pid" "$1" &&
		 [ ! -e "$3" ] && [ ! -e "$4" ]' "$rc" "$WORK/bad.err" "$PIN_DIR" "$WORK/bad-state" "$WORK/bad.sock"
check "the running daemon still answers /metrics" metrics "$WORK/m.prom"

# ---------------------------------------------------------------- traffic
cli block add 10.64.0.0/10 >/dev/null || bail "block add"
# About 6 s of traffic each way, so that several 1 s windows carry both.
send_in 12000 2000 11 "$WORK/in1.json" & p1=$!
send_out 8000 1500 22 "$WORK/out1.json" & p2=$!
# The detection sketches' answers too (n is --metrics-top's default).  All
# through the CLI: a python client's start (0.3 s here) made the sandwich
# straddle a 1 s window more often than not.
window_cmds() {
	cli top -n 10 --json >"$WORK/top.json" &&
	cli flows --direction in --json >"$WORK/flows_in.json" &&
	cli flows --direction out --json >"$WORK/flows_out.json" &&
	cli top --by src4/24 -n 10 --direction in --json >"$WORK/pfx.json" &&
	cli spread --by dst -n 10 --direction in --json >"$WORK/spr.json"
}
# A finished window that carried traffic: the generators start when the
# machine lets them, not after a fixed time.
window_busy() {
	jqe '(.flows | length) > 0' "$WORK/top.json" &&
		jqe '(.prefixes | length) > 0' "$WORK/pfx.json" &&
		jqe '(.spreaders | length) > 0' "$WORK/spr.json"
}
busy_window() {
	sandwich "$WORK/w.prom" window_cmds || { echo "$EPOCHREALTIME no page pair of one window" >>"$WORK/busy.log"; return 1; }
	window_busy || { echo "$EPOCHREALTIME window to $(jq .window_end "$WORK/top.json"): no traffic in it" >>"$WORK/busy.log"; return 1; }
}
if fs_until 30 --while "$p1" busy_window; then
	check "while traffic runs: top_packets is top -n 10 and distinct_* flows --direction of the same window" \
		py window "$WORK/w.prom" "$WORK/top.json" "$WORK/flows_in.json" "$WORK/flows_out.json"
	check "while traffic runs: top_prefix_packets and top_spread are the prefixes and spread answers of the same window" \
		py detect "$WORK/w.prom" "$WORK/pfx.json" "$WORK/spr.json"
else
	not_ok "while traffic runs: a page before and after the CLI's answers of one window"
	diag <"$WORK/busy.log"
fi
wait $p1 && wait $p2 || bail "both generators sent their packets"
settle || bail "two windows closed after the traffic"

check "prometheus_client's parser reads the page; every family has HELP and TYPE" \
	py families "$WORK/w.prom"
sandwich "$WORK/m.prom" status_once || bail "a page and status of one window"
check "every value status shows is the page's; packets and bytes are exactly what was sent ($(jq -c '[.totals.packets, .blocklist.dropped_packets]' "$WORK/st.json"))" \
	py values "$WORK/m.prom" "$WORK/st.json" --iface "$VETH_RX" \
	--truth-in "$WORK/in1.json" --truth-out "$WORK/out1.json"
check "the blocklist dropped packets ($(jq .blocklist.dropped_packets "$WORK/st.json")): its counters are not all 0" \
	jqe '.blocklist.dropped_packets > 0 and .blocklist.entries == 1' "$WORK/st.json"

# ---------------------------------------------------------------- prometheus
mkdir -p "$WORK/prom"
cat >"$WORK/prom/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: flowsketch
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
nsenter --net="/run/netns/$NS_RX" /usr/bin/prometheus \
	--config.file="$WORK/prom/prometheus.yml" \
	--storage.tsdb.path="$WORK/prom/data" \
	--web.listen-address="127.0.0.1:$PROM_PORT" >"$WORK/prom.log" 2>&1 &
PROM_PID=$!
prom_pid=$PROM_PID
prom_ok=""
for _ in $(seq 40); do
	if py prom "http://127.0.0.1:$PROM_PORT" "$WORK/st.json" >"$WORK/prom.out"; then
		prom_ok=1
		break
	fi
	kill -0 "$PROM_PID" 2>/dev/null || break
	sleep 0.5
done
check "prometheus scraped the daemon: /api/v1/query has the series, valued as status ($(sed -n 's/^# //p' "$WORK/prom.out" | head -1))" \
	[ -n "$prom_ok" ]
[ -n "$prom_ok" ] || { diag <"$WORK/prom.out"; tail -5 "$WORK/prom.log" | diag; }
stop "$PROM_PID"; PROM_PID=""
rm -rf "$WORK/prom"
check "prometheus stopped, its files removed" \
	bash -c "! kill -0 $prom_pid 2>/dev/null && [ ! -e '$WORK/prom' ]"

# ---------------------------------------------------------------- restarts
send_in 8000 4000 33 "$WORK/in2.json" & p1=$!
send_out 5000 2500 44 "$WORK/out2.json" & p2=$!
sleep 1
metrics "$WORK/kill1.prom" || not_ok "a page before the SIGKILL"
fsd_kill
sleep 0.3
start || bail "a restart after SIGKILL answers"
check "the restart adopted the pinned datapath" jqe '.adopted == true' "$WORK/st.json"
check "right after the restart, no counter is below the page before the SIGKILL" \
	py monotonic "$WORK/kill1.prom" "$WORK/first.prom"
wait $p1 && wait $p2 || bail "both generators sent their packets across the kill"
settle || bail "two windows closed after the traffic"
sandwich "$WORK/m2.prom" status_once || bail "a page and status of one window"
check "after it, no counter went back" py monotonic "$WORK/kill1.prom" "$WORK/m2.prom"
check "and the totals are exact again: everything sent, before and across the kill" \
	py values "$WORK/m2.prom" "$WORK/st.json" --iface "$VETH_RX" --truth-in "$WORK/in1.json" \
	--truth-in "$WORK/in2.json" --truth-out "$WORK/out1.json" --truth-out "$WORK/out2.json"

# The store loses its windows while no daemon runs: the next one restores
# less than was exported.  The per-interface counters are pinned maps,
# not windows: they must still be everything sent, and count on from it.
# pk FILE [DIR [packets|bytes]]: the page's series of VETH_RX (nothing: none).
pk() { py get "$1" "flowsketch_${3:-packets}_total" interface="$VETH_RX" direction="${2:-in}"; }
# sent KIND TRUTH...: the sum of the truth files' total_KIND.
sent() { local k=$1; shift; jq -s "map(.total_$k) | add" "$@"; }
# ifc DIR KIND: status's .interfaces[] count of VETH_RX.
ifc() { jq -r --arg n "$VETH_RX" ".interfaces[] | select(.name == \$n) | .$1.$2" "$WORK/st.json"; }
IN12=("$WORK/in1.json" "$WORK/in2.json")
OUT12=("$WORK/out1.json" "$WORK/out2.json")
fsd_kill
find "$WORK/state" -name 'window-*' -delete
start || bail "a restart with the windows removed answers"
check "with its windows gone, status restores fewer packets than were sent ($(jq .totals.packets "$WORK/st.json") < $(sent packets "${IN12[@]}"))" \
	[ "$(jq .totals.packets "$WORK/st.json")" -lt "$(sent packets "${IN12[@]}")" ]
# Nothing was sent since the SIGKILL: what status shows at once is all.
now="$(ifc in packets) $(ifc in bytes) $(ifc out packets) $(ifc out bytes)"
want="$(sent packets "${IN12[@]}") $(sent bytes "${IN12[@]}") $(sent packets "${OUT12[@]}") $(sent bytes "${OUT12[@]}")"
check "yet status's .interfaces[] counts are still everything sent, in and out ($now = $want)" \
	[ "$now" = "$want" ]
check "yet no counter of the page went back (the state file)" \
	py monotonic "$WORK/m2.prom" "$WORK/first.prom"
now="$(pk "$WORK/first.prom" in) $(pk "$WORK/first.prom" in bytes) $(pk "$WORK/first.prom" out) $(pk "$WORK/first.prom" out bytes)"
check "and the page's series of $VETH_RX go on from everything sent, in and out ($now = $want)" \
	[ "$now" = "$want" ]
send_in 3000 3000 55 "$WORK/in3.json" || bail "the generator sent its packets"
settle || bail "two windows closed after the traffic"
sandwich "$WORK/m3.prom" status_once || bail "a page and status of one window"
IN123=("${IN12[@]}" "$WORK/in3.json")
now="$(pk "$WORK/m3.prom" in) $(pk "$WORK/m3.prom" in bytes) $(ifc in packets) $(ifc in bytes)"
want="$(sent packets "${IN123[@]}") $(sent bytes "${IN123[@]}")"
check "and count on from there, exactly: page and status $now = sent $want twice (window totals: $(jq .totals.packets "$WORK/st.json"), what it saw since)" \
	[ "$now" = "$want $want" ]
check "... out unchanged: $(pk "$WORK/m3.prom" out) = $(sent packets "${OUT12[@]}") sent" \
	[ "$(pk "$WORK/m3.prom" out)" = "$(sent packets "${OUT12[@]}")" -a "$(ifc out packets)" = "$(sent packets "${OUT12[@]}")" ]

# ---------------------------------------------------------------- bad requests
URL="http://127.0.0.1:$PORT"
check "POST /metrics: 405" [ "$(code -X POST -d x "$URL/metrics")" = 405 ]
check "405 says Allow: GET, HEAD" \
	bash -c "nsenter --net=/run/netns/$NS_RX curl -s -o /dev/null -D - -X DELETE '$URL/metrics' | grep -qi '^allow: GET, HEAD'"
check "GET /nope: 404" [ "$(code "$URL/nope")" = 404 ]
check "HEAD /metrics: 200" [ "$(code -I "$URL/metrics")" = 200 ]
big=$(py bigheader 127.0.0.1 "$PORT" 100000)
check "a 100 KB header: answered $big (a 4xx, or the connection closed)" \
	bash -c "[[ '$big' == 4?? || '$big' == closed ]]"

cli status --json >"$WORK/s0.json"
rm -f "$WORK/ready"
rx "$PY" "$CHECK" slow 127.0.0.1 "$PORT" 200 4 "$WORK/ready" >"$WORK/slow.out" 2>&1 &
SLOW_PID=$!
fs_until 50 test -s "$WORK/ready"
check "200 clients connected that send nothing" [ "$(cat "$WORK/ready" 2>/dev/null)" = 200 ]
t0=$(date +%s%N)
check "meanwhile /metrics answers" metrics "$WORK/slow.prom"
check "meanwhile status answers" status_once
wait "$SLOW_PID"; SLOW_PID=""
cli status --json >"$WORK/s1.json"
t1=$(date +%s%N)
adv=$(jq -n --slurpfile a "$WORK/s0.json" --slurpfile b "$WORK/s1.json" '$b[0].counters.windows_finished - $a[0].counters.windows_finished')
late=$(jq -n --slurpfile a "$WORK/s0.json" --slurpfile b "$WORK/s1.json" '$b[0].counters.rotations_late - $a[0].counters.rotations_late')
secs=$(( (t1 - t0) / 1000000000 ))
# At most one late (10 ms or more): a loaded machine may delay one
# rotation whatever the clients do; stalled by them, every one would be.
check "no window held up meanwhile ($adv windows in ${secs}+ s, $late late; $(cat "$WORK/slow.out"))" \
	[ "$adv" -ge $((secs - 1)) -a "$late" -le 1 ]
check "/metrics answers after them" metrics "$WORK/after.prom"

# ---------------------------------------------------------------- verdict cache
# A source near an entry (its /16 holds one, none covers it) costs a filter
# probe on the first packet each CPU sees of it; the verdict cache lets
# every later one pass (bloom.h).  From the traffic alone: NEAR packets of
# one source, 10.64.0.1 (fs-gen's first IPv4 source), beside the entry
# 10.64.9.0/24, are NEAR - c cache hits, c the CPUs that saw it first
# (1 <= c <= the CPUs), and no drop.  The page's counter is status's.
NEAR=400
NCPU=$(getconf _NPROCESSORS_CONF)
cli block del 10.64.0.0/10 >/dev/null && cli block add 10.64.9.0/24 >/dev/null ||
	bail "the blocklist is one /24 beside the source"
sandwich "$WORK/c0.prom" status_once || bail "a page and status of one window before the near traffic"
checked0=$(jq .blocklist.checked_packets "$WORK/st.json")
cached0=$(jq .blocklist.cached "$WORK/st.json")
dropped0=$(jq .blocklist.dropped_packets "$WORK/st.json")
page0=$(py get "$WORK/c0.prom" flowsketch_blocklist_cached_packets_total)
gen_in --flows 1 --sources 1 --destinations 1 --ipv6-share 0 --packets "$NEAR" \
	--rate 2000 --seed 66 --truth "$WORK/near.json" || bail "the near source's packets sent"
# checked moves with every IP frame on the link, and only this sender
# sends: all are judged once it has moved by NEAR.
all_checked() { status_once && [ "$(jq .blocklist.checked_packets "$WORK/st.json")" -ge $((checked0 + NEAR)) ]; }
fs_until 100 all_checked || not_ok "the datapath judged the $NEAR near packets"
# The page is built as windows close: one of a window after the traffic.
settle || bail "two windows closed after the near traffic"
sandwich "$WORK/c1.prom" status_once || bail "a page and status of one window after the near traffic"
page1=$(py get "$WORK/c1.prom" flowsketch_blocklist_cached_packets_total)
cached1=$(jq .blocklist.cached "$WORK/st.json")
hits=$((cached1 - cached0))
check "near traffic: one source, 10.64.0.1, $NEAR packets ($(jq -c '[.flows[].src] | unique' "$WORK/near.json"), $(jq .total_packets "$WORK/near.json"))" \
	jqe --argjson n "$NEAR" '([.flows[].src] | unique) == ["10.64.0.1"] and .total_packets == $n' "$WORK/near.json"
check "near traffic: $hits cache hits, $NEAR less one to $NCPU (the CPUs that saw it first), none dropped" \
	bash -c '[ "$1" -ge $(($2 - $3)) ] && [ "$1" -le $(($2 - 1)) ] && [ "$(jq .blocklist.dropped_packets "$4")" = "$5" ]' \
	_ "$hits" "$NEAR" "$NCPU" "$WORK/st.json" "$dropped0"
check "flowsketch_blocklist_cached_packets_total is status's cached, before ($page0 = $cached0) and after ($page1 = $cached1)" \
	[ "$page0" = "$cached0" -a "$page1" = "$cached1" ]

# ---------------------------------------------------------------- stop
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID"; rc=$?; DAEMON_PID=""
check "SIGTERM: exit 0 (got $rc)" [ "$rc" = 0 ]
check "SIGTERM without --keep: no state left, the metrics state included" [ ! -e "$WORK/state" ]
check "SIGTERM: the port is free again" bash -c "! nsenter --net=/run/netns/$NS_RX curl -s -o /dev/null --max-time 2 '$URL/metrics'"

# --ingress tracepoint: no blocklist, the ingress frontend's misses.
start --ingress tracepoint || bail "--ingress tracepoint starts"
check "--ingress tracepoint: no blocklist metrics, recursion misses of frontend=\"ingress\"" \
	bash -c "! grep -q '^flowsketch_blocklist' '$WORK/first.prom' && grep -q '^flowsketch_recursion_misses_total{frontend=\"ingress\"}' '$WORK/first.prom'"
check "--ingress tracepoint: the parser reads the page" py families "$WORK/first.prom"
now="$(pk "$WORK/first.prom" in) $(pk "$WORK/first.prom" out) $(ifc in packets) $(ifc out packets)"
check "--ingress tracepoint, a fresh datapath: $VETH_RX's series and status's counts in and out are 0, nothing sent ($now)" \
	[ "$now" = "0 0 0 0" ]
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID"; DAEMON_PID=""
finish
