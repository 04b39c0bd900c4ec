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
 * its outputs never leave the host (below, "What leaves the host"), so
 * universal hashing is what resists such attacks (as in UMAC's NH, whose
 * outputs are likewise never shown but go through a keyed function).
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
/*
 * ---- What leaves the host --------------------------------------------------
 *
 * Outputs of this hash must not: it is linear in its key.  Per half h,
 *     acc_h(x) = a_0 + sum_i (a_{2i+1} + x_{2i+1}) (a_{2i+2} + x_{2i})  (mod 2^64)
 * and a flow hash is fs_mix64(T_0 << 32 | T_1), T_h = acc_h >> 32, where
 * fs_mix64 is public and invertible.  So a flow hash seen with its flow
 * key gives T_0 and T_1 exactly, 32 bits of each accumulator.
 *
 * Raw hashes (export answers and native files of format 1 carried each
 * candidate's).  For IPv4 (see "IPv4" above)
 *     acc_h = K_flow + a_1 x_0 + a_2 x_1 + x_0 x_1 + a_3 x_2 + a_7 x_6
 * is affine in five unknown words per half with coefficients the attacker
 * knows (its own flows' keys), and each (key, hash) pair gives 32 bits of
 * each half's value less a carry (T(x + d) - T(x) = top32(acc(x + d) -
 * acc(x)) + {0, 1}).  About 5 * 64 / 32 = 10 pairs, a few more for the
 * carries (or lattice reduction for pairs it did not choose), fix the
 * whole IPv4 flow hash; IPv6, eleven words per half, some 25.  Chosen
 * pairs are cheaper still: flows that differ only in the source port u
 * (x_1's low 16 bits) have acc_h(u) = acc_h(0) + (a_2 + x_0) u, and the 17
 * pairs u = 0, 1, 2, 4 .. 2^15 give bits 17..63 of a_2 + x_0 in each half
 * (T(2^k) - T(0) is bits 32 - k .. 63 - k of it plus a carry; consecutive
 * k overlap in 31 bits, which settles the carries to a handful of
 * candidates), after which the hash of each of the 2^16 ports is known to
 * within 64 candidates (tests/unit/test_export_leak.c does exactly this).
 * With the hash known the attacker aims collisions offline: about w
 * tries per row give a flow of its own in a victim's column, so d such
 * flows inflate the victim's estimate, or pre-set the report flags of its
 * own heavy flow's d cells (cms.h, "Recall") so that it is never
 * reported.  In the test, ports picked as sharing a victim's row-0 column
 * do so 5 % of the time against 1 / w = 0.024 % blind, and none is missed.
 * The source and destination hashes (K_src + a_3 x_2 for IPv4) fall the
 * same way.
 *
 * Cell positions.  A Count-Min export must carry its cells (merging is
 * what it is for), and in the datapath's layout a flow's cell in row r is
 * at column col_r(h), log2(w) bits of its hash (cms.h): min(64, d log2 w)
 * bits per flow, 60 of 64 at the defaults (d = 5, w = 4096).  An attacker
 * finds its flow's cells wherever its count stands above the other cells
 * of the row (a row's cells average N / w of a span's N packets, 2,441 for
 * N = 10^7 at the defaults; flows of distinct counts, powers of two for
 * one, are told apart even when they share cells), so 60 bits leave with
 * each such flow: fs_mix64 inverted over the 16 values of the missing 4
 * bits, the attack above goes through with a 16-way guess per pair.
 * Dropping the hash alone is therefore not enough.  HyperLogLog registers
 * are the same in small: index = the low p bits of a flow's (or address's)
 * hash, rank = its trailing zeros above them + 1 (hll.h), readable when
 * the attacker can tell which register its flow raised (a quiet network,
 * windows compared): p bits plus about 2 (P(rank = k) = 2^-k), when its
 * rank beats the register's earlier maximum, which over n distinct keys
 * and m registers happens with probability about m / (n + m).  The flows
 * sketch's index is the same low bits as Count-Min row 0's column.
 *
 * What is exported instead (user/lib/export_perm.h).  Every export (the
 * export answer, native files from format 2, pg-sql, Redis and pg-hll)
 * carries cells at (r, pi_r(c)) and registers at (s, sigma_s(i)), pi_r and
 * sigma_s uniform permutations drawn from a key derived from the secret
 * with SipHash (independent of this hash's key: a PRF's outputs on other
 * inputs), and a candidate carries its flow key, its estimates and
 * pi_r(col_r(h)) for each row, never h; the secret's fingerprint is a
 * SipHash output of a constant.  Hosts of one secret share the
 * permutations, sums and maxima commute with them, and HyperLogLog
 * estimates depend on the registers' histogram only: merges stay exact
 * and readers need no secret.  What one learns about flows it knows,
 * from candidates and from heavy cells alike, is then, for the flows it
 * can pick out, which of them share a cell in a row (or a register):
 * given that partition, the exported positions are uniform whatever the
 * columns were, so they carry no bit of h.  Ranks still carry about 2
 * bits of h per flow whose register can be attributed.  We know of no way
 * to get key material from shared-cell relations and rank bits (12 or so
 * output bits of fs_mix64, which mixes both halves, compared between
 * flows) short of guessing both halves' accumulators and slopes, 2^128
 * for even the one-port-varying family above; fs_mix64 is not a
 * cryptographic function, so this is an argument, not a proof.  The
 * keyed sample (sample.h, "Exports") adds of the same kind: its flows go
 * out as candidates, each with floor(log2 s) of s = fs_mix64(h ^ C),
 * about k + 2 leading bits (k the rate's shift), in a bucket at a
 * secret position; a flow's presence says s < L_b, its bucket's limit.
 *
 * What remains is generic and inherent to showing a sketch: an attacker
 * who can have about w of its own flows picked out in exports (as
 * candidates, a few per window, or as heavy cells, each
 * needing about N / w packets, so about N packets for w of them) learns
 * which of them share each row's cell with a victim candidate (about one
 * per row), and can reuse those for as long as the secret stays.  That
 * costs the attacker as much traffic as the span's whole, buys nothing
 * about flows it has not had observed, and is reset by a new fleet
 * secret.  Exports are the fleet's data: keep them as confidential as the
 * traffic they summarise.  Window files (the state directory) keep raw
 * hashes; they are root's and never leave the host.
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
