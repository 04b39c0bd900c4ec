// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * accuracy.c - the "accuracy" request (accuracy.h): the span's keyed
 * sample (include/flowsketch/sample.h) against its sketches, direction by
 * direction, and the span's windows one by one for the HyperLogLog's share.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "flow_json.h"
#include "keys.h"
#include "sketch.h"
#include "base/answer.h"
#include "windows/history.h"
#include "accuracy.h"
#include "query.h"

/* One metric's figures over the span's sampled flows (sample.h, "The
 * comparison"): packets, then bytes. */
struct metric {
	__u64 *exact, *estimate;
	size_t n;
};

struct acc {
	const struct fsd_query_ctx *qc;
	struct json_object *flows;
	struct metric m[2];
	size_t cap;
	double eps_n[2];		/* eps N of each metric, summed over directions */
	double hll, n_hat, rate_mean;
	__u64 sample_flows, full, cut;
	int calls;			/* directions folded so far */
	bool out_only;			/* the first (only) one is "out" */
	/* The windows' z-scores, for the share within 2 standard errors. */
	double *z;
	size_t nz, zcap;
};

static int grow(struct acc *a, size_t need)
{
	size_t cap = a->cap ? a->cap : 256;
	int i;

	while (cap < need)
		cap *= 2;
	if (cap == a->cap)
		return 0;
	for (i = 0; i < 2; i++) {
		__u64 *e = realloc(a->m[i].exact, cap * sizeof(__u64));
		__u64 *s = e ? realloc(a->m[i].estimate, cap * sizeof(__u64)) : NULL;

		if (e)
			a->m[i].exact = e;
		if (!s)
			return -ENOMEM;
		a->m[i].estimate = s;
	}
	a->cap = cap;
	return 0;
}

/* A sampled flow: its counts, exact and estimated, in the answer and in
 * the comparison. */
static int add_flow(struct acc *a, const struct fs_sketch *sum,
		    const struct fs_sample_entry *e, const char *direction)
{
	struct fs_packet_hashes h;
	struct fs_cms_cell est;
	struct json_object *f;
	int err = grow(a, a->m[0].n + 1);

	if (err)
		return err;
	fs_packet_hash(&e->key, a->qc->hash_key, &h);
	fs_sketch_query(sum, h.flow, &est);
	a->m[0].exact[a->m[0].n] = e->packets;
	a->m[0].estimate[a->m[0].n++] = est.packets;
	a->m[1].exact[a->m[1].n] = e->bytes;
	a->m[1].estimate[a->m[1].n++] = est.bytes;
	f = fs_flow_key_json(&e->key);
	fsd_add_u64(f, FS_KEY_EXACT_PACKETS, e->packets);
	fsd_add_u64(f, FS_KEY_EXACT_BYTES, e->bytes);
	fsd_add_u64(f, FS_KEY_PACKETS, est.packets);
	fsd_add_u64(f, FS_KEY_BYTES, est.bytes);
	fsd_add_string(f, FS_KEY_DIRECTION, direction);
	json_object_array_add(a->flows, f);
	return 0;
}

/* One direction's span sum: its sampled flows, and its HyperLogLog of
 * flows against the sample's distinct count. */
static int fold(const struct fs_sketch *sum, void *arg)
{
	struct acc *a = arg;
	const struct fs_sketch_params *p = &sum->params;
	__u64 nb = fs_params_sample_buckets(p), i;
	double eps = fs_cms_epsilon(p);
	const char *direction = a->calls++ || a->out_only ? "out" : "in";
	struct fs_sample_sum s;
	__u32 w;
	int err;

	for (i = 0; i < nb; i++) {
		const struct fs_sample_bucket *b = &sum->sample[i];
		__u64 limit = fs_sample_limit(b, p->sample_shift);

		for (w = 0; w < FS_SAMPLE_WAYS; w++) {
			if (!fs_sample_live(&b->e[w], limit))
				continue;
			err = add_flow(a, sum, &b->e[w], direction);
			if (err)
				return err;
		}
	}
	a->eps_n[0] += eps * (double)sum->totals.packets;
	a->eps_n[1] += eps * (double)sum->totals.bytes;
	fs_sample_summarize(sum->sample, nb, p->sample_shift, &s);
	a->hll += fs_sketch_distinct(sum, FS_HLL_FLOWS);
	a->n_hat += s.n_hat;
	a->rate_mean = s.rate_mean;
	a->sample_flows += s.flows;
	a->full += s.full;
	a->cut += s.cut;
	return 0;
}

/* Each window's z-score, where its sample is large enough to tell. */
static int window_z(const struct fsd_window_point *pts, int n, const char *direction,
		    void *arg)
{
	struct acc *a = arg;
	__u32 prec = a->qc->params->hll_p;
	int i;

	(void)direction;
	for (i = 0; i < n; i++) {
		const struct fsd_window_point *w = &pts[i];
		double hll = w->distinct[FS_HLL_FLOWS];

		if (!fs_sample_z_meaningful(hll, w->sample.rate_mean))
			continue;
		if (a->nz == a->zcap) {
			size_t cap = a->zcap ? 2 * a->zcap : 64;
			double *z = realloc(a->z, cap * sizeof(*z));

			if (!z)
				return -ENOMEM;
			a->z = z;
			a->zcap = cap;
		}
		a->z[a->nz++] = fs_sample_hll_z(hll, w->sample.n_hat, w->sample.rate_mean, prec);
	}
	return 0;
}

/* The Count-Min figures of one metric, into o under its name. */
static void add_metric(struct json_object *o, const char *name, const struct metric *m,
		       double eps_n, struct fs_sample_cmp *c)
{
	struct json_object *x = json_object_new_object();

	fs_sample_compare(m->exact, m->estimate, m->n, eps_n, c);
	fsd_add_u64(x, FS_KEY_UNDERCOUNTS, c->undercounts);
	fsd_add_double(x, FS_KEY_OVERCOUNT_MAX_EPS, c->overcount_max_eps);
	fsd_add_u64(x, FS_KEY_OVER_BOUND, c->over_bound);
	fsd_add_double(x, FS_KEY_OVER_BOUND_SHARE, c->over_bound_share);
	fsd_add_double(x, FS_KEY_EPS_N, eps_n);
	json_object_object_add(o, name, x);
}

/* The alarms raised (sample.h, fs_sample_alarms()), by name. */
static void add_alarms(struct json_object *a, unsigned int alarms)
{
	static const char *const names[] = { "undercount", "overcount", "distinct" };
	struct json_object *why = json_object_new_array();
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (alarms & (1U << i))
			json_object_array_add(why, json_object_new_string(names[i]));
	json_object_object_add(a, FS_KEY_ALARM, json_object_new_boolean(alarms != 0));
	json_object_object_add(a, FS_KEY_ALARMS, why);
}

static struct json_object *answer(const struct fsd_query_ctx *qc, struct acc *acc,
				  const struct fsd_span *span)
{
	const struct fs_sketch_params *p = qc->params;
	struct json_object *a = json_object_new_object(), *s = json_object_new_object();
	double delta = fs_cms_delta(p), within, floor;
	struct fs_sample_cmp c[2];

	fsd_query_add_span(qc, a, span);
	fsd_add_u64(a, FS_KEY_TOTAL_PACKETS, span->totals.packets);
	fsd_add_u64(a, FS_KEY_TOTAL_BYTES, span->totals.bytes);
	fsd_add_u64(s, FS_KEY_RATE, 1ULL << p->sample_shift);
	fsd_add_u64(s, FS_KEY_BUCKETS, fs_params_sample_buckets(p));
	fsd_add_u64(s, FS_KEY_FLOWS, acc->sample_flows);
	fsd_add_u64(s, FS_KEY_FULL, acc->full);
	fsd_add_double(s, FS_KEY_RATE_EFFECTIVE, acc->rate_mean);
	json_object_object_add(a, FS_KEY_SAMPLE, s);
	add_metric(a, FS_KEY_PACKETS, &acc->m[0], acc->eps_n[0], &c[0]);
	add_metric(a, FS_KEY_BYTES, &acc->m[1], acc->eps_n[1], &c[1]);
	/* The flat names: the packets' figures, the undercounts of
	 * both metrics. */
	fsd_add_u64(a, FS_KEY_UNDERCOUNTS, c[0].undercounts + c[1].undercounts);
	fsd_add_double(a, FS_KEY_OVERCOUNT_MAX_EPS, c[0].overcount_max_eps);
	fsd_add_double(a, FS_KEY_OVER_BOUND_SHARE, c[0].over_bound_share);
	fsd_add_double(a, FS_KEY_DELTA, delta);
	fsd_add_double(a, FS_KEY_HLL, acc->hll);
	fsd_add_double(a, FS_KEY_SAMPLE_DISTINCT, acc->n_hat);
	fsd_add_double(a, FS_KEY_HLL_Z, fs_sample_hll_z(acc->hll, acc->n_hat, acc->rate_mean,
							 p->hll_p));
	within = fs_sample_share_within(acc->z, acc->nz, 2);
	floor = fs_sample_share_floor(acc->nz, 2, FS_SAMPLE_ALARM_Z);
	fsd_add_u64(a, FS_KEY_HLL_WINDOWS, acc->nz);
	fsd_add_double(a, FS_KEY_HLL_WITHIN_2SE, within);
	fsd_add_double(a, FS_KEY_HLL_SHARE_FLOOR, floor);
	add_alarms(a, fs_sample_alarms(c, delta, within, acc->nz));
	json_object_object_add(a, FS_KEY_FLOWS, json_object_get(acc->flows));
	return a;
}

struct json_object *fsd_query_accuracy(const struct fsd_query_ctx *qc,
				       const void *job,
				       struct fsd_query_scratch *q)
{
	const struct fsd_request *r = fsd_query_request(job);
	struct json_object *a = NULL;
	struct acc acc = { .qc = qc, .out_only = r->direction == FSD_DIR_OUT };
	struct fsd_span span;
	int err, i;

	if (!qc->params->sample_log2b)
		return fsd_answer_error("this daemon keeps no keyed sample (flowsketchd --sample-rate 1/N)");
	acc.flows = json_object_new_array();
	err = fsd_query_span_each(qc, job, q, fold, &acc, &span);
	if (!err)
		err = fsd_query_series_each(qc, job, window_z, &acc);
	if (!err) {
		a = answer(qc, &acc, &span);
		fsd_add_string(a, FS_KEY_DIRECTION, fsd_direction_name(r->direction));
	}
	if (err)
		a = fsd_answer_error("accuracy query failed: %s", strerror(-err));
	json_object_put(acc.flows);
	for (i = 0; i < 2; i++) {
		free(acc.m[i].exact);
		free(acc.m[i].estimate);
	}
	free(acc.z);
	return a;
}
