/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ref_hash.h - an independent reference of flowsketch's hashes, for tests.
 *
 * Written from the published algorithms and from the formula in the
 * comment of include/flowsketch/hash.h, not from its code: byte strings
 * instead of words, plain loops, no unrolling, no shared helpers.  Where
 * this and hash.h agree on random inputs, both compute what the comment
 * says; pinned outputs of this code then guard against silent changes
 * (which would make sketches exported before and after unmergeable).
 *
 *   ref_siphash()          SipHash-c-d over a byte string (Aumasson &
 *                          Bernstein), the final block padded with len;
 *   ref_hash_key_derive()  key word i of half h is SipHash-2-4 of the
 *                          8-byte little-endian counter (h << 32 | i);
 *   ref_packet_hash()      per half h, with 32-bit chunks x_0 .. x_9 of the
 *                          flow key and 64-bit keys a_0 .. a_10 (mod 2^64):
 *                            T_i   = (a_{2i+1} + x_{2i+1}) (a_{2i+2} + x_{2i})
 *                            T_fam = (a_1 + 0) (a_2 + family)
 *                            flow  = (a_0 + T_0 + T_1 + T_2 + T_3 + T_4) >> 32
 *                            src   = (a_0 + T_fam + T_1 + T_2) >> 32
 *                            dst   = (a_0 + T_fam + T_3 + T_4) >> 32
 *                          and each output is fmix64(half0 << 32 | half1).
 */
#ifndef FLOWSKETCH_REF_HASH_H
#define FLOWSKETCH_REF_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "flowsketch/hash.h"

static inline uint64_t ref_rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static inline void ref_sipround(uint64_t v[4])
{
	v[0] += v[1]; v[1] = ref_rotl(v[1], 13); v[1] ^= v[0];
	v[0] = ref_rotl(v[0], 32);
	v[2] += v[3]; v[3] = ref_rotl(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = ref_rotl(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = ref_rotl(v[1], 17); v[1] ^= v[2];
	v[2] = ref_rotl(v[2], 32);
}

/* The n <= 8 bytes at p as a little-endian number. */
static inline uint64_t ref_le(const uint8_t *p, size_t n)
{
	uint64_t x = 0;
	size_t i;

	for (i = 0; i < n; i++)
		x |= (uint64_t)p[i] << (8 * i);
	return x;
}

static inline uint64_t ref_siphash(const uint8_t key[16], const uint8_t *msg,
				   size_t len, int c, int d)
{
	uint64_t k0 = ref_le(key, 8), k1 = ref_le(key + 8, 8);
	uint64_t v[4] = {
		k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
		k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL,
	};
	size_t off;
	uint64_t m;
	int r;

	/* Whole blocks, then the last block: the len % 8 remaining bytes
	 * with len mod 256 in the top byte. */
	for (off = 0; off + 8 <= len; off += 8) {
		m = ref_le(msg + off, 8);
		v[3] ^= m;
		for (r = 0; r < c; r++)
			ref_sipround(v);
		v[0] ^= m;
	}
	m = ref_le(msg + off, len - off) | ((uint64_t)(len & 0xff) << 56);
	v[3] ^= m;
	for (r = 0; r < c; r++)
		ref_sipround(v);
	v[0] ^= m;
	v[2] ^= 0xff;
	for (r = 0; r < d; r++)
		ref_sipround(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* The secret as the 16 key bytes of SipHash: k0 then k1, little-endian. */
static inline void ref_secret_bytes(const struct fs_hash_secret *s,
				    uint8_t out[16])
{
	int i;

	for (i = 0; i < 8; i++) {
		out[i] = (uint8_t)(s->k0 >> (8 * i));
		out[8 + i] = (uint8_t)(s->k1 >> (8 * i));
	}
}

static inline void ref_hash_key_derive(const struct fs_hash_secret *s,
				       struct fs_hash_key *key)
{
	uint8_t sk[16], ctr[8];
	int half, i, b;

	ref_secret_bytes(s, sk);
	for (half = 0; half < 2; half++)
		for (i = 0; i < FS_HASH_KEY_WORDS; i++) {
			uint64_t c = ((uint64_t)half << 32) | (uint64_t)i;

			for (b = 0; b < 8; b++)
				ctr[b] = (uint8_t)(c >> (8 * b));
			key->a[half][i] = ref_siphash(sk, ctr, sizeof(ctr), 2, 4);
		}
}

/* MurmurHash3's 64-bit finalizer. */
static inline uint64_t ref_fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

struct ref_hashes {
	uint64_t flow, src, dst;
};

static inline struct ref_hashes ref_packet_hash(const struct fs_flow_key *k,
						const struct fs_hash_key *key)
{
	uint8_t bytes[sizeof(*k)];
	uint64_t x[10], flow[2], src[2], dst[2];
	struct ref_hashes out;
	int half, i;

	memcpy(bytes, k, sizeof(bytes));
	for (i = 0; i < 10; i++)
		x[i] = ref_le(bytes + 4 * i, 4);
	for (half = 0; half < 2; half++) {
		const __u64 *a = key->a[half];
		uint64_t t_fam = (a[1] + 0) * (a[2] + bytes[0]);

		flow[half] = a[0];
		src[half] = a[0] + t_fam;
		dst[half] = a[0] + t_fam;
		for (i = 0; i < 5; i++) {
			uint64_t t = (a[1 + 2 * i] + x[2 * i + 1]) *
				     (a[2 + 2 * i] + x[2 * i]);

			flow[half] += t;
			if (i == 1 || i == 2)
				src[half] += t;
			if (i == 3 || i == 4)
				dst[half] += t;
		}
		flow[half] >>= 32;
		src[half] >>= 32;
		dst[half] >>= 32;
	}
	out.flow = ref_fmix64(flow[0] << 32 | flow[1]);
	out.src = ref_fmix64(src[0] << 32 | src[1]);
	out.dst = ref_fmix64(dst[0] << 32 | dst[1]);
	return out;
}

#endif /* FLOWSKETCH_REF_HASH_H */
