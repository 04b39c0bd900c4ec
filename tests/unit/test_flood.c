// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_flood.c - hash flooding: why the Count-Min hash is keyed.
 *
 * Count-Min's bound (estimate <= truth + eps * N with probability
 * >= 1 - delta, eps = e / w, delta = e^-d) holds for flows chosen without
 * knowledge of the hash.  An attacker who knows the key can instead choose
 * flows that land in the target flow's cell of every row, and the target's
 * estimate (the minimum over rows) then grows by whatever the attacker
 * sends.  hash.h derives the per-packet key from a 128-bit secret for
 * exactly this reason.  Both sides are shown here, with the same attack
 * flows counted by the shared per-packet update (fs_model, the code the
 * datapath runs):
 *   - under the key the attacker searched with, the target is overcounted
 *     by far more than eps * N;
 *   - under keys the attacker never saw (drawn independently), the same
 *     flows are ordinary traffic and the target stays within eps * N.
 *
 * The attacker's search uses only what an attacker would: the secret,
 * the public hash (hash.h) and the public column layout (cms.h).
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

#include "model.h"
#include "sketch.h"
#include "flowsketch/cms.h"
#include "flowsketch/hash.h"
#include "rng.h"

#define TARGET_PACKETS 100
/* Keys the attacker does not know, each tried with the same attack. */
#define UNKNOWN_KEYS 10

static const struct fs_hash_secret attacker_known = {
	0x0123456789abcdefULL, 0xfedcba9876543210ULL
};

/* The victim: a TCP flow to a public service. */
static void target_key(struct fs_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = FS_FAMILY_IPV4;
	k->proto = 6;
	k->sport = htons(40000);
	k->dport = htons(443);
	k->src[0] = 10, k->src[1] = 1, k->src[2] = 1, k->src[3] = 1;
	k->dst[0] = 192, k->dst[1] = 0, k->dst[2] = 2, k->dst[3] = 10;
}

/* Candidate i of the attacker's search: UDP to the victim's service from
 * spoofed sources in 100.64.0.0/10 (22 bits) times every source port, so
 * 2^38 distinct flows, none equal to the target. */
static void candidate_key(__u64 i, struct fs_flow_key *k)
{
	__u32 src = 0x64400000U | (__u32)((i >> 16) & 0x3fffff);

	memset(k, 0, sizeof(*k));
	k->family = FS_FAMILY_IPV4;
	k->proto = 17;
	k->sport = htons((__u16)i);
	k->dport = htons(443);
	k->src[0] = (__u8)(src >> 24), k->src[1] = (__u8)(src >> 16);
	k->src[2] = (__u8)(src >> 8), k->src[3] = (__u8)src;
	k->dst[0] = 192, k->dst[1] = 0, k->dst[2] = 2, k->dst[3] = 10;
}

/* The column of each row, as the datapath picks them (cms.h). */
static void columns_of(const struct fs_flow_key *k, const struct fs_hash_key *key,
		       const struct fs_sketch_params *p, __u32 *col)
{
	struct fs_cms_columns it;
	__u32 row;

	fs_cms_columns_init(&it, fs_flow_hash(k, key), p->cms_log2_width);
	for (row = 0; row < p->cms_depth; row++)
		col[row] = fs_cms_next_column(&it);
}

struct attack {
	__u64 *flows;		/* candidate numbers */
	__u32 n;
	__u32 packets_each;
};

/*
 * The attacker's search: candidates in order until n flows are taken.
 * per_row 0: full collisions, flows that each share the target's cell in
 * every row; one costs w^d candidates on average, which is why the caller
 * picks a small sketch for this one.  Else row by row: per_row flows for
 * each row (n = d * per_row) that share the target's cell in that row.
 * The estimate is the minimum over rows, so raising every row by its own
 * set of flows raises the estimate as much as full collisions would, for
 * d * per_row * w candidates instead of w^d per flow: this attack is
 * cheap at the production sketch size.
 */
static void search(const struct fs_sketch_params *p, __u32 n, __u32 per_row,
		   struct attack *a)
{
	__u32 tcol[FS_CMS_MAX_DEPTH], col[FS_CMS_MAX_DEPTH];
	__u32 have[FS_CMS_MAX_DEPTH] = { 0 }, row;
	struct fs_flow_key t, k;
	struct fs_hash_key key;
	__u64 i;

	fs_hash_key_derive(&attacker_known, &key);
	target_key(&t);
	columns_of(&t, &key, p, tcol);
	a->flows = calloc(n, sizeof(*a->flows));
	assert_non_null(a->flows);
	a->n = 0;
	for (i = 0; a->n < n; i++) {
		assert_true(i < (1ULL << 38));
		candidate_key(i, &k);
		columns_of(&k, &key, p, col);
		if (!per_row) {
			for (row = 0; row < p->cms_depth && col[row] == tcol[row]; row++)
				;
			if (row == p->cms_depth)
				a->flows[a->n++] = i;
			continue;
		}
		for (row = 0; row < p->cms_depth; row++) {
			if (col[row] == tcol[row] && have[row] < per_row) {
				have[row]++;
				a->flows[a->n++] = i;
				break;
			}
		}
	}
}

/*
 * Count the target and the attack under params p (whose secret is the
 * sketch's key) and return the target's estimate minus its truth; *n gets
 * N, the packets counted.
 */
static __u64 overcount(const struct fs_sketch_params *p, const struct attack *a,
		       __u64 *n)
{
	struct fs_flow_key k;
	struct fs_cms_cell est;
	struct fs_sketch s;
	struct fs_model m;
	__u64 h, target_hash;
	__u32 i, j;

	assert_int_equal(fs_model_init(&m, p), 0);
	target_key(&k);
	for (j = 0; j < TARGET_PACKETS; j++)
		assert_true(fs_model_update(&m, &k, 1000, 0, 0, 0, &target_hash) >= 0);
	*n = TARGET_PACKETS;
	/* Interleaving does not matter to a standard Count-Min: flow after
	 * flow is the same sketch as any order. */
	for (i = 0; i < a->n; i++) {
		candidate_key(a->flows[i], &k);
		for (j = 0; j < a->packets_each; j++)
			assert_true(fs_model_update(&m, &k, 64, 0, 0, 0, &h) >= 0);
		*n += a->packets_each;
	}
	assert_int_equal(fs_sketch_init(&s, p), 0);
	assert_int_equal(fs_sketch_add_slot(&s, m.env.chunks, m.env.nchunks, 0), 0);
	fs_sketch_query(&s, target_hash, &est);
	fs_sketch_free(&s);
	fs_model_free(&m);
	assert_true(est.packets >= TARGET_PACKETS);
	return est.packets - TARGET_PACKETS;
}

static void params_with(struct fs_sketch_params *p, __u32 depth, __u32 log2w,
			const struct fs_hash_secret *secret)
{
	fs_params_init(p, depth, log2w, 10, 0, secret);
}

/*
 * The attack, counted once under the attacker's key and then under
 * UNKNOWN_KEYS independent keys.  eps = e / w from the definition, not
 * from the code under test.  "Far more" is ten times eps * N; the attacks
 * below reach about 90 and 300 times that.
 */
static void check_attack(__u32 depth, __u32 log2w, const struct attack *a)
{
	struct fs_sketch_params p;
	struct fs_hash_secret other;
	double eps = M_E / (double)(1U << log2w);
	__u64 rng = 0x9e3779b97f4a7c15ULL, over, n;
	__u32 i;

	params_with(&p, depth, log2w, &attacker_known);
	over = overcount(&p, a, &n);
	print_message("d=%u w=%u: %u attack flows, N=%llu, eps*N=%.1f; known key: overcount %llu\n",
		      depth, 1U << log2w, a->n, (unsigned long long)n, eps * n,
		      (unsigned long long)over);
	if (!(over > 10 * eps * n))
		fail_msg("known key: overcount %llu is not far above eps*N = %.1f",
			 (unsigned long long)over, eps * n);

	for (i = 0; i < UNKNOWN_KEYS; i++) {
		/* Fixed so that a failure reproduces; the search above never
		 * sees them, which is all "unknown" needs. */
		other.k0 = rng_next(&rng);
		other.k1 = rng_next(&rng);
		params_with(&p, depth, log2w, &other);
		over = overcount(&p, a, &n);
		if (!(over <= eps * n))
			fail_msg("unknown key %u: overcount %llu above eps*N = %.1f",
				 i, (unsigned long long)over, eps * n);
	}
}

/*
 * Flows that each collide with the target in every row.  At the defaults
 * (d = 5, w = 4096) one such flow needs 2^60 candidates on average, out of
 * reach; at d = 3, w = 256 it needs 2^24 (a third of a second here), and
 * d = 3 still makes the minimum over rows do real work.
 */
static void test_full_collisions(void **state)
{
	struct attack a = { .packets_each = 200 };

	search(&(struct fs_sketch_params){ .cms_depth = 3,
					    .cms_log2_width = 8 }, 8, 0, &a);
	check_attack(3, 8, &a);
	free(a.flows);
}

/* The production sketch, attacked row by row (search()). */
static void test_per_row_defaults(void **state)
{
	struct attack a = { .packets_each = 20 };

	search(&(struct fs_sketch_params){
			.cms_depth = FS_DEFAULT_CMS_DEPTH,
			.cms_log2_width = FS_DEFAULT_CMS_LOG2W },
	       100 * FS_DEFAULT_CMS_DEPTH, 100, &a);
	check_attack(FS_DEFAULT_CMS_DEPTH, FS_DEFAULT_CMS_LOG2W, &a);
	free(a.flows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_collisions),
		cmocka_unit_test(test_per_row_defaults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
