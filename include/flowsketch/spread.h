/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * spread.h - spreaders: the sources that reach the most distinct peers
 * (scanners) and the destinations reached by the most distinct sources
 * (victims, or services that became popular); layout, update, merge and
 * the sizing and error arithmetic.
 *
 * A spreader is never heavy: a scanner sends one small packet to each of
 * thousands of (address, port) pairs.  What grows is its spread, the
 * number of distinct elements it is seen with:
 *     side SRC: key = source address,      element = (destination, dport)
 *     side DST: key = destination address, element = source address
 *
 * The structure is SpreadSketch (Tang, Huang and Lee, INFOCOM 2020): a
 * Count-Min shaped matrix of d rows by w buckets, per side, where a bucket
 * holds a distinct counter instead of a count, plus one candidate key.
 * An element of key k goes into bucket col_r(k) of each row r; the bucket
 * counts the distinct elements of all keys that share it (an overcount of
 * each, as Count-Min overcounts), and keeps one candidate key.  Three
 * changes from the paper, the first two for the datapath's sake:
 *
 *   - the distinct counter is a HyperLogLog of FS_SPREAD_REGS 4-bit
 *     registers (the paper uses a multiresolution bitmap), so that a bucket
 *     with its candidate is one 64-byte line and an update touches one
 *     line per row;
 *   - distinct sampling: an element updates the structure only when the
 *     top s bits of its keyed hash are zero (R = 2^s), and estimates are
 *     multiplied by R.  The decision is a function of the element, not of
 *     the packet, so an element is in or out whatever its packet count,
 *     and distinct counts stay distinct counts: R X, X the sampled
 *     elements of a set of n, is unbiased for n.  A packet touches
 *     2 d / R lines on average (both sides), not 2 d;
 *   - the candidate is the key of the element of highest priority seen in
 *     the bucket (a bottom-1 sketch: priority = a 16-bit field of the
 *     element's hash, below), where the paper keeps the key of the highest
 *     rank.  Every distinct element of the bucket is equally likely to hold
 *     the top priority, so key k is the candidate with probability
 *     n_k / n_r, its share of the bucket's distinct elements (ties, 2^-16 a
 *     pair, aside), whatever the order they came in.  Ranks tie often (one
 *     element in 2^j has rank j): the rank rule measured missing a scanner
 *     of 3,000 peers in 1 of 5 trials, where its share was 87 % a row.
 *     A key is listed unless it loses all d of its buckets:
 *         P(missed) = prod_r (1 - n_k / n_r) <= ((n_r - n_k) / n_r)^d.
 *
 * Element hash, register, rank and priority (fs_spread_element(), _reg(),
 * _rank(), _prio()).
 * e_SRC = fs_mix64(h_dst + dport * C), e_DST = fs_mix64(h_src ^ C), with
 * h_src, h_dst the packet's keyed address hashes (hash.h) and C an odd
 * constant.  Two distinct elements of one key get distinct e but with
 * probability 2^-64: for distinct destinations, because h_dst is strongly
 * universal on each 32-bit half (their difference is uniform); for one
 * destination and distinct ports, because C times a nonzero difference of
 * less than 2^16 is not 0 mod 2^64 (C odd).  fs_mix64 is a bijection.
 * The hash is keyed, so nobody without the secret can pick the elements
 * that are left out.  From e:
 *     sampled  <=>  e >> (64 - s) == 0
 *     register  =  (e mod 2^32) * FS_SPREAD_REGS >> 32
 *     rank      =  1 + ctz of bits 32..45 (14 bits), 15 when all are zero
 *     priority  =  0xffff - bits 0..15
 * sampling, register and rank from disjoint bit fields (s <= 18; params.h
 * keeps s in 4 bits), so rank is geometric (P = 2^-j for
 * j = 1..14, 2^-14 for 15) and independent of the register: a register
 * takes the maximum rank of its elements, as in hll.h, with q = 14 rank
 * bits; 15 is HyperLogLog's saturated value q + 1, which Ertl's estimator
 * (user/lib/hll_estimate.c) models exactly.  A bucket saturates past
 * about m 2^q = 1.5 million sampled elements, R times as many real ones.
 *
 * Columns: col_r(k) = bits [r L, r L + L) of the key's own hash (h_src on
 * side SRC, h_dst on DST; L = log2 w), as cms.h takes a flow's columns:
 * d L <= 64.
 *
 * Layout (one per-CPU map element a slot and side; struct fs_spread_bucket
 * below): bucket (side, r, c) at index (side d + r) w + c of the slot.
 *
 * (The priority shares bits with the register index: that biases neither,
 * since a register takes every element and the candidate any one.)
 *
 * Merge (per-CPU copies at rotation, and hosts of one secret):
 * register-wise max, and the candidate of the higher (priority, family,
 * key), compared in that order, so the merge is commutative and
 * associative, and its candidate is the one element of top priority over
 * both streams: what one bucket that saw both would hold.
 *
 * Error.  For key k with true spread n_k in a window, bucket (r, col_r(k))
 * holds the union of its keys' elements, n_r >= n_k of them, and answers
 *     S_r = R * HLL(sampled elements of the union),
 * and the estimate is S = min_r S_r.  Two parts:
 *   - sharing (one-sided, an overcount): n_r - n_k is the spread of the
 *     other keys of the bucket, whose mean is at most (F - n_k) / w, F the
 *     sum of all keys' spreads, at most the window's distinct flows
 *     (distinct (src, dst, dport) and (dst, src) pairs are fewer than
 *     distinct five-tuples).  Markov and independent rows, as Count-Min:
 *         P(min_r (n_r - n_k) > e F / w) <= e^-d;
 *   - counting (two-sided): relative standard error
 *         sigma(n_r) = sqrt(1.04^2 / m + (R - 1) / n_r),
 *     HyperLogLog's on the sampled count plus the binomial thinning's
 *     (variance n (R - 1) for R X; pairwise independence of e suffices).
 * So with probability about 1 - e^-d - 2 Phi(-z):
 *     n_k (1 - z sigma) <= S <= (n_k + e F / w) (1 + z sigma)
 * and the lower end, what a mitigation rule acts on, is
 *     n_k >= S / (1 + z sigma) - e F / w.
 * At the defaults (d = 2, w = 512, m = 90, R = 8): sigma = 11.0 % for
 * large n (11.6 % at n = 5,000, 13.8 % at n = 1,000); sharing e F / w =
 * 0.53 % of F with probability 1 - e^-2 = 86 % a key (each row alone
 * 63 %).  For F = 100,000 flows a scanner of 5,000 peers reads 5,000 +-
 * 580, where an ordinary source reads its own few plus about 200 of
 * others', and the scanner is listed but with probability (200 / 5,200)^2
 * = 0.15 %.
 * fs_spread_sigma() and fs_spread_sharing() give these figures.
 *
 * Memory: 2 sides x d x w x 64 bytes a slot and CPU: 128 KiB at the
 * defaults, 256 KiB for both slots.  Cost: per packet two element hashes
 * (a multiplication and two mixes) and 2 d / R = 0.5 line on average.
 */
#ifndef FLOWSKETCH_SPREAD_H
#define FLOWSKETCH_SPREAD_H

#include "compat.h"
#include "flow_key.h"
#include "hash.h"

enum fs_spread_side {
	FS_SPREAD_SRC = 0,	/* key: source; element: (destination, dport) */
	FS_SPREAD_DST = 1,	/* key: destination; element: source */
	FS_SPREAD_NSIDES = 2,
};

#define FS_SPREAD_REGS 90		/* 4-bit registers a bucket */
#define FS_SPREAD_RANK_BITS 14		/* q: ranks 1..14, 15 saturated */
#define FS_SPREAD_RANK_MAX (FS_SPREAD_RANK_BITS + 1)
#define FS_SPREAD_MAX_DEPTH 4
#define FS_SPREAD_MIN_LOG2W 4
#define FS_SPREAD_MAX_LOG2W 16		/* d L <= 64 */
#define FS_SPREAD_MAX_SHIFT 15		/* 4 bits in params.h; s + 14 + 32 <= 64 */
#define FS_SPREAD_ELEMENT_C 0x9e3779b97f4a7c15ULL	/* odd */

#define FS_DEFAULT_SPREAD_DEPTH 2
#define FS_DEFAULT_SPREAD_LOG2W 9
#define FS_DEFAULT_SPREAD_SHIFT 3

/*
 * One bucket: one cache line.  key holds an IPv6 address, or an IPv4 one
 * in bytes 0..3 and zeros after (as fs_flow_key's addresses); family is
 * FS_FAMILY_*, 0 for an empty bucket; prio the priority of the element
 * that made key the candidate.  Register i is the low nibble of reg[i / 2]
 * for even i, the high nibble for odd i.
 */
struct fs_spread_bucket {
	__u8 key[16];
	__u16 prio;
	__u8 family;
	__u8 reg[FS_SPREAD_REGS / 2];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct fs_spread_bucket) == 64, "a bucket is a line");

/* The structure's parameters, recorded with every copy of it (merge
 * needs equal ones). */
struct fs_spread_params {
	__u32 depth;		/* d, rows a side */
	__u32 log2_width;	/* L, w = 2^L buckets a row */
	__u32 sample_shift;	/* s, R = 2^s */
};

FS_INLINE void fs_spread_params_init(struct fs_spread_params *p, __u32 depth,
				     __u32 log2_width, __u32 sample_shift)
{
	p->depth = depth;
	p->log2_width = log2_width;
	p->sample_shift = sample_shift;
}

/* 0, or -EINVAL for parameters outside the ranges above. */
FS_INLINE int fs_spread_params_check(const struct fs_spread_params *p)
{
	if (p->depth < 1 || p->depth > FS_SPREAD_MAX_DEPTH)
		return -22;
	if (p->log2_width < FS_SPREAD_MIN_LOG2W || p->log2_width > FS_SPREAD_MAX_LOG2W ||
	    p->depth * p->log2_width > 64)
		return -22;
	if (p->sample_shift > FS_SPREAD_MAX_SHIFT)
		return -22;
	return 0;
}

/* Buckets a slot holds (both sides). */
FS_INLINE __u32 fs_spread_buckets(const struct fs_spread_params *p)
{
	return FS_SPREAD_NSIDES * p->depth << p->log2_width;
}

/* The element hash of a packet on a side (see "Element hash" above):
 * h_src and h_dst are fs_packet_hashes' src and dst, dport as the flow key
 * holds it (network order: any fixed order keeps elements apart). */
FS_INLINE __u64 fs_spread_element(__u32 side, __u64 h_src, __u64 h_dst,
				  __u16 dport)
{
	if (side == FS_SPREAD_SRC)
		return fs_mix64(h_dst + (__u64)dport * FS_SPREAD_ELEMENT_C);
	return fs_mix64(h_src ^ FS_SPREAD_ELEMENT_C);
}

FS_INLINE int fs_spread_sampled(__u64 e, __u32 sample_shift)
{
	return !sample_shift || !(e >> (64 - sample_shift));
}

FS_INLINE __u32 fs_spread_reg(__u64 e)
{
	return (__u32)(((e & 0xffffffffULL) * FS_SPREAD_REGS) >> 32);
}

FS_INLINE __u16 fs_spread_prio(__u64 e)
{
	return (__u16)(0xffff - (e & 0xffff));
}

FS_INLINE __u32 fs_spread_rank(__u64 e)
{
	__u64 bits = (e >> 32) & ((1ULL << FS_SPREAD_RANK_BITS) - 1);

	return fs_ctz64(bits | (1ULL << FS_SPREAD_RANK_BITS)) + 1;
}

/* The bucket of a key hash in row r of side `side`, as an index into the
 * slot's buckets. */
FS_INLINE __u32 fs_spread_bucket_index(const struct fs_spread_params *p,
				       __u32 side, __u32 r, __u64 h_key)
{
	__u32 col = (__u32)(h_key >> (r * p->log2_width)) & ((1U << p->log2_width) - 1);

	return ((side * p->depth + r) << p->log2_width) | col;
}

/* Register i of a bucket. */
FS_INLINE __u32 fs_spread_reg_get(const struct fs_spread_bucket *b, __u32 i)
{
	return (b->reg[i >> 1] >> ((i & 1) * 4)) & 0xf;
}

/*
 * Add element e (sampled: the caller checked fs_spread_sampled()) of the
 * key (16 bytes, family) to bucket b: the register's max, and the key as
 * candidate when the bucket is empty or e's priority is above its
 * candidate's.  1 when the bucket changed.
 */
FS_INLINE int fs_spread_bucket_add(struct fs_spread_bucket *b, __u64 e,
				   const __u8 *key, __u32 family)
{
	__u32 i = fs_spread_reg(e), rank = fs_spread_rank(e), shift = (i & 1) * 4;
	__u16 prio = fs_spread_prio(e);
	__u8 *byte = &b->reg[i >> 1];
	int changed = 0;

	if (((*byte >> shift) & 0xf) < rank) {
		*byte = (__u8)((*byte & ~(0xf << shift)) | rank << shift);
		changed = 1;
	}
	if (!b->family || prio > b->prio) {
		__builtin_memcpy(b->key, key, sizeof(b->key));
		b->family = (__u8)family;
		b->prio = prio;
		changed = 1;
	}
	return changed;
}

/* The candidate order of the merge: 1 when a's candidate is above b's. */
FS_INLINE int fs_spread_candidate_above(const struct fs_spread_bucket *a,
					const struct fs_spread_bucket *b)
{
	__u32 i;

	if (!a->family || !b->family)
		return a->family > b->family;
	if (a->prio != b->prio)
		return a->prio > b->prio;
	if (a->family != b->family)
		return a->family > b->family;
	for (i = 0; i < sizeof(a->key); i++)
		if (a->key[i] != b->key[i])
			return a->key[i] > b->key[i];
	return 0;
}

/* dst = merge(dst, src): the sketch of both streams (see "Merge"). */
FS_INLINE void fs_spread_bucket_merge(struct fs_spread_bucket *dst,
				      const struct fs_spread_bucket *src)
{
	__u32 i;

	for (i = 0; i < FS_SPREAD_REGS / 2; i++) {
		__u8 a = dst->reg[i], b = src->reg[i];
		__u8 lo = (a & 0xf) > (b & 0xf) ? (a & 0xf) : (b & 0xf);
		__u8 hi = (a >> 4) > (b >> 4) ? (a >> 4) : (b >> 4);

		dst->reg[i] = (__u8)(hi << 4 | lo);
	}
	if (fs_spread_candidate_above(src, dst)) {
		__builtin_memcpy(dst->key, src->key, sizeof(dst->key));
		dst->family = src->family;
		dst->prio = src->prio;
	}
}

/*
 * One packet's update of both sides: its elements, each if sampled, into
 * its key's bucket in every row.  key: the packet's flow key (src and dst
 * addresses, family, dport in network order); h: its packet hashes.
 */
FS_INLINE void fs_spread_update(struct fs_spread_bucket *slot,
				const struct fs_spread_params *p,
				const struct fs_flow_key *key,
				const struct fs_packet_hashes *h)
{
	__u32 side, r;

	for (side = 0; side < FS_SPREAD_NSIDES; side++) {
		__u64 e = fs_spread_element(side, h->src, h->dst, key->dport);
		__u64 hk = side == FS_SPREAD_SRC ? h->src : h->dst;
		const __u8 *k = side == FS_SPREAD_SRC ? key->src : key->dst;

		if (!fs_spread_sampled(e, p->sample_shift))
			continue;
		for (r = 0; r < p->depth && r < FS_SPREAD_MAX_DEPTH; r++)
			fs_spread_bucket_add(&slot[fs_spread_bucket_index(p, side, r, hk)],
					     e, k, key->family);
	}
}

#if !defined(__bpf__) && !defined(__KERNEL__)
/* ---- Error arithmetic, user space only (floating point) ------------- */
#include <math.h>

/* sigma(n) of "Error" above: the relative standard error of a bucket's
 * count of n distinct elements. */
static inline double fs_spread_sigma(const struct fs_spread_params *p, double n)
{
	double R = ldexp(1, (int)p->sample_shift);

	return sqrt(1.04 * 1.04 / FS_SPREAD_REGS + (n > 0 ? (R - 1) / n : 0));
}

/* The sharing term e F / w for a window of F distinct flows, and the
 * probability e^-d that a key's estimate exceeds it (*miss). */
static inline double fs_spread_sharing(const struct fs_spread_params *p,
				       double flows, double *miss)
{
	*miss = exp(-(double)p->depth);
	return M_E * flows / ldexp(1, (int)p->log2_width);
}
#endif

#endif /* FLOWSKETCH_SPREAD_H */
