/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * chunk.h - how any sketch kind's slots lie in per-CPU map elements.
 *
 * A sketch kind (sketch_kind.h) has E elements a slot (Count-Min: d << log2w
 * cells of 16 bytes, cms.h; HyperLogLog: 3 << p one-byte registers, hll.h)
 * and the datapath keeps FS_NSLOTS slots.  Elements are numbered
 *     element = slot * stride + i,          0 <= i < E,
 *     stride  = E rounded up to a multiple of C,
 * and stored in chunks of C = 1 << shift elements, FS_CHUNK_BYTES (32 KiB,
 * the largest per-CPU map value the kernel allows) each:
 *     chunk = element >> shift,  offset = element & (C - 1).
 * The stride keeps every chunk inside one slot: the daemon rewrites a
 * closed slot's elements whole while the datapath writes the other slot,
 * and a shared element would lose those writes.  A merged sketch in user
 * space (user/lib/sketch.h) keeps the numbering of slot 0.
 */
#ifndef FLOWSKETCH_CHUNK_H
#define FLOWSKETCH_CHUNK_H

#include "compat.h"

#define FS_CHUNK_BYTES 32768U

/* Elements from one slot's first element to the next one's. */
FS_INLINE __u64 fs_chunk_stride(__u64 per_slot, __u32 shift)
{
	__u64 mask = (1ULL << shift) - 1;

	return (per_slot + mask) & ~mask;
}

/* Chunks (map elements) of one slot, and of nslots slots. */
FS_INLINE __u32 fs_chunks_per_slot(__u64 per_slot, __u32 shift)
{
	return (__u32)(fs_chunk_stride(per_slot, shift) >> shift);
}

FS_INLINE __u32 fs_chunk_count(__u64 per_slot, __u32 shift, __u32 nslots)
{
	return (__u32)((nslots * fs_chunk_stride(per_slot, shift)) >> shift);
}

#endif /* FLOWSKETCH_CHUNK_H */
