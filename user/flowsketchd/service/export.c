// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * export.c - the export request's answer (export.h, protocol.h).
 *
 * The span is summed, and its candidates gathered, by fsd_history_top():
 * the same windows, the same sum, the same candidate set as a top answer
 * over that span, which it leaves in the query's scratch (q->sum, the
 * summed sketch; q->seen, every candidate of the span).  For both
 * directions the two spans are folded into one sketch of the union, as
 * top and flows do for their counts.
 *
 * Nothing in the answer is a keyed hash output (hash.h, "What leaves the
 * host"): the sketch goes out in export_perm.h's secret coordinates, and
 * each candidate with its column in every row in those coordinates, which
 * is all a reader needs to query the merged sketch; the keyed sample's
 * values leave cut to their leading bits (sample.h, "Exports"), and each
 * of its flows as a candidate.
 *
 * The answer is bounded before it is built: the sketch's base64 costs
 * 4/3 of fs_sketch_bytes() whatever the traffic, and each candidate at
 * most FSD_EXPORT_CANDIDATE_JSON bytes, so an export that would pass
 * FS_EXPORT_ANSWER_MAX is refused with the reason, never cut short.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "keys.h"
#include "base/answer.h"
#include "flow_json.h"
#include "base64.h"
#include "export.h"
#include "export_perm.h"
#include "flow_fmt.h"
#include "native.h"
#include "protocol.h"
#include "windows/rotation.h"
#include "workers.h"

/* The most one candidate's JSON takes: two IPv6 addresses of 39
 * characters, the key names, numbers of 20 digits and up to
 * FS_CMS_MAX_DEPTH columns of 7 digits, rounded up. */
#define FSD_EXPORT_CANDIDATE_JSON 384
/* Everything in the answer besides the sketch and the candidates. */
#define FSD_EXPORT_FIXED_JSON 4096

/* A candidate and the directions it was reported in (FSD_DIR_* bits). */
struct export_cand {
	struct fs_flow_key key;
	__u64 hash;
	__u32 dirs;
	bool hitter;		/* a heavy-hitter candidate, not only sampled */
};

struct export_cands {
	struct export_cand *v;
	size_t n, cap;
};

/* Append every candidate of q->seen, tagged dir. */
static int cands_gather(struct export_cands *c, const struct fsd_query_scratch *q,
			__u32 dir)
{
	__u32 j;

	if (c->n + q->seen.count > c->cap) {
		size_t cap = c->n + q->seen.count;
		struct export_cand *v = realloc(c->v, (cap ? cap : 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	for (j = 0; j < q->seen.capacity; j++) {
		const struct fsd_candidate *e = &q->seen.slots[j];

		if (!fsd_candidate_used(e))
			continue;
		c->v[c->n].key = e->key;
		c->v[c->n].hash = e->hash;
		c->v[c->n].dirs = dir;
		c->v[c->n].hitter = true;
		c->n++;
	}
	return 0;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct export_cand *x = a, *y = b;

	return memcmp(&x->key, &y->key, sizeof(x->key));
}

/*
 * Append every live flow of s's keyed sample, tagged dir: a reader
 * estimates it in the merged Count-Min sketch by its columns, as it does
 * candidates (native.h), to compare with its exact counts (`flowsketch
 * merge ... accuracy`).  Its hash is the datapath's, from its key.
 */
static int sample_gather(struct export_cands *c, const struct fs_sketch *s,
			 const struct fs_hash_key *hk, __u32 dir)
{
	const struct fs_sketch_params *p = &s->params;
	__u64 nb = fs_params_sample_buckets(p), i;
	__u32 w;

	for (i = 0; i < nb; i++) {
		const struct fs_sample_bucket *b = &s->sample[i];
		__u64 limit = fs_sample_limit(b, p->sample_shift);

		for (w = 0; w < FS_SAMPLE_WAYS; w++) {
			struct fs_packet_hashes h;

			if (!fs_sample_live(&b->e[w], limit))
				continue;
			if (c->n == c->cap) {
				size_t cap = c->cap ? 2 * c->cap : 64;
				struct export_cand *v = realloc(c->v, cap * sizeof(*v));

				if (!v)
					return -ENOMEM;
				c->v = v;
				c->cap = cap;
			}
			fs_packet_hash(&b->e[w].key, hk, &h);
			c->v[c->n].key = b->e[w].key;
			c->v[c->n].hash = h.flow;
			c->v[c->n].dirs = dir;
			c->v[c->n].hitter = false;
			c->n++;
		}
	}
	return 0;
}

/* Sort by key (native.h's order) and make each key one entry with the
 * directions of all. */
static void cands_unique(struct export_cands *c)
{
	size_t i, out = 0;

	qsort(c->v, c->n, sizeof(*c->v), cand_cmp);
	for (i = 0; i < c->n; i++) {
		if (out && !cand_cmp(&c->v[out - 1], &c->v[i])) {
			c->v[out - 1].dirs |= c->v[i].dirs;
			c->v[out - 1].hitter |= c->v[i].hitter;
			continue;
		}
		c->v[out++] = c->v[i];
	}
	c->n = out;
}

/* Whether flow key of hash is in s's sample (live in its bucket). */
static bool sampled(const struct fs_sketch *s, const struct fs_flow_key *key, __u64 hash)
{
	const struct fs_sketch_params *p = &s->params;
	const struct fs_sample_bucket *b;
	__u32 w;

	if (!p->sample_log2b)
		return false;
	b = &s->sample[fs_sample_bucket_index(fs_sample_value(hash), p->sample_log2b)];
	for (w = 0; w < FS_SAMPLE_WAYS; w++)
		if (fs_sample_live(&b->e[w], fs_sample_limit(b, p->sample_shift)) &&
		    fs_sample_key_equal(&b->e[w].key, key))
			return true;
	return false;
}

/*
 * The span's sample as it leaves (sample.h, "Exports": limits cut to a
 * power of two), and the candidates that were only sampled kept only if
 * still in it: nothing of a flow the cut or the directions' merge dropped
 * leaves the host.  The export's permutation cuts again, to the same.
 */
static void cands_cut_sample(struct export_cands *c, struct fs_sketch *sum)
{
	__u64 i, nb = fs_params_sample_buckets(&sum->params);
	size_t out = 0, j;

	for (i = 0; i < nb; i++)
		fs_sample_bucket_export(&sum->sample[i], sum->params.sample_shift);
	for (j = 0; j < c->n; j++)
		if (c->v[j].hitter || sampled(sum, &c->v[j].key, c->v[j].hash))
			c->v[out++] = c->v[j];
	c->n = out;
}

static void add_hex(struct json_object *o, const char *key, __u64 v)
{
	char hex[17];

	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)v);
	fsd_add_string(o, key, hex);
}

/* cols: the candidate's exported columns, one per row of sum. */
static struct json_object *cand_json(const struct export_cand *c,
				     const __u32 *cols,
				     const struct fs_sketch *sum)
{
	struct json_object *f = fs_flow_key_json(&c->key);
	struct json_object *cells = json_object_new_array();
	struct fs_cms_cell est;
	__u32 row;

	fs_sketch_query(sum, c->hash, &est);
	for (row = 0; row < sum->params.cms_depth; row++)
		json_object_array_add(cells, json_object_new_int64(cols[row]));
	json_object_object_add(f, "columns", cells);
	fsd_add_u64(f, FS_KEY_PACKETS, est.packets);
	fsd_add_u64(f, FS_KEY_BYTES, est.bytes);
	fsd_add_string(f, FS_KEY_DIRECTION, fsd_direction_name(c->dirs));
	return f;
}

/* The summed sketch as protocol.h's sketch.data: little-endian cells,
 * then registers, then the other parts, in base64.  NULL when out of
 * memory. */
static struct json_object *sketch_json(const struct fs_sketch *sum)
{
	struct json_object *o = NULL, *data;
	size_t raw_len, off = 0;
	char *text = NULL;
	__u8 *raw;
	int k;

	raw_len = fs_sketch_bytes(&sum->params);
	raw = malloc(raw_len);
	if (!raw)
		goto out;
	for (k = 0; k < FS_NKINDS; k++)
		off += fs_native_put_words(raw + off, sum, k);
	text = malloc(fs_base64_encoded_len(raw_len));
	if (!text)
		goto out;
	fs_base64_encode(raw, raw_len, text);
	data = json_object_new_string_len(text, (int)fs_base64_encoded_len(raw_len));
	if (!data)
		goto out;
	o = json_object_new_object();
	fsd_add_string(o, "encoding", "base64");
	for (k = 0; k < FS_NKINDS; k++)
		fsd_add_u64(o, fs_sketch_kinds[k].count_key,
			    fs_sketch_kinds[k].per_slot(&sum->params));
	json_object_object_add(o, "data", data);
out:
	free(text);
	free(raw);
	return o;
}

/*
 * The parameters a reader needs to rebuild the record's sizes: without
 * the detection sketches' (depth 0: off), a reader of a daemon started
 * with --detect would expect none of their buckets and refuse the sketch.
 */
static struct json_object *params_json(const struct fs_sketch_params *p)
{
	struct json_object *o = json_object_new_object();
	struct fs_prefix_params pp;
	struct fs_spread_params sp;

	fsd_add_u64(o, "cms_depth", p->cms_depth);
	fsd_add_u64(o, "cms_log2_width", p->cms_log2_width);
	fsd_add_u64(o, "cms_width", 1ULL << p->cms_log2_width);
	fsd_add_u64(o, FS_KEY_HLL_PRECISION, p->hll_p);
	fsd_add_u64(o, "flags", p->flags);
	json_object_object_add(o, "conservative", json_object_new_boolean(
			p->flags & FS_PARAM_F_CONSERVATIVE));
	fs_params_prefix(p, &pp);
	fsd_add_u64(o, "prefix_depth", pp.depth);
	fsd_add_u64(o, "prefix_log2_width", pp.log2_width);
	fsd_add_u64(o, "prefix_skip_shift", pp.skip_shift);
	fs_params_spread(p, &sp);
	fsd_add_u64(o, "spread_depth", sp.depth);
	fsd_add_u64(o, "spread_log2_width", sp.log2_width);
	fsd_add_u64(o, "spread_sample_shift", sp.sample_shift);
	fsd_add_u64(o, "sample_log2_buckets", p->sample_log2b);
	fsd_add_u64(o, "sample_shift", p->sample_log2b ? p->sample_shift : 0);
	return o;
}

/* One direction's span folded into the export's. */
static void span_fold(struct fsd_span *sum, const struct fsd_span *s)
{
	if (!s->windows)
		return;
	if (!sum->windows || s->start_ns < sum->start_ns)
		sum->start_ns = s->start_ns;
	if (s->end_ns > sum->end_ns)
		sum->end_ns = s->end_ns;
	if (s->windows > sum->windows)
		sum->windows = s->windows;
}

/* The answer's members before the candidates: the span, its direction,
 * the parameters and totals (protocol.h, export). */
static struct json_object *export_head(const struct fsd_query_ctx *qc,
				       const struct fsd_span *span,
				       unsigned int dirs,
				       const struct fs_sketch *sum)
{
	struct json_object *a = json_object_new_object();
	__u64 start = fsd_wall_ns(span->start_ns);
	__u64 end = fsd_wall_ns(span->end_ns);

	if (end < start)	/* cannot happen on one monotonic clock */
		end = start;
	fsd_add_u64(a, FS_KEY_SPAN_SECONDS, (end - start + 500000000ULL) / 1000000000ULL);
	fsd_add_u64(a, FS_KEY_WINDOWS, span->windows);
	fsd_add_u64(a, FS_KEY_WINDOW_SECONDS, qc->window_sec);
	fsd_add_u64(a, FS_KEY_WINDOW_START, start / 1000000000ULL);
	fsd_add_u64(a, FS_KEY_WINDOW_END, end / 1000000000ULL);
	fsd_add_u64(a, FS_KEY_WINDOW_START_NS, start);
	fsd_add_u64(a, FS_KEY_WINDOW_END_NS, end);
	fsd_add_string(a, FS_KEY_DIRECTION, fsd_direction_name(dirs));
	json_object_object_add(a, "params", params_json(qc->params));
	add_hex(a, "secret_fingerprint", qc->fingerprint);
	fsd_add_u64(a, FS_KEY_TOTAL_PACKETS, sum->totals.packets);
	fsd_add_u64(a, FS_KEY_TOTAL_BYTES, sum->totals.bytes);
	return a;
}

struct json_object *fsd_answer_export(const struct fsd_query_ctx *qc,
				      unsigned int dirs,
				      const struct fsd_span_select *sel_in,
				      const struct fsd_span_select *sel_out,
				      struct fsd_query_scratch *q)
{
	static const enum fsd_direction dir[] = { FSD_DIR_IN, FSD_DIR_OUT };
	struct fsd_history *const h[] = { qc->in, qc->out };
	const struct fsd_span_select *const sel[] = { sel_in, sel_out };
	const struct fs_sketch_params *p = qc->params;
	size_t sketch_text, i;
	struct json_object *a = NULL, *cands, *sk;
	struct export_cands c = { 0 };
	struct fsd_span span = { 0 }, one;
	struct fs_sketch sum = { 0 }, out = { 0 };
	struct fsd_topk top = { 0 };
	__u64 *hashes = NULL;
	__u32 *cols = NULL;
	unsigned long long need;
	int d, err = 0;

	sketch_text = fs_base64_encoded_len(fs_sketch_bytes(p));
	if (!dirs)
		return fsd_answer_error("this daemon counts no sent traffic (its egress frontend is not running): export --direction in");
	if (!qc->fingerprint)
		return fsd_answer_error("this daemon has no fingerprint of its hash secret: it cannot export");
	if (sketch_text + FSD_EXPORT_FIXED_JSON > FS_EXPORT_ANSWER_MAX)
		return fsd_answer_error("a sketch of these parameters takes %zu MiB in base64, more than the %u MiB an export may take: restart with a smaller --width, --depth or --precision",
					sketch_text >> 20, FS_EXPORT_ANSWER_MAX >> 20);
	/* Top of one: the candidates are what is wanted, from q->seen. */
	if (fs_sketch_init(&sum, p) || fsd_topk_init(&top, 1, FSD_SORT_PACKETS)) {
		err = -ENOMEM;
		goto out;
	}
	for (d = 0; d < 2; d++) {
		if (!(dirs & dir[d]))
			continue;
		err = fsd_history_top(h[d], sel[d], q, &top, &one) ?:
		      fs_sketch_merge(&sum, &q->sum) ?: cands_gather(&c, q, dir[d]) ?:
		      sample_gather(&c, &q->sum, qc->hash_key, dir[d]);
		if (err)
			goto out;
		span_fold(&span, &one);
	}
	if (!span.windows) {
		a = fsd_answer_error("no window has finished yet in this span: nothing to export");
		goto out;
	}
	cands_unique(&c);
	cands_cut_sample(&c, &sum);
	need = sketch_text + FSD_EXPORT_FIXED_JSON +
	       (unsigned long long)c.n * FSD_EXPORT_CANDIDATE_JSON;
	if (need > FS_EXPORT_ANSWER_MAX) {
		a = fsd_answer_error("the span's export would take up to %llu MiB (%zu candidates), more than the %u MiB an export may take: ask a shorter span",
				     need >> 20, c.n, FS_EXPORT_ANSWER_MAX >> 20);
		goto out;
	}
	hashes = malloc((c.n ? c.n : 1) * sizeof(*hashes));
	cols = malloc((c.n ? c.n : 1) * p->cms_depth * sizeof(*cols));
	if (!hashes || !cols) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < c.n; i++)
		hashes[i] = c.v[i].hash;
	err = fs_export_permute(&sum, qc->export_key, hashes, c.n, cols, &out);
	if (err)
		goto out;
	sk = sketch_json(&out);
	if (!sk) {
		err = -ENOMEM;
		goto out;
	}
	a = export_head(qc, &span, dirs, &sum);
	cands = json_object_new_array_ext((int)(c.n ? c.n : 1));
	for (i = 0; i < c.n; i++)
		json_object_array_add(cands, cand_json(&c.v[i],
						       cols + i * p->cms_depth, &sum));
	json_object_object_add(a, FS_KEY_CANDIDATES, cands);
	json_object_object_add(a, "sketch", sk);
out:
	if (err == -E2BIG)
		a = fsd_answer_error("the span holds more than %u distinct candidates; ask a shorter span",
				     FSD_QUERY_CANDIDATES);
	else if (err)
		a = fsd_answer_error("export failed: %s", strerror(-err));
	free(c.v);
	free(hashes);
	free(cols);
	fsd_topk_free(&top);
	fs_sketch_free(&out);
	fs_sketch_free(&sum);
	return a;
}
