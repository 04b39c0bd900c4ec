/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * prefix.h - heavy prefixes: the source and destination prefixes (IPv4
 * /8 /16 /24 /32, IPv6 /32 /48 /64 /128) that carry the most packets;
 * layout, update, merge and the error arithmetic.
 *
 * A /24 whose 200 hosts each send too little to be a heavy flow can still
 * carry 30 % of the traffic.  Counting every level of both sides would
 * touch 8 structures a packet; instead each packet updates one of them,
 * drawn at random (Randomized HHH, Ben Basat et al., SIGCOMM 2017), and
 * counts are scaled back by the number of choices V = 8 x 2^t:
 *
 *     choice c = u >> (64 - 3 - t), u = fs_mix64(h_flow + n * C)
 *     c < 8:  side = c >> 2, level = c & 3; c >= 8: no update
 *
 * h_flow is the packet's keyed flow hash and n the packet's number on its
 * CPU in the window (the slot's running total), so the draw is different
 * for every packet of a flow and the same in every build (BPF, kernel
 * module, user-space model): per-CPU state stays bit for bit comparable.
 * We model u as uniform and independent between packets; nobody without
 * the secret can predict it.  t > 0 trades accuracy for cost: a packet
 * then updates nothing with probability 1 - 2^-t.
 *
 * The structure is one MV-Sketch (Tang, Huang and Lee, INFOCOM 2019) for
 * all eight (side, level) pairs: d rows of w buckets, a bucket one line
 * holding a candidate prefix (its tag says side, family and level), the
 * packets and bytes of every prefix that came to it (V, B) and the
 * candidate's majority lead L (Boyer-Moore vote).  w packets of prefix x
 * update bucket col_r(h(x)) of each row r:
 *     V += w, B += bytes;  K == x: L += w;  else L >= w: L -= w;
 *     else K = x, L = w - L.
 * Invariant (induction over the updates above): for every prefix y of the
 * bucket, 2 f(y) - V <= L if y = K, <= -L otherwise, so
 *     f(y) <= (V + L) / 2 (y the candidate), (V - L) / 2 (any other),
 * an upper bound on the sampled count that never fails, and the candidate
 * is the bucket's majority prefix whenever it has one.
 * Merge (per-CPU copies at rotation, hosts of one secret): V and B add;
 * same candidates: leads add; else the larger lead wins, minus the other
 * (equal leads: lead 0, the larger tag and key).  The invariant holds for
 * the sum (2 f - V adds, and +-L_1 +- L_2 <= the merged bound in each
 * case), so merged sketches keep their bound; unlike sums, the result can
 * depend on the order (three distinct candidates), never the bound.
 *
 * Hash of a prefix.  h(x) = pair-multiply-shift over the chunks
 * (tag, 0), (x_0, x_1), (x_2, x_3), x the address masked to its level,
 * with the packet hash's keys (hash.h: the source hash's form, with the
 * tag in the family's place), then fs_mix64.  Strongly universal, so two
 * prefixes share a bucket in a row with probability 1/w, independently
 * per row (cms.h's argument; d L <= 64 bits of h).
 *
 * Error.  A prefix of N_x packets in a window of N is drawn X ~ Bin(N_x,
 * 1/V) times, and N_s, the sampled packets of all pairs, is about 8 N / V
 * (N at t = 0); the estimate is V min_r f_r(x), f_r the bucket bound.
 *   - collisions (one-sided): f_r - X <= (V_r - X) / 2, half the bucket's
 *     other sampled packets, whose mean is at most N_s / w.  Markov and
 *     independent rows, as Count-Min:
 *         P(V min_r f_r - V X > V e N_s / (2 w) = 4 e N / w) <= e^-d;
 *   - sampling (two-sided): V X has mean N_x and variance (V - 1) N_x.
 * So, z standard deviations of the sampling:
 *     estimate <= N_x + 4 e N / w + z sqrt((V - 1) N_x)  (1 - e^-d - Phi(-z))
 *     estimate >= N_x - z sqrt((V - 1) N_x)              (1 - Phi(-z)),
 * the second because the bucket bound never falls below X.  The lower end
 * a mitigation rule acts on is estimate - z sqrt((V - 1) estimate).
 * Bytes: B_r is a Count-Min cell (never below the sampled bytes), scaled
 * by V; sampling adds variance at most V b_max B_x for frames of at most
 * b_max bytes.
 * At the defaults (d = 2, w = 1024, t = 0, V = 8): collisions within
 * 4 e / 1024 = 1.06 % of N with probability 1 - e^-2 = 86 % a prefix;
 * sampling z sqrt(7 N_x): a prefix of 2,000 packets (10 % of a 1 s
 * window at 20,000 packets/s) reads 2,000 +- 355 at z = 3 (18 %), one of
 * 200,000 packets +- 1.8 %.  A prefix is listed (some bucket's candidate)
 * whenever it holds the majority of one of its buckets: it fails to in
 * row r only if the bucket's other sampled packets reach X, so with
 * probability at most (N_s / (w X))^d for X its sampled count.
 *
 * Memory: d w 64 bytes a slot and CPU: 128 KiB at the defaults.  Cost:
 * one draw, one prefix hash (two products a half for IPv4, three for
 * IPv6) and d lines, on 2^-t of the packets.
 */
#ifndef FLOWSKETCH_PREFIX_H
#define FLOWSKETCH_PREFIX_H

#include "compat.h"
#include "flow_key.h"
#include "hash.h"

enum fs_prefix_side {
	FS_PREFIX_SRC = 0,
	FS_PREFIX_DST = 1,
};

#define FS_PREFIX_LEVELS 4		/* a side's levels a family */
#define FS_PREFIX_PAIRS 8		/* (side, level) pairs a packet draws from */
#define FS_PREFIX_MAX_DEPTH 4
#define FS_PREFIX_MIN_LOG2W 4
#define FS_PREFIX_MAX_LOG2W 16
#define FS_PREFIX_MAX_SKIP 8		/* t */
#define FS_PREFIX_DRAW_C 0x9e3779b97f4a7c15ULL

#define FS_DEFAULT_PREFIX_DEPTH 2
#define FS_DEFAULT_PREFIX_LOG2W 10
#define FS_DEFAULT_PREFIX_SKIP 0


/*
 * One bucket: one cache line.  tag 0 is an empty bucket; else
 * fs_prefix_tag(side, family, level), 1..16.  key is the candidate, the
 * address masked to its level (IPv4 in bytes 0..3, zeros after).
 */
struct fs_prefix_bucket {
	__u8 key[16];
	__u8 tag;
	__u8 pad[7];
	__u64 packets;		/* V: sampled packets of every prefix here */
	__u64 lead;		/* L: the candidate's majority lead */
	__u64 bytes;		/* B: their bytes */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct fs_prefix_bucket) == 64, "a bucket is a line");

struct fs_prefix_params {
	__u32 depth;		/* d */
	__u32 log2_width;	/* L, w = 2^L */
	__u32 skip_shift;	/* t, V = 8 x 2^t */
};

FS_INLINE void fs_prefix_params_init(struct fs_prefix_params *p, __u32 depth,
				     __u32 log2_width, __u32 skip_shift)
{
	p->depth = depth;
	p->log2_width = log2_width;
	p->skip_shift = skip_shift;
}

FS_INLINE int fs_prefix_params_check(const struct fs_prefix_params *p)
{
	if (p->depth < 1 || p->depth > FS_PREFIX_MAX_DEPTH)
		return -22;
	if (p->log2_width < FS_PREFIX_MIN_LOG2W || p->log2_width > FS_PREFIX_MAX_LOG2W ||
	    p->depth * p->log2_width > 64)
		return -22;
	if (p->skip_shift > FS_PREFIX_MAX_SKIP)
		return -22;
	return 0;
}

FS_INLINE __u32 fs_prefix_buckets(const struct fs_prefix_params *p)
{
	return p->depth << p->log2_width;
}

/* V, the factor estimates are scaled by. */
FS_INLINE __u64 fs_prefix_scale(const struct fs_prefix_params *p)
{
	return (__u64)FS_PREFIX_PAIRS << p->skip_shift;
}

FS_INLINE __u8 fs_prefix_tag(__u32 side, __u32 family, __u32 level)
{
	return (__u8)(1 + ((side & 1) << 3 | (family == FS_FAMILY_IPV6) << 2 | (level & 3)));
}

FS_INLINE __u32 fs_prefix_tag_side(__u8 tag)
{
	return ((__u32)(tag - 1) >> 3) & 1;
}

FS_INLINE __u32 fs_prefix_tag_family(__u8 tag)
{
	return (((__u32)(tag - 1) >> 2) & 1) ? FS_FAMILY_IPV6 : FS_FAMILY_IPV4;
}

FS_INLINE __u32 fs_prefix_tag_level(__u8 tag)
{
	return (__u32)(tag - 1) & 3;
}

/* The prefix length of a family's level 0..3: IPv4 /8 /16 /24 /32, IPv6
 * /32 /48 /64 /128.  Arithmetic, not a table: a small constant array in a
 * shared header lands in the BPF object's .rodata at an offset its BTF
 * cannot describe. */
FS_INLINE __u32 fs_prefix_level_len(__u32 family, __u32 level)
{
	level &= 3;
	if (family == FS_FAMILY_IPV6)
		return level == 3 ? 128 : 32 + 16 * level;
	return 8 * (level + 1);
}

/* The draw of packet number n of its CPU's window with flow hash h:
 * 0..7 a (side, level) pair, 8 and above none. */
FS_INLINE __u32 fs_prefix_draw(__u64 h_flow, __u64 n, __u32 skip_shift)
{
	return (__u32)(fs_mix64(h_flow + n * FS_PREFIX_DRAW_C) >> (64 - 3 - skip_shift));
}

/*
 * addr (16 bytes, 4-aligned: a flow key's addresses are) masked to len
 * bits (0..128), into out (8-aligned) as four 32-bit chunks read as the
 * hash reads them.  Chunk i holds the address's bits 32 i .. 32 i + 31 in
 * network order, of which the first b = min(max(len - 32 i, 0), 32) are
 * kept: the top b bits of the chunk read big-endian, ~0 << (32 - b) taken
 * in 64 bits so that b = 0 shifts all 32 out; a little-endian read (the
 * only order compat.h builds for) sees that mask byte-swapped.  Four
 * word operations, not sixteen byte steps with two branches each.
 */
FS_INLINE void fs_prefix_mask(const __u8 *addr, __u32 len, __u8 *out)
{
	const fs_alias_u32 *a = (const fs_alias_u32 *)addr;
	fs_alias_u32 *o = (fs_alias_u32 *)out;
	__u32 i;

FS_UNROLL
	for (i = 0; i < 4; i++) {
		__u32 b = len > 32 * i ? len - 32 * i : 0;

		if (b > 32)
			b = 32;
		o[i] = a[i] & __builtin_bswap32((__u32)(~0ULL << (32 - b)));
	}
}

/* h(x) of "Hash of a prefix": masked holds the prefix as fs_prefix_mask()
 * leaves it. */
FS_INLINE __u64 fs_prefix_hash(const struct fs_hash_key *k, __u8 tag,
			       const __u8 *masked)
{
	const fs_alias_u32 *x = (const fs_alias_u32 *)masked;
	__u64 half[2];
	__u32 i;

	for (i = 0; i < 2; i++) {
		const __u64 *a = k->a[i];

		half[i] = (a[0] + fs_pair_term(a, 0, tag, 0) +
			   fs_pair_term(a, 1, x[0], x[1]) +
			   fs_pair_term(a, 2, x[2], x[3])) >> 32;
	}
	return fs_mix64(half[0] << 32 | half[1]);
}

FS_INLINE __u32 fs_prefix_bucket_index(const struct fs_prefix_params *p,
				       __u32 r, __u64 h)
{
	__u32 col = (__u32)(h >> (r * p->log2_width)) & ((1U << p->log2_width) - 1);

	return (r << p->log2_width) | col;
}

FS_INLINE int fs_prefix_is_candidate(const struct fs_prefix_bucket *b, __u8 tag,
				     const __u8 *masked)
{
	const __u64 *k = (const __u64 *)b->key, *m = (const __u64 *)masked;

	return b->tag == tag && k[0] == m[0] && k[1] == m[1];
}

/* w sampled packets (0 or more: a GSO skb's segments come as one
 * update) of prefix (tag, masked) and `bytes` into a bucket: the vote of
 * "The structure" above, weighted (Boyer-Moore with weights: the
 * invariant's induction is the same with w in place of 1). */
FS_INLINE void fs_prefix_bucket_add_n(struct fs_prefix_bucket *b, __u8 tag,
				      const __u8 *masked, __u64 w, __u64 bytes)
{
	b->packets += w;
	b->bytes += bytes;
	if (fs_prefix_is_candidate(b, tag, masked)) {
		b->lead += w;
	} else if (b->lead >= w) {
		b->lead -= w;
	} else {
		__builtin_memcpy(b->key, masked, sizeof(b->key));
		b->tag = tag;
		b->lead = w - b->lead;
	}
}

FS_INLINE void fs_prefix_bucket_add(struct fs_prefix_bucket *b, __u8 tag,
				    const __u8 *masked, __u64 bytes)
{
	fs_prefix_bucket_add_n(b, tag, masked, 1, bytes);
}

/* The candidate order of the merge on equal leads: 1 when a's is above. */
FS_INLINE int fs_prefix_candidate_above(const struct fs_prefix_bucket *a,
					const struct fs_prefix_bucket *b)
{
	__u32 i;

	if (a->tag != b->tag)
		return a->tag > b->tag;
	for (i = 0; i < sizeof(a->key); i++)
		if (a->key[i] != b->key[i])
			return a->key[i] > b->key[i];
	return 0;
}

/* dst = merge(dst, src) (see "Merge"). */
FS_INLINE void fs_prefix_bucket_merge(struct fs_prefix_bucket *dst,
				      const struct fs_prefix_bucket *src)
{
	dst->packets += src->packets;
	dst->bytes += src->bytes;
	if (!src->tag)
		return;
	if (fs_prefix_is_candidate(dst, src->tag, src->key)) {
		dst->lead += src->lead;
	} else if (src->lead > dst->lead ||
		   (src->lead == dst->lead && fs_prefix_candidate_above(src, dst))) {
		dst->lead = src->lead - dst->lead;
		__builtin_memcpy(dst->key, src->key, sizeof(dst->key));
		dst->tag = src->tag;
	} else {
		dst->lead -= src->lead;
	}
}

/*
 * A packet's draw and what it picks: 1 with the pair's tag, the address
 * masked to its level (16 bytes, 8-aligned) and its hash, or 0 when the
 * draw picks no pair.  n: the packet's number on its CPU in the window;
 * k: the hash keys.
 */
FS_INLINE int fs_prefix_pick(const struct fs_hash_key *k,
			     const struct fs_flow_key *key, __u64 h_flow,
			     __u64 n, __u32 skip_shift, __u8 *tag, __u8 *masked,
			     __u64 *hx)
{
	__u32 c = fs_prefix_draw(h_flow, n, skip_shift), side, level;

	if (c >= FS_PREFIX_PAIRS)
		return 0;
	side = c >> 2;
	level = c & 3;
	*tag = fs_prefix_tag(side, key->family, level);
	fs_prefix_mask(side == FS_PREFIX_SRC ? key->src : key->dst,
		       fs_prefix_level_len(key->family, level), masked);
	*hx = fs_prefix_hash(k, *tag, masked);
	return 1;
}

/*
 * One packet's update over one flat slot (the user-space tests'; the
 * datapath finds each bucket through its map, update.h): the pair it
 * draws, its prefix into its bucket in every row.  h: its packet hashes.
 */
FS_INLINE void fs_prefix_update(struct fs_prefix_bucket *slot,
				const struct fs_prefix_params *p,
				const struct fs_hash_key *k,
				const struct fs_flow_key *key,
				const struct fs_packet_hashes *h,
				__u64 n, __u64 bytes)
{
	__u8 masked[16] __attribute__((aligned(8)));
	__u64 hx;
	__u8 tag;
	__u32 r;

	if (!fs_prefix_pick(k, key, h->flow, n, p->skip_shift, &tag, masked, &hx))
		return;
	for (r = 0; r < p->depth && r < FS_PREFIX_MAX_DEPTH; r++)
		fs_prefix_bucket_add(&slot[fs_prefix_bucket_index(p, r, hx)], tag,
				     masked, bytes);
}

#if !defined(__bpf__) && !defined(__KERNEL__)
/* ---- Error arithmetic, user space only (floating point) ------------- */
#include <math.h>

/* The collision term 4 e N / w of "Error" above as a fraction of the
 * window's N packets, and the probability e^-d that a prefix's estimate
 * exceeds it (*miss). */
static inline double fs_prefix_collisions(const struct fs_prefix_params *p,
					  double *miss)
{
	*miss = exp(-(double)p->depth);
	return 4 * M_E / ldexp(1, (int)p->log2_width);
}

/* The sampling's standard deviation over sqrt(N_x): sqrt(V - 1). */
static inline double fs_prefix_sampling(const struct fs_prefix_params *p)
{
	return sqrt((double)(fs_prefix_scale(p) - 1));
}
#endif

#endif /* FLOWSKETCH_PREFIX_H */
