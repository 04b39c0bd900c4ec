// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * hll_estimate.c - Ertl's improved HyperLogLog estimator.
 *
 * Otmar Ertl, "New cardinality estimation algorithms for HyperLogLog
 * sketches", arXiv:1702.01284 (2017), section "Improved raw estimator".
 *
 * The original estimator of Flajolet et al., alpha_m m^2 / sum 2^-r[i], is
 * biased for n below about 5m/2 (where empty registers dominate) and needs
 * linear counting plus empirical bias tables there (HLL++).  Ertl derives
 * the estimator from the register histogram instead, with corrections for
 * the two ends of the rank range that the original treats wrongly: empty
 * registers (rank 0) and saturated ones (rank q + 1, all 64 - p remaining
 * hash bits zero).  The result is unbiased to within a fraction of the
 * standard error over the whole range, with no switch and no tables.
 *
 * With m = 2^p registers, q = 64 - p and C[k] the number of registers of
 * value k (0 <= k <= q + 1):
 *
 *     z  = m * tau(1 - C[q+1] / m)
 *     z  = (z + C[k]) / 2                for k = q, q-1, ..., 1
 *     z += m * sigma(C[0] / m)
 *     E  = alpha_inf * m^2 / z,          alpha_inf = 1 / (2 ln 2)
 *
 *     sigma(x) = x + sum_{k>=1} x^(2^k) 2^(k-1)                (x < 1)
 *     tau(x)   = (1 - x - sum_{k>=1} (1 - x^(2^-k))^2 2^-k) / 3
 *
 * Both series are summed until adding a term no longer changes the double,
 * which is also what bounds the loops: sigma's terms fall doubly
 * exponentially for x < 1, and tau's terms shrink by at least 1/2 each.
 * sigma(1) is infinite (all registers empty): z is then infinite and E = 0,
 * which is exact.  At the other end, every register saturated gives z = 0
 * and E = +inf: the hash can no longer tell how many keys there were.  The
 * relative standard error is about 1.04 / sqrt(m).
 */
#include <math.h>
#include <string.h>
#include "flowsketch/params.h"
#include "hll_estimate.h"

static double ertl_sigma(double x)
{
	double y = 1.0, z = x, prev;

	if (x == 1.0)
		return INFINITY;
	do {
		x *= x;
		prev = z;
		z += x * y;
		y += y;
	} while (z != prev);
	return z;
}

static double ertl_tau(double x)
{
	double y = 1.0, z, prev;

	if (x == 0.0 || x == 1.0)
		return 0.0;
	z = 1.0 - x;
	do {
		x = sqrt(x);
		prev = z;
		y *= 0.5;
		z -= (1.0 - x) * (1.0 - x) * y;
	} while (z != prev);
	return z / 3.0;
}

double fs_hll_estimate_hist(const __u32 *hist, double m, __u32 q)
{
	double z;
	__u32 k;

	z = m * ertl_tau(1.0 - hist[q + 1] / m);
	for (k = q; k >= 1; k--)
		z = 0.5 * (z + hist[k]);
	z += m * ertl_sigma(hist[0] / m);
	return m * m / (2.0 * M_LN2 * z);
}

double fs_hll_estimate(const __u8 *regs, __u32 p)
{
	/* One histogram bucket per possible register value, 0 .. 64. */
	__u32 hist[66];
	__u32 q, i, k;

	if (p < FS_HLL_MIN_P || p > FS_HLL_MAX_P)
		return NAN;
	q = 64 - p;
	memset(hist, 0, sizeof(hist));
	for (i = 0; i < (1U << p); i++) {
		/* A value above q + 1 cannot come from fs_hll_rank(); count
		 * it as saturated rather than read past the histogram. */
		k = regs[i] <= q + 1 ? regs[i] : q + 1;
		hist[k]++;
	}
	return fs_hll_estimate_hist(hist, (double)(1ULL << p), q);
}

double fs_hll_rse(__u32 p)
{
	return 1.04 / sqrt((double)(1ULL << p));
}
