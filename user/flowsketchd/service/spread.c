// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * spread.c - the "spread" request (spread.h): the span's spread sketches,
 * direction by direction, merged into one (register max: the sketch of the
 * union, spread.h "Merge"), then the side's candidates.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "flow_fmt.h"
#include "keys.h"
#include "sketch.h"
#include "spread_estimate.h"
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

static struct json_object *bound_json(const struct fs_spread_params *p,
				      double sharing, double miss)
{
	struct json_object *eb = json_object_new_object();

	fsd_add_u64(eb, FS_KEY_Z, FSD_SPREAD_Z);
	fsd_add_u64(eb, FS_KEY_SAMPLE_RATE, 1ULL << p->sample_shift);
	fsd_add_u64(eb, FS_KEY_REGISTERS, FS_SPREAD_REGS);
	fsd_add_u64(eb, FS_KEY_DEPTH, p->depth);
	fsd_add_u64(eb, FS_KEY_WIDTH, 1ULL << p->log2_width);
	fsd_add_u64(eb, FS_KEY_SHARING, (__u64)sharing);
	fsd_add_double(eb, FS_KEY_SHARING_PROBABILITY, miss);
	return eb;
}

/* One host: its estimate X, its relative standard error sigma(X) and the
 * lower end X / (1 + z sigma) - S (spread.h, "Error"). */
static struct json_object *spreader_json(const struct fs_spreader *s,
					 const struct fs_spread_params *p,
					 const char *side, double sharing)
{
	double sigma = fs_spread_sigma(p, s->distinct);
	double low = floor(s->distinct / (1 + FSD_SPREAD_Z * sigma) - sharing);
	struct json_object *o = json_object_new_object();
	char text[64];

	fs_addr_str(s->family, s->addr, text, sizeof(text));
	fsd_add_string(o, side, text);
	fsd_add_u64(o, FS_KEY_DISTINCT, (__u64)llround(s->distinct));
	fsd_add_double(o, FS_KEY_ERROR, sigma);
	fsd_add_u64(o, FS_KEY_DISTINCT_LOW, low > 0 ? (__u64)low : 0);
	return o;
}

struct json_object *fsd_query_spread(const struct fsd_query_ctx *qc,
				     const void *job,
				     struct fsd_query_scratch *q)
{
	const struct fsd_request *r = fsd_query_request(job);
	const char *side = r->by.side == FS_PREFIX_SRC ? FS_KEY_SRC : FS_KEY_DST;
	struct json_object *a = NULL, *list;
	struct fs_spreader *top = NULL;
	struct fs_spread_params p;
	struct fsd_span span;
	struct fold f = { 0 };
	double sharing, miss;
	int i, got, err;

	fs_params_spread(qc->params, &p);
	if (!p.depth)
		return fsd_answer_error("this daemon keeps no spread sketch (flowsketchd --detect spread)");
	f.p = &p;
	f.acc = calloc(fs_spread_buckets(&p), sizeof(*f.acc));
	top = calloc(r->n, sizeof(*top));
	if (!f.acc || !top) {
		a = fsd_answer_error("out of memory");
		goto out;
	}
	err = fsd_query_span_each(qc, job, q, fold, &f, &span);
	got = err ? err : fs_spread_top(f.acc, &p, r->by.side, qc->hash_key,
					top, r->n);
	if (got < 0) {
		a = fsd_answer_error("spread query failed: %s", strerror(-got));
		goto out;
	}
	sharing = ceil(fs_spread_sharing(&p, f.flows, &miss));
	a = json_object_new_object();
	fsd_query_add_span(qc, a, &span);
	fsd_add_string(a, FS_KEY_DIRECTION, fsd_direction_name(r->direction));
	fsd_add_string(a, FS_KEY_BY, side);
	fsd_add_u64(a, FS_KEY_DISTINCT_FLOWS, (__u64)llround(f.flows));
	json_object_object_add(a, FS_KEY_ERROR_BOUND, bound_json(&p, sharing, miss));
	list = json_object_new_array();
	for (i = 0; i < got; i++)
		json_object_array_add(list, spreader_json(&top[i], &p, side, sharing));
	json_object_object_add(a, FS_KEY_SPREADERS, list);
out:
	free(top);
	free(f.acc);
	return a;
}
