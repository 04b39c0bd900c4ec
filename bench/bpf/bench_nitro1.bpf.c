// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench_nitro1.bpf.c - bench_nitro.bpf.c's option with one Count-Min row
 * a packet, chosen uniformly, counted d times (FS_CMS_NITRO_ONE,
 * include/flowsketch/cms_sampled.h, "One row a packet"): exactly one
 * sketch line a packet and no branch on which, where the per-slot sampling
 * touches 1.25 lines on average through data-dependent branches.  Measured
 * by fs-livebench as "nitro1"; never the daemon's, for the same reasons.
 *
 * Skeleton: build/skel/bench_nitro1.skel.h, struct bench_nitro1, laid out
 * as struct bench.
 */
#define FS_CMS_NITRO 1
#define FS_CMS_NITRO_ONE 1
#include "bench.bpf.c"
