#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# mutants.sh - the unit tests catch the bugs they are there for.
#
# `make mutants` rebuilds unit tests against a core with one bug switched
# on (the FS_MUTANT_* blocks in include/flowsketch, listed in the
# Makefile's MUTANTS):
#   cms_row0         every Count-Min row reuses row 0's column
#                    (test_cms: the rows' independence and the bound);
#   report_no_flags  no report flags: flows reported again and again
#                    (test_model: at most once per window, bursts);
#   report_crossing  the old rule, a report only when a flow's own packet
#                    crosses the threshold (test_model: recall when other
#                    flows raised the estimate);
#   report_skip_at   the standard update's shortcut takes a flow whose row-0
#                    cell has just reached the threshold for one that cannot
#                    have (test_model: a report is due the moment the
#                    estimate reaches T);
#   segs_one         every update counts one packet: a GSO skb's segments
#                    and an establishment's none are lost (test_model: an
#                    update of n packets equals n of one, one of none adds
#                    bytes only);
#   spill_lost       a narrow cell's spill never reaches its wide cell,
#   spill_twice      a spill keeps the narrow count it moved,
#   spill_edge       a narrow field is allowed one past its capacity, into
#                    the next field (test_layouts: a million packets through
#                    the narrow and the wide datapath fold to the same
#                    sketch, and to an independent reference's);
#   bloom_shortest   the blocklist filter keys each group on its shortest
#                    length, unexpanded, as before issue 19 (test_bloom:
#                    sources next to an entry get "maybe" far above the
#                    filter's design rate);
#   bloom_fine4_span the finer IPv4 level marks a /17's or /18's first /19
#                    alone (test_bloom: a source inside it loses its
#                    group's bit, a false "no");
#   packed_unbounded the packed registers' fold reads the last word's
#                    padding fields as registers (test_merge);
#   spread_no_scale  spread estimates without the sampling's factor R
#                    (test_spread: planted spreaders below their bound);
#   prefix_no_scale  prefix estimates without the draw's factor V
#                    (test_prefix: heavy prefixes below their bound);
#   prefix_own_max,  the hash-free estimators of a merge of files take
#   spread_own_max   the largest of a candidate's own buckets, not the
#                    least (test_prefix, test_spread: buckets built by the
#                    test, whose least the estimate must be);
#   nitro_noscale    the sampled Count-Min option (a bench build only)
#                    forgets its 1/p scaling (test_cms_sampled: rows no
#                    longer add up to N, heavy flows fall outside the
#                    derived bound);
#   spread_no_port   the datapath's spread update leaves the port out of
#                    a source's element, in BPF and the model alike, so
#                    no comparison of the two can see it (test_datapath,
#                    test_detect_planted: a scanner of 1,000 hosts x 5
#                    ports reads about 1,000, below its bound);
#   sample_raw       the keyed sample takes h_flow's own top bits, which
#                    Count-Min's last row uses too (test_sample: the
#                    sampled flows' row-4 columns are not uniform);
#   sample_full_drop a full bucket drops its newcomer and keeps the limit,
#                    so the first flows stay (test_sample: a bucket is no
#                    longer the flows below its limit);
#   sample_merge_limit  a merge ignores the source's lower limit
#                    (test_sample: the merge by hand keeps a flow whose
#                    packets on the cut copy were lost);
#   sample_z_no_hll  the z-score leaves HyperLogLog's variance out
#                    (test_sample: hand-computed z, z^2 averages above 1);
#   cms_undercount   a quarter of the flows lose their odd-sized packets
#                    from Count-Min, in BPF and the model alike,
#   cms_one_column   an eighth of the flows take column 0 of every row,
#   hll_rank_bias    every HyperLogLog rank one higher (test_accuracy: the
#                    keyed sample's comparisons raise their alarm, which
#                    the unmodified update never does on its Zipf traffic).
# Each mutant's test is built, user space and its BPF datapath alike, with
# the mutant's flag (the Makefile's mutant_rule).
# Each mutant binary must fail: exit non-zero with cmocka's failure line.
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/tap.sh

bins=(build/mutants/*)
[ -x "${bins[0]}" ] || bail "mutants are built (make mutants)"
for b in "${bins[@]}"; do
	out=$("$b" 2>&1)
	rc=$?
	fails=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p')
	if [ "$rc" -ne 0 ] && [ -n "$fails" ] && [ "$fails" -gt 0 ]; then
		ok "mutant $(basename "$b") is caught ($fails tests fail)"
		printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \(test_.*\)/# caught by \1/p' | sort -u
	else
		not_ok "mutant $(basename "$b") is caught (exit $rc, every test passed)"
	fi
done
finish
