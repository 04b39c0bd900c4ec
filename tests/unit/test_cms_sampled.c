// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_cms_sampled - the sampled Count-Min option (cms_sampled.h, a bench
 * build only) against its derived bound, in user space through the shared
 * header: the rows a packet gets (fs_cms_nitro_rows()), their increment
 * (fs_cms_nitro_scale()) and the bound (fs_nitro_fail_*()).
 *
 * Oracles, none from the code under test: exact per-flow counts kept by
 * the test; the sampling's own law (each (packet, row) slot Bernoulli(p),
 * independent), checked by counting; the sketch's cells, kept here as
 * plain arrays and read as min and median of rows by the test.  Inputs
 * come from tests/unit/rng.h (a seed reproduces a run); the flows follow
 * a Zipf law of exponent 1.1, as fs-livebench's traffic.
 *
 * Probabilistic checks are sized so that a correct implementation fails
 * them with a stated small probability (each says how); the seeds are
 * fixed, so a run is deterministic.  Mutant (`make mutants`):
 * FS_MUTANT_NITRO_NOSCALE, the 1/p scaling forgotten, must fail.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "flowsketch/cms.h"
#include "flowsketch/cms_sampled.h"
#include "rng.h"

#define E_CONST 2.718281828459045

/* ------------------------------------------------------------ sampling */

/*
 * The slots' law, for k = 1, 2 and 3 at d = 5: per row, the sampled
 * fraction is p (within 6 standard deviations of n p: a correct draw is
 * outside with probability < 1e-8 per row); the number of rows a packet
 * gets follows Binomial(d, p) (each count within 6 sd of its mean); and
 * consecutive slots across packets are independent (last row of a packet
 * and first of the next, both sampled, about n p^2).
 */
static void check_law(__u32 k, __u32 d, __u64 seed)
{
	const __u32 n = 2000000;
	struct fs_cms_nitro s = { .rng = seed };
	double p = 1.0 / (1U << k), mean, sd;
	__u64 rows[FS_CMS_MAX_DEPTH] = { 0 }, hist[FS_CMS_MAX_DEPTH + 1] = { 0 };
	__u64 pairs = 0;
	__u32 i, r, prev = 0;

	for (i = 0; i < n; i++) {
		__u32 m = fs_cms_nitro_rows(&s, d, k), c = 0;

		assert_true(m < (1U << d));
		for (r = 0; r < d; r++)
			if (m & (1U << r)) {
				rows[r]++;
				c++;
			}
		hist[c]++;
		if ((prev & (1U << (d - 1))) && (m & 1))
			pairs++;
		prev = m;
	}
	mean = n * p;
	sd = sqrt(n * p * (1 - p));
	for (r = 0; r < d; r++) {
		if (fabs((double)rows[r] - mean) > 6 * sd)
			fail_msg("k %u row %u: %llu sampled of %u, expected %.0f +- %.0f",
				 k, r, (unsigned long long)rows[r], n, mean, 6 * sd);
	}
	for (r = 0; r <= d; r++) {
		double b = 1, q;
		__u32 t;

		for (t = 0; t < r; t++)
			b = b * (d - t) / (t + 1) * p;
		for (t = r; t < d; t++)
			b *= 1 - p;
		q = n * b;
		if (fabs((double)hist[r] - q) > 6 * sqrt(q * (1 - b)) + 1)
			fail_msg("k %u: %llu packets with %u rows, Binomial gives %.0f",
				 k, (unsigned long long)hist[r], r, q);
	}
	mean = n * p * p;
	if (fabs((double)pairs - mean) > 6 * sqrt(mean) + 1)
		fail_msg("k %u: %llu packet boundaries with both slots sampled, expected %.0f",
			 k, (unsigned long long)pairs, mean);
}

static void test_sampling_law(void **state)
{
	(void)state;
	check_law(1, 5, 0x1234567ULL);
	check_law(2, 5, 0x2345678ULL);
	check_law(3, 5, 0x3456789ULL);
	check_law(2, 1, 0x456789aULL);
	check_law(3, 8, 0x56789abULL);
}

/* The all-zero state (a CPU's first packet in the datapath) draws from
 * slot 0 on: over many fresh starts, row 0 of the first packet is sampled
 * a fraction p of the time, not never. */
static void test_fresh_state(void **state)
{
	const __u32 n = 200000;
	__u64 hits = 0, seed = 99;
	double p = 0.25, sd = sqrt(n * p * (1 - p));
	__u32 i;

	(void)state;
	for (i = 0; i < n; i++) {
		struct fs_cms_nitro s = { .rng = rng_next(&seed) | 1 };

		hits += fs_cms_nitro_rows(&s, 5, 2) & 1;
	}
	if (fabs((double)hits - n * p) > 6 * sd)
		fail_msg("row 0 of a fresh state sampled %llu of %u times, expected %.0f",
			 (unsigned long long)hits, n, n * p);
}

/* The one-row variant's division-free column is cms.h's, for every width
 * and row the parameters allow. */
static void test_one_row_column(void **state)
{
	__u64 seed = 5;
	__u32 log2w, row, i;

	(void)state;
	for (log2w = FS_CMS_MIN_LOG2W; log2w <= FS_CMS_MAX_LOG2W; log2w++)
		for (row = 0; row < FS_CMS_MAX_DEPTH; row++)
			for (i = 0; i < 1000; i++) {
				__u64 h = rng_next(&seed);

				if (fs_cms_nitro_column(h, log2w, row) !=
				    fs_cms_column(h, log2w, row))
					fail_msg("log2w %u row %u: column differs", log2w, row);
			}
}

/* ------------------------------------------------------------ the sketch */

struct stream {
	__u32 flows, n, w, d, k, log2w;
	int one;		/* one row a packet (q = d), else p = 2^-k */
	__u64 *exact;		/* per flow */
	__u64 *cells;		/* d x w */
	__u64 *hash;		/* per flow */
	__u64 sampled[FS_CMS_MAX_DEPTH];
};

/* A flow's hash, the test's own (splitmix64 of its number and a seed):
 * columns then come from cms.h's iterator, as the datapath takes them. */
static __u64 flow_hash(__u32 f, __u64 seed)
{
	__u64 z = seed + (f + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* n packets of a Zipf(1.1) mix of `flows` flows through the sampled
 * update of a d x 2^log2w sketch with p = 2^-k, or with one row a packet
 * (one). */
static void run_stream(struct stream *st, __u32 flows, __u32 n, __u32 log2w,
		       __u32 d, __u32 k, int one, __u64 seed)
{
	struct fs_cms_nitro ns = { .rng = seed ^ 0xabcdefULL };
	double *cdf = malloc(flows * sizeof(*cdf)), sum = 0;
	__u64 in = seed;
	__u32 i, r;

	memset(st, 0, sizeof(*st));
	st->flows = flows;
	st->n = n;
	st->log2w = log2w;
	st->w = 1U << log2w;
	st->d = d;
	st->k = k;
	st->one = one;
	st->exact = calloc(flows, sizeof(*st->exact));
	st->hash = malloc(flows * sizeof(*st->hash));
	st->cells = calloc((size_t)d << log2w, sizeof(*st->cells));
	assert_non_null(cdf);
	assert_non_null(st->exact);
	assert_non_null(st->hash);
	assert_non_null(st->cells);
	for (i = 0; i < flows; i++) {
		sum += pow(i + 1.0, -1.1);
		cdf[i] = sum;
		st->hash[i] = flow_hash(i, seed);
	}
	for (i = 0; i < n; i++) {
		double u = (double)(rng_next(&in) >> 11) * 0x1.0p-53 * sum;
		__u32 lo = 0, hi = flows - 1, m;
		struct fs_cms_columns it;

		while (lo < hi) {
			__u32 mid = lo + (hi - lo) / 2;

			if (cdf[mid] > u)
				hi = mid;
			else
				lo = mid + 1;
		}
		st->exact[lo]++;
		m = one ? 1U << fs_cms_nitro_one_row(&ns, d) : fs_cms_nitro_rows(&ns, d, k);
		fs_cms_columns_init(&it, st->hash[lo], log2w);
		for (r = 0; r < d; r++) {
			__u32 col = fs_cms_next_column(&it);

			if (m & (1U << r)) {
				st->cells[((size_t)r << log2w) | col] +=
					one ? fs_cms_nitro_scale_d(1, d) : fs_cms_nitro_scale(1, k);
				st->sampled[r]++;
			}
		}
	}
	free(cdf);
}

static void stream_free(struct stream *st)
{
	free(st->exact);
	free(st->hash);
	free(st->cells);
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return (x > y) - (x < y);
}

/* Flow f's row cells, sorted. */
static void flow_cells(const struct stream *st, __u32 f, __u64 *v)
{
	struct fs_cms_columns it;
	__u32 r;

	fs_cms_columns_init(&it, st->hash[f], st->log2w);
	for (r = 0; r < st->d; r++)
		v[r] = st->cells[((size_t)r << st->log2w) | fs_cms_next_column(&it)];
	qsort(v, st->d, sizeof(*v), cmp_u64);
}

/*
 * Unbiased per row (point 1 of the header): a row's cells add up to q
 * times its sampled slots, whose expectation is N with variance (q - 1) N;
 * a correct update is within 6 sd with probability > 1 - 1e-8 per row.
 */
static void check_unbiased(int one)
{
	struct stream st;
	__u32 r, c;

	run_stream(&st, 20000, 2000000, 12, 5, 2, one, 7);
	for (r = 0; r < st.d; r++) {
		__u64 s = 0;
		double q = one ? st.d : 1U << st.k, sd = sqrt((q - 1) * st.n);

		for (c = 0; c < st.w; c++)
			s += st.cells[((size_t)r << st.log2w) | c];
		if (fabs((double)s - st.n) > 6 * sd)
			fail_msg("%s: row %u adds up to %llu for %u packets (+- %.0f allowed)",
				 one ? "one row" : "p = 1/4", r, (unsigned long long)s, st.n, 6 * sd);
	}
	stream_free(&st);
}

static void test_rows_unbiased(void **state)
{
	(void)state;
	check_unbiased(0);
	check_unbiased(1);
}

/* One row a packet: always one row below depth, each with probability
 * 1/d (6 sd). */
static void test_one_row_law(void **state)
{
	const __u32 n = 2000000;
	__u32 d, i, r;

	(void)state;
	for (d = 1; d <= FS_CMS_MAX_DEPTH; d++) {
		struct fs_cms_nitro s = { .rng = 0x9876 + d };
		__u64 rows[FS_CMS_MAX_DEPTH] = { 0 };
		double mean = (double)n / d, sd = sqrt(n * (1.0 / d) * (1 - 1.0 / d));

		for (i = 0; i < n; i++) {
			r = fs_cms_nitro_one_row(&s, d);
			assert_true(r < d);
			rows[r]++;
		}
		for (r = 0; r < d; r++)
			if (fabs((double)rows[r] - mean) > 6 * sd + 1)
				fail_msg("d %u: row %u drawn %llu of %u times, expected %.0f",
					 d, r, (unsigned long long)rows[r], n, mean);
	}
}

/*
 * The derived bound (points 3 and 4), min and median of rows, on 4e6
 * packets of 20,000 Zipf flows at the default sizes (w = 4096, d = 5) and
 * p = 1/4.  For each flow the header's bound b(phi) says
 * P(|estimate - f| > eps N) <= b; summed over a set of flows it bounds
 * the expected number E of flows outside.  Each check allows fewer than
 * a = ceil(E / 0.05) flows outside (Markov: a correct sketch has a or
 * more with probability at most E / a <= 5 %):
 *   - min of rows, eps = 4e / w, all flows;
 *   - min of rows, eps = 4e / w, the 256 heaviest, where a missing 1/p
 *     scaling puts dozens outside;
 *   - median of rows, eps = 16e / w (where its bound is useful), the 256
 *     heaviest.
 * And two-sided: some of the 16 heaviest flows' min is below its truth
 * (the unsampled sketch never is).
 */
/* Flows outside allowed for an expected E: ceil(E / 0.05), at least 1. */
static double allowed(double e)
{
	double a = ceil(e / 0.05);

	return a < 1 ? 1 : a;
}

static void check_bound(__u32 k, int one, __u64 seed)
{
	struct stream st;
	__u32 *order, i, out_all = 0, out_top = 0, out_med = 0, below = 0;
	double e_all = 0, e_top = 0, e_med = 0, w, q, eps, eps_med, n;

	run_stream(&st, 20000, 4000000, 12, 5, k, one, seed);
	w = st.w;
	q = one ? st.d : 1U << k;
	n = st.n;
	eps = 4 * E_CONST / w;
	eps_med = 16 * E_CONST / w;
	order = malloc(st.flows * sizeof(*order));
	assert_non_null(order);
	/* Zipf ranks: flow i is the (i + 1)th heaviest in law; order by the
	 * exact counts anyway. */
	for (i = 0; i < st.flows; i++)
		order[i] = i;
	for (i = 1; i < st.flows; i++) {	/* insertion sort, nearly sorted */
		__u32 j = i, t = order[i];

		while (j > 0 && st.exact[order[j - 1]] < st.exact[t]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = t;
	}
	for (i = 0; i < st.flows; i++) {
		__u32 f = order[i];
		__u64 v[FS_CMS_MAX_DEPTH];
		double phi = st.exact[f] / n, truth = (double)st.exact[f];
		double b = fs_nitro_fail_min(st.d, w, q, eps, phi, n);
		int outside;

		flow_cells(&st, f, v);
		outside = fabs((double)v[0] - truth) > eps * n;
		e_all += b;
		out_all += outside;
		if (i < 256) {
			double bm = fs_nitro_fail_median(st.d, w, q, eps_med, phi, n);

			e_top += b;
			out_top += outside;
			e_med += bm;
			out_med += fabs((double)v[(st.d + 1) / 2 - 1] - truth) > eps_med * n;
		}
		if (i < 16)
			below += (double)v[0] < truth;
	}
	printf("# %s%u: min, eps 4e/w: %u of %u flows outside (E %.2f, allowed < %.0f); "
	       "256 heaviest: %u (E %.3f, < %.0f); median, eps 16e/w, 256 heaviest: %u (E %.3f, < %.0f); "
	       "%u of the 16 heaviest below truth\n",
	       one ? "one row, q = " : "k = ", one ? st.d : k, out_all, st.flows, e_all,
	       allowed(e_all), out_top, e_top, allowed(e_top),
	       out_med, e_med, allowed(e_med), below);
	if (out_all >= allowed(e_all))
		fail_msg("k %u: %u flows' min outside eps N, bound allows < %.0f", k, out_all,
			 allowed(e_all));
	if (out_top >= allowed(e_top))
		fail_msg("k %u: %u of the 256 heaviest flows' min outside eps N, bound allows < %.0f",
			 k, out_top, allowed(e_top));
	if (!one && out_med >= allowed(e_med))	/* header: binomial tail needs independent rows */
		fail_msg("k %u: %u of the 256 heaviest flows' median outside 16e/w N, bound allows < %.0f",
			 k, out_med, allowed(e_med));
	if (!below)
		fail_msg("k %u: none of the 16 heaviest below its truth: not two-sided?", k);
	free(order);
	stream_free(&st);
}

static void test_bound_p_quarter(void **state)
{
	(void)state;
	check_bound(2, 0, 11);
}

static void test_bound_p_eighth(void **state)
{
	(void)state;
	check_bound(3, 0, 12);
}

static void test_bound_one_row(void **state)
{
	(void)state;
	check_bound(0, 1, 13);
}

/* The bound's arithmetic at points the header states: unsampled (q = 1)
 * it is Count-Min's (1/e)^d at eps = 2e/w and has no lower term; it falls
 * with N; the convergence N is where it crosses delta. */
static void test_bound_arithmetic(void **state)
{
	double w = 4096, eps = 2 * E_CONST / w, n0;

	(void)state;
	assert_true(fabs(fs_nitro_fail_min(5, w, 1, eps, 1, 1e3) - exp(-5)) < 1e-9);
	assert_true(fs_nitro_row_lo(w, 1, eps, 1, 1e3) == 0);
	assert_true(fs_nitro_fail_min(5, w, 4, eps, 1 / w, 1e5) >
		    fs_nitro_fail_min(5, w, 4, eps, 1 / w, 1e6));
	n0 = fs_nitro_converge(5, w, 4, eps, 1 / w, 0.01);
	assert_true(n0 > 0);
	assert_true(fs_nitro_fail_min(5, w, 4, eps, 1 / w, n0) <= 0.01);
	assert_true(fs_nitro_fail_min(5, w, 4, eps, 1 / w, n0 / 1.05) > 0.01);
	/* No N helps when the collision term alone exceeds delta. */
	assert_true(fs_nitro_converge(5, w, 4, eps, 1 / w, 0.001) == 0);
	/* Binomial tail: P(Bin(5, 0.5) >= 3) = 1/2. */
	assert_true(fabs(fs_nitro_binom_tail(5, 0.5, 3) - 0.5) < 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sampling_law),
		cmocka_unit_test(test_fresh_state),
		cmocka_unit_test(test_rows_unbiased),
		cmocka_unit_test(test_bound_p_quarter),
		cmocka_unit_test(test_bound_p_eighth),
		cmocka_unit_test(test_one_row_law),
		cmocka_unit_test(test_one_row_column),
		cmocka_unit_test(test_bound_one_row),
		cmocka_unit_test(test_bound_arithmetic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
