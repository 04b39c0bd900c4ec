#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# upgrade.sh - a datapath pinned by the previous release, adopted by this
# one, as `systemctl restart` after a package upgrade does (the unit runs
# with --keep).
#
#   NS_TX [fs-gen] --veth--> NS_RX [flowsketchd PREV --keep, then this one]
#
# The previous release (PREV, the commit before the per-interface counts)
# is built from this repository's history into WORK.  For each ingress
# mode (xdp, tracepoint): PREV counts known traffic and stops with --keep;
# this daemon adopts what it pinned (adopted: true) and counts more; then:
#   - the window totals are exactly everything fs-gen sent, before and
#     after the upgrade (the adopted maps are the same memory);
#   - XDP's link moved to the new program: its "in" counts, in fresh
#     maps, are exactly what was sent after the upgrade;
#   - the tracepoint links (egress always, ingress in tracepoint mode)
#     keep PREV's program, which counts no interface apart: no "in"/"out"
#     for them in status and no series on /metrics, a warning naming
#     --replace, never a 0 that looks like a count;
#   - --replace starts afresh, and every per-interface count is back,
#     exactly what is sent after it;
#   - the earlier release's byte registers (hll) adopted whole, and folded:
#     the distinct flows of the history are those of every run (in
#     tracepoint mode, the programs kept count in hll alone), also after a
#     second restart on this release's own pins; after --replace, hll is
#     one element (sketch_kind.h, "Legacy maps");
#   - xdp: a blocklist (fs-gen's IPv4 sources, 10.64.0.0/10) in force
#     before the upgrade stays in force after it, on the earlier release's
#     tries and counters and this one's filter: every IPv4 packet of both
#     runs dropped and counted, no other; the earlier release's filter
#     pins (bloom, bexact) gone, this one's (bfilter, bsummary) there.
# Needs the history (a shallow clone skips it, saying so).  Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

PREV=d4b21c7
PORT=9108		# in NS_RX, whose ports are all free
NEW_FSD=build/flowsketchd
NEW_CLI=build/flowsketch
FSD=$NEW_FSD
CLI=$NEW_CLI

# send PACKETS SEED TRUTH: from NS_TX to VETH_RX.
send() { gen_in --flows 100 --packets "$1" --seed "$2" --truth "$3"; }
# sent TRUTH...: the truth files' packets.
sent() { jq -s 'map(.total_packets) | add' "$@"; }
stop() { kill -"$1" "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=""; }
metrics() { fs_in "$NS_RX" curl -sf --max-time 5 -o "$1" "http://127.0.0.1:$PORT/metrics"; }

# The pinned byte registers' element count (sketch_kind.h, "Legacy maps").
hll_entries() { bpftool -j map show pinned "$PIN_DIR/hll" 2>/dev/null | jq '.max_entries'; }
# legacy_whole WHAT: hll holds both slots, 2 ceil(3 2^p / 32768) elements.
legacy_whole() {
	local p want
	p=$(jq '.params.hll_precision' "$WORK/st.json")
	want=$((2 * ((3 * (1 << p) + 32767) / 32768)))
	check "$1 ($(hll_entries) elements of $want)" [ "$(hll_entries)" = "$want" ]
}
# distinct_both WHAT TRUTH...: distinct flows over the whole history within
# 3 relative standard errors (+1) of the flows the truth files sent.  The
# earlier release's programs that stay attached count in hll alone: an
# adopting daemon that did not fold it would miss their flows.
distinct_both() {
	local what=$1 union est hist p
	shift
	p=$(jq '.params.hll_precision' "$WORK/st.json")
	union=$(jq -s '[.[].flows[] | [.proto, .src, .dst, .sport, .dport]] | unique | length' "$@")
	hist=$(jq '.history_seconds' "$WORK/st.json")
	est=$(cli flows --json --span "$hist" 2>/dev/null | jq '.distinct_flows')
	check "$what: distinct flows of every run, $est, within 3 standard errors of $union" \
		jq -en --argjson e "${est:-null}" --argjson t "$union" --argjson p "$p" '$e != null and (($e - $t) | fabs) <= 3 * 1.04 / pow(2; $p / 2) * $t + 1'
}

fs_test up "$GEN"
if ! git cat-file -e "$PREV^{commit}" 2>/dev/null; then
	ok "# SKIP the previous release ($PREV) is not in this clone's history"
	finish
fi
mkdir "$WORK/prev"
if (git archive "$PREV" | tar -x -C "$WORK/prev") &&
   make -C "$WORK/prev" -j"$(nproc)" >"$WORK/prev-build.log" 2>&1; then
	ok "the previous release ($PREV) builds"
else
	tail -n 20 "$WORK/prev-build.log" | diag
	bail "the previous release ($PREV) builds"
fi
fs_test_pair

# v4 TRUTH...: the truth files' IPv4 packets.
v4() { jq -s 'map(.flows[] | select(.family == 4) | .packets) | add' "$@"; }

for mode in xdp tracepoint; do
	seed=$([ "$mode" = xdp ] && echo 10 || echo 20)
	opts=(--ingress "$mode" --metrics "127.0.0.1:$PORT")
	echo "10.64.0.0/10" >"$WORK/blocklist"	# read with --ingress xdp only
	FSD=$WORK/prev/build/flowsketchd CLI=$WORK/prev/build/flowsketch
	fsd_start "${opts[@]}" --keep || bail "$mode: the previous release runs"
	send 3000 $((seed + 1)) "$WORK/$mode-1.json" || bail "$mode: traffic before"
	fsd_settle || bail "$mode: windows closed"
	stop TERM
	FSD=$NEW_FSD CLI=$NEW_CLI
	: >"$WORK/daemon.log"
	fsd_start "${opts[@]}" --keep || bail "$mode: this release starts on the previous one's pins"
	check "$mode: this release adopted the previous one's datapath" \
		jqe '.adopted == true' "$WORK/st.json"
	send 2000 $((seed + 2)) "$WORK/$mode-2.json" || bail "$mode: traffic after"
	fsd_settle egress || bail "$mode: windows closed after"
	all=$(sent "$WORK/$mode-1.json" "$WORK/$mode-2.json")
	after=$(sent "$WORK/$mode-2.json")
	check "$mode: window totals are everything sent, before and after ($(jq .totals.packets "$WORK/st.json") = $all)" \
		jqe --argjson n "$all" '.totals.packets == $n' "$WORK/st.json"
	legacy_whole "$mode: this release adopted the earlier release's byte registers (hll) whole"
	distinct_both "$mode" "$WORK/$mode-1.json" "$WORK/$mode-2.json"
	if [ "$mode" = tracepoint ]; then
		# A second restart adopts what this release pinned over the
		# earlier one's: its receive program still counts in hll.
		stop TERM
		: >"$WORK/daemon.log"
		fsd_start "${opts[@]}" --keep || bail "$mode: this release restarts on its own pins"
		send 1000 $((seed + 4)) "$WORK/$mode-2b.json" || bail "$mode: traffic after the restart"
		fsd_settle egress || bail "$mode: windows closed after the restart"
		all=$(sent "$WORK/$mode-1.json" "$WORK/$mode-2.json" "$WORK/$mode-2b.json")
		check "$mode: restarted again, the window totals are still everything sent ($(jq .totals.packets "$WORK/st.json") = $all)" \
			jqe --argjson n "$all" '.totals.packets == $n' "$WORK/st.json"
		legacy_whole "$mode: restarted again, hll is still whole"
		distinct_both "$mode, restarted again" "$WORK/$mode-1.json" "$WORK/$mode-2.json" "$WORK/$mode-2b.json"
	fi
	if [ "$mode" = xdp ]; then
		n4=$(v4 "$WORK/$mode-1.json" "$WORK/$mode-2.json")
		check "xdp: the blocklist held across the upgrade: every IPv4 packet dropped ($(jq .blocklist.dropped_packets "$WORK/st.json") = $n4 of $all)" \
			jqe --argjson n "$n4" '.blocklist.dropped_packets == $n and .blocklist.entries == 1' "$WORK/st.json"
		check "xdp: the earlier release's filter pins are gone, this one's are there" \
			bash -c '[ ! -e "$1/bloom" ] && [ ! -e "$1/bexact" ] && [ -e "$1/bfilter" ] && [ -e "$1/bsummary" ]' _ "$PIN_DIR"
	fi
	itf=$(jq -c '.interfaces[0] | {in, out}' "$WORK/st.json")
	if [ "$mode" = xdp ]; then
		check "xdp: the moved link counts per interface from the upgrade on ($itf; sent after $after)" \
			jqe --argjson n "$after" '.interfaces[0].in.packets == $n' "$WORK/st.json"
	else
		check "tracepoint: the kept receive link shows no per-interface count ($itf)" \
			jqe '.interfaces[0] | has("in") | not' "$WORK/st.json"
	fi
	check "$mode: the kept egress link shows none either, and no unattributed out" \
		jqe '(.interfaces[0] | has("out") | not) and (.unattributed | has("out") | not)' "$WORK/st.json"
	check "$mode: a warning names --replace for each kept link" \
		bash -c '[ "$(grep -c "kept from an earlier release has no per-interface counts.*--replace" "$1")" = "$2" ]' \
		_ "$WORK/daemon.log" "$([ "$mode" = xdp ] && echo 1 || echo 2)"
	metrics "$WORK/$mode.prom" || bail "$mode: /metrics answers"
	want_series=$([ "$mode" = xdp ] && echo in || echo "")
	got_series=$(grep -o '^flowsketch_packets_total{[^}]*direction="[a-z]*"' "$WORK/$mode.prom" |
		sed 's/.*direction="//; s/"$//' | sort | tr '\n' ' ' | sed 's/ $//')
	check "$mode: /metrics has per-interface series only for what counts them ('$got_series')" \
		[ "$got_series" = "$want_series" ]
	stop TERM

	# --replace: this release's programs everywhere, counts from 0.
	: >"$WORK/daemon.log"
	fsd_start "${opts[@]}" --replace || bail "$mode: --replace starts"
	send 1500 $((seed + 3)) "$WORK/$mode-3.json" || bail "$mode: traffic after --replace"
	fsd_settle egress || bail "$mode: windows closed after --replace"
	n=$(sent "$WORK/$mode-3.json")
	check "$mode: after --replace, hll, which nothing writes now, is one element ($(hll_entries))" \
		[ "$(hll_entries)" = 1 ]
	check "$mode: after --replace, in and out per interface are back ($(jq -c '.interfaces[0] | {in, out}' "$WORK/st.json"); sent $n in)" \
		jqe --argjson n "$n" '.interfaces[0].in.packets == $n and (.interfaces[0].out.packets | type) == "number"' "$WORK/st.json"
	stop TERM
	check "$mode: SIGTERM without --keep leaves no pins" [ ! -e "$PIN_DIR" ]
done
finish
