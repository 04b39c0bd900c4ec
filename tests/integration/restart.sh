#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# restart.sh - flowsketchd killed and restarted under traffic: a new daemon
# adopts the pinned datapath (maps, program, links, hash secret, windows
# kept in --state-dir) and nothing is lost or counted twice.
#
#   NS_TX [fs-gen, 20000 pps] --veth--> NS_RX [XDP, flowsketchd x 20 kills]
#
# The oracles are fs-gen's ground truth (--truth: packets and bytes sent,
# per flow), what `ip link` shows on the receiving veth (the XDP program
# and its id), what bpftool shows of the pins (the link's and maps' ids)
# and what the filesystem shows (pins, state files); never the daemon's
# statement about itself beyond the field under test:
#   - 20 times, at random moments (some during a rotation): SIGKILL, the
#     same XDP program stays attached, a random pause with packets and no
#     daemon, a new daemon with the same options adopts (.adopted); after
#     them the first daemon's link still holds XDP (the program in it may
#     be new) and its counting maps are the ones that program uses;
#   - after the traffic, and two more windows: .totals.packets/.bytes are
#     exactly what fs-gen sent over all the kills, .counters.sketched too;
#     `top`/`flows` over a span covering the run reach back before the
#     first kill and add up to everything sent; the top flows' counts are
#     within [truth, truth + e/w * N] and the distinct flows within 3
#     relative standard errors 1.04/sqrt(2^p) of the truth (a hash secret
#     that changed on adoption would break both);
#   - SIGTERM of a --keep daemon leaves pins, link and XDP; the next daemon
#     answers the same span with the same windows and numbers;
#   - a different --depth, --width, --precision, --sample-rate or
#     --sample-buckets is refused (exit 1, one line naming the option) and
#     changes nothing on the host; a normal restart still adopts; --replace
#     starts afresh (new program, totals 0);
#   - a datapath pinned with 512 sample buckets is adopted by a daemon
#     that names the rate alone, with its buckets; one pinned without a
#     keyed sample is adopted by a daemon of the default options (which
#     keep one) with no sample and the windows its state files hold, and
#     refused by one given --sample-rate;
#   - SIGTERM without --keep leaves no XDP and no pins or state files;
#     --detach refuses while a daemon runs and removes everything after a
#     --keep stop.
# Random pauses come from FS_RESTART_SEED (default: the pid), printed.
# Output: TAP ("ok N - ..."), diagnostics as "# ..." lines.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

STATE_DIR=""
GEN_PID=""

KILLS=20
WINDOW=1
SPAN=300		# longer than the run: every window the history holds
FLOWS=2000
RATE=20000
ZIPF=1.1
GEN_SEED=11
SEED=${FS_RESTART_SEED:-$ID}
RANDOM=$SEED

T0=$(date +%s)

test_cleanup() {
	if [ -n "$GEN_PID" ]; then
		kill -TERM "$GEN_PID" 2>/dev/null
		wait "$GEN_PID" 2>/dev/null
	fi
}

cli() { "$CLI" --socket "$SOCK" --timeout 5 "$@"; }
jqe() { jq -e "$@" >/dev/null 2>&1; }

# The XDP program on the receiving veth, as `ip link` shows it: its id, or
# nothing when none is attached.
xdp_id() {
	ip -n "$NS_RX" -j link show dev "$VETH_RX" 2>/dev/null |
		jq -r '.[0].xdp // empty | (.prog.id // .attached[0].prog.id) // empty'
}
# Everything pinned, with inode numbers: a re-pinned map shows up too.
pins() { [ -d "$PIN_DIR" ] && find "$PIN_DIR" -mindepth 1 -printf '%P %i\n' | sort; }
state_files() { [ -d "$STATE_DIR" ] && find "$STATE_DIR" -type f -printf '%P\n' | sort; }
n_state_files() { state_files | wc -l; }
pins_empty() { [ -z "$(ls -A "$PIN_DIR" 2>/dev/null)" ]; }
# same_pins PINS: the pins now are PINS; if not, the difference as "# ".
same_pins() {
	local now
	now=$(pins)
	[ "$now" = "$1" ] && return 0
	diff <(echo "$1") <(echo "$now") | head -20 | sed 's/^/# pins: /'
	return 1
}
# The maps that count, by id, as bpftool sees their pins: "cms:ID ...".
COUNT_MAPS="ctl cms cms_narrow hll_packed hot stats"
map_ids() {
	local m
	for m in $COUNT_MAPS; do
		printf '%s:%s ' "$m" "$(bpftool -j map show pinned "$PIN_DIR/$m" 2>/dev/null | jq -r '.id // "none"')"
	done
}
# The pinned link: "ID PROG_ID", as bpftool sees it.
link_info() {
	bpftool -j link show pinned "$PIN_DIR/link_$VETH_RX" 2>/dev/null | jq -r '"\(.id) \(.prog_id)"'
}
# prog_uses_maps PROG "cms:ID ...": the program reads and writes those maps.
prog_uses_maps() {
	bpftool -j prog show id "$1" 2>/dev/null |
		jq -e --arg m "$2" '($m | split(" ") | map(select(. != "") | split(":")[1] | tonumber)) - .map_ids == []' >/dev/null
}
pins_with_link() { same_pins "$1" && [ -e "$PIN_DIR/link_$VETH_RX" ]; }
# host_unchanged PROG PINS [STATE]: that XDP program on the veth, those
# pins, and (unless STATE is empty) those state files.
host_unchanged() {
	[ -n "$1" ] && [ "$(xdp_id)" = "$1" ] && same_pins "$2" &&
		{ [ -z "$3" ] || [ "$(state_files)" = "$3" ]; }
}

# start [OPTION...]: the harness's fsd_start, logged; a daemon that died
# before it answered is reaped (DAEMON_PID empty).
start() {
	echo "=== $(date +%T.%N) start: $*" >>"$WORK/daemon.log"
	fsd_start "$@" && return 0
	kill -0 "$DAEMON_PID" 2>/dev/null || { wait "$DAEMON_PID"; DAEMON_PID=""; }
	return 1
}
fsd_kill() {
	kill -KILL "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	echo "=== $(date +%T.%N) SIGKILL" >>"$WORK/daemon.log"
	DAEMON_PID=""
}
# fsd_term: SIGTERM, its exit status in $rc (137 if it hung for 10 s).
fsd_term() {
	kill -TERM "$DAEMON_PID" 2>/dev/null
	fs_until 100 fs_gone "$DAEMON_PID" || kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID"
	rc=$?
	echo "=== $(date +%T.%N) SIGTERM: exit $rc" >>"$WORK/daemon.log"
	DAEMON_PID=""
}
# fsd_once ARGS...: a daemon run that must end by itself within 5 s; its
# status in $rc (-1: still running, then SIGKILLed, leaving the pins),
# stderr in $WORK/err.
fsd_once() {
	local pid
	nsenter --net="/run/netns/$NS_RX" "$FSD" "$@" >"$WORK/out" 2>"$WORK/err" &
	pid=$!
	if fs_until 50 fs_gone "$pid"; then
		wait "$pid"
		rc=$?
	else
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		rc=-1
	fi
}
# st FIELD: a field of the last status ($WORK/st.json), "missing" if absent.
# (false is a value here, not a missing field: no jq "//".)
# crashed_or_past W: the daemon is gone, or it finished window W alive.
crashed_or_past() {
	local w
	kill -0 "$DAEMON_PID" 2>/dev/null || return 0
	w=$(cli status --json 2>/dev/null | jq -r '.counters.windows_finished' 2>/dev/null)
	[[ "$w" =~ ^[0-9]+$ ]] && [ "$w" -ge "$1" ]
}
st() { jq -r "($1) as \$v | if \$v == null then \"missing\" else \$v end" "$WORK/st.json" 2>/dev/null || echo missing; }
answers() { cli status --json >/dev/null 2>&1; }
rnd_sleep() { # rnd_sleep MIN_MS MAX_MS: sleep a random time, print it
	local s ms=$(($1 + RANDOM % ($2 - $1 + 1)))
	printf -v s '%d.%03d' $((ms / 1000)) $((ms % 1000))
	sleep "$s"
	echo "$s"
}

# ---------------------------------------------------------------- set-up
fs_test restart "$GEN" jq
STATE_DIR="$WORK/state"
echo "# random pauses from FS_RESTART_SEED=$SEED"
fs_test_pair
ok "namespaces $NS_TX, $NS_RX joined by $VETH_TX <-> $VETH_RX"
BASE=(-i "$VETH_RX" --window "$WINDOW" --pin-dir "$PIN_DIR" --state-dir "$STATE_DIR"
      --socket "$SOCK" --blocklist "$WORK/blocklist")

start || bail "flowsketchd on $VETH_RX (--pin-dir $PIN_DIR --state-dir $STATE_DIR) answers status"
T_D0=$(date +%s)	# the first daemon's first window began by now
ok "flowsketchd on $VETH_RX answers status"
check "a first daemon on an empty pin dir does not claim to adopt (.adopted $(st .adopted))" \
	[ "$(st .adopted)" = false ]
CMS_W=$(st .params.cms_width)
CMS_D=$(st .params.cms_depth)
HLL_P=$(st .params.hll_precision)
[[ "$CMS_W" =~ ^[0-9]+$ && "$CMS_D" =~ ^[0-9]+$ && "$HLL_P" =~ ^[0-9]+$ ]] ||
	bail "status gives the sketch's parameters (got '$CMS_W' '$CMS_D' '$HLL_P')"
PROG=$(xdp_id)
[ -n "$PROG" ] || bail "an XDP program is attached to $VETH_RX"
ok "XDP program $PROG on $VETH_RX; width $CMS_W, depth $CMS_D, p $HLL_P"
check "the link is pinned as $PIN_DIR/link_$VETH_RX" [ -e "$PIN_DIR/link_$VETH_RX" ]
PINS0=$(pins)
MAPS0=$(map_ids)
LINK0=$(link_info)

# ---------------------------------------------------------------- kills
mac=$(fs_mac "$NS_RX" "$VETH_RX")
nsenter --net="/run/netns/$NS_TX" "$GEN" -i "$VETH_TX" --dst-mac "$mac" --flows "$FLOWS" \
	--duration 600 --rate "$RATE" --zipf "$ZIPF" --seed "$GEN_SEED" \
	--ipv6-share 0.3 --sources 700 --destinations 300 \
	--truth "$WORK/truth.json" 2>"$WORK/gen.log" &
GEN_PID=$!
# 600 s is only a bound: the traffic runs until the crash points are done
# (kill -TERM below), since "journaled" needs reports to journal, and 120 s
# ran out before it on a slower machine.
# The first daemon closes windows with traffic before any kill, and the
# first kill comes over a second after T_D0: a history that lost what came
# before it would start in a later second than T_D0.
sleep 2.5
T_KILL1=$(date +%s)

printf '%-4s %-7s %-7s %-8s %-8s %-9s %s\n' kill "run(s)" "gap(s)" "xdp" "start" adopted "totals.packets" >"$WORK/record"
bad_xdp=0 bad_start=0 bad_adopt=0 bad_back=0 done_kills=0 prev_total=0
for k in $(seq "$KILLS"); do
	run=$(rnd_sleep 100 1600)
	before=$(xdp_id)
	fsd_kill
	id=$(xdp_id)
	{ [ -n "$before" ] && [ "$id" = "$before" ] && [ -e "$PIN_DIR/link_$VETH_RX" ]; } ||
		bad_xdp=$((bad_xdp + 1))
	gap=$(rnd_sleep 50 500)
	t=$(date +%s%N)
	if start; then
		start="$(( ($(date +%s%N) - t) / 1000000 ))ms"
		adopted=$(st .adopted)
	else
		start=failed adopted=-
		bad_start=$((bad_start + 1))
	fi
	[ "$adopted" = true ] || bad_adopt=$((bad_adopt + 1))
	total=$(st .totals.packets)
	if [[ "$total" =~ ^[0-9]+$ ]] && [ "$total" -ge "$prev_total" ]; then
		prev_total=$total
	else
		bad_back=$((bad_back + 1))
	fi
	printf '%-4s %-7s %-7s %-8s %-8s %-9s %s\n' "$k" "$run" "$gap" "${id:-none}" "$start" "$adopted" "$(st .totals.packets)" >>"$WORK/record"
	done_kills=$k
	[ "$start" = failed ] && break
done
# Then the same at each step a successor must finish (crashpoint.h): the
# daemon kills itself the second time it passes the point (its first
# rotation done whole), or the first time for the steps of setup, which
# only an adopting start passes.  Every one leaves XDP attached, and the
# next start adopts; the final checks below (exact totals) cover them all.
CRASH_POINTS="flip drained written stored committed done zeroing zeroed journaled replacing adopted"
bad_crash=0 crash_notes=""
fsd_kill	# the kill loop's last daemon: each crash point's starts afresh
for cp in $CRASH_POINTS; do
	case $cp in replacing|adopted) n=1 ;; *) n=2 ;; esac
	before=$(xdp_id)
	FLOWSKETCHD_CRASH_AT="$cp:$n" start
	# It dies by itself: at its second rotation at the latest, so it is
	# late once it has finished two windows more than that alive (counted
	# by the daemon, not by a clock a loaded machine would outrun).
	if [ -n "$DAEMON_PID" ]; then
		w0=$(st .counters.windows_finished)
		[[ "$w0" =~ ^[0-9]+$ ]] || w0=0
		fs_until 600 crashed_or_past $((w0 + n + 2))
		if kill -0 "$DAEMON_PID" 2>/dev/null; then
			crash_notes="$crash_notes $cp:alive"
			bad_crash=$((bad_crash + 1))
			fsd_kill
		else
			wait "$DAEMON_PID"
			crc=$?
			DAEMON_PID=""
			[ "$crc" = 137 ] || { crash_notes="$crash_notes $cp:exit$crc"; bad_crash=$((bad_crash + 1)); }
		fi
	fi
	echo "=== $(date +%T.%N) crashed at $cp:$n" >>"$WORK/daemon.log"
	# The program may be the crashed daemon's own (an adopting start
	# moves the link to its program): attached and linked is what counts.
	[ -n "$before" ] && [ -n "$(xdp_id)" ] && [ -e "$PIN_DIR/link_$VETH_RX" ] ||
		{ crash_notes="$crash_notes $cp:xdp"; bad_crash=$((bad_crash + 1)); }
	sleep 0.$((RANDOM % 4 + 1))
done
start || bail "a daemon starts after the crash points"
check "the daemon crashed at each of: $CRASH_POINTS, XDP staying attached (wrong:${crash_notes:- none})" \
	[ "$bad_crash" = 0 ]
check "the start after the crash points adopts (.adopted $(st .adopted))" [ "$(st .adopted)" = true ]

kill -TERM "$GEN_PID"
wait "$GEN_PID"
gen_rc=$?
GEN_PID=""
diag <"$WORK/record"
check "after each SIGKILL the XDP program attached before stayed on $VETH_RX, its link pinned ($bad_xdp of $done_kills not)" [ "$bad_xdp" = 0 ]
check "each restart answered status within 10 s ($bad_start of $done_kills did not)" [ "$bad_start" = 0 ]
check "each restart reports .adopted true ($bad_adopt of $done_kills did not)" [ "$bad_adopt" = 0 ]
check "no restart's totals.packets below the one before ($bad_back of $done_kills were)" [ "$bad_back" = 0 ]
[ "$done_kills" = "$KILLS" ] || bail "$KILLS kills and restarts done (stopped after $done_kills)"
# Adoption takes over what is pinned: the first daemon's link and maps
# (the program may be a new one, put in the same link).
link=$(link_info)
check "the first daemon's link (id ${LINK0%% *}) still holds XDP on $VETH_RX after $KILLS restarts (link, prog: $link; ip link: prog $(xdp_id))" \
	test "${link%% *}" = "${LINK0%% *}" -a "${link#* }" = "$(xdp_id)"
check "the first daemon's maps after $KILLS restarts ($MAPS0-> $(map_ids))" [ "$(map_ids)" = "$MAPS0" ]
check "the XDP program on $VETH_RX ($(xdp_id)) uses those maps" prog_uses_maps "$(xdp_id)" "$MAPS0"
check "the same pin names after $KILLS restarts" \
	[ "$(pins | cut -d' ' -f1)" = "$(echo "$PINS0" | cut -d' ' -f1)" ]

if [ "$gen_rc" = 0 ] && jqe '.total_packets > 0' "$WORK/truth.json"; then
	ok "fs-gen sent $(jq .total_packets "$WORK/truth.json") packets of $(jq .distinct_flows "$WORK/truth.json") flows through the kills"
else
	diag <"$WORK/gen.log"
	bail "fs-gen sent its traffic and wrote its truth (exit $gen_rc)"
fi
sent=$(jq .total_packets "$WORK/truth.json")
sent_bytes=$(jq .total_bytes "$WORK/truth.json")
true_flows=$(jq .distinct_flows "$WORK/truth.json")
tx_dropped=$(fs_link_stat "$NS_TX" "$VETH_TX" tx dropped)
check "the sending veth dropped nothing (tx dropped $tx_dropped)" [ "$tx_dropped" = 0 ]

# ---------------------------------------------------------------- totals
# Two more windows closed after the last packet, by the same daemon.
cli status --json >"$WORK/st.json" 2>/dev/null
w0=$(st .counters.windows_finished)
for _ in $(seq 100); do
	sleep 0.1
	cli status --json >"$WORK/st.json" 2>/dev/null || continue
	[[ "$w0" =~ ^[0-9]+$ ]] && [ "$(st .counters.windows_finished)" -ge $((w0 + 2)) ] && break
done
w1=$(st .counters.windows_finished)
check "two windows closed after the traffic (windows_finished $w0 -> $w1)" \
	jqe -n --arg a "$w0" --arg b "$w1" '($b | tonumber) >= ($a | tonumber) + 2'
cp "$WORK/st.json" "$WORK/st-final.json"
check "totals.packets is every packet sent over the $KILLS kills ($(st .totals.packets) vs $sent)" \
	[ "$(st .totals.packets)" = "$sent" ]
check "totals.bytes is every byte sent ($(st .totals.bytes) vs $sent_bytes)" \
	[ "$(st .totals.bytes)" = "$sent_bytes" ]
check "counters.sketched is every packet sent ($(st .counters.sketched) vs $sent)" \
	[ "$(st .counters.sketched)" = "$sent" ]

if cli top -n 10 --once --json --span "$SPAN" >"$WORK/top.json" 2>"$WORK/top.err"; then
	ok "top -n 10 --once --json --span $SPAN answers"
else
	diag <"$WORK/top.err"
	not_ok "top -n 10 --once --json --span $SPAN answers"
fi
if cli flows --json --span "$SPAN" >"$WORK/flows.json" 2>"$WORK/flows.err"; then
	ok "flows --json --span $SPAN answers"
else
	diag <"$WORK/flows.err"
	not_ok "flows --json --span $SPAN answers"
fi
for f in top flows; do
	ws=$(jq -r '.window_start // "missing"' "$WORK/$f.json" 2>/dev/null)
	check "$f: the span reaches back to the first daemon, before the kills (window_start $ws, $(jq -r .windows "$WORK/$f.json" 2>/dev/null) windows; first daemon up by $T_D0, first kill after $T_KILL1)" \
		jqe --argjson d "$T_D0" '.window_start <= $d' "$WORK/$f.json"
done
check "top: the span's total_packets is every packet sent ($(jq -r .total_packets "$WORK/top.json" 2>/dev/null) vs $sent)" \
	[ "$(jq -r .total_packets "$WORK/top.json" 2>/dev/null)" = "$sent" ]
check "top: the span's total_bytes is every byte sent" \
	[ "$(jq -r .total_bytes "$WORK/top.json" 2>/dev/null)" = "$sent_bytes" ]
# Count-Min over the span: [truth, truth + e/w * N] for every listed flow.
out=$(jq -rn --slurpfile top "$WORK/top.json" --slurpfile truth "$WORK/truth.json" --argjson w "$CMS_W" '
	def key: "\(.src)|\(.dst)|\(.sport)|\(.dport)|\(.proto)";
	($truth[0].flows | map({(key): .}) | add) as $t |
	{packets: ((1 | exp) / $w * $truth[0].total_packets),
	 bytes: ((1 | exp) / $w * $truth[0].total_bytes)} as $eb |
	($top[0].flows // []) as $got |
	[ ($got | length | select(. != 10) | "returned \(.) flows, not 10"),
	  ($got[] | . as $f | $t[$f | key] as $tf |
	   if $tf == null then "\($f | key) is not a flow fs-gen sent" else
	   ("packets", "bytes") as $m |
	   select($f[$m] < $tf[$m] or $f[$m] > $tf[$m] + $eb[$m]) |
	   "\($f | key): \($m) \($f[$m]) not in [\($tf[$m]), \($tf[$m] + $eb[$m])]" end) ] | .[]' 2>&1)
if [ -z "$out" ]; then
	ok "top: 10 flows fs-gen sent, each count within [truth, truth + e/w*N] over the whole run"
else
	not_ok "top: 10 flows fs-gen sent, each count within [truth, truth + e/w*N] over the whole run"
	echo "$out" | diag
fi
# Every packet adds one to exactly one cell of every row (standard
# update), so each row of the span's Count-Min sketch sums to the span's
# totals, exactly: a spill of a narrow cell lost or counted twice across
# the kills (cms.h, "Narrow cells") would show here, whatever flow it hit.
# The cells from a native export (native.h's layout), the totals from what
# fs-gen sent.
if cli export --format native --span "$SPAN" -o "$WORK/span.fse" 2>"$WORK/export.err"; then
	out=$(python3 - "$WORK/span.fse" "$sent" "$sent_bytes" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
depth, log2w = b[21], b[22]
ncand = struct.unpack_from("<Q", b, 88)[0]
a = 96 + ncand * (40 + 4 * depth)
cells = struct.unpack_from("<Q", b, a)[0]
w = 1 << log2w
assert cells == depth * w, "cell count %d" % cells
vals = struct.unpack_from("<%dQ" % (2 * cells), b, a + 8)
sums = [(sum(vals[2 * (r * w + c)] for c in range(w)),
         sum(vals[2 * (r * w + c) + 1] for c in range(w))) for r in range(depth)]
want = (int(sys.argv[2]), int(sys.argv[3]))
print(" ".join("%d/%d" % s for s in sums) if any(s != want for s in sums) else "")
PY
)
	check "export: every Count-Min row of the span sums to every packet and byte sent, spills included (${out:-all $sent/$sent_bytes})" \
		[ -z "$out" ]
else
	diag <"$WORK/export.err"
	not_ok "export: every Count-Min row of the span sums to every packet and byte sent, spills included"
fi
est=$(jq -r '.distinct_flows // "missing"' "$WORK/flows.json" 2>/dev/null)
check "flows: distinct flows $est within 3 rse (1.04/sqrt(2^$HLL_P)) of the $true_flows sent" \
	jqe -n --argjson p "$HLL_P" --argjson t "$true_flows" --slurpfile f "$WORK/flows.json" \
	'($f[0].distinct_flows - $t | fabs) <= 3 * 1.04 / (pow(2; $p) | sqrt) * $t'

# ------------------------------------------------ same answers after --keep
fsd_kill
start --keep || bail "a daemon with --keep starts on the pinned datapath"
check "the --keep daemon adopts (.adopted $(st .adopted))" [ "$(st .adopted)" = true ]
cp "$WORK/st.json" "$WORK/st-keep1.json"
cli top -n 10 --once --json --span "$SPAN" >"$WORK/top-k1.json" 2>"$WORK/top.err" || diag <"$WORK/top.err"
cli flows --json --span "$SPAN" >"$WORK/flows-k1.json" 2>"$WORK/flows.err" || diag <"$WORK/flows.err"
prog1=$(xdp_id)
pins1=$(pins)
fsd_term
check "SIGTERM of the --keep daemon: exit 0 (got $rc)" [ "$rc" = 0 ]
check "after SIGTERM with --keep its XDP program ${prog1:-none} is still on $VETH_RX (ip link: $(xdp_id))" \
	test -n "$prog1" -a "$(xdp_id)" = "$prog1"
check "after SIGTERM with --keep the pins are all there (link_$VETH_RX too)" \
	pins_with_link "$pins1"
check "after SIGTERM with --keep the state dir keeps its window files ($(n_state_files))" \
	[ "$(n_state_files)" -gt 0 ]
start --keep || bail "a daemon starts after the --keep stop"
cli top -n 10 --once --json --span "$SPAN" >"$WORK/top-k2.json" 2>"$WORK/top.err" || diag <"$WORK/top.err"
cli flows --json --span "$SPAN" >"$WORK/flows-k2.json" 2>"$WORK/flows.err" || diag <"$WORK/flows.err"
check "the next daemon adopts (.adopted $(st .adopted))" [ "$(st .adopted)" = true ]
# The answers without what depends on the time asked: the windows that
# ended since (empty ones, the traffic having stopped) and the span's end.
# The span's start to the ns is the wall clock as it reads at each answer
# (rotation.h, fsd_wall_ns: the monotonic clock's offset read again), so
# it may move by a few ns between two answers, and jq holds it as a double
# (256 ns apart at 2^60): it is compared within a millisecond, below.
NOW_FIELDS='del(.span_seconds, .windows, .window_end, .window_end_ns, .window_start_ns)'
for f in top flows; do
	a=$(jq -S "$NOW_FIELDS" "$WORK/$f-k1.json" 2>&1)
	b=$(jq -S "$NOW_FIELDS" "$WORK/$f-k2.json" 2>&1)
	if [ -n "$a" ] && [ "$a" = "$b" ] && jqe '.total_packets // .distinct_flows | . > 0' "$WORK/$f-k1.json"; then
		ok "$f --span $SPAN: the same windows and numbers before the SIGTERM and after the restart"
	else
		not_ok "$f --span $SPAN: the same windows and numbers before the SIGTERM and after the restart"
		diff <(echo "$a") <(echo "$b") | diag
	fi
	check "$f: the span starts at the same ns, within 1 ms, after the restart ($(jq .window_start_ns "$WORK/$f-k1.json") -> $(jq .window_start_ns "$WORK/$f-k2.json"))" \
		jqe -n --slurpfile a "$WORK/$f-k1.json" --slurpfile b "$WORK/$f-k2.json" \
		'($a[0].window_start_ns - $b[0].window_start_ns | fabs) < 1e6'
	check "$f: no fewer windows after the restart ($(jq .windows "$WORK/$f-k1.json") -> $(jq .windows "$WORK/$f-k2.json"))" \
		jqe -n --slurpfile a "$WORK/$f-k1.json" --slurpfile b "$WORK/$f-k2.json" '$b[0].windows >= $a[0].windows and $a[0].windows > 0'
done
check "status: the same totals and sketched after the restart ($(jq -c '[.totals.packets, .totals.bytes, .counters.sketched]' "$WORK/st-keep1.json") -> $(st '[.totals.packets, .totals.bytes, .counters.sketched] | tojson'))" \
	[ "$(jq -c '[.totals.packets, .totals.bytes, .counters.sketched]' "$WORK/st-keep1.json")" = \
	  "$(jq -c '[.totals.packets, .totals.bytes, .counters.sketched]' "$WORK/st.json")" ]

# ---------------------------------------------------------------- refusals
fsd_term
check "SIGTERM of the second --keep daemon: exit 0 (got $rc)" [ "$rc" = 0 ]
cp "$WORK/st.json" "$WORK/st-before-refusals.json"
STATE2=$(state_files)
PROG2=$(xdp_id)
PINS2=$(pins)
other_p=$((HLL_P > 4 ? HLL_P - 1 : HLL_P + 1))
other_d=$((CMS_D > 1 ? CMS_D - 1 : CMS_D + 1))
for bad in "--depth $other_d" "--width $((CMS_W * 2))" "--precision $other_p" \
	   "--sample-rate 1/512" "--sample-buckets 256"; do
	opt=${bad%% *}
	# shellcheck disable=SC2086
	fsd_once "${BASE[@]}" $bad
	if [ "$rc" = 1 ] && [ "$(wc -l <"$WORK/err")" = 1 ] && grep -qF -- "$opt" "$WORK/err"; then
		ok "$bad on a datapath pinned with other sizes: exit 1, one line naming $opt ($(cat "$WORK/err"))"
	else
		not_ok "$bad on a datapath pinned with other sizes: exit 1, one line naming $opt (exit $rc)"
		sed 's/^/stderr: /' "$WORK/err" | head -10 | diag
	fi
	check "$bad refused: pins, link, state files and XDP program ${PROG2:-none} unchanged (ip link: $(xdp_id))" \
		host_unchanged "$PROG2" "$PINS2" "$STATE2"
done
start --keep || bail "a normal restart after the refusals starts"
check "a normal restart after the refusals adopts (.adopted $(st .adopted))" [ "$(st .adopted)" = true ]
before=$(jq -r '"\(.totals.packets) \(.totals.bytes) \(.counters.sketched)"' "$WORK/st-before-refusals.json")
check "... with the totals and sketched count of before the refusals ($(st .totals.packets) $(st .totals.bytes) $(st .counters.sketched) vs $before)" \
	[ "$(st .totals.packets) $(st .totals.bytes) $(st .counters.sketched)" = "$before" ]

# ---------------------------------------------------------------- --replace
fsd_term
old_prog=$(xdp_id)
start --replace || bail "a daemon with --replace starts"
check "--replace: .adopted false (got $(st .adopted))" [ "$(st .adopted)" = false ]
check "--replace: totals 0 ($(st '[.totals.packets, .totals.bytes] | tojson'))" \
	[ "$(st .totals.packets) $(st .totals.bytes)" = "0 0" ]
check "--replace: counters.sketched 0 on the fresh maps (got $(st .counters.sketched))" \
	[ "$(st .counters.sketched)" = 0 ]
new_prog=$(xdp_id)
check "--replace: a new XDP program on $VETH_RX ($old_prog -> ${new_prog:-none})" \
	test -n "$new_prog" -a "$new_prog" != "$old_prog"
cli top -n 10 --once --json --span "$SPAN" >"$WORK/top-r.json" 2>"$WORK/top.err" || diag <"$WORK/top.err"
check "--replace: no window of before in the history (top --span $SPAN: $(jq -c '[.windows, .total_packets]' "$WORK/top-r.json" 2>/dev/null))" \
	jqe '.total_packets == 0' "$WORK/top-r.json"

# ------------------------------------------ the keyed sample on adoption
# A datapath pinned without a sample (as a release before the default one
# pinned it) is adopted by a daemon that names none, keeping its windows,
# and refused by one that names a sample.
fsd_term
start --replace --keep --sample-rate 1/1024 --sample-buckets 512 ||
	bail "a --keep daemon with --sample-buckets 512 starts"
fsd_term
start --keep --sample-rate 1/1024 || bail "a daemon naming the rate alone adopts a datapath of 512 sample buckets"
check "naming the rate alone adopts it (.adopted $(st .adopted)) with its 512 buckets ($(st .params.sample.buckets))" \
	[ "$(st .adopted) $(st .params.sample.buckets)" = "true 512" ]
fsd_term
start --replace --keep --sample-rate off || bail "a --keep daemon with --sample-rate off starts"
check "--sample-rate off: status says no sample (.params.sample $(st .params.sample))" \
	[ "$(st .params.sample)" = false ]
for _ in $(seq 30); do	# a finished window, so that there is a state file
	cli status --json >"$WORK/st.json" 2>/dev/null
	[ "$(st .counters.windows_finished)" != missing ] && [ "$(st .counters.windows_finished)" -ge 1 ] && break
	sleep 0.1
done
w_off=$(st .counters.windows_finished)
fsd_term
fsd_once "${BASE[@]}" --sample-rate 1/1024
check "an explicit --sample-rate 1/1024 on a datapath pinned without one: exit 1, one line naming it ($(head -1 "$WORK/err"))" \
	eval '[ "$rc" = 1 ] && [ "$(wc -l <"$WORK/err")" = 1 ] && grep -qF -- "--sample-rate" "$WORK/err"'
start || bail "a daemon of the default options adopts a datapath pinned without a sample"
check "the default options adopt it (.adopted $(st .adopted)) and keep no sample (.params.sample $(st .params.sample))" \
	[ "$(st .adopted) $(st .params.sample)" = "true false" ]
check "... saying so in the log" grep -q "keeping the pinned datapath's keyed sample (none)" "$WORK/daemon.log"
cli top -n 1 --once --json --span "$SPAN" >"$WORK/top-s.json" 2>"$WORK/top.err" || diag <"$WORK/top.err"
check "... and the $w_off windows it had finished (top --span $SPAN: $(jq -c .windows "$WORK/top-s.json" 2>/dev/null) windows)" \
	jqe --argjson n "$w_off" '$n >= 1 and .windows >= $n' "$WORK/top-s.json"

# ---------------------------------------------------------------- clean stops
fsd_term
check "SIGTERM without --keep: exit 0 (got $rc)" [ "$rc" = 0 ]
check "SIGTERM without --keep: no XDP on $VETH_RX (ip link: $(xdp_id))" [ -z "$(xdp_id)" ]
check "SIGTERM without --keep: $PIN_DIR gone or empty" pins_empty
check "SIGTERM without --keep: no window files left in $STATE_DIR ($(n_state_files))" [ "$(n_state_files)" = 0 ]

start --keep || bail "a --keep daemon starts on a clean host"
check "on a clean host a --keep daemon does not adopt (.adopted $(st .adopted))" [ "$(st .adopted)" = false ]
for _ in $(seq 30); do	# one finished window, so that there is a state file
	cli status --json >"$WORK/st.json" 2>/dev/null
	[ "$(st .counters.windows_finished)" != missing ] && [ "$(st .counters.windows_finished)" -ge 1 ] && break
	sleep 0.1
done
prog3=$(xdp_id)
pins3=$(pins)
state3=$(state_files)
fsd_once --detach --pin-dir "$PIN_DIR" --state-dir "$STATE_DIR"
if [ "$rc" = 1 ] && [ -s "$WORK/err" ]; then
	ok "--detach while a daemon runs: exit 1 with a message ($(head -1 "$WORK/err"))"
else
	not_ok "--detach while a daemon runs: exit 1 with a message (exit $rc)"
	sed 's/^/stderr: /' "$WORK/err" | head -10 | diag
fi
check "... and the daemon still answers status" answers
check "... and XDP program ${prog3:-none}, pins and state files are unchanged (ip link: $(xdp_id))" \
	host_unchanged "$prog3" "$pins3" "$state3"
fsd_term
check "SIGTERM with --keep: exit 0 (got $rc)" [ "$rc" = 0 ]
check "SIGTERM with --keep: XDP program ${prog3:-none} and pins left (ip link: $(xdp_id))" \
	host_unchanged "$prog3" "$pins3" ""
fsd_once --detach --pin-dir "$PIN_DIR" --state-dir "$STATE_DIR"
if [ "$rc" = 0 ]; then
	ok "--detach after a --keep stop: exit 0"
else
	not_ok "--detach after a --keep stop: exit 0 (got $rc)"
	sed 's/^/stderr: /' "$WORK/err" | head -10 | diag
fi
check "--detach: no XDP on $VETH_RX (ip link: $(xdp_id))" [ -z "$(xdp_id)" ]
check "--detach: $PIN_DIR removed" [ ! -e "$PIN_DIR" ]
check "--detach: no state files left in $STATE_DIR ($(n_state_files))" [ "$(n_state_files)" = 0 ]

echo "# ran in $(($(date +%s) - T0)) s (traffic $(jq .elapsed_seconds "$WORK/truth.json") s)"
finish
