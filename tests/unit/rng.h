/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rng.h - xorshift64* (Vigna), the unit tests' fixed, seedable stream of
 * inputs: a failure reproduces from its seed.  Test input only, never an
 * oracle.
 */
#ifndef FLOWSKETCH_TEST_RNG_H
#define FLOWSKETCH_TEST_RNG_H

#include <stddef.h>
#include <linux/types.h>

static inline __u64 rng_next(__u64 *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

/* len bytes of the stream, each the top byte of a draw. */
static inline void rng_fill(__u64 *state, void *buf, size_t len)
{
	__u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (__u8)(rng_next(state) >> 56);
}

#endif
