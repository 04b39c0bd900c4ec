#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# plot.sh - `flowsketch plot`: a span drawn by gnuplot from the daemon's
# per-window figures ("windows" request, protocol.h).
#
#   NS_TX [fs-gen] --veth--> NS_RX [flowsketchd]
#
# The oracle is the generator's truth: the per-window series the plot was
# drawn from (--data) must add up to exactly the packets and bytes sent,
# no window may hold more distinct flows than were sent in all, and the
# windows must tile the span (each ends where the next starts, one window
# long, on a multiple of it).  The PNG must be one (signature, the size
# the script asks for).  No -o name reaches gnuplot: names it would run
# ('|cmd') or that would break its script (quotes, line breaks) are
# written as files of that very name.  Bad arguments get one message and exit 2; no
# gnuplot, or no daemon, one message and exit 1, and no file.  Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

test_cleanup() { rm -f "/tmp/PWNED-$ID" "/tmp/PWNED-$ID-2"; }

fs_test plot "$GEN" gnuplot
fs_test_pair
fsd_start || bail "flowsketchd answers status"

gen_in --flows 300 --packets 40000 --rate 10000 --seed 5 --truth "$WORK/truth.json" ||
	bail "the generator sent its packets"
fsd_settle egress || bail "two windows closed after the traffic"

cli plot --span 60 -d in -o "$WORK/p.png" --data "$WORK/series.tsv" >"$WORK/plot.out" 2>&1; rc=$?
check "plot: exit 0 ($rc)" [ "$rc" = 0 ]
diag <"$WORK/plot.out"
check "a PNG of 1100 x 1000 pixels" python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read(24)
assert b[:8] == b"\x89PNG\r\n\x1a\n" and b[12:16] == b"IHDR", "not a PNG"
w, h = struct.unpack(">II", b[16:24])
assert (w, h) == (1100, 1000), (w, h)' "$WORK/p.png"
P=$(jq .total_packets "$WORK/truth.json"); B=$(jq .total_bytes "$WORK/truth.json")
F=$(jq '.flows | length' "$WORK/truth.json")
read -r gp gb gf < <(awk -F'\t' '$1 == "in" { p += $4; b += $5; if ($6 > f) f = $6 } END { print p + 0, b + 0, f + 0 }' "$WORK/series.tsv")
check "the windows drawn add up to the $P packets, $B bytes sent ($gp, $gb)" [ "$gp" = "$P" -a "$gb" = "$B" ]
check "no window holds more distinct flows than the $F sent (at most $gf, within 3 rse)" \
	awk -v f="$gf" -v n="$F" 'BEGIN { exit !(f > 0 && f <= n * (1 + 3 * 1.04 / 128)) }'
check "the windows tile the span: each a window long and ending on a multiple of it, where the next starts" \
	awk -F'\t' '$1 == "in" { n++; if (n > 1 && ($3 < 0.7 || $3 > 1.3)) bad = 1
		if ($2 - int($2) > 0.3) bad = 1
		if (n > 1 && ($2 - $3 - prev) * ($2 - $3 - prev) > 0.0001) bad = 1; prev = $2 }
		END { exit bad || n < 3 }' "$WORK/series.tsv"
check "both directions: a series each" \
	bash -c "cli() { '$CLI' --socket '$WORK/sock' \"\$@\"; }; cli plot --span 60 -o '$WORK/both.png' --data '$WORK/both.tsv' && cut -f1 '$WORK/both.tsv' | sort -u | tr '\n' ' ' | grep -qx 'in out '"

cli plot --span 60 >"$WORK/bad.out" 2>&1; rc=$?
# The whole condition in the checked command (check CMD && more would
# test only CMD).
refused() { [ "$rc" = "$1" ] && [ "$(wc -l <"$WORK/bad.out")" = 1 ] && grep -q -- "$2" "$WORK/bad.out"; }
check "no -o: exit 2, one message ($(head -1 "$WORK/bad.out"))" refused 2 '-o FILE.png is required'
cli plot --span 60 -o '' >"$WORK/bad.out" 2>&1; rc=$?
check "-o '': exit 2, one message ($(head -1 "$WORK/bad.out"))" refused 2 '-o needs a file name'

# Output names that gnuplot would read as a command ('|' starts a pipe)
# or that would end its quoted string: each is written as a file of that
# very name, in $WORK/names (cwd of the CLI), and nothing runs.
ABS_CLI=$PWD/$CLI
in_names() { (cd "$WORK/names" && "$ABS_CLI" --socket "$WORK/sock" plot --span 60 "$@"); }
mkdir -p "$WORK/names/|touch /tmp"
PWNED=/tmp/PWNED-$ID
rm -f "$PWNED" "$PWNED-2"
for name in "|touch $PWNED" "|touch pwned-1" "a'; system('touch pwned-2'); set output 'b.png" \
	    $'new\nline.png' "  spaces and \"double\" quotes .png" "-leading-dash.png"; do
	in_names -o "$name" >"$WORK/bad.out" 2>&1; rc=$?
	shown=$(printf '%q' "$name")
	check "-o $shown: exit 0 ($rc), a PNG of that very name, nothing run" \
		bash -c '[ "$1" = 0 ] && [ ! -e "$2" ] && [ ! -e "$3/pwned-1" ] && [ ! -e "$3/pwned-2" ] &&
			[ ! -e "$3/b.png" ] && head -c 8 "$3/$4" | cmp -s - <(printf "\x89PNG\r\n\x1a\n")' \
		- "$rc" "$PWNED" "$WORK/names" "$name"
done
in_names -o "|touch $PWNED-2/x.png" >"$WORK/bad.out" 2>&1; rc=$?
check "-o into a directory that is not there: exit 1, one message naming it, nothing run ($(head -1 "$WORK/bad.out"))" \
	bash -c '[ "$1" = 1 ] && [ "$(wc -l <"$2")" = 1 ] && [ ! -e "$3" ] &&
		grep -qF "cannot write |touch $3/x.png" "$2"' - "$rc" "$WORK/bad.out" "$PWNED-2"
# Another file system than the private directory's (/tmp): copied beside
# the name and renamed over it, with the umask's mode, no temporary left.
mkdir "$WORK/other"
check "-o on another file system (a tmpfs of its own): a PNG, mode 0640 under umask 027, nothing else left" \
	unshare --mount --propagation private bash -c '
	mount -t tmpfs fs-plot-other "$1/other" && [ "$(stat -c %d "$1/other")" != "$(stat -c %d /tmp)" ] &&
	echo old >"$1/other/x.png" && (umask 027 && "$2" --socket "$1/sock" plot --span 60 -o "$1/other/x.png") &&
	python3 -c "import sys; assert open(sys.argv[1], \"rb\").read(4) == b\"\\x89PNG\"" "$1/other/x.png" &&
	[ "$(stat -c %a "$1/other/x.png")" = 640 ] && [ "$(ls -A "$1/other")" = x.png ]' - "$WORK" "$ABS_CLI"
cli plot -n 0 -o "$WORK/x.png" >"$WORK/bad.out" 2>&1; rc=$?
check "-n 0: exit 2, one message" [ "$rc" = 2 -a "$(wc -l <"$WORK/bad.out")" = 1 ]
PATH=/nonexistent "$CLI" --socket "$WORK/sock" plot -o "$WORK/nognuplot.png" >"$WORK/bad.out" 2>&1; rc=$?
no_gnuplot() { [ "$rc" = 1 ] && [ ! -e "$WORK/nognuplot.png" ] && grep -q 'gnuplot-nox' "$WORK/bad.out"; }
check "no gnuplot: exit 1, says how to install it, no file ($(head -1 "$WORK/bad.out"))" no_gnuplot
"$CLI" --socket "$WORK/nosock" plot -o "$WORK/nodaemon.png" >"$WORK/bad.out" 2>&1; rc=$?
check "no daemon: exit 1, no file" [ "$rc" = 1 -a ! -e "$WORK/nodaemon.png" ]
check "no temporary directory left behind" bash -c "! ls -d /tmp/flowsketch-plot.* 2>/dev/null | grep -q ."
finish
