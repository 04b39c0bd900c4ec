// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * accuracy.c - the "accuracy" request (accuracy.h): the span's keyed
 * sample (include/flowsketch/sample.h) against its sketches, direction by
 * direction, and the span's windows one by one for the HyperLogLog's share.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "keys.h"
#include "sample_check.h"
#include "sample_json.h"
#include "base/answer.h"
#include "windows/history.h"
#include "accuracy.h"
#include "query.h"

struct acc {
	const struct fsd_query_ctx *qc;
	struct json_object *flows;
	struct fs_sample_check check;	/* the directions' as one */
	const char *direction;		/* the one being folded */
	int calls;			/* directions folded so far */
	bool out_only;			/* the first (only) one is "out" */
	/* The windows' z-scores, for the share within 2 standard errors. */
	double *z;
	size_t nz, zcap;
};

/* A sampled flow in the answer: its key, counts and estimates. */
static int add_flow(const struct fs_sample_entry *e, const struct fs_cms_cell *est,
		    void *arg)
{
	struct acc *a = arg;

	json_object_array_add(a->flows, fs_sample_flow_json(e, est, a->direction));
	return 0;
}

/* One direction's span sum against its sample (sample_check.h). */
static int fold(const struct fs_sketch *sum, void *arg)
{
	struct acc *a = arg;
	struct fs_sample_check one;
	int err;

	a->direction = a->calls++ || a->out_only ? "out" : "in";
	err = fs_sample_check(sum, fs_sample_estimate_hashed, (void *)a->qc->hash_key,
			      add_flow, a, &one);
	if (err)
		return err;
	if (a->calls == 1)
		a->check = one;
	else
		fs_sample_check_add(&a->check, &one);
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

static struct json_object *answer(const struct fsd_query_ctx *qc, struct acc *acc,
				  const struct fsd_span *span)
{
	struct json_object *a = json_object_new_object();

	fsd_query_add_span(qc, a, span);
	fsd_add_u64(a, FS_KEY_TOTAL_PACKETS, span->totals.packets);
	fsd_add_u64(a, FS_KEY_TOTAL_BYTES, span->totals.bytes);
	fs_sample_check_json(a, qc->params, &acc->check, acc->z, acc->nz);
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
	int err;

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
	free(acc.z);
	return a;
}
