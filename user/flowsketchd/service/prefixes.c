// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * prefixes.c - the "prefixes" request (prefixes.h): the span's prefix
 * sketches, direction by direction, merged into one (prefix.h, "Merge":
 * the bound survives it), then the candidates of the key's tags.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "detect_json.h"
#include "keys.h"
#include "sketch.h"
#include "base/answer.h"
#include "prefixes.h"
#include "query.h"

struct fold {
	struct fs_prefix_bucket *acc;
	const struct fs_prefix_params *p;
};

static int fold(const struct fs_sketch *sum, void *arg)
{
	struct fold *f = arg;

	fs_prefix_merge(f->acc, sum->prefix, f->p);
	return 0;
}

struct json_object *fsd_query_prefixes(const struct fsd_query_ctx *qc,
				       const void *job,
				       struct fsd_query_scratch *q)
{
	const struct fsd_request *r = fsd_query_request(job);
	struct json_object *a = NULL;
	struct fs_prefix_params p;
	struct fsd_span span;
	struct fold f;
	int err;

	fs_params_prefix(qc->params, &p);
	if (!p.depth)
		return fsd_answer_error("this daemon keeps no prefix sketch (flowsketchd --detect prefixes)");
	f.p = &p;
	f.acc = calloc(fs_prefix_buckets(&p), sizeof(*f.acc));
	if (!f.acc)
		return fsd_answer_error("out of memory");
	err = fsd_query_span_each(qc, job, q, fold, &f, &span);
	if (!err) {
		a = json_object_new_object();
		fsd_query_add_span(qc, a, &span);
		fsd_add_string(a, FS_KEY_DIRECTION, fsd_direction_name(r->direction));
		err = fs_prefixes_json(a, f.acc, &p, qc->hash_key, &r->by,
				       r->sort == FSD_SORT_BYTES, r->n,
				       span.totals.packets, span.totals.bytes);
	}
	if (err) {
		json_object_put(a);
		a = fsd_answer_error("prefixes query failed: %s", strerror(-err));
	}
	free(f.acc);
	return a;
}
