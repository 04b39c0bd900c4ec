// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_hash.c - the keyed hash and the bit fields the sketches take from it.
 *
 * SipHash's round function is checked against the published SipHash-2-4
 * vectors (the rounds are a parameter of fs_siphash_words); the 1-3 outputs
 * flowsketch actually uses are pinned, and were cross-checked once against
 * an independent byte-oriented SipHash-1-3 written from the paper.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "flowsketch/hash.h"
#include "flowsketch/cms.h"
#include "flowsketch/hll.h"

/* Key bytes 00..0f of the SipHash paper, as two little-endian words. */
static const struct fs_hash_secret ref_secret = {
	.k0 = 0x0706050403020100ULL,
	.k1 = 0x0f0e0d0c0b0a0908ULL,
};

/* xorshift64*: a fixed, seedable stream of test inputs. */
static __u64 rng_next(__u64 *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

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
	__u8 msg[40];
	__u64 words[5];
	__u32 n;

	for (n = 0; n < sizeof(msg); n++)
		msg[n] = (__u8)n;
	memcpy(words, msg, sizeof(words));
	for (n = 0; n < FS_ARRAY_SIZE(expect); n++)
		assert_int_equal(fs_siphash_words(words, n, &ref_secret, 2, 4),
				 expect[n]);
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

/*
 * Regression guard: these values were computed once by this code and by an
 * independent SipHash-1-3; they pin the key layout (flow_key.h) and the
 * hash, so that sketches built before and after a change stay mergeable.
 */
static void test_siphash13_pinned(void **state)
{
	struct fs_flow_key k;
	struct fs_addr_key a = { .family = FS_FAMILY_IPV4,
				 .addr = { 192, 168, 1, 1 } };

	fill_v4_key(&k);
	assert_int_equal(fs_flow_hash(&k, &ref_secret), 0x0190d80f346386e1ULL);

	memset(&k, 0, sizeof(k));
	k.family = FS_FAMILY_IPV6;
	k.proto = 17;
	k.sport = htons(53);
	k.dport = htons(5353);
	k.src[0] = 0x20; k.src[1] = 0x01; k.src[2] = 0x0d; k.src[3] = 0xb8;
	k.src[15] = 1;
	memcpy(k.dst, k.src, 16);
	k.dst[15] = 2;
	assert_int_equal(fs_flow_hash(&k, &ref_secret), 0xc950b1db72a63697ULL);

	assert_int_equal(fs_addr_hash(&a, &ref_secret), 0x07c5272750d90c6aULL);
}

/* The secret and every byte of the key change the hash. */
static void test_hash_depends_on_secret_and_key(void **state)
{
	struct fs_hash_secret other = ref_secret;
	struct fs_flow_key k, k2;
	__u64 h = 0;
	__u32 i;

	fill_v4_key(&k);
	h = fs_flow_hash(&k, &ref_secret);
	other.k0 ^= 1;
	assert_int_not_equal(fs_flow_hash(&k, &other), h);
	other = ref_secret;
	other.k1 ^= 1ULL << 63;
	assert_int_not_equal(fs_flow_hash(&k, &other), h);

	for (i = 0; i < sizeof(k); i++) {
		k2 = k;
		((__u8 *)&k2)[i] ^= 0x80;
		assert_int_not_equal(fs_flow_hash(&k2, &ref_secret), h);
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
		if (!x)
			continue;
		assert_int_equal(fs_ctz64(x), (__u32)__builtin_ctzll(x));
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

/*
 * Pearson chi-square of n keys over b bins has mean b - 1 and standard
 * deviation sqrt(2 (b - 1)) when the bins are uniform; a skew of even a
 * few percent per bin pushes it many deviations out at n / b ~ 100.
 */
static double chi_square(const __u32 *counts, __u32 bins, __u32 n)
{
	double expect = (double)n / bins, chi = 0;
	__u32 i;

	for (i = 0; i < bins; i++)
		chi += (counts[i] - expect) * (counts[i] - expect) / expect;
	return chi;
}

static void test_uniformity(void **state)
{
	const __u32 n = 100000, log2w = 10, bins = 1U << log2w, depth = 8;
	const double df = bins - 1, bound = df + 6 * sqrt(2 * df);
	__u32 *cols = calloc((size_t)depth * bins, sizeof(*cols));
	__u32 *hll_index = calloc(bins, sizeof(*hll_index));
	struct fs_flow_key k;
	__u32 i, row;

	assert_non_null(cols);
	assert_non_null(hll_index);
	fill_v4_key(&k);
	for (i = 0; i < n; i++) {
		struct fs_cms_columns it;
		__u64 h;

		/* Sequential sources and ports: the structured input a
		 * weak hash would fail on. */
		memcpy(&k.src[0], &i, sizeof(i));
		k.sport = (__be16)i;
		h = fs_flow_hash(&k, &ref_secret);
		fs_cms_columns_init(&it, h, log2w);
		/* depth 8 at log2w 10 crosses into fs_mix64 words (k = 6). */
		for (row = 0; row < depth; row++)
			cols[row * bins + fs_cms_next_column(&it)]++;
		hll_index[fs_hll_index(h, log2w)]++;
	}
	for (row = 0; row < depth; row++) {
		double chi = chi_square(&cols[row * bins], bins, n);

		if (chi > bound)
			fail_msg("row %u: chi-square %.1f > %.1f", row, chi, bound);
	}
	assert_true(chi_square(hll_index, bins, n) <= bound);
	free(cols);
	free(hll_index);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash24_reference),
		cmocka_unit_test(test_siphash13_pinned),
		cmocka_unit_test(test_hash_depends_on_secret_and_key),
		cmocka_unit_test(test_ctz64),
		cmocka_unit_test(test_cms_columns_match_definition),
		cmocka_unit_test(test_uniformity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
