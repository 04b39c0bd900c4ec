// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_hash.c - the keyed hashes and the bit fields the sketches take from
 * them.
 *
 * SipHash's round function is checked against the published SipHash-2-4
 * vectors (it expands the secret into the per-packet hash key); the
 * per-packet outputs of fs_packet_hash() are checked against the
 * independent reference of ref_hash.h and pinned.  Then the properties the
 * sketches rely on: the key depends on the secret, the flow hash on every
 * byte of the flow key, the address hashes on their own address (and the
 * family) only; ctz and the branchless minimum equal their plain
 * definitions; Count-Min columns and HyperLogLog indexes and ranks are
 * uniform, on sequential keys (what multiply-shift hashes worst) as well
 * as random ones.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "flowsketch/hash.h"
#include "flowsketch/cms.h"
#include "flowsketch/hll.h"
#include "ref_hash.h"
#include "rng.h"

/* Key bytes 00..0f of the SipHash paper, as two little-endian words. */
static const struct fs_hash_secret ref_secret = {
	.k0 = 0x0706050403020100ULL,
	.k1 = 0x0f0e0d0c0b0a0908ULL,
};

static void test_siphash24_reference(void **state)
{
	/* Aumasson & Bernstein's vectors.c: message bytes 0, 1, 2, ... */
	static const __u64 expect[] = {
		0x726fdb47dd0e0e31ULL,	/* 0 bytes */
		0x93f5f5799a932462ULL,	/* 8 */
		0x3f2acc7f57c29bdbULL,	/* 16 */
		0xb8ad50c6f649af94ULL,	/* 24 */
		0x7127512f72f27cceULL,	/* 32 */
		0x0e3ea96b5304a7d0ULL,	/* 40 */
	};
	__u8 msg[40], key[16];
	__u64 words[5];
	__u32 n;

	for (n = 0; n < sizeof(msg); n++)
		msg[n] = (__u8)n;
	memcpy(words, msg, sizeof(words));

	for (n = 0; n < sizeof(key); n++)
		key[n] = (__u8)n;
	for (n = 0; n < FS_ARRAY_SIZE(expect); n++) {
		assert_int_equal(fs_siphash_words(words, n, &ref_secret, 2, 4),
				 expect[n]);
		/* The byte-oriented reference the pinned vectors come from. */
		assert_int_equal(ref_siphash(key, msg, 8 * n, 2, 4), expect[n]);
	}
	/* Only the reference takes lengths that are not whole words: the
	 * published vector for 7 bytes checks its tail handling. */
	assert_int_equal(ref_siphash(key, msg, 7, 2, 4), 0xab0200f58b01d137ULL);
}

static void fill_v4_key(struct fs_flow_key *k)
{
	static const __u8 src[4] = { 10, 0, 0, 1 }, dst[4] = { 10, 0, 0, 2 };

	memset(k, 0, sizeof(*k));
	k->family = FS_FAMILY_IPV4;
	k->proto = 6;
	k->sport = htons(12345);
	k->dport = htons(80);
	memcpy(k->src, src, sizeof(src));
	memcpy(k->dst, dst, sizeof(dst));
}

static void fill_v6_key(struct fs_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = FS_FAMILY_IPV6;
	k->proto = 17;
	k->sport = htons(53);
	k->dport = htons(5353);
	k->src[0] = 0x20; k->src[1] = 0x01; k->src[2] = 0x0d; k->src[3] = 0xb8;
	k->src[15] = 1;
	memcpy(k->dst, k->src, 16);
	k->dst[15] = 2;
}

static struct fs_packet_hashes packet_hash(const struct fs_flow_key *k,
					   const struct fs_hash_key *key)
{
	struct fs_packet_hashes h;

	fs_packet_hash(k, key, &h);
	return h;
}

/*
 * Regression guard: these values were computed once with the independent
 * reference of ref_hash.h; they pin the key derivation, the key layout
 * (flow_key.h) and the hash, so that sketches built before and after a
 * change stay mergeable.  The reference is checked too, so that a failure
 * says whether the code or the pin moved.
 */
static void test_packet_hash_pinned(void **state)
{
	static const struct {
		void (*fill)(struct fs_flow_key *k);
		__u64 flow, src, dst;
	} pins[] = {
		{ fill_v4_key, 0xef6305cf2ded1ebdULL, 0x0586ae082b12da65ULL,
		  0x9959e717051ed94cULL },
		{ fill_v6_key, 0x441c5ffe18de0f56ULL, 0xda2a0b10bfdf39b3ULL,
		  0x76305c61b1b69444ULL },
	};
	struct fs_hash_key key, ref_key;
	__u32 i;

	fs_hash_key_derive(&ref_secret, &key);
	ref_hash_key_derive(&ref_secret, &ref_key);
	assert_memory_equal(key.a, ref_key.a, sizeof(key.a));
	assert_int_equal(key.a[0][0], 0x39d3851ca07681a7ULL);
	assert_int_equal(key.a[1][FS_HASH_KEY_WORDS - 1],
			 0xcffc19b5ee0c0c0cULL);
	for (i = 0; i < FS_ARRAY_SIZE(pins); i++) {
		struct fs_packet_hashes h;
		struct ref_hashes ref;
		struct fs_flow_key k;

		pins[i].fill(&k);
		h = packet_hash(&k, &key);
		ref = ref_packet_hash(&k, &ref_key);
		assert_int_equal(h.flow, ref.flow);
		assert_int_equal(h.src, ref.src);
		assert_int_equal(h.dst, ref.dst);
		assert_int_equal(h.flow, pins[i].flow);
		assert_int_equal(h.src, pins[i].src);
		assert_int_equal(h.dst, pins[i].dst);
		assert_int_equal(fs_flow_hash(&k, &key), pins[i].flow);
	}
}

/*
 * The same secret always expands to the same key (a daemon restarted with
 * --secret-file must merge with its earlier exports), and any change of
 * the secret gives a key of which no word is predictable from the old one.
 */
static void test_key_derive(void **state)
{
	struct fs_hash_key key, again, other;
	__u64 words[2 * FS_HASH_KEY_WORDS];
	struct fs_hash_secret s;
	struct fs_flow_key k;
	__u32 bit, half, i, j;

	_Static_assert(sizeof(words) == sizeof(key.a), "key is 22 words");
	fs_hash_key_derive(&ref_secret, &key);
	memset(&again, 0x5a, sizeof(again));
	fs_hash_key_derive(&ref_secret, &again);
	assert_memory_equal(&key, &again, sizeof(key));

	/* 22 distinct words: no counter value was reused. */
	memcpy(words, key.a, sizeof(words));
	for (i = 0; i < FS_ARRAY_SIZE(words); i++)
		for (j = i + 1; j < FS_ARRAY_SIZE(words); j++)
			assert_int_not_equal(words[i], words[j]);

	fill_v4_key(&k);
	for (bit = 0; bit < 128; bit++) {
		s = ref_secret;
		if (bit < 64)
			s.k0 ^= 1ULL << bit;
		else
			s.k1 ^= 1ULL << (bit - 64);
		fs_hash_key_derive(&s, &other);
		for (half = 0; half < 2; half++)
			for (i = 0; i < FS_HASH_KEY_WORDS; i++)
				if (other.a[half][i] == key.a[half][i])
					fail_msg("secret bit %u: key word [%u][%u] unchanged",
						 bit, half, i);
		assert_int_not_equal(fs_flow_hash(&k, &other),
				     fs_flow_hash(&k, &key));
	}
}

/*
 * The IPv4 path (three products per half, constants from the key) gives
 * the general formula's bits, checked against the independent reference:
 * for IPv4 keys as the parser writes them, under derived and raw random
 * keys, and the constants are the products they stand for.  A family-4
 * key with bytes in the high address words must not take the IPv4 path.
 */
static void test_ipv4_path_equals_general_formula(void **state)
{
	__u64 rng = 0x452821e638d01377ULL;
	struct fs_hash_secret s;
	struct fs_hash_key key;
	struct fs_flow_key k;
	struct ref_hashes ref;
	__u32 i, half, b;

	for (i = 0; i < 20000; i++) {
		s.k0 = rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		s.k1 = rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		fs_hash_key_derive(&s, &key);
		if (i & 1) {
			for (half = 0; half < 2; half++)
				for (b = 0; b < FS_HASH_KEY_WORDS; b++)
					key.a[half][b] = rng = rng * 6364136223846793005ULL +
							       1442695040888963407ULL;
			fs_hash_key_ipv4_terms(&key);
		}
		for (half = 0; half < 2; half++) {
			const __u64 *a = key.a[half], *v = key.v4[half];
			__u64 fam = a[0] + a[1] * (a[2] + FS_FAMILY_IPV4);

			assert_int_equal(v[FS_HASH_V4_FLOW], a[0] + a[3] * a[4] +
					 a[5] * a[6] + a[7] * a[8] + a[9] * a[10]);
			assert_int_equal(v[FS_HASH_V4_SRC], fam + a[3] * a[4] + a[5] * a[6]);
			assert_int_equal(v[FS_HASH_V4_DST], fam + a[7] * a[8] + a[9] * a[10]);
			assert_int_equal(v[FS_HASH_V4_A1], a[1]);
			assert_int_equal(v[FS_HASH_V4_A2], a[2]);
			assert_int_equal(v[FS_HASH_V4_A3], a[3]);
			assert_int_equal(v[FS_HASH_V4_A7], a[7]);
		}
		memset(&k, 0, sizeof(k));
		k.family = FS_FAMILY_IPV4;
		for (b = 1; b < 8; b++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			((__u8 *)&k)[b] = (__u8)(rng >> 56);
		}
		for (b = 0; b < 4; b++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			k.src[b] = (__u8)(rng >> 56);
			k.dst[b] = (__u8)(rng >> 48);
		}
		/* Every third key has one byte set in a high address word. */
		if (i % 3 == 2) {
			b = (__u32)(rng >> 32) % 24;
			if (b < 12)
				k.src[4 + b] = 1;
			else
				k.dst[4 + b - 12] = 1;
		}
		ref = ref_packet_hash(&k, &key);
		assert_int_equal(packet_hash(&k, &key).flow, ref.flow);
		assert_int_equal(packet_hash(&k, &key).src, ref.src);
		assert_int_equal(packet_hash(&k, &key).dst, ref.dst);
	}
	/* Junk constants show that a junk key never reads them. */
	fill_v4_key(&k);
	k.src[15] = 1;
	fs_hash_key_derive(&ref_secret, &key);
	ref = ref_packet_hash(&k, &key);
	memset(key.v4, 0xa5, sizeof(key.v4));
	assert_int_equal(packet_hash(&k, &key).flow, ref.flow);
	/* And a well-formed IPv4 key does read them. */
	k.src[15] = 0;
	assert_int_not_equal(packet_hash(&k, &key).flow,
			     ref_packet_hash(&k, &key).flow);
}

/* Every bit of the flow key changes the flow hash, under several keys. */
static void test_flow_hash_depends_on_every_bit(void **state)
{
	__u64 rng = 0x243f6a8885a308d3ULL;
	struct fs_hash_secret s = ref_secret;
	struct fs_hash_key key;
	struct fs_flow_key k, k2;
	__u32 r, i, bit;
	__u64 h;

	for (r = 0; r < 8; r++) {
		fs_hash_key_derive(&s, &key);
		if (r == 0)
			fill_v4_key(&k);
		else
			rng_fill(&rng, &k, sizeof(k));
		h = fs_flow_hash(&k, &key);
		for (i = 0; i < sizeof(k); i++)
			for (bit = 0; bit < 8; bit++) {
				k2 = k;
				((__u8 *)&k2)[i] ^= (__u8)(1U << bit);
				if (fs_flow_hash(&k2, &key) == h)
					fail_msg("key %u: byte %u bit %u does not change the flow hash",
						 r, i, bit);
			}
		s.k0 = rng_next(&rng);
		s.k1 = rng_next(&rng);
	}
}

/*
 * The distinct-sources sketch counts (family, source address) and nothing
 * else: a flow's protocol, ports and destination must not move its source
 * hash, or one host would count once per flow.  Likewise for destinations.
 * And the family is part of both: 10.0.0.1 is not the IPv6 0a00:0001::.
 */
static void test_address_hashes_depend_on_their_address(void **state)
{
	__u64 rng = 0x13198a2e03707344ULL;
	struct fs_hash_key key;
	struct fs_flow_key k, k2;
	struct fs_packet_hashes h, h2;
	__u32 r, i, bit;

	fs_hash_key_derive(&ref_secret, &key);
	for (r = 0; r < 16; r++) {
		if (r == 0)
			fill_v4_key(&k);
		else
			rng_fill(&rng, &k, sizeof(k));
		h = packet_hash(&k, &key);
		for (i = 0; i < sizeof(k); i++)
			for (bit = 0; bit < 8; bit++) {
				int in_src, in_dst;

				k2 = k;
				((__u8 *)&k2)[i] ^= (__u8)(1U << bit);
				h2 = packet_hash(&k2, &key);
				in_src = i == offsetof(struct fs_flow_key, family) ||
					 (i >= offsetof(struct fs_flow_key, src) &&
					  i < offsetof(struct fs_flow_key, dst));
				in_dst = i == offsetof(struct fs_flow_key, family) ||
					 i >= offsetof(struct fs_flow_key, dst);
				if ((h2.src != h.src) != in_src)
					fail_msg("key %u: byte %u bit %u %s the source hash",
						 r, i, bit, in_src ? "leaves" : "changes");
				if ((h2.dst != h.dst) != in_dst)
					fail_msg("key %u: byte %u bit %u %s the destination hash",
						 r, i, bit, in_dst ? "leaves" : "changes");
			}
	}

	/* 10.0.0.1 as IPv4 and as the IPv6 address 0a00:0001:: */
	fill_v4_key(&k);
	k2 = k;
	k2.family = FS_FAMILY_IPV6;
	assert_int_not_equal(packet_hash(&k, &key).src,
			     packet_hash(&k2, &key).src);
}

/* A flow and its reverse are two flows: the key is directional. */
static void test_swap_changes_flow_hash(void **state)
{
	__u64 rng = 0xa4093822299f31d0ULL;
	struct fs_hash_key key;
	struct fs_flow_key k, rev;
	__u32 r;

	fs_hash_key_derive(&ref_secret, &key);
	for (r = 0; r < 1000; r++) {
		if (r == 0)
			fill_v4_key(&k);
		else if (r == 1)
			fill_v6_key(&k);
		else
			rng_fill(&rng, &k, sizeof(k));
		rev = k;
		memcpy(rev.src, k.dst, sizeof(rev.src));
		memcpy(rev.dst, k.src, sizeof(rev.dst));
		if (!memcmp(k.src, k.dst, sizeof(k.src)))
			continue;
		assert_int_not_equal(fs_flow_hash(&rev, &key),
				     fs_flow_hash(&k, &key));
		/* ... and so is the reply, ports swapped too. */
		rev.sport = k.dport;
		rev.dport = k.sport;
		assert_int_not_equal(fs_flow_hash(&rev, &key),
				     fs_flow_hash(&k, &key));
	}
}

static void test_ctz64(void **state)
{
	__u64 rng = 0x9e3779b97f4a7c15ULL, x;
	__u32 b, i;

	for (b = 0; b < 64; b++) {
		assert_int_equal(fs_ctz64(1ULL << b), b);
		/* Bits above the lowest set one must not matter. */
		assert_int_equal(fs_ctz64(~0ULL << b), b);
	}
	for (i = 0; i < 100000; i++) {
		x = rng_next(&rng) >> (i % 64);
		/* Shift left too, so that long runs of low zeros occur. */
		if (i & 1)
			x <<= (i / 2) % 64;
		if (!x)
			continue;
		assert_int_equal(fs_ctz64(x), (__u32)__builtin_ctzll(x));
	}
}

static __u64 plain_min(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

static void test_min_u63(void **state)
{
	const __u64 top = 0x7fffffffffffffffULL;
	static const __u64 edge[] = {
		0, 1, 2, 0x7fffffffffffffffULL, 0x7ffffffffffffffeULL,
		0x3fffffffffffffffULL, 0x4000000000000000ULL, 0xffffffffULL,
		0x100000000ULL,
	};
	__u64 rng = 0x082efa98ec4e6c89ULL, a, b;
	__u32 i, j;

	for (i = 0; i < FS_ARRAY_SIZE(edge); i++)
		for (j = 0; j < FS_ARRAY_SIZE(edge); j++)
			assert_int_equal(fs_min_u63(edge[i], edge[j]),
					 plain_min(edge[i], edge[j]));
	for (i = 0; i < 1000000; i++) {
		/* Full-range values, and values of every magnitude. */
		a = rng_next(&rng) & top;
		b = rng_next(&rng) & top;
		if (i & 1) {
			a >>= i % 63;
			b >>= (i / 2) % 63;
		}
		if (i % 5 == 0)
			b = a;
		assert_int_equal(fs_min_u63(a, b), plain_min(a, b));
		assert_int_equal(fs_min_u63(b, a), plain_min(a, b));
	}
}

/*
 * The column definition of cms.h, written with division as the comment
 * states it: with k = floor(64 / log2w), row r takes bits
 * [(r mod k) * log2w, (r mod k + 1) * log2w) of word floor(r / k), where
 * word 0 is the hash and word j > 0 is fs_mix64(hash + j * golden).
 */
static __u32 column_by_definition(__u64 h, __u32 log2w, __u32 row)
{
	__u32 k = 64 / log2w, j = row / k, field = row % k;
	__u64 word = j ? fs_mix64(h + (__u64)j * FS_GOLDEN64) : h;

	return (__u32)(word >> (field * log2w)) & ((1U << log2w) - 1);
}

static void test_cms_columns_match_definition(void **state)
{
	__u64 rng = 12345, h;
	__u32 log2w, depth, row, i;

	/* The ranges cover one-word layouts (log2w 4, depth 8: k = 16) and
	 * multi-word ones (log2w 22, depth 8: k = 2, words 0 .. 3). */

	for (log2w = FS_CMS_MIN_LOG2W; log2w <= FS_CMS_MAX_LOG2W; log2w++) {
		for (depth = 1; depth <= FS_CMS_MAX_DEPTH; depth++) {
			for (i = 0; i < 200; i++) {
				struct fs_cms_columns it;

				h = i == 0 ? ~0ULL : rng_next(&rng);
				fs_cms_columns_init(&it, h, log2w);
				for (row = 0; row < depth; row++)
					assert_int_equal(fs_cms_next_column(&it),
							 column_by_definition(h, log2w, row));
			}
		}
	}
}

/* --- uniformity ---------------------------------------------------------- */

/*
 * Pearson chi-square of n keys over bins of expected counts n p_i has mean
 * df = bins - 1 and standard deviation sqrt(2 df) when the hash behaves
 * like a random function; a skew of even a few percent per bin pushes it
 * many deviations above at n p_i ~ 100.  It is checked two-sided: a value
 * many deviations *below* df means the keys were spread more evenly than
 * chance does, as multiply-shift without its finalizer spreads sequential
 * keys (an arithmetic progression mod 2^32, a lattice), and that is no
 * more random: HyperLogLog's estimator is calibrated on random placement,
 * and Count-Min's bound on independent rows.  Six deviations each way: a
 * random function fails with probability ~1e-9 per check.
 */
static double chi_square(const __u32 *counts, const double *expect,
			 __u32 bins)
{
	double chi = 0;
	__u32 i;

	for (i = 0; i < bins; i++)
		chi += (counts[i] - expect[i]) * (counts[i] - expect[i]) /
		       expect[i];
	return chi;
}

static void chi_check(const __u32 *counts, const double *expect, __u32 bins,
		      const char *what, const char *field)
{
	double df = bins - 1, dev = 6 * sqrt(2 * df);
	double chi = chi_square(counts, expect, bins);

	if (chi > df + dev || chi < df - dev)
		fail_msg("%s: %s: chi-square %.1f outside %.1f +- %.1f", what,
			 field, chi, df, dev);
}

#define UNI_N		100000
#define UNI_LOG2W	10
#define UNI_BINS	(1U << UNI_LOG2W)
#define UNI_DEPTH	8
#define UNI_P		10
/* HyperLogLog ranks 1 .. RANKS - 1, then RANKS and above in one bin;
 * P(rank = r) = 2^-r, so the last single bin expects n 2^-11 ~ 49. */
#define UNI_RANKS	12
/* Serial test: the low SERIAL_BITS of two consecutive keys' hashes. */
#define UNI_SERIAL_BITS	5

/* Histograms of one hash output over n keys. */
struct uniformity {
	__u32 cols[UNI_DEPTH][UNI_BINS];
	__u32 hll_index[UNI_BINS];
	__u32 rank[UNI_RANKS];
	__u32 serial[1U << (2 * UNI_SERIAL_BITS)];
	__u64 n, prev;
};

static void uniformity_add(struct uniformity *u, __u64 h)
{
	const __u64 mask = (1U << UNI_SERIAL_BITS) - 1;
	struct fs_cms_columns it;
	__u32 row, r;

	fs_cms_columns_init(&it, h, UNI_LOG2W);
	/* depth 8 at log2w 10 crosses into fs_mix64 words (k = 6). */
	for (row = 0; row < UNI_DEPTH; row++)
		u->cols[row][fs_cms_next_column(&it)]++;
	u->hll_index[fs_hll_index(h, UNI_P)]++;
	r = fs_hll_rank(h, UNI_P);
	u->rank[(r < UNI_RANKS ? r : UNI_RANKS) - 1]++;
	/* Disjoint pairs (keys 2j, 2j + 1), so the pair counts are
	 * independent draws as the chi-square needs. */
	if (u->n++ & 1)
		u->serial[(u->prev & mask) << UNI_SERIAL_BITS | (h & mask)]++;
	u->prev = h;
}

static void uniformity_check(const struct uniformity *u, const char *what)
{
	const __u32 serial_bins = 1U << (2 * UNI_SERIAL_BITS);
	double flat[UNI_BINS], serial[1U << (2 * UNI_SERIAL_BITS)];
	double geometric[UNI_RANKS];
	char field[32];
	__u32 i, row;

	for (i = 0; i < UNI_BINS; i++)
		flat[i] = (double)UNI_N / UNI_BINS;
	for (i = 0; i < serial_bins; i++)
		serial[i] = (double)(UNI_N / 2) / serial_bins;
	for (i = 0; i < UNI_RANKS; i++)
		geometric[i] = UNI_N * ldexp(1.0, -(int)(i + 1));
	geometric[UNI_RANKS - 1] *= 2;	/* rank >= UNI_RANKS: 2^-(R-1) */

	for (row = 0; row < UNI_DEPTH; row++) {
		snprintf(field, sizeof(field), "Count-Min row %u", row);
		chi_check(u->cols[row], flat, UNI_BINS, what, field);
	}
	chi_check(u->hll_index, flat, UNI_BINS, what, "HyperLogLog index");
	chi_check(u->rank, geometric, UNI_RANKS, what, "HyperLogLog rank");
	chi_check(u->serial, serial, serial_bins, what,
		  "consecutive keys' low bits");
}

enum uni_input {
	UNI_SEQ_SRC4,		/* 10.0.0.0 + i, one flow each */
	UNI_SEQ_SRC4_LE,	/* source bytes = i little-endian */
	UNI_SEQ_PORT,		/* one host pair, source port i */
	UNI_SEQ_SRC_PORT,	/* source and port both i */
	UNI_SEQ_DST6,		/* 2001:db8::i, IPv6 destinations */
	UNI_RANDOM,
	UNI_NINPUTS,
};

static const char *const uni_name[UNI_NINPUTS] = {
	"sequential IPv4 sources", "sequential source words",
	"sequential ports", "sequential sources and ports",
	"sequential IPv6 destinations", "random keys",
};

static void uni_key(enum uni_input in, __u32 i, __u64 *rng,
		    struct fs_flow_key *k)
{
	__u32 addr = htonl(0x0a000000U + i);

	fill_v4_key(k);
	switch (in) {
	case UNI_SEQ_SRC4:
		memcpy(k->src, &addr, sizeof(addr));
		break;
	case UNI_SEQ_SRC4_LE:
		memcpy(k->src, &i, sizeof(i));
		break;
	case UNI_SEQ_PORT:
		k->sport = htons((__u16)i);
		k->dport = htons((__u16)(i >> 16));
		break;
	case UNI_SEQ_SRC_PORT:
		memcpy(k->src, &addr, sizeof(addr));
		k->sport = htons((__u16)i);
		break;
	case UNI_SEQ_DST6:
		fill_v6_key(k);
		addr = htonl(i);
		memcpy(&k->dst[12], &addr, sizeof(addr));
		break;
	default:
		rng_fill(rng, k, sizeof(*k));
		k->pad = 0;
	}
}

/*
 * Each input family through each output that varies with it: the flow
 * hash always, the source hash when sources vary, the destination hash
 * when destinations do.  An output whose input is constant is one value,
 * not a distribution, and is skipped.
 */
static void test_uniformity(void **state)
{
	struct uniformity *flow = malloc(sizeof(*flow));
	struct uniformity *src = malloc(sizeof(*src));
	struct uniformity *dst = malloc(sizeof(*dst));
	__u64 rng = 0xbe5466cf34e90c6cULL;
	struct fs_hash_key key;
	char what[96];
	__u32 in, i;

	assert_non_null(flow);
	assert_non_null(src);
	assert_non_null(dst);
	fs_hash_key_derive(&ref_secret, &key);
	for (in = 0; in < UNI_NINPUTS; in++) {
		int src_varies = in != UNI_SEQ_PORT && in != UNI_SEQ_DST6;
		int dst_varies = in == UNI_SEQ_DST6 || in == UNI_RANDOM;

		memset(flow, 0, sizeof(*flow));
		memset(src, 0, sizeof(*src));
		memset(dst, 0, sizeof(*dst));
		for (i = 0; i < UNI_N; i++) {
			struct fs_packet_hashes h;
			struct fs_flow_key k;

			uni_key(in, i, &rng, &k);
			fs_packet_hash(&k, &key, &h);
			uniformity_add(flow, h.flow);
			uniformity_add(src, h.src);
			uniformity_add(dst, h.dst);
		}
		snprintf(what, sizeof(what), "%s, flow hash", uni_name[in]);
		uniformity_check(flow, what);
		if (src_varies) {
			snprintf(what, sizeof(what), "%s, source hash",
				 uni_name[in]);
			uniformity_check(src, what);
		}
		if (dst_varies) {
			snprintf(what, sizeof(what), "%s, destination hash",
				 uni_name[in]);
			uniformity_check(dst, what);
		}
	}
	free(flow);
	free(src);
	free(dst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash24_reference),
		cmocka_unit_test(test_packet_hash_pinned),
		cmocka_unit_test(test_key_derive),
		cmocka_unit_test(test_ipv4_path_equals_general_formula),
		cmocka_unit_test(test_flow_hash_depends_on_every_bit),
		cmocka_unit_test(test_address_hashes_depend_on_their_address),
		cmocka_unit_test(test_swap_changes_flow_hash),
		cmocka_unit_test(test_ctz64),
		cmocka_unit_test(test_min_u63),
		cmocka_unit_test(test_cms_columns_match_definition),
		cmocka_unit_test(test_uniformity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
