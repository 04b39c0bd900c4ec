/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * hash.h - the keyed 64-bit hashes every sketch of flowsketch is fed from.
 *
 * Two functions, one secret:
 *   - SipHash-2-4 (Aumasson & Bernstein), keyed with the 128-bit secret the
 *     daemon draws from getrandom() when it first loads (or reads from
 *     --secret-file, so that a fleet's sketches merge).  Used once, at
 *     load, to expand the secret into the per-packet hash key.
 *   - Per packet, a strongly universal multiply-shift hash under that key
 *     (fs_packet_hash(), below): one hash of the flow, which feeds every
 *     Count-Min row and the distinct-flows HyperLogLog, plus the hashes of
 *     the source and destination addresses for their HyperLogLogs, for
 *     twelve multiplications in all (six for IPv4).
 *
 * Both read their input as little-endian words; a SipHash message of n
 * words is hashed exactly as standard SipHash hashes the 8n bytes, so the
 * round function is checked against the reference vectors, and the
 * per-packet outputs are pinned by test vectors.
 */
#ifndef FLOWSKETCH_HASH_H
#define FLOWSKETCH_HASH_H

#include "compat.h"
#include "flow_key.h"

struct fs_hash_secret {
	__u64 k0;
	__u64 k1;
};

#define FS_ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

#define FS_SIPROUND(v0, v1, v2, v3)                                           \
	do {                                                                  \
		v0 += v1; v1 = FS_ROTL64(v1, 13); v1 ^= v0;                   \
		v0 = FS_ROTL64(v0, 32);                                       \
		v2 += v3; v3 = FS_ROTL64(v3, 16); v3 ^= v2;                   \
		v0 += v3; v3 = FS_ROTL64(v3, 21); v3 ^= v0;                   \
		v2 += v1; v1 = FS_ROTL64(v1, 17); v1 ^= v2;                   \
		v2 = FS_ROTL64(v2, 32);                                       \
	} while (0)

/*
 * The keys are structs read as words, which the C aliasing rules forbid:
 * gcc -O2 then drops the stores to a local key as dead and hashes
 * uninitialized stack.  Reading through a may_alias type makes the type
 * pun legal in every build without -fno-strict-aliasing.
 */
typedef __u64 __attribute__((__may_alias__)) fs_alias_u64;

/*
 * SipHash-c-d over nwords little-endian words.  Callers pass compile-time
 * constants for nwords, c and d so that every build fully unrolls it (the
 * BPF verifier then sees straight-line code).
 */
FS_INLINE __u64 fs_siphash_words(const __u64 *words, __u32 nwords,
				 const struct fs_hash_secret *s,
				 __u32 c_rounds, __u32 d_rounds)
{
	__u64 v0 = 0x736f6d6570736575ULL ^ s->k0;
	__u64 v1 = 0x646f72616e646f6dULL ^ s->k1;
	__u64 v2 = 0x6c7967656e657261ULL ^ s->k0;
	__u64 v3 = 0x7465646279746573ULL ^ s->k1;
	const fs_alias_u64 *w = (const fs_alias_u64 *)words;
	__u64 last = (__u64)(nwords * 8) << 56;
	__u32 i, r;

FS_UNROLL
	for (i = 0; i < nwords; i++) {
		v3 ^= w[i];
FS_UNROLL
		for (r = 0; r < c_rounds; r++)
			FS_SIPROUND(v0, v1, v2, v3);
		v0 ^= w[i];
	}
	v3 ^= last;
FS_UNROLL
	for (r = 0; r < c_rounds; r++)
		FS_SIPROUND(v0, v1, v2, v3);
	v0 ^= last;
	v2 ^= 0xff;
FS_UNROLL
	for (r = 0; r < d_rounds; r++)
		FS_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/*
 * Bijective 64-bit finalizer (MurmurHash3's fmix64).  Applied to the
 * multiply-shift outputs (see below), and used to stretch one flow hash
 * into more bits when the Count-Min rows need more than 64 bits of column
 * index.  It adds no key material and needs none: a fixed bijection of a
 * 2-independent value is still 2-independent.
 */
FS_INLINE __u64 fs_mix64(__u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/*
 * ---- The per-packet hash -------------------------------------------------
 *
 * Thorup's pair-multiply-shift ("High speed hashing for integers and
 * strings", 2015): for 32-bit chunks x_0 .. x_{2n-1} and random 64-bit keys
 *     h(x) = (a_0 + sum_i (a_{2i+1} + x_{2i+1}) * (a_{2i+2} + x_{2i})) >> 32
 * (mod 2^64) is strongly universal (2-independent) on 32-bit outputs: for
 * any two distinct inputs the pair of outputs is uniform.  Two independent
 * key sets give the high and low halves of a 64-bit value that is
 * 2-independent as a whole, so two flows share a Count-Min column in each
 * row with probability 1/w independently per row (the Count-Min bound
 * needs exactly that), and collide in all 64 bits with probability 2^-64.
 * A fixed bijection (fs_mix64) then breaks up the arithmetic-progression
 * pattern that multiply-shift leaves on sequential inputs (sequential
 * addresses are common, and HyperLogLog wants unstructured ranks); a
 * bijection keeps 2-independence.
 *
 * Why not SipHash per packet: three SipHash-1-3 runs (flow, source,
 * destination) cost about 150 ns in BPF, which has no rotate instruction,
 * ten times the parser; this is twelve multiplications.  Why keyed at all:
 * with a public function an attacker crafts flows that share every
 * Count-Min cell with a victim, or pile onto one HyperLogLog register.
 * The key (176 bytes, and 128 of IPv4 terms) is derived from the
 * 128-bit secret with SipHash-2-4 in counter mode (fs_hash_key_derive());
 * its outputs are never exposed, so universal hashing is what resists
 * such attacks (as in UMAC's NH).
 *
 * The flow key's 10 chunks pair up as (family|proto, ports), (src 0, src 1),
 * (src 2, src 3), (dst 0, dst 1), (dst 2, dst 3).  The source and
 * destination address hashes reuse the address pairs' products with a
 * family-only first pair, so all three hashes cost 6 products per half:
 *     flow = a_0 + T_hdr + T_src + T_dst
 *     src  = a_0 + T_fam + T_src
 *     dst  = a_0 + T_fam + T_dst
 * Each is a pair-multiply-shift instance of its own input, hence strongly
 * universal; sharing keys between them correlates hashes of different
 * sketches, which no sketch's analysis cares about.
 *
 * IPv4.  An IPv4 key has zero in chunks 3..5 and 7..9 (flow_key.h), so
 * each pair that holds one of them is constant or linear in its other
 * chunk: (src 0, src 1) = (x_2, 0) gives a_3 (a_4 + x_2) = a_3 a_4 + a_3 x_2,
 * (src 2, src 3) = (0, 0) gives a_5 a_6, and the same for the destination
 * with a_7 .. a_10 and x_6.  Per half, then,
 *     flow = K_flow + (a_1 + x_1) (a_2 + x_0) + a_3 x_2 + a_7 x_6
 *     src  = K_src  + a_3 x_2
 *     dst  = K_dst  + a_7 x_6
 *     K_flow = a_0 + a_3 a_4 + a_5 a_6 + a_7 a_8 + a_9 a_10
 *     K_src  = a_0 + a_1 (a_2 + 4) + a_3 a_4 + a_5 a_6
 *     K_dst  = a_0 + a_1 (a_2 + 4) + a_7 a_8 + a_9 a_10
 * The same sums mod 2^64, so the same bits, for three products per half
 * instead of six, from seven words per half that the key keeps together
 * in its first two cache lines (fs_hash_key.v4, filled by
 * fs_hash_key_ipv4_terms()): the commonest traffic reads 128 bytes of key,
 * not the 224 of four lines it took when the terms lay between the pair
 * keys.  A key of family 4 whose high chunks are zero takes this path.
 */
#define FS_HASH_PAIRS 5
#define FS_HASH_KEY_WORDS (1 + 2 * FS_HASH_PAIRS)

enum fs_hash_v4_word {
	FS_HASH_V4_FLOW = 0,		/* K_flow (see "IPv4" above) */
	FS_HASH_V4_SRC,			/* K_src */
	FS_HASH_V4_DST,			/* K_dst */
	FS_HASH_V4_A1,			/* a_1, a_2: the (family|proto, ports) pair */
	FS_HASH_V4_A2,
	FS_HASH_V4_A3,			/* a_3: times the source address */
	FS_HASH_V4_A7,			/* a_7: times the destination address */
	FS_HASH_V4_WORDS = 8,		/* one spare: a half is one line */
};

/*
 * v4 first, and the datapath's copy aligned to a line (fs_hash_key in
 * bpf/maps.bpf.h), so that the IPv4 path reads exactly its lines 0 and 1.
 */
struct fs_hash_key {
	__u64 v4[2][FS_HASH_V4_WORDS];	/* [half][enum fs_hash_v4_word] */
	__u64 a[2][FS_HASH_KEY_WORDS];	/* [half][0: a_0, 1..10: pair keys] */
};

struct fs_packet_hashes {
	__u64 flow;
	__u64 src;
	__u64 dst;
};

/* Like fs_alias_u64: the key is read, and the parser writes addresses
 * into it, as 32-bit words. */
typedef __u32 __attribute__((__may_alias__)) fs_alias_u32;

/* (a_l + hi) * (a_r + lo) mod 2^64, one pair-multiply-shift term. */
FS_INLINE __u64 fs_pair_term(const __u64 *a, __u32 pair, __u32 lo, __u32 hi)
{
	return (a[1 + 2 * pair] + hi) * (a[2 + 2 * pair] + lo);
}

/* Fill key->v4 from key->a (see "IPv4" above); whoever sets key->a by
 * hand calls this after. */
FS_INLINE void fs_hash_key_ipv4_terms(struct fs_hash_key *key)
{
	__u32 half;

	for (half = 0; half < 2; half++) {
		const __u64 *a = key->a[half];
		__u64 *v = key->v4[half];
		__u64 src = fs_pair_term(a, 1, 0, 0) + fs_pair_term(a, 2, 0, 0);
		__u64 dst = fs_pair_term(a, 3, 0, 0) + fs_pair_term(a, 4, 0, 0);
		__u64 fam = a[0] + fs_pair_term(a, 0, FS_FAMILY_IPV4, 0);

		v[FS_HASH_V4_FLOW] = a[0] + src + dst;
		v[FS_HASH_V4_SRC] = fam + src;
		v[FS_HASH_V4_DST] = fam + dst;
		v[FS_HASH_V4_A1] = a[1];
		v[FS_HASH_V4_A2] = a[2];
		v[FS_HASH_V4_A3] = a[3];
		v[FS_HASH_V4_A7] = a[7];
		v[FS_HASH_V4_WORDS - 1] = 0;
	}
}

/* Expand the 128-bit secret into the multiply-shift keys. */
FS_INLINE void fs_hash_key_derive(const struct fs_hash_secret *s,
				  struct fs_hash_key *key)
{
	__u64 ctr;
	__u32 half, i;

	for (half = 0; half < 2; half++)
		for (i = 0; i < FS_HASH_KEY_WORDS; i++) {
			ctr = ((__u64)half << 32) | i;
			key->a[half][i] = fs_siphash_words(&ctr, 1, s, 2, 4);
		}
	fs_hash_key_ipv4_terms(key);
}

/* Two 32-bit halves (hash.h, "per-packet hash") into the three hashes. */
FS_INLINE void fs_packet_hash_finish(const __u64 flow[2], const __u64 src[2],
				     const __u64 dst[2],
				     struct fs_packet_hashes *out)
{
	out->flow = fs_mix64(flow[0] << 32 | flow[1]);
	out->src = fs_mix64(src[0] << 32 | src[1]);
	out->dst = fs_mix64(dst[0] << 32 | dst[1]);
}

/* The fs_packet_hash() of an IPv4 key whose chunks 3..5 and 7..9 are zero
 * (see "IPv4" above): the same sums, from k->v4. */
FS_INLINE void fs_packet_hash_ipv4(const fs_alias_u32 *x,
				   const struct fs_hash_key *k,
				   struct fs_packet_hashes *out)
{
	__u64 flow[2], src[2], dst[2];
	__u32 half;

	FS_UNROLL
	for (half = 0; half < 2; half++) {
		const __u64 *v = k->v4[half];
		__u64 t_src = v[FS_HASH_V4_A3] * x[2];
		__u64 t_dst = v[FS_HASH_V4_A7] * x[6];

		flow[half] = (v[FS_HASH_V4_FLOW] +
			      (v[FS_HASH_V4_A1] + x[1]) * (v[FS_HASH_V4_A2] + x[0]) +
			      t_src + t_dst) >> 32;
		src[half] = (v[FS_HASH_V4_SRC] + t_src) >> 32;
		dst[half] = (v[FS_HASH_V4_DST] + t_dst) >> 32;
	}
	fs_packet_hash_finish(flow, src, dst, out);
}

FS_INLINE void fs_packet_hash(const struct fs_flow_key *key,
			      const struct fs_hash_key *k,
			      struct fs_packet_hashes *out)
{
	const fs_alias_u32 *x = (const fs_alias_u32 *)key;
	__u64 flow[2], src[2], dst[2];
	__u32 half;

	/* The test costs a few instructions; a key that fails it (IPv6, or a
	 * hand-made IPv4 key with junk in the high bytes) takes the general
	 * path and gets the same bits it always did. */
	if (key->family == FS_FAMILY_IPV4 &&
	    !(x[3] | x[4] | x[5] | x[7] | x[8] | x[9])) {
		fs_packet_hash_ipv4(x, k, out);
		return;
	}
	FS_UNROLL
	for (half = 0; half < 2; half++) {
		const __u64 *a = k->a[half];
		__u64 t_src = fs_pair_term(a, 1, x[2], x[3]) +
			      fs_pair_term(a, 2, x[4], x[5]);
		__u64 t_dst = fs_pair_term(a, 3, x[6], x[7]) +
			      fs_pair_term(a, 4, x[8], x[9]);
		__u64 t_fam = fs_pair_term(a, 0, key->family, 0);

		flow[half] = (a[0] + fs_pair_term(a, 0, x[0], x[1]) + t_src +
			      t_dst) >> 32;
		src[half] = (a[0] + t_fam + t_src) >> 32;
		dst[half] = (a[0] + t_fam + t_dst) >> 32;
	}
	fs_packet_hash_finish(flow, src, dst, out);
}

/* The flow hash alone, for user space (a query by flow key). */
FS_INLINE __u64 fs_flow_hash(const struct fs_flow_key *key,
			     const struct fs_hash_key *k)
{
	struct fs_packet_hashes h;

	fs_packet_hash(key, k, &h);
	return h.flow;
}

#endif /* FLOWSKETCH_HASH_H */
