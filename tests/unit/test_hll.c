// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_hll.c - accuracy of the HyperLogLog registers and Ertl's estimator.
 *
 * Registers are filled from n distinct flow keys, so the truth is n: the
 * keys hashed as the datapath hashes them (fs_packet_hash), the registers
 * derived from the definition in ref_hll.h (low p bits, trailing zeros of
 * the rest plus one, bit by bit), not by hll.h's fs_hll_index/fs_hll_rank,
 * which test_derivation checks against that definition.
 * The keys come in three shapes, each through the hash its sketch uses:
 * IPv6 flows whose address and port spell out n (flow hash), sequential
 * IPv4 sources 10.0.0.0 + i (source hash) and one host pair's sequential
 * ports (flow hash).  Sequential keys are what multiply-shift hashes
 * worst, and what a scan or a port sweep sends.
 * Bounds come from the relative standard error rse = 1.04 / sqrt(m):
 *   - one sketch: |E - n| <= 3 rse n (+ 1, see below);
 *   - bias: the mean relative error over R independent secrets has
 *     standard deviation rse / sqrt(R), so an unbiased estimator keeps it
 *     within 3 rse / sqrt(R) at every n.  The raw estimator of Flajolet et
 *     al. fails exactly this around n ~ m (checked too, so that the test
 *     is known to be able to fail).
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

#include "hll_estimate.h"
#include "sketch.h"
#include "flowsketch/hash.h"
#include "flowsketch/hll.h"
#include "ref_hll.h"

static const struct fs_hash_secret base_secret = {
	.k0 = 0x452821e638d01377ULL,
	.k1 = 0xbe5466cf34e90c6cULL,
};

enum key_shape {
	SHAPE_WIDE,		/* IPv6 flows, source and port spell out i */
	SHAPE_SEQ_SRC4,		/* source 10.0.0.0 + i, i < 2^24 */
	SHAPE_SEQ_PORTS,	/* one host pair, ports (i >> 16, i & 0xffff) */
	NSHAPES,
};

static const char *const shape_name[NSHAPES] = {
	"IPv6 flows", "sequential IPv4 sources", "sequential ports",
};

/* Distinct key number i of a shape, hashed for the sketch that counts it. */
static __u64 key_hash(enum key_shape shape, __u64 i,
		      const struct fs_hash_key *key)
{
	static const __u8 dst4[4] = { 192, 0, 2, 1 };
	struct fs_packet_hashes h;
	struct fs_flow_key k;
	__u32 addr;

	memset(&k, 0, sizeof(k));
	switch (shape) {
	case SHAPE_WIDE:
		k.family = FS_FAMILY_IPV6;
		k.proto = 6;
		memcpy(k.src, &i, sizeof(i));
		k.dst[0] = 0xfd;
		k.sport = (__be16)(i >> 48);
		fs_packet_hash(&k, key, &h);
		return h.flow;
	case SHAPE_SEQ_SRC4:
		k.family = FS_FAMILY_IPV4;
		k.proto = 17;
		addr = htonl(0x0a000000U + (__u32)i);
		memcpy(k.src, &addr, sizeof(addr));
		memcpy(k.dst, dst4, sizeof(dst4));
		k.dport = htons(53);
		fs_packet_hash(&k, key, &h);
		return h.src;
	default:
		k.family = FS_FAMILY_IPV4;
		k.proto = 6;
		k.src[0] = 10;
		k.src[3] = 1;
		memcpy(k.dst, dst4, sizeof(dst4));
		k.sport = htons((__u16)i);
		k.dport = htons((__u16)(i >> 16));
		fs_packet_hash(&k, key, &h);
		return h.flow;
	}
}

static void hll_insert(__u8 *regs, __u32 p, __u64 h)
{
	ref_hll_insert(regs, p, h);
}

/*
 * hll.h's derivation is the definition: on hashes chosen at the edges
 * (no bit above p, one bit at each position, all ones) and on random ones,
 * at every precision the datapath accepts; pinned values from Redis's
 * range (p = 14: ranks 1 .. 51).  And fs_hll_register_max keeps the max.
 */
static void test_derivation(void **state)
{
	__u64 rng = 0x9e3779b97f4a7c15ULL, h;
	__u32 p, b, i;
	__u8 reg;

	for (p = FS_HLL_MIN_P; p <= FS_HLL_MAX_P; p++) {
		for (b = 0; b <= 64; b++) {
			__u64 one = b < 64 ? 1ULL << b : 0;
			const __u64 edge[] = { one, one - 1, ~one, one | ((1ULL << p) - 1),
					       one * 3, ~0ULL ^ (one - 1) };

			for (i = 0; i < FS_ARRAY_SIZE(edge); i++) {
				h = edge[i];
				if (fs_hll_index(h, p) != ref_hll_index(h, p) ||
				    fs_hll_rank(h, p) != ref_hll_rank(h, p))
					fail_msg("p = %u, h = %#llx: index %u rank %u, definition %u, %u",
						 p, (unsigned long long)h, fs_hll_index(h, p),
						 fs_hll_rank(h, p), ref_hll_index(h, p),
						 ref_hll_rank(h, p));
			}
		}
		for (i = 0; i < 100000; i++) {
			rng ^= rng >> 12;
			rng ^= rng << 25;
			rng ^= rng >> 27;
			h = rng * 0x2545f4914f6cdd1dULL;
			/* Thin the high bits now and then: long zero runs. */
			if (i & 1)
				h &= ~0ULL >> (i % 61);
			assert_int_equal(fs_hll_index(h, p), ref_hll_index(h, p));
			assert_int_equal(fs_hll_rank(h, p), ref_hll_rank(h, p));
		}
	}
	/* Redis, p = 14: all of bits 14..63 zero is rank 51, bit 14 set
	 * rank 1, bit 63 alone rank 50; the index is bits 0..13. */
	assert_int_equal(ref_hll_rank(0, 14), 51);
	assert_int_equal(ref_hll_rank(0x3fff, 14), 51);
	assert_int_equal(ref_hll_rank(1ULL << 14, 14), 1);
	assert_int_equal(ref_hll_rank(1ULL << 63, 14), 50);
	assert_int_equal(ref_hll_index(0xffffffffffffc123ULL, 14), 0x0123);
	assert_int_equal(fs_hll_rank(0, 14), 51);
	assert_int_equal(fs_hll_rank(1ULL << 63, 14), 50);

	reg = 0;
	fs_hll_register_max(&reg, 3);
	fs_hll_register_max(&reg, 2);
	assert_int_equal(reg, 3);
	fs_hll_register_max(&reg, 7);
	assert_int_equal(reg, 7);
}

/*
 * Allowed |E - n| for one sketch.  3 rse n is three standard errors.  For
 * n far below m the estimate is the number of occupied registers, give or
 * take a fraction, so its error comes in whole collisions of two keys in
 * one register; a single collision (probability ~ n^2 / 2m, 0.3 % at
 * n = 10, p = 14) is off by one, which the continuous 3 sigma does not
 * cover at small n: hence + 1.
 */
static double allowed_error(double n, __u32 p)
{
	return 3 * fs_hll_rse(p) * n + 1;
}

static void test_cardinalities_p14(void **state)
{
	static const __u64 checkpoints[] = {
		1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
	};
	struct fs_sketch_params p = {
		.magic = FS_PARAMS_MAGIC,
		.version = FS_PARAMS_VERSION,
		.cms_depth = 1,
		.cms_log2_width = FS_CMS_MIN_LOG2W,
		.hll_p = 14,
		.nslots = FS_NSLOTS,
		.secret = base_secret,
	};
	struct fs_hash_key key;
	struct fs_sketch s;
	__u32 c, shape;
	__u8 *flows;
	__u64 i;

	fs_hash_key_derive(&p.secret, &key);
	for (shape = 0; shape < NSHAPES; shape++) {
		assert_int_equal(fs_sketch_init(&s, &p), 0);
		flows = s.hll + ((size_t)FS_HLL_FLOWS << p.hll_p);
		assert_true(fs_sketch_distinct(&s, FS_HLL_FLOWS) == 0.0);
		for (c = 0, i = 0; c < FS_ARRAY_SIZE(checkpoints); c++) {
			double n = (double)checkpoints[c], e;

			for (; i < checkpoints[c]; i++)
				hll_insert(flows, p.hll_p,
					   key_hash(shape, i, &key));
			e = fs_sketch_distinct(&s, FS_HLL_FLOWS);
			if (fabs(e - n) > allowed_error(n, p.hll_p))
				fail_msg("%s, n = %.0f: estimate %.1f, allowed error %.1f",
					 shape_name[shape], n, e,
					 allowed_error(n, p.hll_p));
		}
		/* The other two sketches were not touched: exactly empty. */
		assert_true(fs_sketch_distinct(&s, FS_HLL_SOURCES) == 0.0);
		assert_true(fs_sketch_distinct(&s, FS_HLL_DESTS) == 0.0);
		assert_true(isnan(fs_sketch_distinct(&s, FS_HLL_NSKETCH)));
		fs_sketch_free(&s);
	}
}

/* Flajolet et al.'s raw estimate alpha_m m^2 / sum 2^-M[j], no corrections. */
static double raw_estimate(const __u8 *regs, __u32 p)
{
	double m = (double)(1U << p), sum = 0;
	__u32 j;

	for (j = 0; j < (1U << p); j++)
		sum += ldexp(1.0, -regs[j]);
	return 0.7213 / (1 + 1.079 / m) * m * m / sum;
}

#define BIAS_R 20
#define BIAS_P 14

static void test_no_bias_across_range(void **state)
{
	/* Around m = 16384 is where raw HLL turns from over- to
	 * under-estimating and where HLL++ needs its bias tables. */
	static const __u64 checkpoints[] = {
		100, 1000, 5000, 10000, 20000, 40000, 100000, 1000000,
	};
	const __u32 nc = FS_ARRAY_SIZE(checkpoints), m = 1U << BIAS_P;
	const double bound = 3 * fs_hll_rse(BIAS_P) / sqrt(BIAS_R);
	__u8 *regs = malloc(m);
	__u32 shape, r, c;

	assert_non_null(regs);
	for (shape = 0; shape < NSHAPES; shape++) {
		double sum_rel[FS_ARRAY_SIZE(checkpoints)] = { 0 };
		double sum_raw[FS_ARRAY_SIZE(checkpoints)] = { 0 };

		for (r = 0; r < BIAS_R; r++) {
			/* Independent secrets: independent register
			 * placements. */
			struct fs_hash_secret s = {
				.k0 = fs_mix64(base_secret.k0 + r),
				.k1 = fs_mix64(base_secret.k1 ^ ((__u64)r << 32)),
			};
			struct fs_hash_key key;
			__u64 i = 0;

			fs_hash_key_derive(&s, &key);
			memset(regs, 0, m);
			for (c = 0; c < nc; c++) {
				double n = (double)checkpoints[c];

				for (; i < checkpoints[c]; i++)
					hll_insert(regs, BIAS_P,
						   key_hash(shape, i, &key));
				sum_rel[c] += (fs_hll_estimate(regs, BIAS_P) - n) / n;
				sum_raw[c] += (raw_estimate(regs, BIAS_P) - n) / n;
			}
		}
		for (c = 0; c < nc; c++) {
			double mean = sum_rel[c] / BIAS_R;

			if (fabs(mean) > bound)
				fail_msg("%s, n = %llu: mean relative error %.5f > %.5f",
					 shape_name[shape],
					 (unsigned long long)checkpoints[c],
					 mean, bound);
		}
		/* The same check rejects the uncorrected estimator at
		 * n = 10000, about 0.6 m (it is some +70 % off there): the
		 * test can tell a biased estimator from an unbiased one. */
		assert_true(fabs(sum_raw[3] / BIAS_R) > bound);
	}
	free(regs);
}

/* Other precisions: the estimator is not tuned for p = 14 alone. */
static void test_other_precisions(void **state)
{
	static const __u32 ps[] = { 4, 10, 18 };
	static const __u64 ns[] = { 10000, 100000, 1000000 };
	__u8 *regs[FS_ARRAY_SIZE(ps)];
	__u64 i, n = ns[FS_ARRAY_SIZE(ns) - 1], h;
	struct fs_hash_key key;
	__u32 shape, j, c;

	fs_hash_key_derive(&base_secret, &key);
	for (j = 0; j < FS_ARRAY_SIZE(ps); j++) {
		regs[j] = malloc(1U << ps[j]);
		assert_non_null(regs[j]);
	}
	for (shape = 0; shape < NSHAPES; shape++) {
		for (j = 0; j < FS_ARRAY_SIZE(ps); j++) {
			memset(regs[j], 0, 1U << ps[j]);
			assert_true(fs_hll_estimate(regs[j], ps[j]) == 0.0);
		}
		for (i = 0, c = 0; i < n; i++) {
			h = key_hash(shape, i, &key);
			for (j = 0; j < FS_ARRAY_SIZE(ps); j++)
				hll_insert(regs[j], ps[j], h);
			if (i + 1 != ns[c])
				continue;
			for (j = 0; j < FS_ARRAY_SIZE(ps); j++) {
				double e = fs_hll_estimate(regs[j], ps[j]);

				if (fabs(e - ns[c]) > allowed_error(ns[c], ps[j]))
					fail_msg("%s, p = %u, n = %llu: estimate %.1f",
						 shape_name[shape], ps[j],
						 (unsigned long long)ns[c], e);
			}
			c++;
		}
	}
	for (j = 0; j < FS_ARRAY_SIZE(ps); j++)
		free(regs[j]);
}

/* Exact corner values: all registers saturated, precision out of range. */
static void test_edges(void **state)
{
	__u8 regs[1U << 4];
	__u32 j;

	assert_true(fabs(fs_hll_rse(14) - 1.04 / 128) < 1e-15);
	assert_true(isnan(fs_hll_estimate(regs, FS_HLL_MIN_P - 1)));
	assert_true(isnan(fs_hll_estimate(regs, FS_HLL_MAX_P + 1)));

	/* One key: one register of rank 1 in an empty sketch of m.  With
	 * C[0] = m - 1, C[1] = 1 the estimate is m ln(m / (m - 1)) to first
	 * order, i.e. 1 + 1 / 2m. */
	memset(regs, 0, sizeof(regs));
	regs[3] = 1;
	assert_true(fabs(fs_hll_estimate(regs, 4) - 1.0) < 0.1);

	/* Every register at the cap q + 1 = 65 - p: tau(0) = 0 and sigma(0)
	 * = 0 make z = 0, the maximum-likelihood answer "more keys than
	 * the hash can tell apart" is +inf.  One register short of that the
	 * estimate is finite and beyond 2^60. */
	for (j = 0; j < sizeof(regs); j++)
		regs[j] = 65 - 4;
	assert_true(isinf(fs_hll_estimate(regs, 4)));
	regs[0] = 65 - 4 - 1;
	assert_true(isfinite(fs_hll_estimate(regs, 4)));
	assert_true(fs_hll_estimate(regs, 4) > ldexp(1.0, 60));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_derivation),
		cmocka_unit_test(test_cardinalities_p14),
		cmocka_unit_test(test_no_bias_across_range),
		cmocka_unit_test(test_other_precisions),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
