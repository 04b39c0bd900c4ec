/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ref_bloom.h - the blocked Bloom filter's false-positive rate (Putze,
 * Sanders and Singler), written for the tests apart from bloom.h's
 * fs_bloom_fpr(): Poisson terms in log space from j = 0, each block a
 * classic 512-bit filter of j keys.
 */
#ifndef FLOWSKETCH_REF_BLOOM_H
#define FLOWSKETCH_REF_BLOOM_H

#include <math.h>

/* PSS, log-space Poisson terms: an implementation of its own. */
static inline double ref_fpr(double n, double blocks, unsigned int k)
{
	double lambda = n / blocks, sum = 0;
	int j;

	for (j = 0; j < (int)(lambda * 4 + 200); j++) {
		double logp = -lambda + j * log(lambda) - lgamma(j + 1.0);
		double fill = 1 - exp(j * (double)k * log1p(-1.0 / 512));

		sum += exp(logp) * pow(fill, k);
	}
	return sum;
}

#endif /* FLOWSKETCH_REF_BLOOM_H */
