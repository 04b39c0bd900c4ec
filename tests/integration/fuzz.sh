#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# fuzz.sh - a short run of every libFuzzer target under fuzz/ (make fuzz).
#
# For each target: its checked-in seeds (fuzz/corpus/NAME) must all pass
# once, as regression inputs, then it fuzzes for FUZZ_SECONDS (default 8)
# from a copy of them, so the checked-in corpus never changes under a
# test.  Any crash, sanitizer report, broken property (the targets abort)
# or input taking over 10 s fails the target; the input that did it is
# kept in build/fuzz/crashes/ to replay with `build/fuzz/NAME FILE`.
# Output: TAP ("ok N - ..."), diagnostics as "# ..." lines.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/tap.sh

SECS=${FUZZ_SECONDS:-8}
CRASHES=build/fuzz/crashes
T=$(mktemp -d "/tmp/fs-fuzz-$$.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

# The lines that say what broke, not libFuzzer's progress.
tap_on_not_ok() {
	[ -s "$T/log" ] && grep -E 'ERROR|SUMMARY|runtime error|Test unit written|in LLVMFuzzerTestOneInput|in fs_|in fsd_' "$T/log" |
		head -20 | diag
}

# Keep whatever input libFuzzer wrote as an artifact (crash-, leak-,
# timeout-...), under the target's name.
keep_artifacts() {
	local name=$1 f
	for f in "$T/art-$name-"*; do
		[ -e "$f" ] || continue
		mkdir -p "$CRASHES"
		cp "$f" "$CRASHES/$name-${f##*/art-$name-}"
		echo "# kept $CRASHES/$name-${f##*/art-$name-}"
	done
}

targets=(fuzz/*.c)
[ -e "${targets[0]}" ] || bail "fuzz/ has targets"
for src in "${targets[@]}"; do
	name=$(basename "$src" .c)
	bin=build/fuzz/$name
	seeds=fuzz/corpus/$name
	if [ ! -x "$bin" ]; then
		not_ok "$name: built (run make fuzz)"
		continue
	fi
	if [ -z "$(ls -A "$seeds" 2>/dev/null)" ]; then
		not_ok "$name: has a seed corpus in $seeds"
		continue
	fi
	# Every seed once: files as arguments are run, not fuzzed.
	if "$bin" -close_fd_mask=3 "$seeds"/* >"$T/log" 2>&1; then
		ok "$name: every seed in $seeds passes"
	else
		not_ok "$name: every seed in $seeds passes"
	fi
	mkdir -p "$T/corpus-$name"
	"$bin" -max_total_time="$SECS" -timeout=10 -close_fd_mask=3 \
		-print_final_stats=1 -artifact_prefix="$T/art-$name-" \
		"$T/corpus-$name" "$seeds" >"$T/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$T/log")
	if [ "$rc" -eq 0 ]; then
		ok "$name: $SECS s of fuzzing (${runs:-?} inputs), no crash"
	else
		not_ok "$name: $SECS s of fuzzing, no crash (exit $rc)"
		keep_artifacts "$name"
	fi
done
finish
