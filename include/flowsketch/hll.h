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
 * merge and tells no reader the index bits of a known key's hash.  Registers are one byte each in the datapath (a byte
 * store is cheaper than a 6-bit field update); exports pack them.
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

#endif /* FLOWSKETCH_HLL_H */
