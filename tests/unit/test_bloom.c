// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_bloom.c - the blocklist filter of include/flowsketch/bloom.h.
 *
 * Oracles that do not come from bloom.h:
 *   - groups: the base of every length written out below by hand from the
 *     table in the header comment, not read from fs_bloom_base4/6;
 *   - masks: built byte by byte from the prefix length;
 *   - false positives: a filter sized for n keys is filled with n random
 *     keys and probed with a million others; the measured rate must be
 *     within 20 % of Putze, Sanders and Singler's formula, computed here by
 *     a separate implementation (ref_fpr(), summing the Poisson terms in
 *     log space), and above the classic formula (blocks fill unevenly);
 *   - sizing: the size chosen meets the target by ref_fpr() and half of it
 *     does not, for any k.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "flowsketch/bloom.h"
#include "ref_bloom.h"

static const struct fs_hash_secret secret = {
	.k0 = 0x243f6a8885a308d3ULL,
	.k1 = 0x13198a2e03707344ULL,
};

static __u64 rng_next(__u64 *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s ^ (*s >> 29);
}

static int expected_group4(unsigned int len)
{
	if (len < 16)
		return 0;	/* /0../7 expand into /8 keys; /8../15 key /8 */
	if (len < 24)
		return 1;
	if (len < 32)
		return 2;
	return 3;
}

static int expected_group6(unsigned int len)
{
	if (len < 32)
		return 0;
	if (len < 48)
		return 1;
	if (len < 56)
		return 2;
	if (len < 64)
		return 3;
	if (len < 128)
		return 4;
	return 5;
}

static void test_groups(void **state)
{
	unsigned int len;
	__u64 keys;

	for (len = 0; len <= 32; len++) {
		assert_int_equal(fs_bloom_group_of(FS_FAMILY_IPV4, len, &keys),
				 expected_group4(len));
		assert_int_equal(keys, len < 8 ? 1ULL << (8 - len) : 1);
	}
	assert_int_equal(fs_bloom_group_of(FS_FAMILY_IPV4, 33, &keys), -1);
	for (len = 0; len <= 128; len++) {
		assert_int_equal(fs_bloom_group_of(FS_FAMILY_IPV6, len, &keys),
				 expected_group6(len));
		assert_int_equal(keys, len < 16 ? 1ULL << (16 - len) : 1);
	}
	assert_int_equal(fs_bloom_group_of(FS_FAMILY_IPV6, 129, &keys), -1);
	assert_int_equal(fs_bloom_group_of(5, 8, &keys), -1);
}

static void test_masks(void **state)
{
	unsigned int len, i;

	for (len = 0; len <= 32; len++) {
		__u8 bytes[4] = { 0 };
		__u32 want;

		for (i = 0; i < len; i++)
			bytes[i / 8] |= 0x80 >> (i % 8);
		memcpy(&want, bytes, 4);
		assert_int_equal(fs_bloom_mask32(len), want);
	}
}

/* Addresses that agree on their first base bits share a key; others not. */
static void test_hash_masks_to_the_base(void **state)
{
	struct fs_bloom_key key;
	__u64 s = 1;
	unsigned int g, i;

	fs_bloom_key_derive(&secret, &key);
	for (g = 0; g < FS_BLOOM_GROUPS4; g++)
		for (i = 0; i < 1000; i++) {
			__u32 a = (__u32)rng_next(&s), b = (__u32)rng_next(&s);
			__u32 m = fs_bloom_mask32(fs_bloom_base4[g]);
			__u32 same = (a & m) | (b & ~m);

			assert_int_equal(fs_bloom_hash4(&key, g, a),
					 fs_bloom_hash4(&key, g, same));
			if ((a & m) != (b & m))
				assert_int_not_equal(fs_bloom_hash4(&key, g, a),
						     fs_bloom_hash4(&key, g, b));
		}
	for (g = 0; g < FS_BLOOM_GROUPS6; g++)
		for (i = 0; i < 1000; i++) {
			__u32 a[4], b[4], c[4];
			unsigned int w, bit, len = fs_bloom_base6[g];
			int differs = 0;

			for (w = 0; w < 4; w++) {
				a[w] = (__u32)rng_next(&s);
				b[w] = (__u32)rng_next(&s);
				c[w] = b[w];
			}
			/* c: a's first len bits, b's others (bits in packet
			 * order: byte by byte, high bit first). */
			for (bit = 0; bit < len; bit++) {
				__u8 *pa = (__u8 *)a, *pc = (__u8 *)c;
				__u8 mb = 0x80 >> (bit % 8);

				pc[bit / 8] = (__u8)((pc[bit / 8] & ~mb) | (pa[bit / 8] & mb));
				if ((pa[bit / 8] ^ ((__u8 *)b)[bit / 8]) & mb)
					differs = 1;
			}
			assert_int_equal(fs_bloom_hash6(&key, g, a),
					 fs_bloom_hash6(&key, g, c));
			if (differs)
				assert_int_not_equal(fs_bloom_hash6(&key, g, a),
						     fs_bloom_hash6(&key, g, b));
		}
}

/* The keys derive from the secret, and only from it. */
static void test_key_is_keyed(void **state)
{
	struct fs_bloom_key a, b;
	struct fs_hash_secret other = secret;

	fs_bloom_key_derive(&secret, &a);
	fs_bloom_key_derive(&secret, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	other.k1 ^= 1;
	fs_bloom_key_derive(&other, &b);
	assert_int_not_equal(a.v4[0][0][0], b.v4[0][0][0]);
	assert_int_not_equal(a.v6[5][1][4], b.v6[5][1][4]);
}

/*
 * The k bits are the ones the header's "Layout" defines (the top 9 bits
 * of h times C, C^2, ..., computed here), set then test finds every key,
 * and clearing any one of its bits makes it "definitely not".
 */
static void test_set_then_test(void **state)
{
	struct fs_bloom_block b, want;
	__u64 s = 7;
	unsigned int k, i, j;

	for (k = 1; k <= FS_BLOOM_MAX_K; k++)
		for (i = 0; i < 2000; i++) {
			__u64 h = rng_next(&s), x = h;

			memset(&want, 0, sizeof(want));
			for (j = 0; j < k; j++) {
				unsigned int bit;

				x *= 0x9e3779b97f4a7c15ULL;
				bit = (unsigned int)(x >> 55);
				want.w[bit / 64] |= 1ULL << (bit % 64);
			}
			memset(&b, 0, sizeof(b));
			fs_bloom_block_set(&b, h, k);
			assert_memory_equal(&b, &want, sizeof(b));
			assert_true(fs_bloom_block_test(&b, h, k));
			for (j = 0; j < 8; j++)
				if (b.w[j]) {
					struct fs_bloom_block c = b;

					c.w[j] &= c.w[j] - 1;	/* one bit fewer */
					assert_false(fs_bloom_block_test(&c, h, k));
					break;
				}
		}
}

/*
 * A filter sized for n keys at 1 %: no false negative, and a measured
 * rate within 20 % of ref_fpr() at its size and k.
 */
static void fill_and_measure(double target, unsigned int n)
{
	struct fs_bloom_block *f;
	unsigned int log2b = 0, k = 0, i, fp = 0, probes = 1000000;
	double want, classic, got;
	__u64 s = 99, *keys;

	assert_int_equal(fs_bloom_size(n, target, &log2b, &k), 0);
	f = calloc(1U << log2b, sizeof(*f));
	keys = calloc(n, sizeof(*keys));
	assert_non_null(f);
	assert_non_null(keys);
	for (i = 0; i < n; i++) {
		keys[i] = rng_next(&s) * 0x9e3779b97f4a7c15ULL;
		fs_bloom_block_set(&f[fs_bloom_block_index(keys[i], log2b)],
				   keys[i], k);
	}
	for (i = 0; i < n; i++)
		assert_true(fs_bloom_block_test(&f[fs_bloom_block_index(keys[i], log2b)],
						keys[i], k));
	for (i = 0; i < probes; i++) {
		__u64 h = rng_next(&s) * 0xc2b2ae3d27d4eb4fULL;

		fp += (unsigned int)fs_bloom_block_test(&f[fs_bloom_block_index(h, log2b)],
							h, k);
	}
	want = ref_fpr(n, ldexp(1, (int)log2b), k);
	classic = pow(1 - exp(-(double)k * n / ldexp(512, (int)log2b)), k);
	got = (double)fp / probes;
	print_message("# %u keys, 2^%u blocks, k %u: measured %.5f, PSS %.5f, classic %.5f, %.2f bits a key\n",
		      n, log2b, k, got, want, classic, ldexp(512, (int)log2b) / n);
	assert_true(want <= target);
	assert_true(want > classic);
	assert_true(fabs(got - want) <= 0.2 * want);
	free(f);
	free(keys);
}

static void test_false_positive_rate(void **state)
{
	fill_and_measure(0.01, 10000);
	fill_and_measure(0.01, 100000);
	fill_and_measure(0.001, 50000);
}

/* The fewest blocks: the size meets the target, half of it cannot. */
static void test_sizing_is_minimal(void **state)
{
	static const double caps[] = { 1, 100, 10000, 123457, 1000000 };
	static const double targets[] = { 0.05, 0.01, 0.001 };
	unsigned int c, t, log2b = 0, k = 0, kk;

	for (c = 0; c < FS_ARRAY_SIZE(caps); c++)
		for (t = 0; t < FS_ARRAY_SIZE(targets); t++) {
			assert_int_equal(fs_bloom_size(caps[c], targets[t], &log2b, &k), 0);
			assert_true(ref_fpr(caps[c], ldexp(1, (int)log2b), k) <=
				    targets[t] * (1 + 1e-9));
			if (!log2b)
				continue;
			for (kk = 1; kk <= FS_BLOOM_MAX_K; kk++)
				assert_true(ref_fpr(caps[c], ldexp(1, (int)log2b - 1), kk) >
					    targets[t]);
		}
}

/* Bits a key with the block count free: the least that reaches the
 * target by ref_fpr(), to the 0.05-bit step. */
static void test_bits_per_key(void **state)
{
	static const double targets[] = { 0.1, 0.01, 0.001, 0.0001 };
	unsigned int t, k = 0, kk;

	for (t = 0; t < FS_ARRAY_SIZE(targets); t++) {
		double c = fs_bloom_bits_per_key(targets[t], &k);

		assert_true(c > 0);
		assert_true(ref_fpr(512 / c, 1, k) <= targets[t] * (1 + 1e-9));
		for (kk = 1; kk <= FS_BLOOM_MAX_K; kk++)
			assert_true(ref_fpr(512 / (c - 0.05), 1, kk) > targets[t]);
		/* never fewer bits than the classic formula needs */
		assert_true(c >= -log(targets[t]) / (M_LN2 * M_LN2) - 0.05);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_masks),
		cmocka_unit_test(test_hash_masks_to_the_base),
		cmocka_unit_test(test_key_is_keyed),
		cmocka_unit_test(test_set_then_test),
		cmocka_unit_test(test_false_positive_rate),
		cmocka_unit_test(test_sizing_is_minimal),
		cmocka_unit_test(test_bits_per_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
