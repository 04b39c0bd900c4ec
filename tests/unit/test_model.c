// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_model.c - the user-space model of the datapath state (model.h).
 *
 * The model is the reference the BPF and kfunc datapaths are compared
 * with, so its own contract is pinned here: parameter checks, slot bounds,
 * what one packet touches, and the heavy-hitter report rule of cms.h (a
 * flow is reported when its estimate reaches the threshold, at most once
 * per flow, slot and metric; with thresholds from the window's running
 * totals, every flow above phi is reported and bursts cause no storms).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "ref_hll.h"

#include "model.h"
#include "sketch.h"
#include "flowsketch/hash.h"

#include "flowsketch/packet_update.h"
#include "bursty.h"
#include "rng.h"
#include "variant.h"
#include "model_fold.h"

static void params_of(struct fs_sketch_params *p, __u32 depth, __u32 log2w,
		      int conservative)
{
	const struct fs_hash_secret s = { 0xc0ac29b7c97c50ddULL, 0x3f84d5b5b5470917ULL };

	fs_params_init(p, depth, log2w, 10,
		       conservative ? FS_PARAM_F_CONSERVATIVE : 0, &s);
}

static void flow_key_of(__u32 i, struct fs_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = FS_FAMILY_IPV4;
	k->proto = 17;
	k->sport = (__be16)(i + 1);
	k->dport = 4789;
	k->src[0] = 10;
	k->src[3] = (__u8)i;
	k->dst[0] = 10;
	k->dst[3] = 200;
}

static void test_bad_params_rejected(void **state)
{
	struct fs_sketch_params good, p;
	struct fs_model m;
	int i;

	params_of(&good, 4, 10, 0);
	for (i = 0; i < 22; i++) {
		p = good;
		switch (i) {
		case 0: p.magic ^= 1; break;
		case 1: p.version = FS_PARAMS_VERSION + 1; break;
		case 2: p.cms_depth = 0; break;
		case 3: p.cms_depth = FS_CMS_MAX_DEPTH + 1; break;
		case 4: p.cms_log2_width = FS_CMS_MIN_LOG2W - 1; break;
		case 5: p.cms_log2_width = FS_CMS_MAX_LOG2W + 1; break;
		case 6: p.hll_p = FS_HLL_MIN_P - 1; break;
		case 7: p.hll_p = FS_HLL_MAX_P + 1; break;
		case 8: p.nslots = FS_NSLOTS - 1; break;
		case 9: p.nslots = FS_NSLOTS + 1; break;
		case 10: p.nslots = 0; break;
		case 11: p.flags |= 0x80; break;
		/* The sample's bytes: a rate without a table, tables and
		 * rates out of range. */
		case 12: p.sample_shift = 1; break;
		/* The detection sketches' bytes: a shape without a width,
		 * widths and depths out of range. */
		case 13: p.prefix_shape = 2 << 4; break;
		case 14: p.prefix_log2w = 10; p.prefix_shape = 0; break;
		case 15: p.prefix_log2w = 17; p.prefix_shape = 2 << 4; break;
		case 16: p.spread_shape = 2 << 4 | 3; break;
		case 17: p.spread_log2w = 9; p.spread_shape = 5 << 4 | 3; break;
		case 18: p.spread_log2w = 3; p.spread_shape = 2 << 4; break;
		case 19: p.sample_log2b = FS_SAMPLE_MAX_LOG2_BUCKETS + 1; break;
		case 20: p.sample_log2b = 9; p.sample_shift = FS_SAMPLE_MAX_SHIFT + 1; break;
		case 21: p.sample_log2b = 9; p.sample_shift = 10; break; /* good: skipped */
		}
		if (i == 21) {
			assert_int_equal(fs_model_init(&m, &p), 0);
			fs_model_free(&m);
			continue;
		}
		assert_int_equal(fs_model_init(&m, &p), -EINVAL);
		/* Nothing to free, and freeing is still safe. */
		assert_null(m.env.cms);
		assert_null(m.env.hll);
		fs_model_free(&m);
	}
	/* The extremes of every range are accepted. */
	p = good;
	p.cms_depth = FS_CMS_MAX_DEPTH;
	p.cms_log2_width = FS_CMS_MIN_LOG2W;
	p.hll_p = FS_HLL_MIN_P;
	assert_int_equal(fs_model_init(&m, &p), 0);
	assert_int_equal(m.env.cms_chunks, fs_cms_chunks(&p, FS_NSLOTS));
	assert_int_equal(m.env.hll_chunks, fs_hll_chunks(&p, FS_NSLOTS));
	fs_model_free(&m);
}

/* Slots past FS_NSLOTS are refused without touching any memory (of any
 * datapath map). */
static void test_slot_bounds(void **state)
{
	struct fs_sketch_params p;
	struct fs_model m;
	struct fs_flow_key k;
	void *before[FS_NDPMAPS];
	__u32 slot;
	int i;

	params_of(&p, 3, 8, 0);
	assert_int_equal(fs_model_init(&m, &p), 0);
	flow_key_of(1, &k);
	for (slot = 0; slot < FS_NSLOTS; slot++)
		assert_true(fs_model_update(&m, &k, 100, slot, 0, 0, NULL) >= 0);

	for (i = 0; i < FS_NDPMAPS; i++) {
		before[i] = malloc((size_t)m.env.nchunks[i] * FS_CHUNK_BYTES);
		assert_non_null(before[i]);
		memcpy(before[i], m.env.chunks[i], (size_t)m.env.nchunks[i] * FS_CHUNK_BYTES);
	}
	assert_int_equal(fs_model_update(&m, &k, 100, FS_NSLOTS, 0, 0, NULL),
			 -EINVAL);
	assert_int_equal(fs_model_update(&m, &k, 100, ~0U, 0, 0, NULL), -EINVAL);
	for (i = 0; i < FS_NDPMAPS; i++) {
		assert_memory_equal(before[i], m.env.chunks[i],
				    (size_t)m.env.nchunks[i] * FS_CHUNK_BYTES);
		free(before[i]);
	}
	fs_model_free(&m);
}

/*
 * One packet in slot 1: d cells of slot 1 hold (1, bytes), one register in
 * each of slot 1's three HyperLogLogs is set, slot 0 stays zero, and the
 * returned hash is the flow hash of hash.h.
 */
static void test_one_packet_footprint(void **state)
{
	struct fs_sketch_params p;
	struct fs_model m;
	struct fs_flow_key k;
	struct fs_sketch s0, s1;
	struct fs_cms_cell est;
	struct fs_hash_key key;
	struct fs_packet_hashes ph;
	__u64 h, i, cells = 0, regs = 0;

	params_of(&p, 5, 9, 0);
	assert_int_equal(fs_model_init(&m, &p), 0);
	flow_key_of(42, &k);
	assert_int_equal(fs_model_update(&m, &k, 1234, 1, 0, 0, &h), 0);
	/* Under the key derived here from the secret, not the model's. */
	fs_hash_key_derive(&p.secret, &key);
	fs_packet_hash(&k, &key, &ph);
	assert_int_equal(h, ph.flow);

	assert_int_equal(fs_sketch_init(&s0, &p), 0);
	assert_int_equal(fs_sketch_init(&s1, &p), 0);
	assert_int_equal(fs_sketch_add_slot(&s0, m.env.chunks, m.env.nchunks, 0), 0);
	assert_int_equal(fs_sketch_add_slot(&s1, m.env.chunks, m.env.nchunks, 1), 0);
	for (i = 0; i < fs_cms_cells_per_slot(&p); i++) {
		assert_int_equal(s0.cms[i].packets | s0.cms[i].bytes, 0);
		if (s1.cms[i].packets) {
			assert_int_equal(s1.cms[i].packets, 1);
			assert_int_equal(s1.cms[i].bytes, 1234);
			cells++;
		}
	}
	/* Rows are disjoint ranges of cells, so exactly d cells. */
	assert_int_equal(cells, p.cms_depth);
	for (i = 0; i < ((__u64)FS_HLL_NSKETCH << p.hll_p); i++) {
		assert_int_equal(s0.hll[i], 0);
		if (s1.hll[i])
			regs++;
	}
	assert_int_equal(regs, FS_HLL_NSKETCH);
	/* Each set register is exactly the one the definition derives
	 * from its key (ref_hll.h, not hll.h's code): the flow hash, and the
	 * hashes of the source and destination. */
	for (i = 0; i < FS_HLL_NSKETCH; i++) {
		__u64 kh = i == FS_HLL_FLOWS ? ph.flow :
			   i == FS_HLL_SOURCES ? ph.src : ph.dst;

		assert_int_equal(s1.hll[(i << p.hll_p) | ref_hll_index(kh, p.hll_p)],
				 ref_hll_rank(kh, p.hll_p));
	}
	fs_sketch_query(&s1, h, &est);
	assert_int_equal(est.packets, 1);
	assert_int_equal(est.bytes, 1234);
	fs_sketch_free(&s0);
	fs_sketch_free(&s1);
	fs_model_free(&m);
}

/*
 * A lone flow in the sketch has estimate == truth, so with thresholds T
 * packets and B bytes it must be reported exactly at packet T (packets)
 * and at the first packet that brings its bytes to >= B, once each, and
 * again in the other slot, which is another window.
 */
static void check_lone_flow_reports(int conservative)
{
	const __u64 T = 10, B = 1050, size = 100;
	struct fs_sketch_params p;
	struct fs_model m;
	struct fs_flow_key k;
	__u32 slot, n;

	params_of(&p, 4, 10, conservative);
	assert_int_equal(fs_model_init(&m, &p), 0);
	flow_key_of(3, &k);
	for (slot = 0; slot < FS_NSLOTS; slot++) {
		for (n = 1; n <= 3 * T; n++) {
			int want = 0, got;

			if (n == T)
				want |= FS_REPORT_PACKETS;
			/* bytes after packet n: n * size; crosses B once. */
			if ((n - 1) * size < B && n * size >= B)
				want |= FS_REPORT_BYTES;
			got = fs_model_update(&m, &k, size, slot, T, B, NULL);
			if (got != want)
				fail_msg("slot %u packet %u: report %d, want %d",
					 slot, n, got, want);
		}
	}
	/* A zero threshold never reports. */
	for (n = 0; n < 3 * T; n++)
		assert_int_equal(fs_model_update(&m, &k, size, 0, 0, 0, NULL), 0);
	fs_model_free(&m);
}

#define NFLOWS 200
#define NPACKETS 20000
#define THRESH 50

/*
 * Many flows, per-flow report counts.  Both update rules raise a flow's
 * row minimum by exactly its own increment, so a flow crosses a threshold
 * at most once per slot and metric, whatever other flows do.  In a sketch
 * wide enough that every estimate is exact (checked, not assumed), the
 * reported flows are then exactly those whose count reached the threshold.
 */
static void check_reports_once(int conservative)
{
	struct fs_sketch_params p;
	struct fs_model m;
	struct fs_sketch s;
	struct fs_flow_key k;
	__u32 truth[NFLOWS] = { 0 }, reports[NFLOWS] = { 0 }, reached = 0;
	__u64 hash[NFLOWS], rng = 0x9d39247e33776d41ULL;
	__u32 i, f, a, b;

	params_of(&p, 4, 16, conservative);
	assert_int_equal(fs_model_init(&m, &p), 0);
	for (i = 0; i < NPACKETS; i++) {
		int r;

		/* max of two uniforms: flow f has weight ~ 2f + 1, so counts
		 * spread from a handful to ~ 2 NPACKETS / NFLOWS. */
		a = rng_next(&rng) % NFLOWS;
		b = rng_next(&rng) % NFLOWS;
		f = a > b ? a : b;
		flow_key_of(f, &k);
		r = fs_model_update(&m, &k, 1, 0, THRESH, 0, &hash[f]);
		assert_true(r >= 0);
		assert_int_equal(r & FS_REPORT_BYTES, 0);
		if (r & FS_REPORT_PACKETS) {
			reports[f]++;
			/* Reported on the packet that made the count reach
			 * the threshold, since estimates are exact here. */
			assert_int_equal(truth[f] + 1, THRESH);
		}
		truth[f]++;
	}

	assert_int_equal(fs_sketch_init(&s, &p), 0);
	assert_int_equal(fs_sketch_add_slot(&s, m.env.chunks, m.env.nchunks, 0), 0);
	for (f = 0; f < NFLOWS; f++) {
		struct fs_cms_cell est;

		if (!truth[f])
			continue;
		fs_sketch_query(&s, hash[f], &est);
		assert_int_equal(est.packets, truth[f]);
		assert_true(reports[f] <= 1);
		assert_int_equal(reports[f], truth[f] >= THRESH);
		reached += truth[f] >= THRESH;
	}
	/* The threshold splits the flows: both outcomes were exercised. */
	assert_true(reached > 10 && reached < NFLOWS - 10);
	fs_sketch_free(&s);
	fs_model_free(&m);
}

/*
 * In a narrow sketch flows share cells, estimates exceed the truth and a
 * flow's minimum can be pushed past the threshold by others; still no
 * flow is reported twice in one slot, under either rule.
 */
static void check_reports_at_most_once_shared(int conservative)
{
	struct fs_sketch_params p;
	struct fs_model m;
	struct fs_flow_key k;
	__u32 reports[NFLOWS] = { 0 }, total = 0;
	__u64 rng = 0x2545f4914f6cdd1dULL;
	__u32 i, f;

	params_of(&p, 2, FS_CMS_MIN_LOG2W, conservative);
	assert_int_equal(fs_model_init(&m, &p), 0);
	for (i = 0; i < NPACKETS; i++) {
		int r;

		f = rng_next(&rng) % NFLOWS;
		flow_key_of(f, &k);
		r = fs_model_update(&m, &k, 100, 0, THRESH, 100 * THRESH, NULL);
		assert_true(r >= 0);
		if (r & FS_REPORT_PACKETS) {
			reports[f]++;
			total++;
		}
	}
	for (f = 0; f < NFLOWS; f++)
		assert_true(reports[f] <= 1);
	assert_true(total > 0);
	fs_model_free(&m);
}

/*
 * Recall when other flows push a flow's estimate up between its own
 * packets.  Flow t sends to just under the threshold, then the others
 * (in a sketch of 64 columns they share all its cells) raise every one of
 * its cells past the threshold; t's next packet must still report it.  A
 * rule that reports only when a flow's own packet crosses the threshold
 * (before < T <= after) never reports t.
 */
static void test_reports_after_others_raised_the_estimate(void **state)
{
	const __u64 T = 40;
	struct fs_sketch_params p;
	struct fs_model m;
	struct fs_flow_key kt, k;
	__u32 i;
	int r;

	params_of(&p, 2, FS_CMS_MIN_LOG2W, 0);
	assert_int_equal(fs_model_init(&m, &p), 0);
	flow_key_of(1000, &kt);
	for (i = 1; i < T; i++)
		assert_int_equal(fs_model_update(&m, &kt, 1, 0, T, 0, NULL), 0);
	/* Others, with reporting off (threshold 0): each of the 64 columns
	 * of both rows gets about 20000 / 64 packets, far past T. */
	for (i = 0; i < 20000; i++) {
		flow_key_of(i % 5000, &k);
		assert_int_equal(fs_model_update(&m, &k, 1, 0, 0, 0, NULL), 0);
	}
	r = fs_model_update(&m, &kt, 1, 0, T, 0, NULL);
	assert_int_equal(r, FS_REPORT_PACKETS);
	assert_int_equal(fs_model_update(&m, &kt, 1, 0, T, 0, NULL), 0);
	fs_model_free(&m);
}

/*
 * Bursty traffic through the datapath's threshold rule (fs_model_packet:
 * thresholds from the window's running totals): Zipf flows in packet
 * trains, checked window by window against the oracle of bursty.h, for
 * the first window after start, a quiet window, the window after it, and
 * a window whose first tenth is mice before the heavy traffic ramps up.
 */
#define BURSTY_PHI 0.01
#define BURSTY_WINDOW 50000

static void check_bursty(int conservative)
{
	static struct bursty b;
	static const struct {
		const char *name;
		unsigned int packets, mice;
	} windows[] = {
		{ "first window", BURSTY_WINDOW, 0 },
		{ "quiet window", 0, 0 },
		{ "after quiet", BURSTY_WINDOW, 0 },
		{ "mice, then ramp", BURSTY_WINDOW, BURSTY_WINDOW / 10 },
		{ "steady", BURSTY_WINDOW, 0 },
	};
	const __u64 phi_q32 = (__u64)(BURSTY_PHI * 4294967296.0);
	struct fs_sketch_params p;
	struct fs_model m;
	struct fs_flow_key k;
	unsigned int w, i;
	double eps;

	params_of(&p, FS_DEFAULT_CMS_DEPTH, FS_DEFAULT_CMS_LOG2W, conservative);
	eps = exp(1) / 4096;
	assert_int_equal(fs_model_init(&m, &p), 0);
	bursty_init(&b, 0x5eed0001, 2000, 2000, 1.1, 4);
	for (w = 0; w < FS_ARRAY_SIZE(windows); w++) {
		struct bursty_verdict vp, vb;
		__u32 slot = w % FS_NSLOTS;

		fs_model_zero_slot(&m, slot);
		bursty_next_window(&b);
		for (i = 0; i < windows[w].packets; i++) {
			unsigned int f = bursty_next(&b, i < windows[w].mice);
			int r;

			flow_key_of(f, &k);
			k.src[2] = (__u8)(f >> 8);
			r = fs_model_packet(&m, &k, bursty_len(f), w, phi_q32,
					    NULL);
			assert_true(r >= 0);
			bursty_sent(&b, f, r);
		}
		bursty_check_metric(&b, BURSTY_PHI, eps, b.packets,
				    b.rep_packets, b.total_packets, &vp);
		bursty_check_metric(&b, BURSTY_PHI, eps, b.bytes, b.rep_bytes,
				    b.total_bytes, &vb);
		print_message("%s: packets %u reports (bound %u, %u flows "
			      "above phi/2), bytes %u (bound %u, %u)\n",
			      windows[w].name, vp.reports, vp.bound,
			      vp.heavy_half, vb.reports, vb.bound,
			      vb.heavy_half);
		if (!bursty_verdict_ok(&vp) || !bursty_verdict_ok(&vb))
			fail_msg("%s: missed %u/%u, repeated %u/%u, reports "
				 "%u/%u over bounds %u/%u", windows[w].name,
				 vp.missed, vb.missed, vp.repeated,
				 vb.repeated, vp.reports, vb.reports,
				 vp.bound, vb.bound);
		if (windows[w].packets)
			assert_true(vp.reports > 0 && vb.reports > 0);
	}
	fs_model_free(&m);
}

/*
 * A GSO skb of n segments is one update of 1 + extra_packets = n packets
 * (packet_update.h).  Its oracle is n updates of one packet each, for a
 * flow counted in one run: the cells (standard: each adds n; conservative:
 * each row is raised to min + n either way, as the flow's cells alone are
 * touched in between) and the registers must be identical once folded
 * (the narrow cells spill at other moments: model_fold.h), and the
 * estimate exactly n more.
 */
static void segs_equal_singles(int conservative)
{
	struct fs_sketch_params p;
	struct fs_model one, many;
	struct fs_flow_key k;
	__u32 f, n, i;

	params_of(&p, 4, 6, conservative);
	assert_int_equal(fs_model_init(&one, &p), 0);
	assert_int_equal(fs_model_init(&many, &p), 0);
	for (f = 0; f < 300; f++) {
		flow_key_of(f, &k);
		n = 1 + (f * 2654435761U) % 64;		/* 1 .. 64 segments */
		if (f == 7)
			n = FS_EXTRA_PACKETS_MAX + 1;	/* the field's most */
		assert_int_equal(fs_model_update_segs(&one, &k, n, 1514ULL * n,
						      f % FS_NSLOTS, 0, 0, NULL), 0);
		for (i = 0; i < n; i++)
			assert_int_equal(fs_model_update(&many, &k, 1514, f % FS_NSLOTS,
							 0, 0, NULL), 0);
	}
	assert_same_folds(&one, &many);
	assert_int_equal(fs_model_update_segs(&one, &k, FS_EXTRA_PACKETS_MAX + 2, 0,
					      0, 0, 0, NULL), -EINVAL);
	fs_model_free(&one);
	fs_model_free(&many);
}

/*
 * An update of no packets (extra_packets = -1: a connection established,
 * conn.bpf.c) adds its bytes and not one packet: its oracle is the cells
 * of the same flows counted with the bytes alone added by hand.
 */
static void test_update_without_packets(void **state)
{
	struct fs_sketch_params p;
	struct fs_model a, b;
	struct fs_flow_key k;
	struct fs_sketch s;
	__u32 f;
	size_t i, n;

	(void)state;
	params_of(&p, 4, 6, 0);
	assert_int_equal(fs_model_init(&a, &p), 0);
	assert_int_equal(fs_model_init(&b, &p), 0);
	for (f = 0; f < 100; f++) {
		flow_key_of(f, &k);
		assert_int_equal(fs_model_update(&a, &k, 0, 0, 0, 0, NULL), 0);
		assert_int_equal(fs_model_update_segs(&a, &k, 0, 1, 0, 0, 0, NULL), 0);
		assert_int_equal(fs_model_update(&b, &k, 1, 0, 0, 0, NULL), 0);
	}
	/* b counted each flow once with 1 byte; a once with 0 bytes, then
	 * 1 byte and no packet: the same cells. */
	assert_same_folds(&a, &b);
	model_fold(&a, 0, &s);
	n = fs_kind_slot_bytes(FS_KIND_CMS, &p);
	for (i = 0; i < n; i++)
		if (((__u8 *)s.cms)[i])
			break;
	assert_true(i < n);	/* something was counted */
	fs_sketch_free(&s);
	fs_model_free(&a);
	fs_model_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_params_rejected),
		cmocka_unit_test(test_slot_bounds),
		cmocka_unit_test(test_one_packet_footprint),
		VARIANT(test_lone_flow_reports_standard, check_lone_flow_reports, 0),
		VARIANT(test_lone_flow_reports_conservative, check_lone_flow_reports, 1),
		VARIANT(test_reports_once_standard, check_reports_once, 0),
		VARIANT(test_reports_once_conservative, check_reports_once, 1),
		VARIANT(test_reports_at_most_once_shared_standard,
			check_reports_at_most_once_shared, 0),
		VARIANT(test_reports_at_most_once_shared_conservative,
			check_reports_at_most_once_shared, 1),
		cmocka_unit_test(test_reports_after_others_raised_the_estimate),
		VARIANT(test_segs_equal_singles_standard, segs_equal_singles, 0),
		cmocka_unit_test(test_update_without_packets),
		VARIANT(test_segs_equal_singles_conservative, segs_equal_singles, 1),
		VARIANT(test_bursty_reports_standard, check_bursty, 0),
		VARIANT(test_bursty_reports_conservative, check_bursty, 1),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
