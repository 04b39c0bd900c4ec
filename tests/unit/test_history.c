// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_history.c - the daemon's window ring and span queries, without BPF.
 *
 * Windows are built the way the daemon builds them: packets go through the
 * shared per-packet update (user/lib/model.c, the datapath's code) into
 * one slot of a per-CPU-shaped model, that slot is folded into the ring
 * entry with fs_sketch_add_slot(), and the reports the update raises are
 * filed as candidates.  Ground truth is the traffic the test generated;
 * bounds come from the sketch parameters.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "windows/history.h"
#include "model.h"

#define NFLOWS 400
#define NWINDOWS 6
#define LOG2W 10
#define DEPTH 4
#define HLL_P 12

static const struct fs_sketch_params params = {
	.magic = FS_PARAMS_MAGIC,
	.version = FS_PARAMS_VERSION,
	.cms_depth = DEPTH,
	.cms_log2_width = LOG2W,
	.hll_p = HLL_P,
	.nslots = FS_NSLOTS,
	.secret = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL },
};

/* The traffic: packets[w][f] packets of 100 + f bytes in window w. */
struct traffic {
	struct fs_flow_key key[NFLOWS];
	__u64 hash[NFLOWS];
	__u64 packets[NWINDOWS][NFLOWS];
};

static void make_key(struct fs_flow_key *k, unsigned int f)
{
	memset(k, 0, sizeof(*k));
	k->family = FS_FAMILY_IPV4;
	k->proto = 17;
	k->sport = (__be16)(1000 + f);
	k->dport = 53;
	k->src[0] = 10;
	k->src[2] = (__u8)(f >> 8);
	k->src[3] = (__u8)f;
	k->dst[0] = 192;
	k->dst[3] = (__u8)(f % 7);
}

/* Zipf-like: a few heavy flows and a long tail, changing per window. */
static void make_traffic(struct traffic *t)
{
	unsigned int w, f;

	srand(42);
	for (f = 0; f < NFLOWS; f++)
		make_key(&t->key[f], f);
	for (w = 0; w < NWINDOWS; w++)
		for (f = 0; f < NFLOWS; f++)
			t->packets[w][f] = (__u64)(2000 / (f + 1)) +
					   (__u64)(rand() % 3);
}

static __u64 flow_bytes(unsigned int f)
{
	return 100 + f;
}

/*
 * Run window w of the traffic through a fresh model slot (the datapath's
 * slot of window seq), fold it into the history and commit it.  Threshold
 * as the daemon sets it: a flow is reported once it reaches thresh packets.
 */
static void run_window(struct fsd_history *h, struct traffic *t,
		       unsigned int w, __u64 seq, __u64 thresh)
{
	__u32 slot = seq % FS_NSLOTS;
	struct fs_sketch *s;
	struct fs_model m;
	struct fs_window_totals totals = { 0 };
	unsigned int f;
	__u64 i;

	assert_int_equal(fs_model_init(&m, &params), 0);
	for (f = 0; f < NFLOWS; f++) {
		for (i = 0; i < t->packets[w][f]; i++) {
			__u64 hash;
			int report;

			report = fs_model_update(&m, &t->key[f], flow_bytes(f),
						 slot, thresh, 0, &hash);
			assert_true(report >= 0);
			t->hash[f] = hash;
			if (report)
				assert_true(fsd_history_add_candidate(h, seq,
						&t->key[f], hash) >= 0);
			totals.packets++;
			totals.bytes += flow_bytes(f);
		}
	}
	assert_int_equal(fsd_history_begin(h, &s), 0);
	assert_int_equal(fs_sketch_add_slot(s, m.env.chunks, m.env.nchunks, slot), 0);
	fs_sketch_add_totals(s, &totals);
	assert_int_equal(fsd_history_commit(h, seq, w * 1000ULL,
					    (w + 1) * 1000ULL, NULL, NULL, NULL), 0);
	fs_model_free(&m);
}

/* The last `windows` windows (0: all kept), with a scratch of its own,
 * as a query thread runs them. */
static int top_of(struct fsd_history *h, __u32 windows, struct fsd_topk *t,
		  struct fsd_span *sp)
{
	struct fsd_span_select sel = { .windows = windows };
	struct fsd_query_scratch q;
	int err;

	assert_int_equal(fsd_query_scratch_init(&q, &h->params), 0);
	err = fsd_history_top(h, &sel, &q, t, sp);
	fsd_query_scratch_free(&q);
	return err;
}

static int distinct_of(struct fsd_history *h, __u32 windows,
		       double d[FS_HLL_NSKETCH], struct fsd_span *sp)
{
	struct fsd_span_select sel = { .windows = windows };
	struct fsd_query_scratch q;
	int err;

	assert_int_equal(fsd_query_scratch_init(&q, &h->params), 0);
	err = fsd_history_distinct(h, &sel, &q, d, sp);
	fsd_query_scratch_free(&q);
	return err;
}

static int flow_of_key(const struct traffic *t, const struct fs_flow_key *k)
{
	unsigned int f;

	for (f = 0; f < NFLOWS; f++)
		if (!memcmp(&t->key[f], k, sizeof(*k)))
			return (int)f;
	return -1;
}

static void test_span_sums_never_undercount(void **state)
{
	struct traffic *t = calloc(1, sizeof(*t));
	double eps = fs_cms_epsilon(&params);
	struct fsd_history h;
	__u32 span;

	assert_non_null(t);
	make_traffic(t);
	assert_int_equal(fsd_history_init(&h, &params, NWINDOWS, 1000, 0), 0);
	for (unsigned int w = 0; w < NWINDOWS; w++)
		run_window(&h, t, w, w, 50);

	for (span = 1; span <= NWINDOWS; span++) {
		struct fs_window_totals truth = { 0 };
		struct fsd_span sp;
		struct fsd_topk top;
		size_t n, i;
		unsigned int w, f;

		for (w = NWINDOWS - span; w < NWINDOWS; w++)
			for (f = 0; f < NFLOWS; f++) {
				truth.packets += t->packets[w][f];
				truth.bytes += t->packets[w][f] * flow_bytes(f);
			}
		assert_int_equal(fsd_topk_init(&top, NFLOWS, FSD_SORT_PACKETS), 0);
		assert_int_equal(top_of(&h, span, &top, &sp), 0);
		assert_int_equal(sp.windows, span);
		assert_int_equal(sp.totals.packets, truth.packets);
		assert_int_equal(sp.totals.bytes, truth.bytes);
		assert_int_equal(sp.end_ns, NWINDOWS * 1000ULL);
		assert_int_equal(sp.start_ns, (NWINDOWS - span) * 1000ULL);
		n = fsd_topk_finish(&top);
		/* Flows 0..39 send >= 50 packets every window: all reported. */
		assert_true(n >= 40);
		assert_int_equal(sp.candidates, n);
		for (i = 0; i < n; i++) {
			const struct fsd_flow_count *c = &top.heap[i];
			__u64 true_packets = 0, sum_of_windows = 0;
			int fl = flow_of_key(t, &c->key);

			assert_true(fl >= 0);
			for (w = NWINDOWS - span; w < NWINDOWS; w++) {
				struct fs_cms_cell est;

				true_packets += t->packets[w][fl];
				fs_sketch_query(&fsd_history_window(&h,
						NWINDOWS - 1 - w)->sketch,
						c->hash, &est);
				sum_of_windows += est.packets;
			}
			/* Count-Min: never below the truth, never above
			 * the sum of the per-window estimates. */
			assert_true(c->packets >= true_packets);
			assert_true(c->packets <= sum_of_windows);
			assert_true(c->bytes >= true_packets * flow_bytes(fl));
			/* eps * N holds with probability 1 - e^-4 per
			 * flow; these top flows share few cells. */
			assert_true((double)(c->packets - true_packets) <=
				    eps * (double)truth.packets);
		}
		/* Heaviest first: flow 0 sends the most. */
		assert_int_equal(flow_of_key(t, &top.heap[0].key), 0);
		fsd_topk_free(&top);
	}
	fsd_history_free(&h);
	free(t);
}

/*
 * Spans are time, fixed when the request arrives: windows that ended
 * after since_ns, and (pinned) only those finished then.  Windows of
 * irregular length (a late rotation makes a long one), times in ns.
 */
static void test_span_by_time(void **state)
{
	static const __u64 ends[] = { 1000, 2000, 3000, 6000, 7000 };
	struct traffic *t = calloc(1, sizeof(*t));
	struct fsd_span_select sel = { 0 };
	struct fsd_query_scratch q;
	struct fsd_history h;
	struct fsd_topk top;
	struct fsd_span sp;
	double d[FS_HLL_NSKETCH];
	unsigned int w;

	assert_non_null(t);
	make_traffic(t);
	assert_int_equal(fsd_history_init(&h, &params, 8, 1000, 0), 0);
	assert_int_equal(fsd_query_scratch_init(&q, &params), 0);
	for (w = 0; w < 4; w++) {
		run_window(&h, t, w, w, 50);
		/* run_window() times window w as [w * 1000, (w + 1) * 1000);
		 * give it this test's instead. */
		h.ring[w].start_ns = w ? ends[w - 1] : 0;
		h.ring[w].end_ns = ends[w];
	}
	/* Ended after 2500: windows 2 and 3 (the long one), 3000 ns. */
	sel.since_ns = 2500;
	assert_int_equal(fsd_history_distinct(&h, &sel, &q, d, &sp), 0);
	assert_int_equal(sp.windows, 2);
	assert_int_equal(sp.start_ns, 2000);
	assert_int_equal(sp.end_ns, 6000);
	/* Pinned before window 4 is committed: it is not in the answer. */
	sel.pinned = true;
	sel.newest = h.windows_finished;
	run_window(&h, t, 4, 4, 50);
	h.ring[4].start_ns = ends[3];
	h.ring[4].end_ns = ends[4];
	assert_int_equal(fsd_topk_init(&top, 5, FSD_SORT_PACKETS), 0);
	assert_int_equal(fsd_history_top(&h, &sel, &q, &top, &sp), 0);
	assert_int_equal(sp.windows, 2);
	assert_int_equal(sp.end_ns, 6000);
	fsd_topk_free(&top);
	/* Unpinned, the same span now ends with window 4. */
	sel.pinned = false;
	assert_int_equal(fsd_history_distinct(&h, &sel, &q, d, &sp), 0);
	assert_int_equal(sp.windows, 3);
	assert_int_equal(sp.end_ns, 7000);
	fsd_query_scratch_free(&q);
	fsd_history_free(&h);
	free(t);
}

static void test_ring_wraps(void **state)
{
	struct traffic *t = calloc(1, sizeof(*t));
	struct fsd_history h;
	struct fsd_span sp;
	struct fsd_topk top;
	__u64 truth;
	unsigned int w, f;

	assert_non_null(t);
	make_traffic(t);
	/* Three windows kept, six pushed: the first three are gone. */
	assert_int_equal(fsd_history_init(&h, &params, 3, 1000, 7), 0);
	for (w = 0; w < NWINDOWS; w++)
		run_window(&h, t, w, 7 + w, 50);
	assert_int_equal(h.count, 3);
	assert_int_equal(h.windows_finished, NWINDOWS);
	for (w = 0; w < 3; w++)
		assert_int_equal(fsd_history_window(&h, w)->seq,
				 7 + NWINDOWS - 1 - w);
	assert_null(fsd_history_window(&h, 3));

	truth = 0;
	for (w = NWINDOWS - 3; w < NWINDOWS; w++)
		for (f = 0; f < NFLOWS; f++)
			truth += t->packets[w][f];
	assert_int_equal(fsd_topk_init(&top, 5, FSD_SORT_BYTES), 0);
	assert_int_equal(top_of(&h, 3, &top, &sp), 0);
	assert_int_equal(sp.windows, 3);
	assert_int_equal(sp.totals.packets, truth);
	assert_int_equal(fsd_topk_finish(&top), 5);
	fsd_topk_free(&top);

	/* Totals since start count every window, evicted or not. */
	truth = 0;
	for (w = 0; w < NWINDOWS; w++)
		for (f = 0; f < NFLOWS; f++)
			truth += t->packets[w][f];
	assert_int_equal(h.totals.packets, truth);
	fsd_history_free(&h);
	free(t);
}

static void test_span_beyond_history_refused(void **state)
{
	struct fsd_history h;
	struct fsd_topk top;
	struct fsd_span sp;
	double d[FS_HLL_NSKETCH];

	assert_int_equal(fsd_history_init(&h, &params, 4, 10, 0), 0);
	assert_int_equal(fsd_topk_init(&top, 5, FSD_SORT_PACKETS), 0);
	assert_int_equal(top_of(&h, 5, &top, &sp), -ERANGE);
	assert_int_equal(distinct_of(&h, 5, d, &sp), -ERANGE);
	/* Within the history but nothing finished yet: empty, not an error. */
	assert_int_equal(top_of(&h, 4, &top, &sp), 0);
	assert_int_equal(sp.windows, 0);
	assert_int_equal(fsd_topk_finish(&top), 0);
	fsd_topk_free(&top);
	fsd_history_free(&h);
}

static void test_candidates_by_window(void **state)
{
	struct fs_flow_key k[3];
	struct fsd_history h;
	struct fs_sketch *s;
	unsigned int i;

	for (i = 0; i < 3; i++)
		make_key(&k[i], i);
	/* Pending: windows 5 and 6 (the two datapath slots). */
	assert_int_equal(fsd_history_init(&h, &params, 4, 2, 5), 0);
	assert_int_equal(fsd_history_add_candidate(&h, 5, &k[0], 1), 1);
	assert_int_equal(fsd_history_add_candidate(&h, 5, &k[0], 1), 0);
	assert_int_equal(fsd_history_add_candidate(&h, 6, &k[1], 2), 1);
	assert_int_equal(fsd_history_add_candidate(&h, 4, &k[1], 2), -ESRCH);
	assert_int_equal(fsd_history_add_candidate(&h, 7, &k[1], 2), -ESRCH);
	assert_int_equal(h.stray_reports, 2);
	/* Limit 2 per window. */
	assert_int_equal(fsd_history_add_candidate(&h, 5, &k[1], 2), 1);
	assert_int_equal(fsd_history_add_candidate(&h, 5, &k[2], 3), -ENOSPC);
	assert_int_equal(h.candidate_overflow, 1);

	assert_int_equal(fsd_history_begin(&h, &s), 0);
	assert_int_equal(fsd_history_commit(&h, 6, 0, 1, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(fsd_history_commit(&h, 5, 0, 1, NULL, NULL, NULL), 0);
	assert_int_equal(fsd_history_window(&h, 0)->candidates.count, 2);
	/* Window 7 now pending in slot 1, window 6 still in slot 0. */
	assert_int_equal(fsd_history_add_candidate(&h, 7, &k[2], 3), 1);
	assert_int_equal(fsd_history_add_candidate(&h, 5, &k[2], 3), -ESRCH);
	assert_int_equal(fsd_history_begin(&h, &s), 0);
	assert_int_equal(fsd_history_commit(&h, 6, 1, 2, NULL, NULL, NULL), 0);
	assert_int_equal(fsd_history_window(&h, 0)->candidates.count, 1);
	assert_int_equal(fsd_history_window(&h, 1)->candidates.count, 2);
	fsd_history_free(&h);
}

static void test_dropped_window(void **state)
{
	struct fs_flow_key k;
	struct fsd_history h;
	struct fs_sketch *s;

	make_key(&k, 1);
	assert_int_equal(fsd_history_init(&h, &params, 4, 10, 0), 0);
	assert_int_equal(fsd_history_add_candidate(&h, 0, &k, 1), 1);
	/* Window 0 could not be read: dropped, window 1 is next to close. */
	fsd_history_drop(&h, 0);
	assert_int_equal(h.windows_dropped, 1);
	assert_int_equal(fsd_history_add_candidate(&h, 0, &k, 1), -ESRCH);
	assert_int_equal(fsd_history_begin(&h, &s), 0);
	assert_int_equal(fsd_history_commit(&h, 0, 0, 1, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(fsd_history_commit(&h, 1, 1, 2, NULL, NULL, NULL), 0);
	assert_int_equal(fsd_history_window(&h, 0)->candidates.count, 0);
	/* Window 2 reuses slot 0 and starts with an empty set. */
	assert_int_equal(fsd_history_add_candidate(&h, 2, &k, 1), 1);
	assert_int_equal(h.pending[0].count, 1);
	fsd_history_free(&h);
}

static void test_distinct_over_span(void **state)
{
	struct traffic *t = calloc(1, sizeof(*t));
	double d[FS_HLL_NSKETCH], rse = 1.04 / sqrt(1 << HLL_P);
	struct fsd_history h;
	struct fsd_span sp;
	unsigned int w;

	assert_non_null(t);
	make_traffic(t);
	assert_int_equal(fsd_history_init(&h, &params, NWINDOWS, 1000, 0), 0);
	for (w = 0; w < NWINDOWS; w++)
		run_window(&h, t, w, w, 0);
	/* Every window carries all NFLOWS flows (>= 5 packets each) from
	 * NFLOWS sources to 7 destinations; the union is the same sets. */
	assert_int_equal(distinct_of(&h, NWINDOWS, d, &sp), 0);
	assert_int_equal(sp.windows, NWINDOWS);
	/* 4 standard errors: fails by chance with probability 6e-5. */
	assert_true(fabs(d[FS_HLL_FLOWS] - NFLOWS) <= 4 * rse * NFLOWS);
	assert_true(fabs(d[FS_HLL_SOURCES] - NFLOWS) <= 4 * rse * NFLOWS);
	assert_true(fabs(d[FS_HLL_DESTS] - 7) < 1);
	fsd_history_free(&h);
	free(t);
}

static void test_memory_accounted(void **state)
{
	struct fsd_history h;
	struct fs_sketch *s;
	size_t before;

	/* Sketches are allocated when first filled: none at init, then one
	 * per window the ring holds, plus the spare being filled. */
	assert_int_equal(fsd_history_init(&h, &params, 4, 10, 0), 0);
	before = fsd_history_bytes(&h);
	assert_true(before < fs_sketch_bytes(&params));
	assert_int_equal(fsd_history_begin(&h, &s), 0);
	assert_int_equal(fsd_history_bytes(&h) - before,
			 fs_sketch_bytes(&params));
	assert_int_equal(fsd_history_commit(&h, 0, 0, 1, NULL, NULL, NULL), 0);
	assert_int_equal(fsd_history_bytes(&h) - before,
			 fs_sketch_bytes(&params));
	assert_int_equal(fsd_history_begin(&h, &s), 0);
	assert_int_equal(fsd_history_bytes(&h) - before,
			 2 * fs_sketch_bytes(&params));
	fsd_history_free(&h);
}

/* Fill the pending set of window seq to the limit with fresh keys. */
static void fill_pending(struct fsd_history *h, __u64 seq, __u32 limit,
			 unsigned int *next_flow)
{
	struct fs_flow_key k;
	__u32 i;

	for (i = 0; i < limit; i++, (*next_flow)++) {
		make_key(&k, *next_flow);
		assert_int_equal(fsd_history_add_candidate(h, seq, &k,
							   *next_flow * 0x9e3779b97f4a7c15ULL), 1);
	}
	make_key(&k, *next_flow);
	assert_int_equal(fsd_history_add_candidate(h, seq, &k, 1), -ENOSPC);
}

/*
 * The bound the daemon checks against its cap before it allocates
 * (fsd_history_max_bytes) is the memory the history really reaches when
 * every window and every candidate set, finished and pending, is full,
 * through a wrap of the ring; and it is never passed.  Limits on both
 * sides of a table doubling (32 keys fit the first 64-slot table, 33 need
 * 128 slots).
 */
static void test_max_bytes_reached(void **state)
{
	static const __u32 limits[] = { 1, 32, 33, 100 };
	const __u32 capacity = 3;
	unsigned int l, next_flow = 0;
	struct fsd_history h;
	struct fs_sketch *s;
	__u64 seq;

	for (l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
		size_t max = fsd_history_max_bytes(&params, capacity, limits[l]);

		assert_int_equal(fsd_history_init(&h, &params, capacity,
						  limits[l], 0), 0);
		/* Twice round the ring: wrapped windows reuse their sets. */
		for (seq = 0; seq < 2 * capacity; seq++) {
			fill_pending(&h, seq, limits[l], &next_flow);
			assert_int_equal(fsd_history_begin(&h, &s), 0);
			assert_int_equal(fsd_history_commit(&h, seq, seq, seq + 1, NULL, NULL, NULL), 0);
			assert_true(fsd_history_bytes(&h) <= max);
		}
		/* The two pending windows (datapath slots) full as well. */
		fill_pending(&h, seq, limits[l], &next_flow);
		fill_pending(&h, seq + 1, limits[l], &next_flow);
		assert_int_equal(fsd_history_bytes(&h), max);
		fsd_history_free(&h);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span_sums_never_undercount),
		cmocka_unit_test(test_ring_wraps),
		cmocka_unit_test(test_span_by_time),
		cmocka_unit_test(test_span_beyond_history_refused),
		cmocka_unit_test(test_candidates_by_window),
		cmocka_unit_test(test_max_bytes_reached),
		cmocka_unit_test(test_dropped_window),
		cmocka_unit_test(test_distinct_over_span),
		cmocka_unit_test(test_memory_accounted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
