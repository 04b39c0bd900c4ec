// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_sample.c - the keyed sample of flows (include/flowsketch/sample.h):
 * which flows it takes, that it counts them exactly, what a full table
 * keeps, its merge, and the comparison's arithmetic.
 *
 * The oracles are the traffic and the parameters, not the header's code:
 *   - the sample's size over many random flows lies within its binomial
 *     error, mean F / R and variance F (1 / R)(1 - 1 / R), written out
 *     here, and the flows in it are those whose sample value has its top
 *     k bits zero (the rate's definition, restated here);
 *   - every entry's packets and bytes equal what the test sent for that
 *     flow (the test keeps its own totals), and every bucket holds
 *     exactly the flows sent to it whose value is below its limit;
 *   - the flows in the sample are spread over Count-Min columns and
 *     HyperLogLog registers as all flows are (a chi-square against the
 *     uniform, its bound df + 6 sqrt(2 df) computed here): a sample on
 *     bits the sketches use would not be;
 *   - full buckets keep the flows below their limits, and the
 *     Horvitz-Thompson estimates (each kept flow weighted by 2^64 / L_b,
 *     worked out here) of all flows and of the heavy ones average to what
 *     was sent over many secrets (within 4 standard errors of the mean,
 *     measured), however early the heavy flows came;
 *   - merged copies equal one copy fed both streams, bucket for bucket,
 *     and the test's totals; a merge worked out by hand;
 *   - the arithmetic equals values worked out by hand, and z-scores of a
 *     real HyperLogLog (hll.h's registers, the library's estimator)
 *     against the sample fall within 2 standard errors as often as a
 *     normal does (95.45 %, less 3 binomial errors), their mean square
 *     near 1, and a HyperLogLog 10 % high falls below that share.
 * Mutants (the Makefile's MUTANTS): sample_raw takes h_flow's own top
 * bits (the columns' chi-square), sample_full_drop drops a full bucket's
 * newcomer and keeps the limit (the kept flows), sample_merge_limit
 * ignores the source's lower limit (the merge by hand), sample_z_no_hll
 * leaves HyperLogLog's variance out of z (the hand values, mean z^2),
 * sample_export_limit exports a bucket's limit uncut (the exported
 * merge's totals and limits).
 *   - exported copies (values and limits cut to their leading bit)
 *     merged hold the flows of both streams below each merged limit, a
 *     power of two, with the totals of both, as the test's truth says.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "flowsketch/sample.h"
#include "flowsketch/cms.h"
#include "flowsketch/hll.h"
#include "hll_estimate.h"
#include "rng.h"

/* A slot of buckets of the test's own. */
struct table {
	struct fs_sample_params p;
	struct fs_sample_bucket *b;
};

/* What the test sent to each flow. */
struct truth {
	__u64 packets, bytes;
	__u64 s;
	int sent;
};

/* Zeroed buckets: a fresh window's. */
static void table_new(struct table *t, __u32 shift, __u32 log2_buckets)
{
	fs_sample_params_init(&t->p, shift, log2_buckets);
	assert_int_equal(fs_sample_params_check(&t->p), 0);
	t->b = calloc(fs_sample_buckets_per_slot(&t->p), sizeof(*t->b));
	assert_non_null(t->b);
}

static __u32 nbuckets(const struct table *t)
{
	return 1U << t->p.log2_buckets;
}

/* Flow value s's bucket and its limit. */
static struct fs_sample_bucket *bucket_of(const struct table *t, __u64 s)
{
	return &t->b[fs_sample_bucket_index(s, t->p.log2_buckets)];
}

static __u64 limit_of(const struct table *t, __u64 s)
{
	return fs_sample_limit(bucket_of(t, s), t->p.shift);
}

static __u64 full_of(const struct table *t)
{
	__u64 full = 0;
	__u32 i;

	for (i = 0; i < nbuckets(t); i++)
		full += t->b[i].head.full;
	return full;
}

static void merge_into(struct table *dst, const struct table *src)
{
	__u32 i;

	assert_int_equal(dst->p.log2_buckets, src->p.log2_buckets);
	for (i = 0; i < nbuckets(dst); i++)
		fs_sample_bucket_merge(&dst->b[i], &src->b[i], dst->p.shift);
}

static int feed(struct table *t, const struct fs_flow_key *k, __u64 s,
		__u64 packets, __u64 bytes)
{
	return fs_sample_add(bucket_of(t, s), t->p.shift, k, s, packets, bytes);
}

/* Flow id of trial `trial`: the id in the source's low 24 bits. */
static void key_of(struct fs_flow_key *k, __u32 id, __u32 trial)
{
	memset(k, 0, sizeof(*k));
	k->family = FS_FAMILY_IPV4;
	k->proto = 6;
	k->sport = (__u16)(1024 + id % 50000);
	k->dport = (__u16)(443 + trial);
	k->src[0] = 10;
	k->src[1] = (__u8)(id >> 16);
	k->src[2] = (__u8)(id >> 8);
	k->src[3] = (__u8)id;
	k->dst[0] = 192;
	k->dst[1] = 168;
	k->dst[2] = (__u8)(trial >> 8);
	k->dst[3] = (__u8)trial;
}

static __u32 id_of(const struct fs_flow_key *k)
{
	return (__u32)k->src[1] << 16 | (__u32)k->src[2] << 8 | k->src[3];
}

static void hash_key(struct fs_hash_key *hk, __u64 seed)
{
	struct fs_hash_secret s = { seed, seed * 0x9e3779b97f4a7c15ULL + 1 };

	fs_hash_key_derive(&s, hk);
}

static __u64 h_of(const struct fs_hash_key *hk, __u32 id, __u32 trial)
{
	struct fs_flow_key k;

	key_of(&k, id, trial);
	return fs_flow_hash(&k, hk);
}

/* One packet of flow id, counted in the test's truth and fed. */
static void send(struct table *t, struct truth *tr, const struct fs_hash_key *hk,
		 __u32 id, __u32 trial, __u64 packets, __u64 bytes)
{
	struct fs_flow_key k;

	key_of(&k, id, trial);
	tr[id].s = fs_sample_value(fs_flow_hash(&k, hk));
	tr[id].packets += packets;
	tr[id].bytes += bytes;
	tr[id].sent = 1;
	feed(t, &k, tr[id].s, packets, bytes);
}

/*
 * Every bucket holds exactly the flows sent to it with s below its limit,
 * each with the totals sent; returns their number.
 */
static __u64 check_kept(const struct table *t, const struct truth *tr, __u32 nflows)
{
	__u64 live = 0, want = 0, counted = 0;
	__u32 i, j;

	for (i = 0; i < nbuckets(t); i++) {
		const struct fs_sample_bucket *b = &t->b[i];
		__u64 limit = fs_sample_limit(b, t->p.shift);

		for (j = 0; j < FS_SAMPLE_WAYS; j++) {
			const struct fs_sample_entry *e = &b->e[j];
			__u32 id;

			if (!e->key.family || e->s >= limit)
				continue;
			id = id_of(&e->key);
			assert_true(id < nflows);
			assert_true(tr[id].sent);
			assert_int_equal(e->s, tr[id].s);
			assert_int_equal(fs_sample_bucket_index(e->s, t->p.log2_buckets), i);
			assert_int_equal(e->packets, tr[id].packets);
			assert_int_equal(e->bytes, tr[id].bytes);
			live++;
		}
		counted += fs_sample_bucket_live(b, t->p.shift);
	}
	for (i = 0; i < nflows; i++)
		want += tr[i].sent && tr[i].s < limit_of(t, tr[i].s);
	assert_int_equal(live, want);
	assert_int_equal(live, counted);
	return live;
}

/* The rate: 1 in R of many flows, those whose value's top k bits are 0. */
static void test_rate_binomial(void **state)
{
	static const __u32 shifts[] = { 0, 1, 4, 10, 14 };
	struct fs_hash_key hk;
	__u32 j, i;

	(void)state;
	hash_key(&hk, 1);
	for (j = 0; j < FS_ARRAY_SIZE(shifts); j++) {
		__u32 k = shifts[j];
		double R = ldexp(1, (int)k);
		__u32 nflows = k >= 10 ? 1U << 20 : 1000U << k;
		double mean = nflows / R, sd = sqrt(nflows / R * (1 - 1 / R));
		struct truth *tr = calloc(nflows, sizeof(*tr));
		__u64 live, top_zero = 0;
		struct table t;

		assert_non_null(tr);
		table_new(&t, k, 11);
		for (i = 0; i < nflows; i++) {
			send(&t, tr, &hk, i, 0, 1, 100);
			top_zero += k ? !(tr[i].s >> (64 - k)) : tr[i].s != ~0ULL;
		}
		assert_int_equal(full_of(&t), 0);
		live = check_kept(&t, tr, nflows);
		assert_int_equal(live, top_zero);
		print_message("R = %.0f: %llu of %u flows, expected %.1f +- %.1f\n", R,
			      (unsigned long long)live, nflows, mean, sd);
		assert_true(fabs((double)live - mean) <= 5 * sd + 1);
		free(tr);
		free(t.b);
	}
}

/* Chi-square of counts in n groups against the uniform. */
static double chi2(const __u32 *count, __u32 n, __u32 total)
{
	double e = (double)total / n, c = 0;
	__u32 i;

	for (i = 0; i < n; i++)
		c += (count[i] - e) * (count[i] - e) / e;
	return c;
}

/*
 * The sampled flows' Count-Min columns (d = 5, w = 4096: bits 0..59 of
 * h_flow) and HyperLogLog registers (p = 14) are uniform: 64 groups by a
 * column's top 6 bits, a register's top 6 bits.
 */
static void test_sampled_uniform(void **state)
{
	enum { GROUPS = 64, FIELDS = 6, NFLOWS = 1 << 22, SHIFT = 10 };
	static __u32 count[FIELDS][GROUPS];
	double df = GROUPS - 1, bound = df + 6 * sqrt(2 * df);
	struct fs_hash_key hk;
	__u32 i, f, total = 0;

	(void)state;
	hash_key(&hk, 2);
	for (i = 0; i < NFLOWS; i++) {
		__u64 h = h_of(&hk, i, 1);

		if (!fs_sample_maybe(fs_sample_value(h), SHIFT))
			continue;
		total++;
		for (f = 0; f < 5; f++)
			count[f][fs_cms_column(h, 12, f) >> 6]++;
		count[5][fs_hll_index(h, 14) >> 8]++;
	}
	print_message("%u sampled flows of %u\n", total, NFLOWS);
	assert_true(total > 3000);
	for (f = 0; f < FIELDS; f++) {
		double c = chi2(count[f], GROUPS, total);

		print_message("field %u: chi-square %.1f (bound %.1f)\n", f, c, bound);
		assert_true(c <= bound);
	}
}

/*
 * Exact counts: 100,000 flows at R = 16, a packet stream in random order
 * (each flow 1 to 8 packets, one in a hundred 1,000; some updates of
 * several packets, some of bytes only, as the datapath makes).
 */
static void test_exact_counts(void **state)
{
	enum { NFLOWS = 100000 };
	struct truth *tr = calloc(NFLOWS, sizeof(*tr));
	__u32 *left = calloc(NFLOWS, sizeof(*left)), *ids = calloc(NFLOWS, sizeof(*ids));
	__u64 rng = 0x5eed, live, n = 0;
	double mean = NFLOWS / 16.0, sd = sqrt(NFLOWS / 16.0 * 15 / 16);
	struct fs_hash_key hk;
	struct table t;
	__u32 i, alive = NFLOWS;

	(void)state;
	assert_non_null(tr);
	assert_non_null(left);
	assert_non_null(ids);
	hash_key(&hk, 3);
	table_new(&t, 4, 13);
	for (i = 0; i < NFLOWS; i++) {
		left[i] = i % 100 ? 1 + (__u32)(rng_next(&rng) % 8) : 1000;
		ids[i] = i;
	}
	/* Flows with packets left in ids[0, alive). */
	while (alive) {
		__u32 at = (__u32)(rng_next(&rng) % alive), id = ids[at];
		__u64 r = rng_next(&rng), packets = 1;

		if (r % 13 == 0)
			packets = r % 3 == 0 ? 0 : 1 + (r >> 8) % left[id];
		send(&t, tr, &hk, id, 2, packets, 40 + (r >> 16) % 1460);
		left[id] -= (__u32)packets;
		if (!left[id])
			ids[at] = ids[--alive];
		n++;
	}
	live = check_kept(&t, tr, NFLOWS);
	print_message("%llu updates, %llu flows sampled (%.0f +- %.0f), %llu full\n",
		      (unsigned long long)n, (unsigned long long)live, mean, sd,
		      (unsigned long long)full_of(&t));
	assert_int_equal(full_of(&t), 0);
	assert_true(fabs((double)live - mean) <= 5 * sd);
	free(tr);
	free(left);
	free(ids);
	free(t.b);
}

/*
 * One trial of full buckets: nflows flows of trial `trial`, R = 1, into 8
 * buckets of 7; the first `heavy` flows send 20 packets each, round
 * robin, before any other flow's one.  est[0], est[1]: the
 * Horvitz-Thompson estimates of all flows and of the heavy ones, each
 * kept flow weighted by 2^64 / L_b, worked out here.
 */
static void full_trial(__u32 trial, __u32 nflows, __u32 heavy, double est[2])
{
	struct truth *tr = calloc(nflows, sizeof(*tr));
	struct fs_sample_sum sum;
	struct fs_hash_key hk;
	struct table t;
	__u32 i, r;

	assert_non_null(tr);
	hash_key(&hk, 1000 + trial);
	table_new(&t, 0, 3);
	for (r = 0; r < 20; r++)
		for (i = 0; i < heavy; i++)
			send(&t, tr, &hk, i, trial, 1, 1500);
	for (i = heavy; i < nflows; i++)
		send(&t, tr, &hk, i, trial, 1, 64);
	assert_true(full_of(&t) > 0);
	assert_true(check_kept(&t, tr, nflows) <= 8 * FS_SAMPLE_WAYS);
	est[0] = est[1] = 0;
	for (i = 0; i < nflows; i++) {
		__u64 limit = limit_of(&t, tr[i].s);
		double w = 18446744073709551616.0 / (double)limit;

		if (tr[i].s >= limit)
			continue;
		est[0] += w;
		if (i < heavy)
			est[1] += w;
	}
	fs_sample_summarize(t.b, nbuckets(&t), 0, &sum);
	assert_true(fabs(sum.n_hat - est[0]) <= 1e-9 * est[0]);
	assert_int_equal(sum.full, full_of(&t));
	free(tr);
	free(t.b);
}

/*
 * Full buckets keep the flows below their limits, whatever came first:
 * over 400 secrets, 1,000 flows of which the 100 heavy ones came first,
 * the estimates of all flows and of the heavy ones average 1,000 and 100
 * (within 4 standard errors of the mean, measured).
 */
static void test_full_unbiased(void **state)
{
	enum { TRIALS = 400, NFLOWS = 1000, HEAVY = 100 };
	static const double want[2] = { NFLOWS, HEAVY };
	double sum[2] = { 0, 0 }, sum2[2] = { 0, 0 };
	__u32 j, k;

	(void)state;
	for (j = 0; j < TRIALS; j++) {
		double est[2];

		full_trial(j, NFLOWS, HEAVY, est);
		for (k = 0; k < 2; k++) {
			sum[k] += est[k];
			sum2[k] += est[k] * est[k];
		}
	}
	for (k = 0; k < 2; k++) {
		double mean = sum[k] / TRIALS;
		double sd_mean = sqrt((sum2[k] / TRIALS - mean * mean) / (TRIALS - 1));

		print_message("%s: estimate %.1f +- %.1f of %.0f\n", k ? "heavy" : "all",
			      mean, sd_mean, want[k]);
		assert_true(fabs(mean - want[k]) <= 4 * sd_mean);
	}
}

/* Two streams: flows [0, n/3) to a, [n/3, 2n/3) to a and b in turn,
 * [2n/3, n) to b; all of them to `both` too. */
static void two_streams(struct table *a, struct table *b, struct table *both,
			struct truth *ta, struct truth *tb, struct truth *tboth,
			__u32 nflows, __u32 trial)
{
	struct fs_hash_key hk;
	__u64 rng = 0xab + trial;
	__u32 i, n = nflows * 4;

	hash_key(&hk, 4 + trial);
	for (i = 0; i < n; i++) {
		__u32 id = (__u32)(rng_next(&rng) % nflows);
		__u64 bytes = 40 + rng_next(&rng) % 1460;
		int to_a = id < nflows * 2 / 3 && (id < nflows / 3 || (i & 1));

		if (to_a)
			send(a, ta, &hk, id, trial, 1, bytes);
		else if (id >= nflows / 3)
			send(b, tb, &hk, id, trial, 1, bytes);
		else
			continue;
		send(both, tboth, &hk, id, trial, 1, bytes);
	}
}

/* Merging per-CPU copies equals one copy fed both (no full bucket). */
static void test_merge_equals_one(void **state)
{
	enum { NFLOWS = 30000 };
	struct truth *ta = calloc(NFLOWS, sizeof(*ta)), *tb = calloc(NFLOWS, sizeof(*tb));
	struct truth *tboth = calloc(NFLOWS, sizeof(*tboth));
	struct table a, b, both, m;
	__u32 i, x, y;

	(void)state;
	table_new(&a, 4, 12);
	table_new(&b, 4, 12);
	table_new(&both, 4, 12);
	table_new(&m, 4, 12);
	two_streams(&a, &b, &both, ta, tb, tboth, NFLOWS, 0);
	assert_int_equal(full_of(&a) + full_of(&b) + full_of(&both), 0);
	merge_into(&m, &a);
	merge_into(&m, &b);
	assert_int_equal(full_of(&m), 0);
	/* Bucket for bucket: the same limit, flows and counts. */
	for (i = 0; i < nbuckets(&m); i++) {
		const struct fs_sample_bucket *mb = &m.b[i], *bb = &both.b[i];
		__u64 limit = fs_sample_limit(bb, 4);
		__u32 found = 0;

		assert_int_equal(fs_sample_limit(mb, 4), limit);
		assert_int_equal(fs_sample_bucket_live(mb, 4), fs_sample_bucket_live(bb, 4));
		for (x = 0; x < FS_SAMPLE_WAYS; x++)
			for (y = 0; y < FS_SAMPLE_WAYS; y++)
				if (fs_sample_live(&bb->e[x], limit) &&
				    fs_sample_live(&mb->e[y], limit) &&
				    fs_sample_key_equal(&mb->e[y].key, &bb->e[x].key)) {
					assert_int_equal(mb->e[y].packets, bb->e[x].packets);
					assert_int_equal(mb->e[y].bytes, bb->e[x].bytes);
					found++;
				}
		assert_int_equal(found, fs_sample_bucket_live(bb, 4));
	}
	print_message("merged: %llu flows\n",
		      (unsigned long long)check_kept(&m, tboth, NFLOWS));
	free(ta);
	free(tb);
	free(tboth);
	free(a.b);
	free(b.b);
	free(both.b);
	free(m.b);
}

/* Full buckets merged: the flows of both below each bucket's merged
 * limit, with the totals of both; the merge's own full events cut it
 * further. */
static void test_merge_full(void **state)
{
	enum { NFLOWS = 600 };
	struct truth *ta = calloc(NFLOWS, sizeof(*ta)), *tb = calloc(NFLOWS, sizeof(*tb));
	struct truth *tboth = calloc(NFLOWS, sizeof(*tboth));
	struct table a, b, both, m;
	__u64 live;
	__u32 i;

	(void)state;
	table_new(&a, 0, 3);
	table_new(&b, 0, 3);
	table_new(&both, 0, 3);
	table_new(&m, 0, 3);
	two_streams(&a, &b, &both, ta, tb, tboth, NFLOWS, 7);
	assert_true(full_of(&a) > 0 && full_of(&b) > 0);
	merge_into(&m, &a);
	merge_into(&m, &b);
	/* The merged copy against the test's totals of both streams:
	 * tboth holds every flow of either, with the sum of its packets. */
	live = check_kept(&m, tboth, NFLOWS);
	for (i = 0; i < nbuckets(&m); i++) {
		__u64 la = fs_sample_limit(&a.b[i], 0), lb = fs_sample_limit(&b.b[i], 0);

		assert_true(fs_sample_limit(&m.b[i], 0) <= (la < lb ? la : lb));
	}
	assert_true(full_of(&m) >= full_of(&a) + full_of(&b));
	print_message("%llu flows, %llu full\n", (unsigned long long)live,
		      (unsigned long long)full_of(&m));
	assert_true(live > 0);
	free(ta);
	free(tb);
	free(tboth);
	free(a.b);
	free(b.b);
	free(both.b);
	free(m.b);
}

/* An entry of flow id, value s, packets in way `way` of bucket b. */
static void put(struct fs_sample_bucket *b, __u32 way, __u32 id, __u64 s,
		__u64 packets)
{
	key_of(&b->e[way].key, id, 0);
	b->e[way].s = s;
	b->e[way].packets = packets;
	b->e[way].bytes = 100 * packets;
}

/* The packets of flow id in b if live, else 0. */
static __u64 packets_in(const struct fs_sample_bucket *b, __u32 shift, __u32 id)
{
	__u32 i;

	for (i = 0; i < FS_SAMPLE_WAYS; i++)
		if (fs_sample_live(&b->e[i], fs_sample_limit(b, shift)) &&
		    id_of(&b->e[i].key) == id)
			return b->e[i].packets;
	return 0;
}

/*
 * A merge by hand, R = 1, either way round: one copy holds Y (s 2^50, 3
 * packets) and X (2^30, 2), uncut; the other was cut to 2^40 (one full
 * event) and holds X (5) and W (2^35, 1).  Merged: limit 2^40, X with 7,
 * W with 1, Y gone (its packets on the cut copy were not counted), 1 full.
 */
static void test_merge_by_hand(void **state)
{
	static struct fs_sample_bucket a, b, m;
	int way;

	(void)state;
	for (way = 0; way < 2; way++) {
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		put(&a, 3, 1, 1ULL << 50, 3);
		put(&a, 5, 2, 1ULL << 30, 2);
		b.head.cut = 1ULL << 40;
		b.head.full = 1;
		put(&b, 0, 2, 1ULL << 30, 5);
		put(&b, 6, 3, 1ULL << 35, 1);
		m = way ? b : a;
		fs_sample_bucket_merge(&m, way ? &a : &b, 0);
		assert_int_equal(fs_sample_limit(&m, 0), 1ULL << 40);
		assert_int_equal(m.head.full, 1);
		assert_int_equal(fs_sample_bucket_live(&m, 0), 2);
		assert_int_equal(packets_in(&m, 0, 1), 0);
		assert_int_equal(packets_in(&m, 0, 2), 7);
		assert_int_equal(packets_in(&m, 0, 3), 1);
	}
}

/* A zeroed bucket is a fresh one; parameters out of range are refused. */
static void test_params_and_fresh(void **state)
{
	static struct fs_sample_bucket b;
	struct fs_sample_params p;

	(void)state;
	assert_int_equal(fs_sample_limit(&b, 10), 1ULL << 54);
	assert_int_equal(fs_sample_limit(&b, 0), ~0ULL);
	assert_int_equal(fs_sample_limit(&b, 20), 1ULL << 44);
	assert_true(fs_sample_maybe((1ULL << 54) - 1, 10));
	assert_false(fs_sample_maybe(1ULL << 54, 10));
	fs_sample_params_init(&p, 21, 9);
	assert_int_not_equal(fs_sample_params_check(&p), 0);
	fs_sample_params_init(&p, 10, 14);
	assert_int_not_equal(fs_sample_params_check(&p), 0);
	fs_sample_params_init(&p, 20, 13);
	assert_int_equal(fs_sample_params_check(&p), 0);
	fs_sample_params_init(&p, 0, 0);	/* params.h's "no sample" */
	assert_int_not_equal(fs_sample_params_check(&p), 0);
	fs_sample_params_init(&p, 0, 1);
	assert_int_equal(fs_sample_params_check(&p), 0);
	assert_int_equal(fs_sample_buckets_per_slot(&p), 2);
	assert_int_equal(fs_sample_bucket_index(~0ULL, 0), 0);
	assert_int_equal(fs_sample_bucket_index(0x12345ULL, 9), 0x145);
}

/* The comparison's figures, against values worked out by hand. */
static void test_arithmetic(void **state)
{
	static const __u64 exact[] = { 10, 20, 30, 40, 5 };
	static const __u64 est[] = { 10, 25, 29, 60, 5 };
	static const double z[] = { 0.5, -1.9, 2.1, -3, 0, 2.0 };
	struct fs_sample_cmp c;

	(void)state;
	/* Over 0, 5, under, 20, 0; eps N = 10. */
	fs_sample_compare(exact, est, 5, 10.0, &c);
	assert_int_equal(c.flows, 5);
	assert_int_equal(c.undercounts, 1);
	assert_int_equal(c.over_bound, 1);
	assert_true(c.overcount_max_eps == 2.0);
	assert_true(c.over_bound_share == 0.2);
	fs_sample_compare(exact, exact, 5, 0, &c);
	assert_true(c.overcount_max_eps == 0 && c.over_bound_share == 0);
	fs_sample_compare(exact, est, 2, 0, &c);
	assert_true(c.overcount_max_eps == FS_SAMPLE_FIGURE_MAX && c.over_bound_share == 0.5);

	/* L = 2^62: R 4; n = 1000 at R_mean 4: 1000 x 3 = 3000. */
	assert_true(fs_sample_rate(1ULL << 62) == 4.0);
	assert_true(isinf(fs_sample_rate(0)));
	assert_true(fs_sample_distinct_var(1000, 4.0) == 3000.0);
	/* p = 10: 1.04 / 32 of 1000 = 32.5. */
	assert_true(fabs(fs_sample_hll_sd(1000, 10) - 32.5) < 1e-12);
	/* (1000 - 960) / sqrt(32.5^2 + 3000) = 40 / sqrt(4056.25). */
	assert_true(fabs(fs_sample_hll_z(1000, 960, 4.0, 10) -
			 0.6280549375830876) < 1e-12);
	assert_true(fs_sample_hll_z(0, 0, 4.0, 10) == 0);
	assert_true(fs_sample_z_meaningful(120, 4.0));
	assert_false(fs_sample_z_meaningful(119, 4.0));
	/* 0.5, -1.9, 0 and 2.0 within 2; 2.1 and -3 not. */
	assert_true(fabs(fs_sample_share_within(z, 6, 2.0) - 4.0 / 6) < 1e-15);
}

/*
 * A sample's figures over 4 buckets at R = 4 (limit 2^62), set by hand:
 *   bucket 0  cut to 2^61 (R_b 8), 3 entries below, 1 at 2^61 + 5, 2 full
 *   bucket 1  no cut (R_b 4), 2 entries
 *   bucket 2  empty (R_b 4)
 *   bucket 3  cut to 2^60 (R_b 16), 1 entry, 3 full
 * flows 6; n_hat 3 x 8 + 2 x 4 + 16 = 48; var_hat 3 x 8 x 7 + 2 x 4 x 3
 * + 16 x 15 = 432; R_mean (8 + 4 + 4 + 16) / 4 = 8; full 5; cut 2.
 */
static void test_summary(void **state)
{
	static struct fs_sample_bucket b[4];
	struct fs_sample_sum sum;

	(void)state;
	b[0].head.cut = 1ULL << 61;
	b[0].head.full = 2;
	put(&b[0], 0, 1, 1, 1);
	put(&b[0], 2, 2, (1ULL << 61) - 1, 1);
	put(&b[0], 3, 3, (1ULL << 61) + 5, 1);
	put(&b[0], 6, 4, 12345, 1);
	put(&b[1], 1, 5, (1ULL << 62) - 1, 1);
	put(&b[1], 4, 6, 7, 1);
	b[3].head.cut = 1ULL << 60;
	b[3].head.full = 3;
	put(&b[3], 5, 7, 99, 1);
	fs_sample_summarize(b, 4, 2, &sum);
	assert_int_equal(sum.flows, 6);
	assert_true(sum.n_hat == 48.0);
	assert_true(sum.var_hat == 432.0);
	assert_true(sum.rate_mean == 8.0);
	assert_int_equal(sum.full, 5);
	assert_int_equal(sum.cut, 2);
}

/*
 * One window of n flows: a HyperLogLog of them (p = 12, hll.h's
 * registers, the library's estimator), scaled by `bias`, and the sample
 * (R = 64) in a table; returns the z-score.
 */
static double z_window(__u32 window, __u32 n, double bias)
{
	static __u8 regs[1 << 12];
	struct fs_sample_sum sum;
	struct fs_hash_key hk;
	struct fs_flow_key k;
	struct table t;
	double z;
	__u32 i;

	memset(regs, 0, sizeof(regs));
	hash_key(&hk, 5000 + window);
	table_new(&t, 6, 12);
	for (i = 0; i < n; i++) {
		__u64 h;

		key_of(&k, i, window);
		h = fs_flow_hash(&k, &hk);
		fs_hll_register_max(&regs[fs_hll_index(h, 12)], fs_hll_rank(h, 12));
		feed(&t, &k, fs_sample_value(h), 1, 100);
	}
	fs_sample_summarize(t.b, nbuckets(&t), t.p.shift, &sum);
	assert_int_equal(sum.full, 0);
	z = fs_sample_hll_z(bias * fs_hll_estimate(regs, 12), sum.n_hat,
			    sum.rate_mean, 12);
	free(t.b);
	return z;
}

/*
 * The z-scores of 80 windows of 100,000 flows: within 2 standard errors
 * at least 95.45 % less 3 binomial errors of the time, mean square 1 to
 * within 4 of its errors (sqrt(2 / K)); a HyperLogLog 10 % high (about 3
 * standard errors of the difference) falls below that share.
 */
static void test_z_share(void **state)
{
	enum { K = 80, N = 100000 };
	double z[K], zb[K], sq = 0, p0 = 0.9544997361036416;
	double floor = p0 - 3 * sqrt(p0 * (1 - p0) / K), share, share_b;
	__u32 j;

	(void)state;
	for (j = 0; j < K; j++) {
		z[j] = z_window(j, N, 1.0);
		zb[j] = z_window(j, N, 1.1);
		sq += z[j] * z[j];
	}
	share = fs_sample_share_within(z, K, 2.0);
	share_b = fs_sample_share_within(zb, K, 2.0);
	print_message("within 2 SE: %.3f (floor %.3f), mean z^2 %.3f; biased HLL: %.3f\n",
		      share, floor, sq / K, share_b);
	assert_true(share >= floor);
	assert_true(fabs(sq / K - 1) <= 4 * sqrt(2.0 / K));
	assert_true(share_b < floor);
}

/* Every bucket of an export copy (sample.h, "Exports"). */
static void export_table(struct table *t)
{
	__u32 i;

	for (i = 0; i < nbuckets(t); i++)
		fs_sample_bucket_export(&t->b[i], t->p.shift);
}

/* The largest power of two at most x (0 for 0): "Exports"' cut, restated. */
static __u64 pow2_floor(__u64 x)
{
	__u64 p = 1;

	if (!x)
		return 0;
	while (p <= x / 2)
		p *= 2;
	return p;
}

/*
 * A merge of exported copies against the truth of both streams: each
 * bucket's limit a power of two no higher than either copy's own limit
 * cut to one; its live flows exactly those sent to the bucket whose true
 * value is below that limit, with the totals of both; every entry's
 * value a single bit, the leading bit of the truth's, and nothing else of
 * a raw value in the bucket.  Returns the live flows.
 */
static __u64 check_exported_merge(const struct table *m, const struct table *a,
				  const struct table *b, const struct truth *tr,
				  __u32 nflows)
{
	__u64 live = 0, want = 0;
	__u32 i, j;

	for (i = 0; i < nbuckets(m); i++) {
		const struct fs_sample_bucket *mb = &m->b[i];
		__u64 limit = fs_sample_limit(mb, m->p.shift);
		__u64 la = pow2_floor(fs_sample_limit(&a->b[i], m->p.shift));
		__u64 lb = pow2_floor(fs_sample_limit(&b->b[i], m->p.shift));

		assert_int_equal(limit, pow2_floor(limit));
		assert_true(limit <= (la < lb ? la : lb));
		for (j = 0; j < FS_SAMPLE_WAYS; j++) {
			const struct fs_sample_entry *e = &mb->e[j];
			__u32 id;

			assert_int_equal(e->s & (e->s - 1), 0);
			if (!fs_sample_live(e, limit))
				continue;
			id = id_of(&e->key);
			assert_true(id < nflows && tr[id].sent);
			assert_int_equal(fs_sample_bucket_index(tr[id].s, m->p.log2_buckets), i);
			assert_true(tr[id].s < limit);
			assert_int_equal(e->s, pow2_floor(tr[id].s));
			assert_int_equal(e->packets, tr[id].packets);
			assert_int_equal(e->bytes, tr[id].bytes);
			live++;
		}
	}
	for (i = 0; i < nflows; i++)
		want += tr[i].sent && tr[i].s < limit_of(m, tr[i].s);
	assert_int_equal(live, want);
	return live;
}

/*
 * Two hosts' exports merged (the fleet's `merge ... accuracy`): the
 * sample of the union with exact totals, from values cut to their
 * leading bit, with full buckets on both (R = 1, 8 buckets) and without
 * (R = 16, 4,096 buckets, where the merge is the union's own sample:
 * limits 2^60 are powers of two already).  Mutant sample_export_limit
 * exports the limit uncut: flows between a host's cut and the next power
 * of two below it then pass as sampled on the other host, and the totals
 * or the limits fail.
 */
/*
 * Streams of nflows flows (two_streams()) to copies of rate 2^-shift and
 * 2^log2b buckets, each exported and the exports merged; the merge
 * checked against the truth of both (check_exported_merge()).  *full: the
 * copies met full buckets; *all: the flows of both with s below the
 * rate's limit.  The merged sample's flows.
 */
static __u64 exported_pair(__u32 shift, __u32 log2b, __u32 nflows, __u32 trial,
			   int *full, __u64 *all)
{
	struct truth *ta = calloc(nflows, sizeof(*ta)), *tb = calloc(nflows, sizeof(*tb));
	struct truth *tboth = calloc(nflows, sizeof(*tboth));
	struct table a, b, both, xa, xb, m;
	__u64 live;
	__u32 i;

	table_new(&a, shift, log2b);
	table_new(&b, shift, log2b);
	table_new(&both, shift, log2b);
	table_new(&xa, shift, log2b);
	table_new(&xb, shift, log2b);
	table_new(&m, shift, log2b);
	two_streams(&a, &b, &both, ta, tb, tboth, nflows, trial);
	*full = full_of(&a) > 0 && full_of(&b) > 0;
	memcpy(xa.b, a.b, nbuckets(&a) * sizeof(*a.b));
	memcpy(xb.b, b.b, nbuckets(&b) * sizeof(*b.b));
	export_table(&xa);
	export_table(&xb);
	merge_into(&m, &xa);
	merge_into(&m, &xb);
	live = check_exported_merge(&m, &a, &b, tboth, nflows);
	for (i = 0, *all = 0; i < nflows; i++)
		*all += tboth[i].sent && tboth[i].s < fs_sample_rate_limit(shift);
	free(ta);
	free(tb);
	free(tboth);
	free(a.b);
	free(b.b);
	free(both.b);
	free(xa.b);
	free(xb.b);
	free(m.b);
	return live;
}

/*
 * Two hosts' exports merged (the fleet's `merge ... accuracy`): the
 * sample of the union with exact totals, from values cut to their
 * leading bit, with full buckets on both (R = 1, 8 buckets, 20 streams)
 * and without (R = 16, 4,096 buckets, where the merge is the union's own
 * sample, whole: limits 2^60 are powers of two already).  Mutant
 * sample_export_limit exports the limit uncut, which the merged limits
 * show.
 */
static void test_export_merge(void **state)
{
	__u64 live = 0, all, one;
	__u32 trial;
	int full;

	(void)state;
	for (trial = 0; trial < 20; trial++) {
		live += exported_pair(0, 3, 600, 100 + trial, &full, &all);
		assert_true(full);
	}
	assert_true(live > 0);
	print_message("full buckets: %llu flows over 20 trials\n", (unsigned long long)live);
	one = exported_pair(4, 12, 30000, 3, &full, &all);
	assert_false(full);
	assert_int_equal(one, all);
	print_message("no full bucket: %llu flows\n", (unsigned long long)one);
}

/* What an exported bucket may hold: a bucket the export leaves passes,
 * and each pattern no export leaves is named. */
static void test_exported_bad(void **state)
{
	static struct fs_sample_bucket b, x;

	(void)state;
	put(&b, 0, 1, 3ULL << 50, 2);
	put(&b, 1, 2, 5ULL << 40, 1);
	put(&b, 2, 3, 1ULL << 62, 4);	/* above the cut below: dropped */
	b.head.cut = 3ULL << 55;
	b.head.full = 1;
	x = b;
	fs_sample_bucket_export(&x, 0);
	assert_null(fs_sample_bucket_exported_bad(&x, 0));
	assert_int_equal(x.head.cut, 1ULL << 56);
	assert_int_equal(x.e[0].s, 1ULL << 51);
	assert_int_equal(x.e[1].s, 1ULL << 42);
	assert_int_equal(x.e[2].key.family, 0);	/* zeroed, key and all */
	assert_int_equal(x.e[2].packets, 0);
	assert_int_equal(x.head.full, 1);
	/* The raw bucket is not one an export leaves. */
	assert_string_equal(fs_sample_bucket_exported_bad(&b, 0),
			    "limit is not a power of two");
	x.e[0].s = 3ULL << 40;
	assert_string_equal(fs_sample_bucket_exported_bad(&x, 0),
			    "entry has a sample value of more than one bit");
	x.e[0].s = 1ULL << 51;
	x.e[1].key = x.e[0].key;
	assert_string_equal(fs_sample_bucket_exported_bad(&x, 0), "flow is in it twice");
	x.e[1].key.family = 5;
	assert_string_equal(fs_sample_bucket_exported_bad(&x, 0),
			    "entry has no address family");
	x.e[1].key.family = 0;
	assert_string_equal(fs_sample_bucket_exported_bad(&x, 0), "free entry is not zero");
	x.e[1] = x.e[0];
	key_of(&x.e[1].key, 9, 0);
	x.e[1].s = 0;
	assert_string_equal(fs_sample_bucket_exported_bad(&x, 0), "entry has a sample value of 0");
	x.e[1].s = 1ULL << 56;		/* the limit itself: a dropped flow */
	assert_string_equal(fs_sample_bucket_exported_bad(&x, 0),
			    "entry at or above its limit is not zero");
	memset(&x.e[1], 0, sizeof(x.e[1]));
	x.head.pad[3] = 1;
	assert_string_equal(fs_sample_bucket_exported_bad(&x, 0),
			    "head has bytes past its fields");
	x.head.pad[3] = 0;
	x.head.cut = 1ULL << 60;	/* at rate 1/16: the rate's own limit */
	assert_string_equal(fs_sample_bucket_exported_bad(&x, 4),
			    "limit is not below the sample rate's");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params_and_fresh),
		cmocka_unit_test(test_rate_binomial),
		cmocka_unit_test(test_sampled_uniform),
		cmocka_unit_test(test_exact_counts),
		cmocka_unit_test(test_full_unbiased),
		cmocka_unit_test(test_merge_equals_one),
		cmocka_unit_test(test_merge_full),
		cmocka_unit_test(test_merge_by_hand),
		cmocka_unit_test(test_export_merge),
		cmocka_unit_test(test_exported_bad),
		cmocka_unit_test(test_arithmetic),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_z_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
