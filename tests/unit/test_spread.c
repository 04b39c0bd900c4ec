// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_spread.c - the spread sketch (include/flowsketch/spread.h) finds
 * planted spreaders amid ordinary traffic, within the error its
 * parameters give.
 *
 * Traffic: 100,000 ordinary flows (a few packets each, sources and
 * destinations drawn from pools of 20,000 IPv4 and 2,000 IPv6 hosts), a
 * scanner (one IPv4 source to 5,000 distinct (destination, port) pairs,
 * one packet each), an IPv6 scanner of 3,000 and a victim (5,000 distinct
 * spoofed sources to one destination).  The oracle is the traffic: the
 * test keeps every (key, element) pair it sent and counts each key's
 * distinct elements itself.  The bounds are computed here from the
 * parameters, with spread.h's formulas written out again (not its
 * fs_spread_sigma()):
 *     sigma(n)  = sqrt(1.04^2 / m + (R - 1) / n)
 *     n (1 - z sigma) <= S <= (n + e F / w) (1 + z sigma),   z = 4,
 * F the side's distinct (key, element) pairs.  The sharing term holds with
 * probability 1 - e^-d a key and the counting one with 1 - Phi(-z), and
 * a planted key can go unlisted (check_planted()): over five secrets each
 * may fail as often as its probability allows, and no more.
 * The hash-free estimator of a merge of export files (fs_spread_top_own())
 * is checked on buckets filled here (the least of a key's own buckets)
 * and on two hosts' halves of the traffic merged, with the same bounds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "flowsketch/spread.h"
#include "spread_estimate.h"
#include "rng.h"

#define ORDINARY 100000
#define POOL4 20000
#define POOL6 2000
#define SCAN4 5000
#define SCAN6 3000
#define VICTIM 5000
#define Z 4.0
#ifndef SECRETS
#define SECRETS 5
#endif

/* One (key, element) pair as the test records it: the side's key and the
 * element's bytes (destination and port, or source). */
struct pair {
	__u8 kfam;
	__u8 key[16];
	__u8 elem[18];
};

struct traffic {
	struct fs_flow_key *pkt;
	size_t npkt, cap;
	struct pair *pairs[FS_SPREAD_NSIDES];
	size_t npairs[FS_SPREAD_NSIDES];
};

static void addr_of(__u8 family, __u32 i, __u8 tag, __u8 out[16])
{
	memset(out, 0, 16);
	if (family == FS_FAMILY_IPV4) {
		out[0] = tag;
		out[1] = (__u8)(i >> 16);
		out[2] = (__u8)(i >> 8);
		out[3] = (__u8)i;
	} else {
		out[0] = 0x20;
		out[1] = 0x01;
		out[2] = tag;
		out[12] = (__u8)(i >> 24);
		out[13] = (__u8)(i >> 16);
		out[14] = (__u8)(i >> 8);
		out[15] = (__u8)i;
	}
}

static void send(struct traffic *t, const struct fs_flow_key *k, unsigned int times)
{
	struct pair *p;
	unsigned int i;

	for (i = 0; i < times; i++) {
		if (t->npkt == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 1 << 16;
			t->pkt = realloc(t->pkt, t->cap * sizeof(*t->pkt));
			t->pairs[0] = realloc(t->pairs[0], t->cap * sizeof(struct pair));
			t->pairs[1] = realloc(t->pairs[1], t->cap * sizeof(struct pair));
			assert_non_null(t->pkt);
			assert_non_null(t->pairs[0]);
			assert_non_null(t->pairs[1]);
		}
		t->pkt[t->npkt++] = *k;
		p = &t->pairs[FS_SPREAD_SRC][t->npairs[FS_SPREAD_SRC]++];
		memset(p, 0, sizeof(*p));
		p->kfam = k->family;
		memcpy(p->key, k->src, 16);
		memcpy(p->elem, k->dst, 16);
		memcpy(p->elem + 16, &k->dport, 2);
		p = &t->pairs[FS_SPREAD_DST][t->npairs[FS_SPREAD_DST]++];
		memset(p, 0, sizeof(*p));
		p->kfam = k->family;
		memcpy(p->key, k->dst, 16);
		memcpy(p->elem, k->src, 16);
	}
}

static void flow(struct traffic *t, __u8 family, const __u8 *src, const __u8 *dst,
		 __u16 sport, __u16 dport, __u8 proto, unsigned int times)
{
	struct fs_flow_key k = { .family = family, .proto = proto };

	memcpy(k.src, src, 16);
	memcpy(k.dst, dst, 16);
	k.sport = (__u16)(sport >> 8 | sport << 8);
	k.dport = (__u16)(dport >> 8 | dport << 8);
	send(t, &k, times);
}

/* The planted keys. */
static __u8 scanner4[16], scanner6[16], victim[16];

static void make_traffic(struct traffic *t, __u64 seed)
{
	__u64 rng = seed;
	__u8 a[16], b[16];
	__u32 i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < ORDINARY; i++) {
		__u64 r = rng_next(&rng);
		__u8 fam = (r & 15) ? FS_FAMILY_IPV4 : FS_FAMILY_IPV6;
		__u32 pool = fam == FS_FAMILY_IPV4 ? POOL4 : POOL6;

		addr_of(fam, (__u32)(rng_next(&rng) % pool), 10, a);
		addr_of(fam, (__u32)(rng_next(&rng) % pool), 11, b);
		flow(t, fam, a, b, (__u16)(1024 + (r >> 8) % 60000),
		     (__u16)((r >> 32) % 8 == 0 ? 80 : 443), 6, 1 + (unsigned int)((r >> 40) % 5));
	}
	addr_of(FS_FAMILY_IPV4, 7, 66, scanner4);
	for (i = 0; i < SCAN4; i++) {	/* 2,500 hosts, two ports each */
		addr_of(FS_FAMILY_IPV4, i / 2, 12, b);
		flow(t, FS_FAMILY_IPV4, scanner4, b, 40000, i % 2 ? 22 : 3389, 6, 1);
	}
	addr_of(FS_FAMILY_IPV6, 7, 66, scanner6);
	for (i = 0; i < SCAN6; i++) {	/* one host, 3,000 ports */
		addr_of(FS_FAMILY_IPV6, 1, 12, b);
		flow(t, FS_FAMILY_IPV6, scanner6, b, 40000, (__u16)(1 + i), 6, 1);
	}
	addr_of(FS_FAMILY_IPV4, 9, 67, victim);
	for (i = 0; i < VICTIM; i++) {
		addr_of(FS_FAMILY_IPV4, i, 13, a);
		flow(t, FS_FAMILY_IPV4, a, victim, (__u16)(1024 + i), 80, 6, 1);
	}
}

static int pair_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct pair));
}

/* The exact spread of (family, key) on a side, and F, the side's
 * distinct pairs: from the sorted pairs. */
static size_t exact_spread(struct traffic *t, __u32 side, __u8 family,
			   const __u8 *key, size_t *pairs)
{
	struct pair *p = t->pairs[side];
	size_t i, n = 0, all = 0;

	for (i = 0; i < t->npairs[side]; i++) {
		if (i && !pair_cmp(&p[i - 1], &p[i]))
			continue;
		all++;
		if (p[i].kfam == family && !memcmp(p[i].key, key, 16))
			n++;
	}
	*pairs = all;
	return n;
}

static void sort_pairs(struct traffic *t)
{
	qsort(t->pairs[0], t->npairs[0], sizeof(struct pair), pair_cmp);
	qsort(t->pairs[1], t->npairs[1], sizeof(struct pair), pair_cmp);
}

static void free_traffic(struct traffic *t)
{
	free(t->pkt);
	free(t->pairs[0]);
	free(t->pairs[1]);
}

static void secret_key(__u32 which, struct fs_hash_key *hk)
{
	struct fs_hash_secret s = {
		.k0 = 0x243f6a8885a308d3ULL + which,
		.k1 = 0x13198a2e03707344ULL * (which + 1),
	};

	fs_hash_key_derive(&s, hk);
}

/* Run packets [from, to) with stride through a slot, as one CPU would. */
static void run(struct fs_spread_bucket *slot, const struct fs_spread_params *p,
		const struct fs_hash_key *hk, const struct traffic *t,
		size_t from, size_t stride)
{
	struct fs_packet_hashes h;
	size_t i;

	for (i = from; i < t->npkt; i += stride) {
		fs_packet_hash(&t->pkt[i], hk, &h);
		fs_spread_update(slot, p, &t->pkt[i], &h);
	}
}

static double sigma_of(const struct fs_spread_params *p, double n)
{
	return sqrt(1.04 * 1.04 / 90.0 + (pow(2, p->sample_shift) - 1) / n);
}

static int is_planted(const struct fs_spreader *x)
{
	return (x->family == FS_FAMILY_IPV4 && !memcmp(x->addr, scanner4, 16)) ||
	       (x->family == FS_FAMILY_IPV6 && !memcmp(x->addr, scanner6, 16)) ||
	       (x->family == FS_FAMILY_IPV4 && !memcmp(x->addr, victim, 16));
}

/*
 * One planted key against the side's top: listed with only planted keys
 * above it, its estimate within the bounds.  A miss (not listed, or an
 * ordinary key above it) is counted, and *miss_bound gets its
 * probability's bound: the key loses its bucket in row r to the top
 * priority of another key's element with probability (n_r - n_k) / n_r
 * <= E[n_r - n_k] / n_k <= F / (w n_k), independently per row.  Below
 * the lower bound fails; above the upper one is counted (its sharing term
 * holds with probability 1 - e^-d).
 */
static void check_planted(const struct fs_spreader *top, int ntop,
			  const struct fs_spread_params *p, struct traffic *t,
			  __u32 side, __u8 family, const __u8 *key, size_t truth,
			  int *misses, double *miss_bound, int *under, int *over)
{
	size_t pairs, n = exact_spread(t, side, family, key, &pairs);
	double sig = sigma_of(p, (double)n), share = M_E * (double)pairs / pow(2, p->log2_width);
	double est, lo = n * (1 - Z * sig), hi = (n + share) * (1 + Z * sig);
	int j, i;

	assert_int_equal(n, truth);	/* the traffic is what the test meant */
	*miss_bound += pow((double)pairs / (pow(2, p->log2_width) * (double)n), p->depth);
	for (j = 0; j < ntop; j++)
		if (top[j].family == family && !memcmp(top[j].addr, key, 16))
			break;
	for (i = 0; i < j && i < ntop; i++)
		if (!is_planted(&top[i]))
			break;
	if (j == ntop || i < j) {
		print_message("side %u: a planted key missed (listed at %d of %d)\n", side, j, ntop);
		(*misses)++;
		return;
	}
	est = top[j].distinct;
	if (getenv("SPREAD_VERBOSE"))
		print_message("side %u rank %d: estimate %.0f truth %zu bounds %.0f..%.0f F %zu\n",
			      side, j, est, n, lo, hi, pairs);
	if (est < lo) {
		print_message("side %u: estimate %.0f below %.0f (truth %zu)\n", side, est, lo, n);
		(*under)++;
	}
	*over += est > hi;
}

static void test_planted(void **state)
{
	struct fs_spread_params p;
	struct traffic t;
	struct fs_spreader top[8];
	int over = 0, misses = 0, under = 0;
	double miss_bound = 0;
	__u32 s;

	(void)state;
	fs_spread_params_init(&p, FS_DEFAULT_SPREAD_DEPTH, FS_DEFAULT_SPREAD_LOG2W,
			      FS_DEFAULT_SPREAD_SHIFT);
	assert_int_equal(fs_spread_params_check(&p), 0);
	make_traffic(&t, 0x5eed);
	sort_pairs(&t);
	for (s = 0; s < SECRETS; s++) {
		struct fs_spread_bucket *slot = calloc(fs_spread_buckets(&p), sizeof(*slot));
		struct fs_hash_key hk;
		int n;

		assert_non_null(slot);
		secret_key(s, &hk);
		run(slot, &p, &hk, &t, 0, 1);
		n = fs_spread_top(slot, &p, FS_SPREAD_SRC, &hk, top, 8);
		check_planted(top, n, &p, &t, FS_SPREAD_SRC, FS_FAMILY_IPV4, scanner4, SCAN4,
			      &misses, &miss_bound, &under, &over);
		check_planted(top, n, &p, &t, FS_SPREAD_SRC, FS_FAMILY_IPV6, scanner6, SCAN6,
			      &misses, &miss_bound, &under, &over);
		n = fs_spread_top(slot, &p, FS_SPREAD_DST, &hk, top, 8);
		check_planted(top, n, &p, &t, FS_SPREAD_DST, FS_FAMILY_IPV4, victim, VICTIM,
			      &misses, &miss_bound, &under, &over);
		free(slot);
	}
	/* Misses: Poisson-like with mean at most miss_bound (0.05 over the
	 * five secrets): more than 1 + 3 times it has probability < 0.2 %. */
	print_message("planted keys missed: %d (bound on the mean %.3f); above the upper bound: %d of %d\n",
		      misses, miss_bound, over, 3 * SECRETS);
	assert_true(misses <= 1 + (int)(3 * miss_bound));
	/* z = 4: Phi(-4) a check, 5e-4 over the fifteen. */
	assert_true(under <= 1);
	assert_true(over <= 1 + (int)(2 * exp(-(double)p.depth) * 3 * SECRETS));
	free_traffic(&t);
}

/*
 * Distinct means distinct: the same elements sent ten times leave every
 * byte of the sketch as sending them once does.
 */
static void test_repeats_change_nothing(void **state)
{
	struct fs_spread_params p;
	struct fs_spread_bucket *once, *ten;
	struct fs_hash_key hk;
	struct fs_packet_hashes h;
	struct traffic t;
	size_t i, bytes;
	int k;

	(void)state;
	fs_spread_params_init(&p, 3, 6, 0);
	bytes = fs_spread_buckets(&p) * sizeof(*once);
	once = calloc(1, bytes);
	ten = calloc(1, bytes);
	assert_non_null(once);
	assert_non_null(ten);
	secret_key(9, &hk);
	make_traffic(&t, 0xabc);
	for (i = 0; i < t.npkt; i++) {
		fs_packet_hash(&t.pkt[i], &hk, &h);
		fs_spread_update(once, &p, &t.pkt[i], &h);
		for (k = 0; k < 10; k++)
			fs_spread_update(ten, &p, &t.pkt[i], &h);
	}
	assert_memory_equal(once, ten, bytes);
	free(once);
	free(ten);
	free_traffic(&t);
}

/*
 * Per-CPU slots merged give the registers and candidate priorities of one slot that saw
 * everything, and the merge's result is the same whatever the order the
 * slots come in (the candidates too).
 */
#define CPUS 4
static void test_merge(void **state)
{
	struct fs_spread_params p;
	struct fs_spread_bucket *whole, *cpu[CPUS], *ab, *ba;
	struct fs_hash_key hk;
	struct traffic t;
	size_t bytes, i, j;
	int c;

	(void)state;
	fs_spread_params_init(&p, FS_DEFAULT_SPREAD_DEPTH, FS_DEFAULT_SPREAD_LOG2W, 1);
	bytes = fs_spread_buckets(&p) * sizeof(*whole);
	whole = calloc(1, bytes);
	ab = calloc(1, bytes);
	ba = calloc(1, bytes);
	assert_non_null(whole);
	assert_non_null(ab);
	assert_non_null(ba);
	secret_key(3, &hk);
	make_traffic(&t, 0x77);
	run(whole, &p, &hk, &t, 0, 1);
	for (c = 0; c < CPUS; c++) {
		cpu[c] = calloc(1, bytes);
		assert_non_null(cpu[c]);
		run(cpu[c], &p, &hk, &t, (size_t)c, CPUS);
	}
	for (c = 0; c < CPUS; c++)
		fs_spread_merge(ab, cpu[c], &p);
	for (c = CPUS - 1; c >= 0; c--)
		fs_spread_merge(ba, cpu[c], &p);
	assert_memory_equal(ab, ba, bytes);
	for (i = 0; i < fs_spread_buckets(&p); i++) {
		assert_int_equal(ab[i].prio, whole[i].prio);
		assert_int_equal(ab[i].family, whole[i].family);
		for (j = 0; j < FS_SPREAD_REGS; j++)
			assert_int_equal(fs_spread_reg_get(&ab[i], (__u32)j),
					 fs_spread_reg_get(&whole[i], (__u32)j));
	}
	for (c = 0; c < CPUS; c++)
		free(cpu[c]);
	free(whole);
	free(ab);
	free(ba);
	free_traffic(&t);
}

/* The element's fields, from their definition in spread.h, bit by bit:
 * the register is floor(low32 * m / 2^32), the rank one more than the
 * zeros below the lowest set bit of bits 32..45 (15 for none), sampled
 * when the top s bits are zero. */
static void test_fields(void **state)
{
	__u64 rng = 42, e;
	__u32 i, b, rank;

	(void)state;
	for (i = 0; i < 200000; i++) {
		e = rng_next(&rng);
		if (i & 1)
			e &= ~(0x3fffULL << 32) | (rng_next(&rng) & (0x3fffULL << 32) &
						   (0xffffULL << (32 + (i % 14))));
		assert_int_equal(fs_spread_reg(e), (__u32)(((double)(e & 0xffffffff) * 90.0) / 4294967296.0));
		for (b = 0, rank = 15; b < 14; b++)
			if ((e >> (32 + b)) & 1) {
				rank = b + 1;
				break;
			}
		assert_int_equal(fs_spread_rank(e), rank);
		assert_int_equal(fs_spread_sampled(e, 3), (e >> 61) == 0);
		assert_int_equal(fs_spread_sampled(e, 0), 1);
	}
}

/*
 * The hash-free estimator (fs_spread_top_own()) on buckets built here,
 * without sampling (R = 1): key A is the candidate of a bucket of 20,000
 * distinct elements in row 0 and of one of 500 in row 2, key B of one of
 * 2,000 in row 1 only, and the other side holds a key of its own.  A's
 * estimate is the least of its own buckets' (about 500, never near
 * 20,000: a HyperLogLog of 90 registers is within 4 sigma = 44 % of its
 * count), from 2 rows; B's about 2,000 from 1; an empty bucket names
 * nothing, and the other side's key is not this side's.
 */
static void fill(struct fs_spread_bucket *b, __u64 *rng, unsigned int n,
		 const __u8 *key)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		fs_spread_bucket_add(b, rng_next(rng), key, FS_FAMILY_IPV4);
	/* The candidate the test says, whatever the priorities drew. */
	memcpy(b->key, key, 16);
	b->family = FS_FAMILY_IPV4;
}

static int near(double est, double n)
{
	double sig = sqrt(1.04 * 1.04 / 90.0);

	return est >= n * (1 - Z * sig) && est <= n * (1 + Z * sig);
}

static void test_own_buckets(void **state)
{
	struct fs_spread_params p;
	struct fs_spread_bucket *slot;
	struct fs_spreader top[8];
	__u8 a[16] = { 198, 51, 100, 7 }, b[16] = { 203, 0, 113, 9 }, c[16] = { 192, 0, 2, 1 };
	__u32 w;
	__u64 rng = 0xfeed;
	int got;

	(void)state;
	fs_spread_params_init(&p, 3, 4, 0);
	w = 1U << p.log2_width;
	slot = calloc(fs_spread_buckets(&p), sizeof(*slot));
	assert_non_null(slot);
	fill(&slot[0 * w + 5], &rng, 20000, a);
	fill(&slot[2 * w + 11], &rng, 500, a);
	fill(&slot[1 * w + 3], &rng, 2000, b);
	fill(&slot[(3 + 1) * w + 3], &rng, 50000, c);	/* side DST, row 1 */

	got = fs_spread_top_own(slot, &p, FS_SPREAD_SRC, top, 8);
	assert_int_equal(got, 2);
	assert_memory_equal(top[0].addr, b, 16);
	assert_int_equal(top[0].rows, 1);
	assert_true(near(top[0].distinct, 2000));
	assert_memory_equal(top[1].addr, a, 16);
	assert_int_equal(top[1].family, FS_FAMILY_IPV4);
	assert_int_equal(top[1].rows, 2);
	assert_true(near(top[1].distinct, 500));
	got = fs_spread_top_own(slot, &p, FS_SPREAD_SRC, top, 1);
	assert_int_equal(got, 1);
	assert_memory_equal(top[0].addr, b, 16);
	got = fs_spread_top_own(slot, &p, FS_SPREAD_DST, top, 8);
	assert_int_equal(got, 1);
	assert_memory_equal(top[0].addr, c, 16);
	assert_true(near(top[0].distinct, 50000));
	free(slot);
}

/*
 * Two hosts of one secret, each every other packet (so each planted key's
 * elements split between them), merged as `flowsketch merge` merges their
 * files: the hash-free estimator lists the planted keys within
 * test_planted's bounds, F and the truth those of the union.
 */
static void test_own_merged(void **state)
{
	struct fs_spread_params p;
	struct traffic t;
	struct fs_spreader top[8];
	int over = 0, misses = 0, under = 0;
	double miss_bound = 0;
	__u32 s;

	(void)state;
	fs_spread_params_init(&p, FS_DEFAULT_SPREAD_DEPTH, FS_DEFAULT_SPREAD_LOG2W,
			      FS_DEFAULT_SPREAD_SHIFT);
	make_traffic(&t, 0x0e1f);
	sort_pairs(&t);
	for (s = 0; s < SECRETS; s++) {
		struct fs_spread_bucket *a = calloc(fs_spread_buckets(&p), sizeof(*a));
		struct fs_spread_bucket *b = calloc(fs_spread_buckets(&p), sizeof(*b));
		struct fs_hash_key hk;
		int n, i;

		assert_non_null(a);
		assert_non_null(b);
		secret_key(50 + s, &hk);
		run(a, &p, &hk, &t, 0, 2);
		run(b, &p, &hk, &t, 1, 2);
		fs_spread_merge(a, b, &p);
		n = fs_spread_top_own(a, &p, FS_SPREAD_SRC, top, 8);
		for (i = 0; i < n; i++)
			assert_true(top[i].rows >= 1 && top[i].rows <= p.depth);
		check_planted(top, n, &p, &t, FS_SPREAD_SRC, FS_FAMILY_IPV4, scanner4, SCAN4,
			      &misses, &miss_bound, &under, &over);
		check_planted(top, n, &p, &t, FS_SPREAD_SRC, FS_FAMILY_IPV6, scanner6, SCAN6,
			      &misses, &miss_bound, &under, &over);
		n = fs_spread_top_own(a, &p, FS_SPREAD_DST, top, 8);
		check_planted(top, n, &p, &t, FS_SPREAD_DST, FS_FAMILY_IPV4, victim, VICTIM,
			      &misses, &miss_bound, &under, &over);
		free(a);
		free(b);
	}
	print_message("own estimates: planted keys missed %d (bound on the mean %.3f); above the upper bound: %d of %d\n",
		      misses, miss_bound, over, 3 * SECRETS);
	assert_true(misses <= 1 + (int)(3 * miss_bound));
	assert_true(under <= 1);
	/* A minimum over as few as one row: e^-1 a check. */
	assert_true(over <= 1 + (int)(2 * exp(-1.0) * 3 * SECRETS));
	free_traffic(&t);
}

static void test_params(void **state)
{
	struct fs_spread_params p;

	(void)state;
	fs_spread_params_init(&p, 0, 8, 2);
	assert_int_not_equal(fs_spread_params_check(&p), 0);
	fs_spread_params_init(&p, 5, 8, 2);
	assert_int_not_equal(fs_spread_params_check(&p), 0);
	fs_spread_params_init(&p, 4, 17, 2);
	assert_int_not_equal(fs_spread_params_check(&p), 0);
	fs_spread_params_init(&p, 2, 8, 16);
	assert_int_not_equal(fs_spread_params_check(&p), 0);
	fs_spread_params_init(&p, 4, 16, 15);
	assert_int_equal(fs_spread_params_check(&p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_repeats_change_nothing),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_planted),
		cmocka_unit_test(test_own_buckets),
		cmocka_unit_test(test_own_merged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
