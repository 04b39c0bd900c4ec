// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_merge.c - folding CPUs and windows gives the sketch of the union.
 *
 * Count-Min cells are sums of per-packet increments and HyperLogLog
 * registers are maxima of per-key ranks, so with the standard update the
 * merge of sketches of parts of a stream must equal, byte for byte, the
 * sketch of the whole stream.  Packets are spread over NCPU models and
 * both window slots; the reference is one model that saw everything in
 * one slot.  The packed registers' fold is checked against their
 * definition apart (test_packed_fold_reference).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <errno.h>
#include <cmocka.h>

#include "model.h"
#include "sketch.h"
#include "hll_estimate.h"
#include "rng.h"

#define NCPU 3
#define NFLOWS 30000
#define NPACKETS 200000
/* Sources and destinations are drawn from smaller pools so that the
 * three HyperLogLogs have different, known, truths. */
#define NSOURCES 5000
#define NDESTS 700

static void params_of(struct fs_sketch_params *p)
{
	const struct fs_hash_secret s = { 0xa4093822299f31d0ULL,
					  0x082efa98ec4e6c89ULL };

	fs_params_init(p, 4, 11, 12, 0, &s);
}

/* Flow i: source i % NSOURCES, destination i % NDESTS, port i. */
static void flow_key_of(__u32 i, struct fs_flow_key *k)
{
	__u32 src = i % NSOURCES, dst = i % NDESTS;

	memset(k, 0, sizeof(*k));
	k->family = FS_FAMILY_IPV4;
	k->proto = 6;
	k->sport = (__be16)(i / NSOURCES + 1);
	k->dport = 443;
	k->src[0] = 10;
	k->src[2] = (__u8)(src >> 8);
	k->src[3] = (__u8)src;
	k->dst[0] = 172;
	k->dst[2] = (__u8)(dst >> 8);
	k->dst[3] = (__u8)dst;
}

/* 1 the first time a key is seen, 0 after. */
static __u32 mark_seen(__u8 *seen)
{
	if (*seen)
		return 0;
	*seen = 1;
	return 1;
}

struct fixture {
	struct fs_sketch_params p;
	struct fs_model cpu[NCPU];
	struct fs_model all;		/* the union, in slot 0 */
	struct fs_window_totals totals[NCPU][FS_NSLOTS];
	struct fs_window_totals all_totals;
	/* Exact distinct counts of the stream, per HyperLogLog. */
	__u32 distinct[FS_HLL_NSKETCH];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	__u64 rng = 0x0123456789abcdefULL;
	__u8 *seen = calloc(NFLOWS + NSOURCES + NDESTS, 1);
	__u8 *seen_src, *seen_dst;
	struct fs_flow_key k;
	__u32 i, c;

	if (!f || !seen)
		return -1;
	seen_src = seen + NFLOWS;
	seen_dst = seen_src + NSOURCES;
	params_of(&f->p);
	for (c = 0; c < NCPU; c++)
		if (fs_model_init(&f->cpu[c], &f->p))
			return -1;
	if (fs_model_init(&f->all, &f->p))
		return -1;
	for (i = 0; i < NPACKETS; i++) {
		/* Square of a uniform: a skewed flow popularity. */
		__u64 u = rng_next(&rng) % NFLOWS;
		__u32 flow = (__u32)(u * u / NFLOWS);
		__u32 cpu = rng_next(&rng) % NCPU;
		__u32 slot = i < NPACKETS / 2 ? 0 : 1;
		__u64 bytes = 60 + rng_next(&rng) % 1441;

		flow_key_of(flow, &k);
		if (fs_model_update(&f->cpu[cpu], &k, bytes, slot, 0, 0, NULL) < 0 ||
		    fs_model_update(&f->all, &k, bytes, 0, 0, 0, NULL) < 0)
			return -1;
		f->totals[cpu][slot].packets++;
		f->totals[cpu][slot].bytes += bytes;
		f->all_totals.packets++;
		f->all_totals.bytes += bytes;
		f->distinct[FS_HLL_FLOWS] += mark_seen(&seen[flow]);
		f->distinct[FS_HLL_SOURCES] += mark_seen(&seen_src[flow % NSOURCES]);
		f->distinct[FS_HLL_DESTS] += mark_seen(&seen_dst[flow % NDESTS]);
	}
	free(seen);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	__u32 c;

	for (c = 0; c < NCPU; c++)
		fs_model_free(&f->cpu[c]);
	fs_model_free(&f->all);
	free(f);
	return 0;
}

static void fold(struct fs_sketch *s, const struct fs_model *m, __u32 slot,
		 const struct fs_window_totals *t)
{
	assert_int_equal(fs_sketch_add_slot(s, m->env.chunks, m->env.nchunks, slot), 0);
	if (t)
		fs_sketch_add_totals(s, t);
}

static void assert_same_sketch(const struct fs_sketch *a,
			       const struct fs_sketch *b)
{
	const struct fs_sketch_params *p = &a->params;

	assert_memory_equal(a->cms, b->cms,
			    fs_cms_cells_per_slot(p) * sizeof(*a->cms));
	assert_memory_equal(a->hll, b->hll, (size_t)FS_HLL_NSKETCH << p->hll_p);
	assert_int_equal(a->totals.packets, b->totals.packets);
	assert_int_equal(a->totals.bytes, b->totals.bytes);
}

/* CPUs folded per window, then windows merged == the union's sketch. */
static void test_merge_equals_union(void **state)
{
	struct fixture *f = *state;
	struct fs_sketch win[FS_NSLOTS], uni, sum;
	__u32 c, slot;

	assert_int_equal(fs_sketch_init(&uni, &f->p), 0);
	fold(&uni, &f->all, 0, &f->all_totals);
	assert_int_equal(fs_sketch_init(&sum, &f->p), 0);
	for (slot = 0; slot < FS_NSLOTS; slot++) {
		assert_int_equal(fs_sketch_init(&win[slot], &f->p), 0);
		for (c = 0; c < NCPU; c++)
			fold(&win[slot], &f->cpu[c], slot, &f->totals[c][slot]);
		assert_int_equal(fs_sketch_merge(&sum, &win[slot]), 0);
	}
	assert_same_sketch(&sum, &uni);
	assert_int_equal(sum.totals.packets, NPACKETS);

	/* Folding the CPUs of both slots straight into one sketch, in
	 * another order, is the same thing. */
	fs_sketch_reset(&sum);
	for (c = NCPU; c-- > 0;)
		for (slot = FS_NSLOTS; slot-- > 0;)
			fold(&sum, &f->cpu[c], slot, &f->totals[c][slot]);
	assert_same_sketch(&sum, &uni);

	/* One window alone is not the union (the test can fail). */
	assert_memory_not_equal(win[0].cms, uni.cms,
				fs_cms_cells_per_slot(&f->p) * sizeof(*uni.cms));

	for (slot = 0; slot < FS_NSLOTS; slot++)
		fs_sketch_free(&win[slot]);
	fs_sketch_free(&uni);
	fs_sketch_free(&sum);
}

static void test_merge_commutative_and_hll_idempotent(void **state)
{
	struct fixture *f = *state;
	struct fs_sketch a, b, ab, ba, aa;
	size_t nregs = (size_t)FS_HLL_NSKETCH << f->p.hll_p;

	assert_int_equal(fs_sketch_init(&a, &f->p), 0);
	assert_int_equal(fs_sketch_init(&b, &f->p), 0);
	assert_int_equal(fs_sketch_init(&ab, &f->p), 0);
	assert_int_equal(fs_sketch_init(&ba, &f->p), 0);
	assert_int_equal(fs_sketch_init(&aa, &f->p), 0);
	fold(&a, &f->cpu[0], 0, &f->totals[0][0]);
	fold(&b, &f->cpu[1], 1, &f->totals[1][1]);

	assert_int_equal(fs_sketch_merge(&ab, &a), 0);
	assert_int_equal(fs_sketch_merge(&ab, &b), 0);
	assert_int_equal(fs_sketch_merge(&ba, &b), 0);
	assert_int_equal(fs_sketch_merge(&ba, &a), 0);
	assert_same_sketch(&ab, &ba);

	/* Registers: max(A, A) = A, and (A u B) u B = A u B. */
	assert_int_equal(fs_sketch_merge(&aa, &a), 0);
	assert_int_equal(fs_sketch_merge(&aa, &a), 0);
	assert_memory_equal(aa.hll, a.hll, nregs);
	assert_int_equal(fs_sketch_merge(&ab, &b), 0);
	assert_memory_equal(ab.hll, ba.hll, nregs);
	/* ... while the counts of a repeated merge do add up. */
	assert_int_equal(aa.totals.packets, 2 * a.totals.packets);

	fs_sketch_free(&a);
	fs_sketch_free(&b);
	fs_sketch_free(&ab);
	fs_sketch_free(&ba);
	fs_sketch_free(&aa);
}

static void test_mismatched_params_refused(void **state)
{
	struct fixture *f = *state;
	struct fs_sketch base, other, copy;
	struct fs_sketch_params q;
	/* Per datapath map, one chunk fewer than slot 1 reaches into: the
	 * chunk holding the last element of slot 1. */
	__u32 short_of[FS_NDPMAPS];
	int m;
	const struct fs_update_env *env = &f->cpu[0].env;
	__u32 n[FS_NDPMAPS];
	int i;

	/* (A map of no slot, a detection sketch left off, cannot be short.) */
	for (m = 0; m < FS_NDPMAPS; m++)
		short_of[m] = fs_dp_maps[m].per_slot(&f->p) ?
			      (__u32)((fs_dp_first(m, &f->p, 1) +
				       fs_dp_maps[m].per_slot(&f->p) - 1) >>
				      fs_dp_maps[m].chunk_shift) : 0;

	assert_int_equal(fs_sketch_init(&base, &f->p), 0);
	assert_int_equal(fs_sketch_init(&copy, &f->p), 0);
	fold(&base, &f->cpu[0], 0, &f->totals[0][0]);
	fold(&copy, &f->cpu[0], 0, &f->totals[0][0]);
	for (i = 0; i < 5; i++) {
		q = f->p;
		switch (i) {
		case 0: q.cms_depth++; break;
		case 1: q.cms_log2_width--; break;
		case 2: q.hll_p++; break;
		case 3: q.secret.k0 ^= 1; break;
		case 4: q.secret.k1 ^= 1ULL << 40; break;
		}
		assert_int_equal(fs_sketch_init(&other, &q), 0);
		fold(&other, &f->cpu[1], 0, &f->totals[1][0]);
		assert_int_equal(fs_sketch_merge(&base, &other), -EINVAL);
		fs_sketch_free(&other);
	}
	/* A refused merge leaves the target untouched. */
	assert_same_sketch(&base, &copy);

	/* Bad params cannot even make a sketch. */
	q = f->p;
	q.hll_p = FS_HLL_MAX_P + 1;
	assert_int_equal(fs_sketch_init(&other, &q), -EINVAL);
	q = f->p;
	q.magic = 0;
	assert_int_equal(fs_sketch_init(&other, &q), -EINVAL);

	/* A slot past nslots, or chunk arrays too short for the slot. */
	assert_int_equal(fs_sketch_add_slot(&base, env->chunks, env->nchunks,
					    FS_NSLOTS), -EINVAL);
	for (m = 0; m < FS_NDPMAPS; m++) {
		if (!fs_dp_maps[m].per_slot(&f->p))
			continue;
		memcpy(n, env->nchunks, sizeof(n));
		n[m] = short_of[m];
		assert_int_equal(fs_sketch_add_slot(&base, env->chunks, n, 1), -EINVAL);
	}
	/* ... and exactly long enough is accepted (into a scratch copy). */
	for (m = 0; m < FS_NDPMAPS; m++)
		n[m] = short_of[m] + 1;
	assert_int_equal(fs_sketch_add_slot(&copy, env->chunks, n, 1), 0);
	fs_sketch_reset(&copy);
	fold(&copy, &f->cpu[0], 0, &f->totals[0][0]);
	assert_same_sketch(&base, &copy);
	fs_sketch_free(&base);
	fs_sketch_free(&copy);
}

/* The distinct estimates of the merged sketch against the union's truth. */
static void test_merged_distinct_within_bounds(void **state)
{
	struct fixture *f = *state;
	struct fs_sketch sum;
	const double rse = fs_hll_rse(f->p.hll_p);
	__u32 c, slot, which;

	assert_int_equal(fs_sketch_init(&sum, &f->p), 0);
	for (c = 0; c < NCPU; c++)
		for (slot = 0; slot < FS_NSLOTS; slot++)
			fold(&sum, &f->cpu[c], slot, &f->totals[c][slot]);
	for (which = 0; which < FS_HLL_NSKETCH; which++) {
		double e = fs_sketch_distinct(&sum, which);

		double n = f->distinct[which];

		/* 3 sigma, + 1 for one collision: see test_hll.c. */
		if (fabs(e - n) > 3 * rse * n + 1)
			fail_msg("sketch %u: estimate %.1f, truth %.0f", which,
				 e, n);
	}
	fs_sketch_free(&sum);
}

/*
 * The packed registers' fold (sketch_kind.h) against their definition
 * (hll.h): register r of a slot is bits 6 (r mod 5) .. 6 (r mod 5) + 5 of
 * the slot's word floor(r / 5), and the fold keeps, register by register,
 * the largest over the CPUs.  Random fields (a third of the words zero, as
 * in a light window) on NCPU CPUs and both slots, chunk by chunk as a
 * rotation reads them, for precisions whose slot ends in its first chunk
 * (p <= 13) or in a later one.  The last word's padding fields are set
 * here, which no datapath does: the fold must neither read them as
 * registers nor write past the slot's 3 << p registers, into the guard.
 */
#define GUARD 64
#define WORDS_A_CHUNK 8192	/* 32 KiB of 32-bit words */

static void test_packed_fold_reference(void **state)
{
	static const __u32 ps[] = { 4, 7, 12, 13, 14, 16 };
	const struct fs_hash_secret secret = { 1, 2 };
	__u64 seed = 0x9e3779b97f4a7c15ULL;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		struct fs_sketch_params q;
		struct fs_sketch s;
		__u64 regs = 3ULL << ps[i], words = (regs + 4) / 5, r;
		/* Each slot rounded up to whole chunks (chunk.h). */
		__u64 stride = (words + WORDS_A_CHUNK - 1) / WORDS_A_CHUNK * WORDS_A_CHUNK;
		__u32 nchunks = (__u32)(2 * stride / WORDS_A_CHUNK), slot, c, cpu;
		__u32 *map = calloc((size_t)NCPU * nchunks, WORDS_A_CHUNK * 4);
		__u8 *want = calloc(regs, 1), *part = calloc(regs + GUARD, 1);
		__u8 *own = NULL;

		assert_non_null(map);
		assert_non_null(want);
		assert_non_null(part);
		fs_params_init(&q, 4, 11, ps[i], 0, &secret);
		assert_int_equal(fs_sketch_init(&s, &q), 0);
		own = s.hll;
		s.hll = part;
		for (slot = 0; slot < FS_NSLOTS; slot++) {
			memset(want, 0, regs);
			memset(part, 0, regs + GUARD);
			for (cpu = 0; cpu < NCPU; cpu++) {
				__u32 *v = map + (size_t)cpu * nchunks * WORDS_A_CHUNK;
				__u64 w;

				for (w = 0; w < (__u64)nchunks * WORDS_A_CHUNK; w++)
					v[w] = rng_next(&seed) % 3 ? (__u32)rng_next(&seed) & 0x3fffffffU : 0;
				for (r = 0; r < regs; r++) {
					__u8 x = (v[slot * stride + r / 5] >> (6 * (r % 5))) & 63;

					if (x > want[r])
						want[r] = x;
				}
				for (c = 0; c < nchunks; c++)
					assert_int_equal(fs_sketch_add_chunk(&s, FS_DP_HLL_PACKED, slot, c,
									     v + (size_t)c * WORDS_A_CHUNK), 0);
			}
			for (r = 0; r < regs; r++)
				if (part[r] != want[r])
					fail_msg("p %u slot %u register %llu: %u, definition %u",
						 ps[i], slot, (unsigned long long)r, part[r], want[r]);
			for (r = regs; r < regs + GUARD; r++)
				if (part[r])
					fail_msg("p %u slot %u: byte %llu past the registers written (%u)",
						 ps[i], slot, (unsigned long long)(r - regs), part[r]);
		}
		s.hll = own;
		fs_sketch_free(&s);
		free(map);
		free(want);
		free(part);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_equals_union),
		cmocka_unit_test(test_merge_commutative_and_hll_idempotent),
		cmocka_unit_test(test_mismatched_params_refused),
		cmocka_unit_test(test_merged_distinct_within_bounds),
		cmocka_unit_test(test_packed_fold_reference),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
