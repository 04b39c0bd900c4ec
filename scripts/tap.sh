# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# tap.sh - TAP output for the shell suites in tests/ (tests/run.sh reads
# it); beside netns.sh, not among the suites, since it is not one.  Every
# suite sources it, itself or through daemon_test.sh or fake_daemon.sh;
# it defines functions and two counters, nothing else:
#
#   ok DESC...            "ok N - DESC"
#   not_ok DESC...        "not ok N - DESC", counted in tap_failed; then
#                         tap_on_not_ok if the suite defines it (what it
#                         shows of a failure: the command's output, say)
#   check DESC CMD...     ok or not_ok as CMD succeeds
#   diag                  stdin as "# " diagnostic lines
#   bail DESC...          not_ok, then finish: the suite cannot go on
#   finish                the closing plan "1..N"; exits 0 only if nothing
#                         failed, else 1 after tap_on_failure if the suite
#                         (or its harness) defines it: what it shows of a
#                         failed run, a daemon's log say
#
# A suite that stops early prints no plan, or one that does not match,
# and tests/run.sh counts that as a failure.

tap_n=0
tap_failed=0

ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
not_ok() {
	tap_n=$((tap_n + 1)) tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $*"
	declare -F tap_on_not_ok >/dev/null && tap_on_not_ok
	return 0
}
check() {
	local what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}
diag() { sed 's/^/# /'; }
bail() {
	not_ok "$*"
	finish
}
finish() {
	if [ "$tap_failed" -gt 0 ] && declare -F tap_on_failure >/dev/null; then
		tap_on_failure
	fi
	echo "1..$tap_n"
	exit $((tap_failed > 0))
}
