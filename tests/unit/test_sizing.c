// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_sizing.c - the sizing formulas against the published tables.
 *
 * Expected figures are the ones printed in the sketches text
 * (/work/shared/seeds/000_*.txt: Bloom, Count-Min, HyperLogLog and Bloom
 * over-capacity tables), each checked to the precision printed there: a
 * figure printed as 9.6 accepts [9.55, 9.65].  The inverse, the power-of-two
 * Count-Min size flowsketch uses, is checked against its definition, and
 * the blocklist's filter sizes against the blocked filter's rate computed
 * apart (ref_bloom.h): the least that meets 1 % for the keys they hold.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "hll_estimate.h"
#include "ref_bloom.h"
#include "sizing.h"
#include "flowsketch/bloom.h"
#include "flowsketch/params.h"

/* |value - printed| within half a unit of the printed figure's last digit. */
static void assert_printed_as(double value, double printed, int decimals)
{
	double half_ulp = 0.5 * pow(10, -decimals) * (1 + 1e-9);

	if (fabs(value - printed) > half_ulp)
		fail_msg("%.6f does not print as %.*f", value, decimals, printed);
}

static void test_bloom_table(void **state)
{
	static const struct {
		double p, bits_per_item;
		unsigned int k;
		double gb_per_billion;
	} rows[] = {
		{ 0.1, 4.8, 3, 0.6 },
		{ 0.01, 9.6, 7, 1.2 },
		{ 0.001, 14.4, 10, 1.8 },
		{ 0.0001, 19.2, 13, 2.4 },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double bpi = fs_bloom_bits_per_item(rows[i].p);
		double bits = fs_bloom_bits(1e9, rows[i].p);

		assert_printed_as(bpi, rows[i].bits_per_item, 1);
		assert_int_equal(fs_bloom_best_k(bpi), rows[i].k);
		assert_printed_as(bits / 8 / 1e9, rows[i].gb_per_billion, 1);
		/* m = -n ln p / (ln 2)^2 is n times the bits per item. */
		assert_true(fabs(bits - 1e9 * bpi) < 1e-6 * bits);
	}
	/* "Each 10 times fewer false positives costs 4.8 more bits per item" */
	assert_printed_as(fs_bloom_bits_per_item(0.01) -
			  fs_bloom_bits_per_item(0.1), 4.8, 1);
}

static void test_bloom_at_design_capacity(void **state)
{
	/* At the best k, a filter at capacity has half its bits set and
	 * the target false-positive rate (up to k being an integer). */
	double m = fs_bloom_bits(1e6, 0.01);
	unsigned int k = fs_bloom_best_k(m / 1e6);

	assert_printed_as(fs_bloom_fill(1e6, m, k), 0.5, 1);
	assert_printed_as(100 * fs_bloom_false_positive(1e6, m, k), 1.0, 1);
	/* The seed's worked example: 100,000 items at 1% is 958,506 bits. */
	assert_true(ceil(fs_bloom_bits(100000, 0.01)) == 958506);
	assert_int_equal(fs_bloom_best_k(fs_bloom_bits(100000, 0.01) / 100000), 7);
}

static void test_bloom_over_capacity_table(void **state)
{
	static const struct {
		double load, bits_set_pct, fp_pct;
		int fp_decimals;
	} rows[] = {
		{ 1, 52, 1.0, 1 },
		{ 1.25, 60, 2.8, 1 },
		{ 1.5, 67, 5.8, 1 },
		/* The table's 15.8 is 15.745 rounded twice: the text's own
		 * code prints "predicted 15.75%", the figure checked here. */
		{ 2, 77, 15.75, 2 },
		{ 3, 89, 44, 0 },
	};
	double n = 1e6, m = fs_bloom_bits(n, 0.01);
	unsigned int k = fs_bloom_best_k(m / n);
	size_t i;

	assert_int_equal(k, 7);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double items = rows[i].load * n;

		assert_printed_as(100 * fs_bloom_fill(items, m, k),
				  rows[i].bits_set_pct, 0);
		assert_printed_as(100 * fs_bloom_false_positive(items, m, k),
				  rows[i].fp_pct, rows[i].fp_decimals);
	}
}

static void test_cms_table(void **state)
{
	static const struct {
		double eps, width;
		__u32 depth;
		double kb_at_4_bytes;	/* printed in KB: 5.4, 54, 5400 (5.4 MB) */
		int kb_decimals;
		double overcount;
	} rows[] = {
		{ 0.01, 272, 5, 5.4, 1, 10e6 },
		{ 0.001, 2719, 5, 54, 0, 1e6 },
		{ 0.00001, 271829, 5, 5400, -2, 10000 },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double w = fs_cms_width_exact(rows[i].eps);
		__u32 d = fs_cms_depth_for(0.01);

		assert_true(w == rows[i].width);
		assert_int_equal(d, rows[i].depth);
		assert_printed_as(fs_cms_bytes(w, d, 4) / 1e3,
				  rows[i].kb_at_4_bytes, rows[i].kb_decimals);
		assert_true(fabs(fs_cms_overcount(rows[i].eps, 1e9) -
				 rows[i].overcount) < 1e-6);
	}
	/* The bound the width buys back: e / ceil(e / eps) <= eps. */
	assert_true(fs_cms_epsilon_of(272) <= 0.01);
	assert_true(fs_cms_delta_of(5) <= 0.01);
}

static void test_hll_table(void **state)
{
	static const struct {
		__u32 p;
		__u64 registers;
		double rse_pct, bytes_at_6_bits;
	} rows[] = {
		{ 10, 1024, 3.25, 768 },
		{ 12, 4096, 1.63, 3 * 1024 },
		{ 14, 16384, 0.81, 12 * 1024 },
		{ 16, 65536, 0.41, 48 * 1024 },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(fs_hll_registers(rows[i].p), rows[i].registers);
		assert_printed_as(100 * fs_hll_rse(rows[i].p), rows[i].rse_pct, 2);
		assert_true(fs_hll_bytes(rows[i].p, 6) == rows[i].bytes_at_6_bits);
	}
	/* Four times the registers halve the error. */
	assert_true(fabs(fs_hll_rse(12) * 2 - fs_hll_rse(10)) < 1e-12);
}

/* The definition fs_cms_size_for() must meet, checked independently. */
static void check_size_for(double eps, double delta)
{
	__u32 log2w = 0, depth = 0;
	double w_min = ceil(M_E / eps);

	assert_int_equal(fs_cms_size_for(eps, delta, &log2w, &depth), 0);
	assert_true((double)(1U << log2w) >= w_min);
	if (log2w > FS_CMS_MIN_LOG2W)
		assert_true((double)(1U << (log2w - 1)) < w_min);
	assert_int_equal(depth, (__u32)ceil(log(1 / delta)));
	/* The rounded-up width keeps the promise: e / w <= eps. */
	assert_true(M_E / (double)(1U << log2w) <= eps);
	assert_true(exp(-(double)depth) <= delta);
}

static void test_cms_size_for(void **state)
{
	__u32 log2w = 0, depth = 0;

	/* The table's rows: 272 -> 512, 2,719 -> 4,096, 271,829 -> 2^19. */
	assert_int_equal(fs_cms_size_for(0.01, 0.01, &log2w, &depth), 0);
	assert_int_equal(log2w, 9);
	assert_int_equal(depth, 5);
	assert_int_equal(fs_cms_size_for(0.001, 0.01, &log2w, &depth), 0);
	assert_int_equal(log2w, 12);
	assert_int_equal(fs_cms_size_for(0.00001, 0.01, &log2w, &depth), 0);
	assert_int_equal(log2w, 19);
	/* The daemon's defaults (params.h) come out of its default request. */
	assert_int_equal(fs_cms_size_for(0.001, 0.01, &log2w, &depth), 0);
	assert_int_equal(log2w, FS_DEFAULT_CMS_LOG2W);
	assert_int_equal(depth, FS_DEFAULT_CMS_DEPTH);

	check_size_for(0.5, 0.5);
	check_size_for(0.1, 0.05);
	check_size_for(0.003, 0.001);
	check_size_for(2e-6, 0.0004);
	/* A huge eps still gets the smallest width the datapath supports. */
	assert_int_equal(fs_cms_size_for(0.9, 0.9, &log2w, &depth), 0);
	assert_int_equal(log2w, FS_CMS_MIN_LOG2W);
	assert_int_equal(depth, 1);
}

static void test_cms_size_for_refuses(void **state)
{
	__u32 log2w = 77, depth = 77;

	assert_int_equal(fs_cms_size_for(0, 0.01, &log2w, &depth), -EINVAL);
	assert_int_equal(fs_cms_size_for(-0.1, 0.01, &log2w, &depth), -EINVAL);
	assert_int_equal(fs_cms_size_for(1, 0.01, &log2w, &depth), -EINVAL);
	assert_int_equal(fs_cms_size_for(0.01, 0, &log2w, &depth), -EINVAL);
	assert_int_equal(fs_cms_size_for(0.01, 1, &log2w, &depth), -EINVAL);
	assert_int_equal(fs_cms_size_for(NAN, 0.01, &log2w, &depth), -EINVAL);
	assert_int_equal(fs_cms_size_for(0.01, NAN, &log2w, &depth), -EINVAL);
	/* Wider than 2^FS_CMS_MAX_LOG2W columns, deeper than the max. */
	assert_int_equal(fs_cms_size_for(fs_cms_min_epsilon() / 2, 0.01,
					 &log2w, &depth), -EINVAL);
	assert_int_equal(fs_cms_size_for(0.01, fs_cms_min_delta() / 2,
					 &log2w, &depth), -EINVAL);
	/* Subnormal targets: e / eps and 1 / delta overflow to infinity,
	 * which must be refused, not converted to an integer. */
	assert_int_equal(fs_cms_size_for(4.9e-324, 0.01, &log2w, &depth), -EINVAL);
	assert_int_equal(fs_cms_size_for(0.01, 4.9e-324, &log2w, &depth), -EINVAL);
	/* Refused input leaves the outputs alone. */
	assert_int_equal(log2w, 77);
	assert_int_equal(depth, 77);
	/* Just inside both limits is accepted. */
	assert_int_equal(fs_cms_size_for(fs_cms_min_epsilon() * 1.001,
					 fs_cms_min_delta() * 1.001,
					 &log2w, &depth), 0);
	assert_int_equal(log2w, FS_CMS_MAX_LOG2W);
	assert_int_equal(depth, FS_CMS_MAX_DEPTH);
}

/* The best rate any k gives n keys in 2^log2 blocks, by ref_fpr(). */
static double ref_best(double n, unsigned int log2)
{
	double best = 2;
	unsigned int k;

	for (k = 1; k <= FS_BLOOM_MAX_K; k++)
		if (ref_fpr(n, ldexp(1, (int)log2), k) < best)
			best = ref_fpr(n, ldexp(1, (int)log2), k);
	return best;
}

/*
 * The maps hold --blocklist-max entries at their worst, 8 keys each, at
 * 1 % (and half the blocks could not); their bytes are two such filters
 * and the summary.  A rebuild sizes for twice its keys (at least 1024),
 * the least blocks meeting 1 %, up to the maps' size, and past it keeps
 * the maps' size.
 */
static void test_blocklist_sizes(void **state)
{
	static const unsigned int maxes[] = { 1, 1000, 100000, 1000000 };
	static const double keys[] = { 0, 10, 5000, 123456, 800000 };
	unsigned int i, log2, k;
	double cap, rate;

	for (i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
		double worst = 8.0 * maxes[i] > 1024 ? 8.0 * maxes[i] : 1024;

		log2 = fs_blocklist_max_log2(maxes[i]);
		assert_true(ref_best(worst, log2) <= 0.01 * (1 + 1e-9));
		if (log2)
			assert_true(ref_best(worst, log2 - 1) > 0.01);
		assert_true(fs_blocklist_map_bytes(maxes[i]) ==
			    2 * ldexp(64, (int)log2) + 65536 + 4 * 65536);
	}
	assert_int_equal(fs_blocklist_max_log2(100000), 14);	/* bloom.h's 1 MiB */
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		double want = 2 * keys[i] > 1024 ? 2 * keys[i] : 1024;

		rate = fs_blocklist_filter(keys[i], fs_blocklist_max_log2(100000),
					   &log2, &k, &cap);
		assert_true(cap == want);
		assert_true(rate <= 0.01);
		assert_true(log2 <= 14);
		assert_true(keys[i] ? fabs(rate - ref_fpr(keys[i], ldexp(1, (int)log2), k)) <= 1e-9 :
				      rate == 0);	/* ref_fpr() wants n > 0 */
		if (log2 < 14) {
			assert_true(ref_fpr(want, ldexp(1, (int)log2), k) <= 0.01 * (1 + 1e-9));
			if (log2)
				assert_true(ref_best(want, log2 - 1) > 0.01);
		}
	}
	/* Past the maps' worst case: their size, and the rate it gives. */
	rate = fs_blocklist_filter(2e6, 14, &log2, &k, &cap);
	assert_int_equal(log2, 14);
	assert_true(rate > 0.01);
	assert_true(fabs(rate - ref_best(2e6, 14)) <= 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bloom_table),
		cmocka_unit_test(test_blocklist_sizes),
		cmocka_unit_test(test_bloom_at_design_capacity),
		cmocka_unit_test(test_bloom_over_capacity_table),
		cmocka_unit_test(test_cms_table),
		cmocka_unit_test(test_hll_table),
		cmocka_unit_test(test_cms_size_for),
		cmocka_unit_test(test_cms_size_for_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
