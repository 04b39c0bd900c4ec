#!/bin/bash
# Run every flowsketch test and print one summary line, "N passed, N failed".
#
#   tests/run.sh [PATTERN]      only suites whose path contains PATTERN
#
# Suites:
#   build/tests/test_*      cmocka binaries (unit, BPF_PROG_TEST_RUN datapath)
#   tests/integration/*.sh  namespace tests; print TAP lines ("ok N - ...")
#                           and a closing plan "1..N"
#   tests/vm/run.sh         the kernel module inside a qemu VM; TAP lines
# A suite that exits non-zero without reporting a failure counts as one
# failure, so a crash is never read as a pass.
set -u
cd "$(dirname "$0")/.." || exit 2
filter=${1:-}
passed=0
failed=0
failed_suites=()
log_dir=build/test-logs
mkdir -p "$log_dir"

run_suite() {
	local name=$1; shift
	local log="$log_dir/$(basename "$name").log"
	local p f rc
	echo "=== $name"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	if grep -q '^\[==========\]' "$log"; then
		# cmocka: "[  PASSED  ] N test(s)." / "[  FAILED  ] N test(s), listed below:"
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	else
		p=$(grep -c '^ok ' "$log")
		f=$(grep -c '^not ok ' "$log")
		# TAP plan, printed last: a suite that stopped early has none,
		# or one that does not match what it reported.
		plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$log" | tail -1)
		if [ -z "$plan" ] || [ "$plan" -ne $((p + f)) ]; then
			echo "!!! $name: plan '${plan:-none}' does not match $((p + f)) results"
			f=$((f + 1))
		fi
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "!!! $name exited $rc without reporting a failure"
		f=1
	fi
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		echo "!!! $name ran no test"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$f" -gt 0 ] && failed_suites+=("$name")
}

for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	[[ -n "$filter" && "$t" != *"$filter"* ]] && continue
	run_suite "$t" "$t"
done
for t in tests/integration/*.sh tests/vm/run.sh; do
	[ -f "$t" ] || continue
	[[ -n "$filter" && "$t" != *"$filter"* ]] && continue
	run_suite "$t" bash "$t"
done

echo
[ ${#failed_suites[@]} -gt 0 ] && echo "failing suites: ${failed_suites[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
