/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * detect.h - the detection sketches in the datapath: heavy prefixes
 * (prefix.h) and spreaders (spread.h), each in a per-CPU map of its own;
 * their layout there.  The per-packet update of both is update.h's
 * fs_detect_update(), for the three builds.
 *
 * Maps (sketch_kind.h, FS_DP_MAPS; maps.h):
 *
 *  map        element                     per slot E      chunk
 *  fs_prefix  fs_prefix_bucket, 64 B      d w (prefix)    2^9 buckets
 *  fs_spread  fs_spread_bucket, 64 B      2 d w (spread)  2^9 buckets
 *
 * numbered as chunk.h numbers every map (element = slot * stride + i).  A
 * sketch the parameters leave off (fs_sketch_params.prefix_log2w or
 * spread_log2w 0) has E = 0: its map gets one element, which nothing
 * writes (sketch_kind.h, "Maps of no slot").
 *
 * Which packets.  Every update the sketches get (update.h's input: a
 * packet, a GSO skb's segments, a connection's establishment), after the
 * Count-Min and HyperLogLog update, with the same flow key: spreaders
 * take its elements, distinct whatever the packets; prefixes take its
 * 1 + extra_packets packets (0 for a connection's establishment, which
 * adds bytes only) in one draw.  A draw of an update that counts k
 * packets puts all k in one pair: the estimate stays unbiased and its
 * variance grows to (V - 1) sum k_i^2 over the prefix's updates, at most
 * (V - 1) K N_x for updates of at most K packets (a GSO skb's segments).
 *
 * The draw's n is the packet's number on its CPU in the window: the
 * slot's running packet total before this update (maps.h, fs_hot), which
 * the datapath and the model keep alike.
 */
#ifndef FLOWSKETCH_DETECT_H
#define FLOWSKETCH_DETECT_H

#include "compat.h"
#include "flow_key.h"
#include "hash.h"
#include "params.h"
#include "prefix.h"
#include "spread.h"
#include "chunk.h"

#define FS_DETECT_CHUNK_SHIFT 9		/* 512 buckets of 64 B: 32 KiB */
#define FS_DETECT_CHUNK_MASK ((1U << FS_DETECT_CHUNK_SHIFT) - 1)

struct fs_prefix_chunk {
	struct fs_prefix_bucket b[1U << FS_DETECT_CHUNK_SHIFT];
};

struct fs_spread_chunk {
	struct fs_spread_bucket b[1U << FS_DETECT_CHUNK_SHIFT];
};

_Static_assert(sizeof(struct fs_prefix_chunk) == FS_CHUNK_BYTES, "chunk.h");
_Static_assert(sizeof(struct fs_spread_chunk) == FS_CHUNK_BYTES, "chunk.h");

/* E, buckets a slot; 0 when the sketch is off. */
FS_INLINE __u64 fs_prefix_buckets_per_slot(const struct fs_sketch_params *p)
{
	return p->prefix_log2w ? (__u64)(p->prefix_shape >> 4) << p->prefix_log2w : 0;
}

FS_INLINE __u64 fs_spread_buckets_per_slot(const struct fs_sketch_params *p)
{
	return p->spread_log2w ?
	       (__u64)FS_SPREAD_NSIDES * (p->spread_shape >> 4) << p->spread_log2w : 0;
}

/* The element bucket i (prefix.h's or spread.h's numbering within the
 * slot) of slot is, in chunk.h's numbering of a map of per_slot buckets a
 * slot. */
FS_INLINE __u64 fs_detect_element(__u64 per_slot, __u32 slot, __u32 i)
{
	return slot * fs_chunk_stride(per_slot, FS_DETECT_CHUNK_SHIFT) + i;
}

#endif /* FLOWSKETCH_DETECT_H */
