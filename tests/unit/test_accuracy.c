// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_accuracy.c - the keyed sample's alarms (sample.h, fs_sample_alarms())
 * on the datapath's own update (the model: update.h over plain memory).
 *
 * Twelve windows of 200,000 packets from a million flows, Zipf-like (rank
 * k drawn with probability ~ 1/k: k = floor(N^u), u uniform), with the
 * sample at 1 in 64 and the daemon's comparisons each window and over the
 * span: the unmodified update never raises an alarm.  `make mutants`
 * builds this test against three broken updates, and each must raise one
 * (and so fail the test).  The checks are the daemon's own
 * (user/lib/sample_check.c), per window, two windows as one (as the
 * directions are added) and over the span:
 *   cms_undercount  a quarter of the flows lose their odd-sized packets
 *                   from Count-Min (undercount);
 *   cms_one_column  an eighth of the flows all take column 0 of every row
 *                   (overcount: their estimates near N / 8, far over eps N);
 *   hll_rank_bias   every HyperLogLog rank one higher (distinct: the count
 *                   about doubles, every window's z far outside 2).
 * The oracle of "no undercount" is what the test sent (each sampled flow's
 * exact count is checked against the test's own tally); the alarms'
 * thresholds are sample.h's, derived from the parameters.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "model.h"
#include "sample_check.h"

#define ACC_FLOWS 1000000U
#define ACC_WINDOWS 12
#define ACC_PACKETS 200000U

static __u64 rng_next(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Flow k's key: a distinct five-tuple for every k < 2^24. */
static void flow_key(__u32 k, struct fs_flow_key *key)
{
	memset(key, 0, sizeof(*key));
	key->family = FS_FAMILY_IPV4;
	key->proto = 17;
	key->src[0] = 10;
	key->src[1] = (__u8)(k >> 16);
	key->src[2] = (__u8)(k >> 8);
	key->src[3] = (__u8)k;
	key->dst[0] = 192;
	key->dst[3] = (__u8)(1 + k % 7);
	key->sport = (__u16)(1024 + k % 5000);
	key->dport = 53;
}

/* Zero slot of every map of m: what the daemon's rotation does. */
static void zero_slot(struct fs_model *m, __u32 slot)
{
	int d;

	for (d = 0; d < FS_NDPMAPS; d++) {
		__u64 first = fs_dp_first(d, &m->params, slot) >> fs_dp_maps[d].chunk_shift;
		__u32 n = fs_dp_slot_chunks(d, &m->params);

		if (first + n <= m->env.nchunks[d])
			memset((char *)m->env.chunks[d] + first * FS_CHUNK_BYTES, 0,
			       (size_t)n * FS_CHUNK_BYTES);
	}
}

struct tally {
	__u64 *packets, *bytes;		/* sent, by flow, this window */
};

/* sample_check.h's each: a sampled flow's exact counts are what the
 * test sent of it (the tally). */
static int exact_is_sent(const struct fs_sample_entry *e, const struct fs_cms_cell *est,
			 void *arg)
{
	const struct tally *t = arg;
	__u32 flow = (__u32)e->key.src[1] << 16 | (__u32)e->key.src[2] << 8 | e->key.src[3];

	(void)est;
	assert_int_equal(e->packets, t->packets[flow]);
	assert_int_equal(e->bytes, t->bytes[flow]);
	return 0;
}

/* The alarms of one check, as the daemon raises them; a sample that can
 * tell is asserted (the test must not pass on an empty one). */
static unsigned int alarms_of(const struct fs_sample_check *k, const struct fs_sketch_params *p)
{
	assert_true(k->sum.flows > 500 && k->tells);
	return fs_sample_alarms(k->c, fs_cms_delta(p), k->z, k->tells);
}

static void test_no_alarm_on_zipf(void **state)
{
	struct fs_sketch_params p = {
		.magic = FS_PARAMS_MAGIC, .version = FS_PARAMS_VERSION,
		.cms_depth = 4, .cms_log2_width = 10, .hll_p = 12, .nslots = FS_NSLOTS,
		.secret = { 0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL },
	};
	const struct fs_sample_params sp = { 6, 9 };
	struct tally t;
	struct fs_model m;
	struct fs_sketch span, win;
	struct fs_sample_check k, prev = { 0 }, both;
	double zs[ACC_WINDOWS];
	__u64 rng = 0xacc, seq, i;
	unsigned int alarms = 0;
	struct fs_flow_key key;

	(void)state;
	fs_params_set_sample(&p, &sp);
	assert_int_equal(fs_model_init(&m, &p), 0);
	assert_int_equal(fs_sketch_init(&span, &p), 0);
	t.packets = calloc(ACC_FLOWS, sizeof(__u64));
	t.bytes = calloc(ACC_FLOWS, sizeof(__u64));
	assert_true(t.packets && t.bytes);
	for (seq = 0; seq < ACC_WINDOWS; seq++) {
		__u32 slot = (__u32)(seq % FS_NSLOTS);

		memset(t.packets, 0, ACC_FLOWS * sizeof(__u64));
		memset(t.bytes, 0, ACC_FLOWS * sizeof(__u64));
		for (i = 0; i < ACC_PACKETS; i++) {
			__u64 r = rng_next(&rng);
			double u = (double)(r >> 11) / 9007199254740992.0;
			__u32 k = (__u32)exp(u * log((double)ACC_FLOWS));
			__u64 len = 60 + (rng_next(&rng) >> 54);

			if (k >= ACC_FLOWS)
				k = ACC_FLOWS - 1;
			flow_key(k, &key);
			assert_true(fs_model_packet(&m, &key, len, seq, 0, NULL) >= 0);
			t.packets[k]++;
			t.bytes[k] += len;
		}
		assert_int_equal(fs_sketch_init(&win, &p), 0);
		assert_int_equal(fs_sketch_add_slot(&win, m.env.chunks, m.env.nchunks, slot), 0);
		win.totals.packets = ACC_PACKETS;
		for (i = 0; i < ACC_FLOWS; i++)
			win.totals.bytes += t.bytes[i];
		/* The daemon's check (sample_check.h), each sampled flow's
		 * exact counts against the tally. */
		assert_int_equal(fs_sample_check(&win, fs_sample_estimate_hashed, &m.key, exact_is_sent, &t, &k), 0);
		alarms |= alarms_of(&k, &p);
		zs[seq] = k.z;
		/* Two windows checked as one, as two directions are. */
		if (seq) {
			both = prev;
			fs_sample_check_add(&both, &k);
			assert_int_equal(both.sum.flows, prev.sum.flows + k.sum.flows);
			alarms |= alarms_of(&both, &p);
		}
		prev = k;
		assert_int_equal(fs_sketch_merge(&span, &win), 0);
		fs_sketch_free(&win);
		zero_slot(&m, slot);
	}
	/* The span: every window's flows merged. */
	assert_int_equal(fs_sample_check(&span, fs_sample_estimate_hashed, &m.key, NULL, NULL, &k), 0);
	alarms |= alarms_of(&k, &p);
	print_message("alarms %#x; span z %.2f; window z", alarms, k.z);
	for (i = 0; i < ACC_WINDOWS; i++)
		print_message(" %.2f", zs[i]);
	print_message("\n");
	assert_int_equal(alarms, 0);
	fs_sketch_free(&span);
	fs_model_free(&m);
	free(t.packets);
	free(t.bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_alarm_on_zipf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
