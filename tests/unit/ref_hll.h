/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ref_hll.h - HyperLogLog register derivation for tests, from its
 * definition, not from include/flowsketch/hll.h's code.
 *
 * The definition (hll.h's header comment, and the one Redis's dense
 * encoding and postgresql-hll use; /work/shared/PLATFORM.md):
 *     index = the low p bits of the 64-bit hash;
 *     rank  = 1 + the number of trailing zeros of (hash >> p), counted
 *             up to a guard bit at position 64 - p, so 1 .. 65 - p
 *             (Redis, p = 14: 1 .. 51).
 * Written bit by bit with plain loops: no ctz, no masks shared with the
 * code under test.  A register keeps the largest rank it has seen.
 */
#ifndef FLOWSKETCH_REF_HLL_H
#define FLOWSKETCH_REF_HLL_H

#include <stdint.h>

static inline uint32_t ref_hll_index(uint64_t h, uint32_t p)
{
	uint32_t index = 0, bit;

	for (bit = 0; bit < p; bit++)
		if ((h >> bit) & 1)
			index |= (uint32_t)1 << bit;
	return index;
}

static inline uint8_t ref_hll_rank(uint64_t h, uint32_t p)
{
	uint8_t rank = 1;
	uint32_t bit;

	/* Bits p .. 63 of the hash are bits 0 .. 63 - p of hash >> p; the
	 * guard bit 64 - p ends the count when all of them are zero. */
	for (bit = p; bit < 64; bit++) {
		if ((h >> bit) & 1)
			break;
		rank++;
	}
	return rank;
}

static inline void ref_hll_insert(uint8_t *regs, uint32_t p, uint64_t h)
{
	uint32_t index = ref_hll_index(h, p);
	uint8_t rank = ref_hll_rank(h, p);

	if (rank > regs[index])
		regs[index] = rank;
}

#endif /* FLOWSKETCH_REF_HLL_H */
