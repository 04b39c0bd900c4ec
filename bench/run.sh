#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# bench/run.sh - `make bench`: the datapath and daemon benchmark
# (build/tools/fs-bench), then the kernel-module kfunc benchmark inside a
# VM (bench/vm_kfunc.sh) when it exists.  Arguments go to fs-bench.
# In between, the live benchmark (bench/live.sh: the same programs attached
# to a veth in namespaces of its own, on real traffic, about 2 min; then
# the bursty pattern, three veth pairs fed in turn, about 1.5 min more);
# BENCH_LIVE_ARGS are its options (build/tools/fs-livebench --help), and
# BENCH_LIVE=0 skips it.  Then the tracepoint frontends live (bench/live.sh
# --tracepoints, build/tools/fs-tpbench: egress and ingress programs each
# against their parse-only baseline, about 30 s); BENCH_TP_ARGS are its
# options, and BENCH_TP=0 (or BENCH_LIVE=0) skips it.
#
# Figures are ratios against baselines measured in the same run (driver,
# parse-only program, memcpy): absolute times on shared machines move with
# the neighbours, the ratios much less.
#
# Exit status: 1 when a benchmark could not run (or failed a check of its
# own), else 0.  Targets are printed beside the figures with a verdict
# ("met", "MISSED" or "not met") and never change the status: a shared
# machine's noise must not fail a build.
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/netns.sh

fs_require_root
fs_bpffs_mount

if [ ! -x build/tools/fs-bench ]; then
	echo "bench: build/tools/fs-bench is missing; run make first." >&2
	exit 1
fi

rc=0
build/tools/fs-bench "$@" || rc=1

if [ "${BENCH_LIVE:-1}" != 0 ]; then
	# shellcheck disable=SC2086
	bash bench/live.sh ${BENCH_LIVE_ARGS:-} || rc=1
	echo
	if [ "${BENCH_TP:-1}" != 0 ]; then
		# shellcheck disable=SC2086
		bash bench/live.sh --tracepoints ${BENCH_TP_ARGS:-} || rc=1
	fi
fi

if [ -f bench/vm_kfunc.sh ]; then
	echo
	echo "=== kernel-module kfunc datapath (VM)"
	bash bench/vm_kfunc.sh || rc=1
else
	echo
	echo "bench: bench/vm_kfunc.sh is not there (yet): kfunc datapath not benchmarked."
fi
exit $rc
