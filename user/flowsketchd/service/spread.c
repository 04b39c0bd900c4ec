// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * spread.c - the "spread" request (spread.h): the span's spread sketches,
 * direction by direction, merged into one (register max: the sketch of the
 * union, spread.h "Merge"), then the side's candidates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "detect_json.h"
#include "keys.h"
#include "sketch.h"
#include "base/answer.h"
#include "query.h"
#include "spread.h"

struct fold {
	struct fs_spread_bucket *acc;
	const struct fs_spread_params *p;
	double flows;
};

/*
 * F of the sharing term, the span's distinct flows: each direction's
 * added, at least their union's, so the bound stays a bound.
 */
static int fold(const struct fs_sketch *sum, void *arg)
{
	struct fold *f = arg;

	fs_spread_merge(f->acc, sum->spread, f->p);
	f->flows += fs_sketch_distinct(sum, FS_HLL_FLOWS);
	return 0;
}

struct json_object *fsd_query_spread(const struct fsd_query_ctx *qc,
				     const void *job,
				     struct fsd_query_scratch *q)
{
	const struct fsd_request *r = fsd_query_request(job);
	struct json_object *a = NULL;
	struct fs_spread_params p;
	struct fsd_span span;
	struct fold f = { 0 };
	int err;

	fs_params_spread(qc->params, &p);
	if (!p.depth)
		return fsd_answer_error("this daemon keeps no spread sketch (flowsketchd --detect spread)");
	f.p = &p;
	f.acc = calloc(fs_spread_buckets(&p), sizeof(*f.acc));
	if (!f.acc)
		return fsd_answer_error("out of memory");
	err = fsd_query_span_each(qc, job, q, fold, &f, &span);
	if (!err) {
		a = json_object_new_object();
		fsd_query_add_span(qc, a, &span);
		fsd_add_string(a, FS_KEY_DIRECTION, fsd_direction_name(r->direction));
		err = fs_spreaders_json(a, f.acc, &p, qc->hash_key,
					r->by.side == FS_PREFIX_SRC ? FS_SPREAD_SRC : FS_SPREAD_DST,
					r->n, f.flows);
	}
	if (err) {
		json_object_put(a);
		a = fsd_answer_error("spread query failed: %s", strerror(-err));
	}
	free(f.acc);
	return a;
}
