// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench_nitro.bpf.c - the benchmark programs (bench.bpf.c) with the
 * datapath's Count-Min rows sampled NitroSketch's way (FS_CMS_NITRO,
 * include/flowsketch/cms_sampled.h): each row of a packet updated with
 * probability p = 2^-FS_CMS_NITRO_K by 1/p times the increment.  An
 * option measured by fs-livebench ("nitro", its full program), never
 * attached by the daemon: its bound is two-sided and holds only after a
 * convergence length (cms_sampled.h), where the default's is "never below
 * the truth" and eps * N w.p. 1 - delta from the first packet.  The
 * HyperLogLogs, windows, totals and reports are the full program's.
 *
 * Skeleton: build/skel/bench_nitro.skel.h, struct bench_nitro, of the
 * same layout as struct bench (bench.bpf.c defines the state map in both).
 */
#define FS_CMS_NITRO 1
#include "bench.bpf.c"
