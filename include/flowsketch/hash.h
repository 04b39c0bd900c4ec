/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * hash.h - the keyed 64-bit hash every sketch of flowsketch is fed from.
 *
 * SipHash-1-3 (Aumasson & Bernstein; one compression round, three
 * finalization rounds), keyed with a 128-bit secret that the daemon draws
 * from getrandom() when it first loads the datapath.  Why keyed: the
 * Count-Min error bound and the HyperLogLog estimate both assume keys land
 * on independent, uniform positions.  With a public hash an attacker can
 * craft flows that share every Count-Min cell with a victim (inflating it
 * into the top talkers) or that all hit one HyperLogLog register.  With a
 * secret key SipHash is a PRF, so positions are unpredictable.  1-3 rather
 * than 2-4: it is the variant Linux's hsiphash, Rust and Python use for
 * table hashing, and it halves the cost on the per-packet path.
 *
 * Inputs are whole little-endian 64-bit words; a message of n words is
 * hashed exactly as standard SipHash hashes the 8n bytes, so the round
 * function is checked against the reference SipHash-2-4 vectors (the
 * rounds are a parameter) and the 1-3 outputs are pinned by test vectors.
 *
 * One hash per packet: the flow hash feeds every Count-Min row (see cms.h)
 * and the distinct-flows HyperLogLog.  Sources and destinations are other
 * keys and get their own hash.
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

/* The hash of a flow: one per packet, feeds Count-Min and distinct flows. */
FS_INLINE __u64 fs_flow_hash(const struct fs_flow_key *key,
			     const struct fs_hash_secret *s)
{
	return fs_siphash_words((const __u64 *)key, FS_FLOW_KEY_WORDS, s, 1, 3);
}

/* The hash of one address, for the distinct sources/destinations sketches. */
FS_INLINE __u64 fs_addr_hash(const struct fs_addr_key *key,
			     const struct fs_hash_secret *s)
{
	return fs_siphash_words((const __u64 *)key, FS_ADDR_KEY_WORDS, s, 1, 3);
}

/*
 * Bijective 64-bit finalizer (MurmurHash3's fmix64).  Used only to stretch
 * one SipHash output into more bits when the Count-Min rows need more than
 * 64 bits of column index; it adds no key material and needs none, since
 * its input is already a PRF output.
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

#endif /* FLOWSKETCH_HASH_H */
