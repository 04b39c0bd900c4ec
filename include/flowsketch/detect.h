/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * detect.h - the detection sketches in the datapath: heavy prefixes
 * (prefix.h) and spreaders (spread.h), each in a per-CPU map of its own,
 * and the per-packet update of both, written once for three builds as
 * update.h is (the including file defines struct fs_update_env and
 * fs_env_chunk() first).
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

/*
 * The bucket of index i (prefix.h's or spread.h's numbering within the
 * slot) of slot in datapath map m, or NULL (a map smaller than the
 * parameters say).  m is a constant at every call.
 */
FS_INLINE void *fs_detect_bucket(struct fs_update_env *env, enum fs_dp_map m,
				 __u64 per_slot, __u32 slot, __u32 i)
{
	__u64 e = slot * fs_chunk_stride(per_slot, FS_DETECT_CHUNK_SHIFT) + i;
	void *c = fs_env_chunk(env, m, (__u32)(e >> FS_DETECT_CHUNK_SHIFT));

	if (!c)
		return 0;
	return (__u8 *)c + (e & FS_DETECT_CHUNK_MASK) * 64;
}

/*
 * One update of the spread sketch: prefix.h's and spread.h's updates
 * with each bucket found through the map (fs_spread_update() there, over
 * one flat slot, is the same arithmetic).
 */
FS_INLINE int fs_detect_spread(struct fs_update_env *env,
			       const struct fs_sketch_params *params,
			       const struct fs_flow_key *key,
			       const struct fs_packet_hashes *h, __u32 slot)
{
	struct fs_spread_params p;
	__u64 per_slot = fs_spread_buckets_per_slot(params);
	__u32 side, r;

	fs_params_spread(params, &p);
FS_UNROLL
	for (side = 0; side < FS_SPREAD_NSIDES; side++) {
		__u64 e = fs_spread_element(side, h->src, h->dst, key->dport);
		__u64 hk = side == FS_SPREAD_SRC ? h->src : h->dst;
		const __u8 *k = side == FS_SPREAD_SRC ? key->src : key->dst;

		if (!fs_spread_sampled(e, p.sample_shift))
			continue;
FS_UNROLL
		for (r = 0; r < FS_SPREAD_MAX_DEPTH; r++) {
			struct fs_spread_bucket *b;

			if (r >= p.depth)
				continue;
			b = fs_detect_bucket(env, FS_DP_SPREAD, per_slot, slot,
					     fs_spread_bucket_index(&p, side, r, hk));
			if (!b)
				return FS_UPDATE_ENOENT;
			fs_spread_bucket_add(b, e, k, key->family);
		}
	}
	return 0;
}

FS_INLINE int fs_detect_prefix(struct fs_update_env *env,
			       const struct fs_sketch_params *params,
			       const struct fs_hash_key *k,
			       const struct fs_flow_key *key,
			       const struct fs_packet_hashes *h, __u64 n,
			       __u64 packets, __u64 bytes, __u32 slot)
{
	struct fs_prefix_params p;
	__u64 per_slot = fs_prefix_buckets_per_slot(params);
	__u8 masked[16] __attribute__((aligned(8)));
	__u32 c, side, level, r;
	__u64 hx;
	__u8 tag;

	fs_params_prefix(params, &p);
	c = fs_prefix_draw(h->flow, n, p.skip_shift);
	if (c >= FS_PREFIX_PAIRS)
		return 0;
	side = c >> 2;
	level = c & 3;
	tag = fs_prefix_tag(side, key->family, level);
	fs_prefix_mask(side == FS_PREFIX_SRC ? key->src : key->dst,
		       fs_prefix_level_len(key->family, level), masked);
	hx = fs_prefix_hash(k, tag, masked);
FS_UNROLL
	for (r = 0; r < FS_PREFIX_MAX_DEPTH; r++) {
		struct fs_prefix_bucket *b;

		if (r >= p.depth)
			continue;
		b = fs_detect_bucket(env, FS_DP_PREFIX, per_slot, slot,
				     fs_prefix_bucket_index(&p, r, hx));
		if (!b)
			return FS_UPDATE_ENOENT;
		fs_prefix_bucket_add_n(b, tag, masked, packets, bytes);
	}
	return 0;
}

/*
 * Both, for one update of packets (0 or more) of bytes in all, of the
 * flow key with packet hashes h, the n-th of its CPU's window, in slot.
 * 0 or FS_UPDATE_ENOENT.
 */
FS_INLINE int fs_detect_update(struct fs_update_env *env,
			       const struct fs_sketch_params *params,
			       const struct fs_hash_key *k,
			       const struct fs_flow_key *key,
			       const struct fs_packet_hashes *h, __u64 n,
			       __u64 packets, __u64 bytes, __u32 slot)
{
	int err = 0;

	if (params->spread_log2w)
		err = fs_detect_spread(env, params, key, h, slot);
	if (!err && params->prefix_log2w)
		err = fs_detect_prefix(env, params, k, key, h, n, packets, bytes, slot);
	return err;
}

#endif /* FLOWSKETCH_DETECT_H */
