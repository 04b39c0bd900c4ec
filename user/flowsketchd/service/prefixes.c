// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * prefixes.c - the "prefixes" request (prefixes.h): the span's prefix
 * sketches, direction by direction, merged into one (prefix.h, "Merge":
 * the bound survives it), then the candidates of the key's tags.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "cidr.h"
#include "keys.h"
#include "prefix_estimate.h"
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

/*
 * The answer's bound (prefix.h, "Error"), for a span of n packets and b
 * bytes.  Collisions add at most 4 e N / w packets but with probability
 * e^-d; bytes are a Count-Min cell of the sampled bytes (no vote), so
 * theirs is twice that share of B: 8 e B / w.
 */
static struct json_object *bound_json(const struct fs_prefix_params *p,
				      __u64 n, __u64 b, double *collisions)
{
	double w = ldexp(1, (int)p->log2_width);
	struct json_object *eb = json_object_new_object();

	*collisions = ceil(4 * M_E * (double)n / w);
	fsd_add_u64(eb, FS_KEY_Z, FSD_PREFIX_Z);
	fsd_add_u64(eb, FS_KEY_SCALE, fs_prefix_scale(p));
	fsd_add_u64(eb, FS_KEY_DEPTH, p->depth);
	fsd_add_u64(eb, FS_KEY_WIDTH, 1ULL << p->log2_width);
	fsd_add_u64(eb, FS_KEY_COLLISIONS, (__u64)*collisions);
	fsd_add_u64(eb, FS_KEY_BYTES_COLLISIONS, (__u64)ceil(8 * M_E * (double)b / w));
	fsd_add_double(eb, FS_KEY_COLLISIONS_PROBABILITY, exp(-(double)p->depth));
	return eb;
}

/* One prefix: its estimates, and the ends the truth lies between. */
static struct json_object *prefix_json(const struct fs_heavy_prefix *h,
				       const struct fs_prefix_params *p,
				       double collisions, __u64 total, bool bytes)
{
	struct fs_cidr c = { .family = (__u8)fs_prefix_tag_family(h->tag) };
	double under = ceil(FSD_PREFIX_Z *
			    sqrt((double)(fs_prefix_scale(p) - 1) * (double)h->packets));
	double over = collisions + under;
	struct json_object *o = json_object_new_object(), *eb;
	char text[FS_CIDR_TEXT_MAX];
	__u64 v = bytes ? h->bytes : h->packets;

	c.len = (__u8)fs_prefix_level_len(c.family, fs_prefix_tag_level(h->tag));
	memcpy(c.addr, h->addr, sizeof(c.addr));
	fs_cidr_format(&c, text, sizeof(text));
	fsd_add_string(o, FS_KEY_PREFIX, text);
	fsd_add_u64(o, FS_KEY_PACKETS, h->packets);
	fsd_add_u64(o, FS_KEY_BYTES, h->bytes);
	fsd_add_double(o, FS_KEY_SHARE, total ? (double)v / (double)total : 0);
	fsd_add_u64(o, FS_KEY_PACKETS_LOW,
		    (double)h->packets > over ? h->packets - (__u64)over : 0);
	eb = json_object_new_object();
	fsd_add_u64(eb, FS_KEY_PACKETS_OVER, (__u64)over);
	fsd_add_u64(eb, FS_KEY_PACKETS_UNDER, (__u64)under);
	json_object_object_add(o, FS_KEY_ERROR_BOUND, eb);
	return o;
}

struct json_object *fsd_query_prefixes(const struct fsd_query_ctx *qc,
				       const void *job,
				       struct fsd_query_scratch *q)
{
	const struct fsd_request *r = fsd_query_request(job);
	enum fs_prefix_order order = r->sort == FSD_SORT_BYTES ?
				     FS_PREFIX_BY_BYTES : FS_PREFIX_BY_PACKETS;
	struct json_object *a = NULL, *list;
	struct fs_heavy_prefix *top = NULL;
	struct fs_prefix_params p;
	char by[FS_KEYSPEC_TEXT_MAX];
	struct fsd_span span;
	struct fold f;
	double collisions;
	int ntags, i, got = 0, err;
	__u8 tags[2];

	fs_params_prefix(qc->params, &p);
	if (!p.depth)
		return fsd_answer_error("this daemon keeps no prefix sketch (flowsketchd --detect prefixes)");
	f.p = &p;
	f.acc = calloc(fs_prefix_buckets(&p), sizeof(*f.acc));
	ntags = fs_keyspec_tags(&r->by, tags);
	top = calloc(r->n * (size_t)ntags, sizeof(*top));
	if (!f.acc || !top) {
		a = fsd_answer_error("out of memory");
		goto out;
	}
	err = fsd_query_span_each(qc, job, q, fold, &f, &span);
	for (i = 0; !err && i < ntags; i++) {
		err = fs_prefix_top(f.acc, &p, qc->hash_key, tags[i], order,
				    top + got, r->n);
		got += err > 0 ? err : 0;
		err = err < 0 ? err : 0;
	}
	if (err) {
		a = fsd_answer_error("prefixes query failed: %s", strerror(-err));
		goto out;
	}
	/* Hosts of both families are one list. */
	fs_prefix_sort(top, (size_t)got, order);
	if ((size_t)got > r->n)
		got = (int)r->n;
	a = json_object_new_object();
	fsd_query_add_span(qc, a, &span);
	fsd_add_string(a, FS_KEY_DIRECTION, fsd_direction_name(r->direction));
	fs_keyspec_format(&r->by, by, sizeof(by));
	fsd_add_string(a, FS_KEY_BY, by);
	fsd_add_string(a, FS_KEY_SORT, order == FS_PREFIX_BY_BYTES ? "bytes" : "packets");
	fsd_add_u64(a, FS_KEY_TOTAL_PACKETS, span.totals.packets);
	fsd_add_u64(a, FS_KEY_TOTAL_BYTES, span.totals.bytes);
	json_object_object_add(a, FS_KEY_ERROR_BOUND,
			       bound_json(&p, span.totals.packets, span.totals.bytes,
					  &collisions));
	list = json_object_new_array();
	for (i = 0; i < got; i++)
		json_object_array_add(list, prefix_json(&top[i], &p, collisions,
			order == FS_PREFIX_BY_BYTES ? span.totals.bytes : span.totals.packets,
			order == FS_PREFIX_BY_BYTES));
	json_object_object_add(a, FS_KEY_PREFIXES, list);
out:
	free(top);
	free(f.acc);
	return a;
}
