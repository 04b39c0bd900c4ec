/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * hll.h - HyperLogLog registers of distinct flows, sources, destinations.
 *
 * Register derivation (the one Redis and postgresql-hll use, so that our
 * registers export to both; see user/lib/hll_export.c):
 *     index = h & (m - 1)                      low p bits of the hash
 *     rank  = ctz((h >> p) | 1 << (64 - p)) + 1  1 .. 65 - p
 * The guard bit caps the rank when the remaining 64 - p bits are all zero
 * (Redis: p = 14, ranks 1..51).  A register keeps the max rank it has seen;
 * 0 means empty.  Exports move each sketch's registers through a secret
 * permutation (user/lib/export_perm.h), which keeps every estimate and
 * merge and tells no reader the index bits of a known key's hash.  The
 * datapath keeps them packed, five to a 32-bit word (fs_hll_packed,
 * "Packed registers" below); user space, one byte each; exports pack them
 * again as each format wants.
 *
 * Merge is register-wise max, which gives exactly the sketch of the union.
 * The estimate (user space only, it needs floating point) is Ertl's
 * improved estimator: see user/lib/hll_estimate.c.  Relative standard error
 * 1.04 / sqrt(m): 0.81 % at p = 14.
 *
 * Memory layout (maps.h): chunk.h, with E = FS_HLL_NSKETCH << p registers
 * a slot (enum below), numbered within the slot
 *     register = (sketch << p) | index,
 * 32768 registers a chunk (FS_HLL_CHUNK_SHIFT).
 *
 * Byte registers in a map (fs_hll, struct fs_hll_chunk) are what the
 * datapath of a release before the packed registers writes, and what the
 * wide-layout build of the tests and benchmarks writes.  A datapath this
 * release loads afresh makes fs_hll one chunk (sketch_kind.h, "Legacy
 * maps"): 32 KiB a CPU, where two slots of ceil(3 * 2^p / 2^15) chunks
 * take 2 x 32 KiB up to p = 13, 2 x 2 x 32 = 128 KiB at p = 14 and
 * 2 x 3 x 2^(p - 15) x 32 KiB from p = 15 on (1.5 MiB at p = 18); an
 * adopted earlier release's keeps its size.
 */
#ifndef FLOWSKETCH_HLL_H
#define FLOWSKETCH_HLL_H

#include "compat.h"
#include "params.h"
#include "chunk.h"

enum fs_hll_sketch {
	FS_HLL_FLOWS = 0,	/* distinct five-tuples */
	FS_HLL_SOURCES = 1,	/* distinct source addresses */
	FS_HLL_DESTS = 2,	/* distinct destination addresses */
	FS_HLL_NSKETCH = 3,
};

#define FS_HLL_CHUNK_SHIFT 15
#define FS_HLL_CHUNK_REGS (1U << FS_HLL_CHUNK_SHIFT)
#define FS_HLL_CHUNK_MASK (FS_HLL_CHUNK_REGS - 1)

/* One per-CPU map element: 32768 one-byte registers. */
struct fs_hll_chunk {
	__u8 regs[FS_HLL_CHUNK_REGS];
};

_Static_assert(sizeof(struct fs_hll_chunk) == FS_CHUNK_BYTES, "chunk.h");

FS_INLINE __u32 fs_hll_index(__u64 h, __u32 p)
{
	return (__u32)(h & ((1ULL << p) - 1));
}

FS_INLINE __u8 fs_hll_rank(__u64 h, __u32 p)
{
#ifdef FS_MUTANT_HLL_RANK_BIAS	/* `make mutants` only: every rank one higher */
	__u8 r = (__u8)(fs_ctz64((h >> p) | (1ULL << (64 - p))) + 2);

	return r > 65 - p ? (__u8)(65 - p) : r;
#endif
	return (__u8)(fs_ctz64((h >> p) | (1ULL << (64 - p))) + 1);
}

FS_INLINE __u64 fs_hll_regs_per_slot(const struct fs_sketch_params *p)
{
	return (__u64)FS_HLL_NSKETCH << p->hll_p;
}

FS_INLINE __u64 fs_hll_slot_stride(const struct fs_sketch_params *p)
{
	return fs_chunk_stride(fs_hll_regs_per_slot(p), FS_HLL_CHUNK_SHIFT);
}

FS_INLINE __u64 fs_hll_register_number(const struct fs_sketch_params *p,
				       __u32 slot, __u32 sketch, __u32 index)
{
	return slot * fs_hll_slot_stride(p) +
	       (((__u64)sketch << p->hll_p) | index);
}

FS_INLINE __u32 fs_hll_chunks(const struct fs_sketch_params *p, __u32 nslots)
{
	return fs_chunk_count(fs_hll_regs_per_slot(p), FS_HLL_CHUNK_SHIFT, nslots);
}

/* Raise a register to rank; returns 1 when it changed. */
FS_INLINE int fs_hll_register_max(__u8 *reg, __u8 rank)
{
	if (*reg >= rank)
		return 0;
	*reg = rank;
	return 1;
}

/*
 * Packed registers: the datapath's working set.
 *
 * A rank is at most 65 - p <= 61 (p >= FS_HLL_MIN_P), so 6 bits hold it.
 * The datapath keeps five registers in each 32-bit word (30 bits; the top
 * two are zero) in fs_hll_packed: 3 << p registers a slot take
 * ceil(3 * 2^p / 5) words, 38.4 KiB at p = 14 where bytes take 48 KiB.
 * Register r of a slot (the numbering above) is
 *     word  = slot * stride + r / 5,   field = r % 5,   bits 6 * field ..
 * with stride the slot's words rounded up to a chunk (chunk.h), 8192
 * words a chunk.  Aligned 32-bit words, so that every build reads and
 * writes them the same way, whatever the architecture does with
 * unaligned access.  The rest of flowsketch sees byte registers: the
 * fold unpacks (fs_hll_packed_get()), and a register-wise max of packed
 * fields is the max of the registers, so the merge stays exact.
 *
 * r / 5 without a division instruction (the BPF JIT emits a real divide
 * for a constant one): floor(r / 5) = (r * 838861) >> 22 for r < 2^22.
 * 838861 = ceil(2^22 / 5) = (2^22 + 1) / 5, so r * 838861 / 2^22 =
 * r / 5 + r / (5 * 2^22), whose second term stays below the 1/5 that
 * separates r / 5 from the next integer while r < 2^22 (tested
 * exhaustively up to 3 << FS_HLL_MAX_P, which is below 2^20).
 */
#define FS_HLL_PACKED_PER_WORD 5
#define FS_HLL_PACKED_BITS 6
#define FS_HLL_PACKED_CHUNK_SHIFT 13
#define FS_HLL_PACKED_CHUNK_WORDS (1U << FS_HLL_PACKED_CHUNK_SHIFT)
#define FS_HLL_PACKED_CHUNK_MASK (FS_HLL_PACKED_CHUNK_WORDS - 1)

_Static_assert(3ULL << FS_HLL_MAX_P < 1ULL << 22, "fs_div5() range");
_Static_assert(65 - FS_HLL_MIN_P < 1 << FS_HLL_PACKED_BITS, "a rank fits");

/* One per-CPU map element of fs_hll_packed: 8192 words, 32 KiB. */
struct fs_hll_packed_chunk {
	__u32 words[FS_HLL_PACKED_CHUNK_WORDS];
};

_Static_assert(sizeof(struct fs_hll_packed_chunk) == FS_CHUNK_BYTES, "chunk.h");

FS_INLINE __u32 fs_div5(__u32 r)
{
	return (__u32)(((__u64)r * 838861) >> 22);
}

FS_INLINE __u64 fs_hll_packed_words_per_slot(const struct fs_sketch_params *p)
{
	return (fs_hll_regs_per_slot(p) + FS_HLL_PACKED_PER_WORD - 1) /
	       FS_HLL_PACKED_PER_WORD;
}

FS_INLINE __u32 fs_hll_packed_chunks(const struct fs_sketch_params *p,
				     __u32 nslots)
{
	return fs_chunk_count(fs_hll_packed_words_per_slot(p),
			      FS_HLL_PACKED_CHUNK_SHIFT, nslots);
}

/* The word of register `reg` of the slot (its number within the slot, as
 * fs_hll_register_number() without the slot) and its field's shift. */
FS_INLINE __u64 fs_hll_packed_word(const struct fs_sketch_params *p,
				   __u32 slot, __u32 reg, __u32 *shift)
{
	__u32 q = fs_div5(reg);

	*shift = (reg - q * FS_HLL_PACKED_PER_WORD) * FS_HLL_PACKED_BITS;
	return slot * fs_chunk_stride(fs_hll_packed_words_per_slot(p),
				      FS_HLL_PACKED_CHUNK_SHIFT) + q;
}

FS_INLINE __u8 fs_hll_packed_get(__u32 word, __u32 field)
{
	return (__u8)((word >> (field * FS_HLL_PACKED_BITS)) & 63);
}

/* Raise the register at shift in *word to rank; 1 when it changed. */
FS_INLINE int fs_hll_packed_max(__u32 *word, __u32 shift, __u8 rank)
{
	__u32 w = *word;

	if (((w >> shift) & 63) >= rank)
		return 0;
	*word = (w & ~(63U << shift)) | ((__u32)rank << shift);
	return 1;
}

#endif /* FLOWSKETCH_HLL_H */
