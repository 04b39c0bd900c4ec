/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * hll_estimate.h - cardinality estimate of a HyperLogLog register array.
 *
 * Registers are derived as in include/flowsketch/hll.h: m = 2^p registers,
 * each the max rank 0 .. 65 - p seen at its index.  The estimator is
 * Ertl's improved raw estimator (see hll_estimate.c): unbiased over the
 * whole range, from one key to 2^64, without bias tables or a switch to
 * linear counting.
 */
#ifndef FLOWSKETCH_HLL_ESTIMATE_H
#define FLOWSKETCH_HLL_ESTIMATE_H

#include <linux/types.h>

/* Estimated number of distinct keys; NaN when p is outside
 * FS_HLL_MIN_P..FS_HLL_MAX_P (params.h). */
double fs_hll_estimate(const __u8 *regs, __u32 p);

/*
 * The same from a register histogram: hist[k] registers of value k, for
 * k = 0 .. q + 1, over m registers (any m >= 1, not only a power of two:
 * the estimator assumes only that keys pick registers uniformly), whose
 * ranks are 1 .. q and q + 1 saturated.  Other sketches of HyperLogLog
 * registers (spread.h's buckets) share it.
 */
double fs_hll_estimate_hist(const __u32 *hist, double m, __u32 q);

/* Relative standard error of the estimate: 1.04 / sqrt(2^p). */
double fs_hll_rse(__u32 p);

#endif /* FLOWSKETCH_HLL_ESTIMATE_H */
