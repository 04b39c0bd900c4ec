// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * query.c - the span queries (query.h): top, flows and windows here,
 * export in export.c.
 *
 * The request is parsed and checked in request.c, which needs no daemon;
 * what is left here depends on the history kept (struct fsd_query_ctx).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "keys.h"
#include "flow_json.h"
#include "flow_fmt.h"
#include "hll_estimate.h"
#include "base/answer.h"
#include "blocklist/blocklist.h"
#include "export.h"
#include "query.h"
#include "windows/rotation.h"
#include "workers.h"

/*
 * The windows a span asks for (history.h, fsd_span_select): none given,
 * the last window; S seconds, the windows that ended in the last S
 * seconds, measured when the request arrived.  NULL or an error answer.
 */
static struct json_object *span_select(const struct fsd_query_ctx *qc,
				       const struct fsd_history *h, double span,
				       struct fsd_span_select *sel)
{
	unsigned int window = qc->window_sec;
	__u64 now, back;

	memset(sel, 0, sizeof(*sel));
	/* The windows finished now, not when a query thread gets to it:
	 * the loop alone commits windows, so it reads this without the lock. */
	sel->pinned = true;
	sel->newest = h->windows_finished;
	if (!span) {
		sel->windows = 1;
		return NULL;
	}
	if (span > (double)h->capacity * window)
		return fsd_answer_error("span of %g s is more than the %llu s of history kept",
					span, (unsigned long long)h->capacity * window);
	/* The monotonic clock starts at boot: a span longer than the
	 * uptime reaches back to the daemon's first window. */
	now = fsd_now_ns();
	back = (__u64)(span * 1e9);
	sel->since_ns = back < now ? now - back : 0;
	return NULL;
}

static struct json_object *flow_json(const struct fsd_query_ctx *qc,
				     const struct fsd_flow_count *c, double share)
{
	struct json_object *f = fs_flow_key_json(&c->key);

	fsd_add_u64(f, FS_KEY_PACKETS, c->packets);
	fsd_add_u64(f, FS_KEY_BYTES, c->bytes);
	fsd_add_double(f, FS_KEY_SHARE, share);
	fsd_add_string(f, FS_KEY_DIRECTION, c->direction == FSD_DIR_OUT ? "out" : "in");
	/* The source as the blocklist stands now (its packets were counted
	 * before the verdict dropped them). */
	json_object_object_add(f, FS_KEY_BLOCKED, json_object_new_boolean(
			fsd_blocklist_covers(qc->blocklist, c->key.family, c->key.src)));
	return f;
}

/*
 * The span's description common to top and flows: the time its windows
 * really cover, from the first one's start to the last one's end (longer
 * than whole windows when a rotation was late, see status).
 */
static void add_span(const struct fsd_query_ctx *qc, struct json_object *a,
		     const struct fsd_span *span)
{
	__u64 end = span->windows ? span->end_ns : qc->started_ns;
	__u64 start = span->windows ? span->start_ns : qc->started_ns;

	if (end < start)	/* cannot happen on one monotonic clock */
		end = start;
	fsd_add_u64(a, FS_KEY_SPAN_SECONDS, (end - start + 500000000ULL) / 1000000000ULL);
	fsd_add_u64(a, FS_KEY_WINDOWS, span->windows);
	fsd_add_u64(a, FS_KEY_WINDOW_SECONDS, qc->window_sec);
	fsd_add_u64(a, FS_KEY_WINDOW_START, fsd_wall_ns(start) / 1000000000ULL);
	fsd_add_u64(a, FS_KEY_WINDOW_END, fsd_wall_ns(end) / 1000000000ULL);
	/* To the ns, for lining windows up across hosts (daemon.c: they end
	 * on wall-clock multiples of their length). */
	fsd_add_u64(a, FS_KEY_WINDOW_START_NS, fsd_wall_ns(start));
	fsd_add_u64(a, FS_KEY_WINDOW_END_NS, fsd_wall_ns(end));
}

static __u64 bound(double eps, __u64 total)
{
	return (__u64)ceil(eps * (double)total);
}

/* The distinct counts of a span (summed into q) into a. */
static void add_distinct(const struct fsd_query_ctx *qc, struct json_object *a,
			 const struct fsd_query_scratch *q)
{
	double distinct[FS_HLL_NSKETCH];
	__u32 i;

	for (i = 0; i < FS_HLL_NSKETCH; i++)
		distinct[i] = fs_sketch_distinct(&q->sum, i);
	fsd_add_u64(a, FS_KEY_DISTINCT_FLOWS, (__u64)llround(distinct[FS_HLL_FLOWS]));
	fsd_add_u64(a, FS_KEY_DISTINCT_SOURCES, (__u64)llround(distinct[FS_HLL_SOURCES]));
	fsd_add_u64(a, FS_KEY_DISTINCT_DESTINATIONS,
		(__u64)llround(distinct[FS_HLL_DESTS]));
	fsd_add_double(a, FS_KEY_RSE, fs_hll_rse(qc->params->hll_p));
	fsd_add_u64(a, FS_KEY_HLL_PRECISION, qc->params->hll_p);
}

/* A span query as the query threads get it: the request and the windows
 * it selected when it arrived. */
struct query_job {
	struct fsd_request r;
	struct fsd_span_select sel;	/* of the "in" history */
	struct fsd_span_select sel_out;	/* of the "out" one */
	struct fsd_span_select sel_conn;	/* of the connections' */
};

static const char *direction_name(enum fsd_direction dir)
{
	return dir == FSD_DIR_IN ? "in" : dir == FSD_DIR_OUT ? "out" : "both";
}

/* The directions a request covers that this daemon counts. */
static unsigned int directions(const struct fsd_query_ctx *qc, enum fsd_direction dir)
{
	return (unsigned int)dir & (*qc->out_ready ? FSD_DIR_BOTH : FSD_DIR_IN);
}

/* One span of each direction queried, as one: windows and times of the
 * first, totals and candidates summed. */
static void span_add(struct fsd_span *sum, const struct fsd_span *s, bool first)
{
	if (first) {
		*sum = *s;
		return;
	}
	if (s->windows > sum->windows)
		sum->windows = s->windows;
	if (s->windows && (!sum->start_ns || s->start_ns < sum->start_ns))
		sum->start_ns = s->start_ns;
	if (s->end_ns > sum->end_ns)
		sum->end_ns = s->end_ns;
	sum->totals.packets += s->totals.packets;
	sum->totals.bytes += s->totals.bytes;
	sum->candidates += s->candidates;
}

/*
 * The union of the directions' distinct counts: the HyperLogLog of one
 * summed span kept (hll) and merged by register max into the next one's
 * sum in q, which is then the sketch of the union.
 */
static void hll_keep(const struct fsd_query_scratch *q, __u8 *hll, size_t n)
{
	memcpy(hll, q->sum.hll, n);
}

static void hll_union(struct fsd_query_scratch *q, const __u8 *hll, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (hll[i] > q->sum.hll[i])
			q->sum.hll[i] = hll[i];
}

/*
 * top --sort connections: the connection frontend's history, its packets
 * metric being connections opened and its bytes metric connections
 * established (bpf/conn.bpf.c); named so in the answer (protocol.h).
 */
static struct json_object *top_connections(const struct fsd_query_ctx *qc,
					   const struct query_job *qj,
					   struct fsd_query_scratch *q)
{
	const struct fs_sketch_params *p = qc->params;
	struct json_object *a, *flows, *eb, *f;
	struct fsd_span span;
	struct fsd_topk top;
	size_t i, got;
	int err;

	if (!*qc->conn_ready)
		return fsd_answer_error("this daemon counts no connections");
	if (fsd_topk_init(&top, qj->r.n, FSD_SORT_PACKETS))
		return fsd_answer_error("out of memory");
	err = fsd_history_top(qc->conn, &qj->sel_conn, q, &top, &span);
	if (err) {
		fsd_topk_free(&top);
		if (err == -E2BIG)
			return fsd_answer_error("the span holds more than %u distinct candidates; ask a shorter span",
						FSD_QUERY_CANDIDATES);
		return fsd_answer_error("top query failed: %s", strerror(-err));
	}
	got = fsd_topk_finish(&top);
	a = json_object_new_object();
	add_span(qc, a, &span);
	fsd_add_string(a, FS_KEY_SORT, "connections");
	fsd_add_u64(a, FS_KEY_TOTAL_CONNECTIONS, span.totals.packets);
	fsd_add_u64(a, FS_KEY_TOTAL_ESTABLISHED, span.totals.bytes);
	eb = json_object_new_object();
	fsd_add_double(eb, FS_KEY_EPSILON, fs_cms_epsilon(p));
	fsd_add_double(eb, FS_KEY_DELTA, fs_cms_delta(p));
	fsd_add_u64(eb, FS_KEY_CONNECTIONS, bound(fs_cms_epsilon(p), span.totals.packets));
	fsd_add_u64(eb, FS_KEY_ESTABLISHED, bound(fs_cms_epsilon(p), span.totals.bytes));
	json_object_object_add(a, FS_KEY_ERROR_BOUND, eb);
	flows = json_object_new_array();
	for (i = 0; i < got; i++) {
		const struct fsd_flow_count *c = &top.heap[i];

		f = flow_json(qc, c, span.totals.packets ?
			      (double)c->packets / (double)span.totals.packets : 0);
		json_object_object_del(f, FS_KEY_PACKETS);
		json_object_object_del(f, FS_KEY_BYTES);
		json_object_object_del(f, FS_KEY_DIRECTION);
		fsd_add_u64(f, FS_KEY_CONNECTIONS, c->packets);
		fsd_add_u64(f, FS_KEY_ESTABLISHED, c->bytes);
		json_object_array_add(flows, f);
	}
	json_object_object_add(a, FS_KEY_FLOWS, flows);
	fsd_add_u64(a, FS_KEY_CANDIDATES, span.candidates);
	fsd_topk_free(&top);
	add_distinct(qc, a, q);
	return a;
}

struct json_object *fsd_query_top(const struct fsd_query_ctx *qc, const void *job,
				  struct fsd_query_scratch *q)
{
	const struct query_job *qj = job;
	const struct fsd_request *r = &qj->r;
	const struct fs_sketch_params *p = qc->params;
	enum fsd_sort sort = r->sort;
	struct json_object *a, *flows, *eb;
	size_t i, got;
	struct fsd_span span;
	struct fsd_topk top;
	__u64 total;
	int err = 0;
	unsigned int dirs = directions(qc, r->direction);
	size_t hll_n = (size_t)FS_HLL_NSKETCH << p->hll_p;
	__u8 *hll = NULL;
	struct fsd_span one;
	bool first = true;

	if (sort == FSD_SORT_CONNECTIONS)
		return top_connections(qc, qj, q);
	if (fsd_topk_init(&top, r->n, sort))
		return fsd_answer_error("out of memory");
	memset(&span, 0, sizeof(span));
	if (dirs == FSD_DIR_BOTH && !(hll = malloc(hll_n)))
		err = -ENOMEM;
	if (!err && (dirs & FSD_DIR_IN)) {
		top.direction = FSD_DIR_IN;
		err = fsd_history_top(qc->in, &qj->sel, q, &top, &one);
		if (!err)
			span_add(&span, &one, first);
		first = false;
		if (!err && hll)
			hll_keep(q, hll, hll_n);
	}
	if (!err && (dirs & FSD_DIR_OUT)) {
		top.direction = FSD_DIR_OUT;
		err = fsd_history_top(qc->out, &qj->sel_out, q, &top, &one);
		if (!err)
			span_add(&span, &one, first);
		if (!err && hll)
			hll_union(q, hll, hll_n);
	}
	free(hll);
	if (err) {
		fsd_topk_free(&top);
		if (err == -E2BIG)
			return fsd_answer_error("the span holds more than %u distinct candidates; ask a shorter span",
						FSD_QUERY_CANDIDATES);
		return fsd_answer_error("top query failed: %s", strerror(-err));
	}
	got = fsd_topk_finish(&top);

	a = json_object_new_object();
	add_span(qc, a, &span);
	fsd_add_string(a, FS_KEY_DIRECTION, direction_name(r->direction));
	fsd_add_string(a, FS_KEY_SORT, sort == FSD_SORT_BYTES ? "bytes" : "packets");
	fsd_add_u64(a, FS_KEY_TOTAL_PACKETS, span.totals.packets);
	fsd_add_u64(a, FS_KEY_TOTAL_BYTES, span.totals.bytes);
	eb = json_object_new_object();
	fsd_add_double(eb, FS_KEY_EPSILON, fs_cms_epsilon(p));
	fsd_add_double(eb, FS_KEY_DELTA, fs_cms_delta(p));
	fsd_add_u64(eb, FS_KEY_PACKETS, bound(fs_cms_epsilon(p), span.totals.packets));
	fsd_add_u64(eb, FS_KEY_BYTES, bound(fs_cms_epsilon(p), span.totals.bytes));
	json_object_object_add(a, FS_KEY_ERROR_BOUND, eb);
	total = sort == FSD_SORT_BYTES ? span.totals.bytes : span.totals.packets;
	flows = json_object_new_array();
	for (i = 0; i < got; i++) {
		const struct fsd_flow_count *c = &top.heap[i];
		__u64 m = sort == FSD_SORT_BYTES ? c->bytes : c->packets;

		json_object_array_add(flows, flow_json(qc, c, total ?
					(double)m / (double)total : 0));
	}
	json_object_object_add(a, FS_KEY_FLOWS, flows);
	fsd_add_u64(a, FS_KEY_CANDIDATES, span.candidates);
	fsd_topk_free(&top);
	/* The same span's distinct counts, so that a live `top` shows them
	 * without a second request that could see another window. */
	add_distinct(qc, a, q);
	return a;
}

struct json_object *fsd_query_flows(const struct fsd_query_ctx *qc, const void *job,
				    struct fsd_query_scratch *q)
{
	const struct query_job *qj = job;
	const struct fsd_request *r = &qj->r;
	unsigned int dirs = directions(qc, r->direction);
	size_t hll_n = (size_t)FS_HLL_NSKETCH << qc->params->hll_p;
	double unused[FS_HLL_NSKETCH];
	struct fsd_span span, one;
	struct json_object *a;
	__u8 *hll = NULL;
	int err = 0;

	memset(&span, 0, sizeof(span));
	if (dirs == FSD_DIR_BOTH && !(hll = malloc(hll_n)))
		err = -ENOMEM;
	if (!err && (dirs & FSD_DIR_IN)) {
		err = fsd_history_distinct(qc->in, &qj->sel, q, unused, &one);
		if (!err)
			span_add(&span, &one, true);
		if (!err && hll)
			hll_keep(q, hll, hll_n);
	}
	if (!err && (dirs & FSD_DIR_OUT)) {
		err = fsd_history_distinct(qc->out, &qj->sel_out, q, unused, &one);
		if (!err)
			span_add(&span, &one, !(dirs & FSD_DIR_IN));
		if (!err && hll)
			hll_union(q, hll, hll_n);
	}
	free(hll);
	if (err)
		return fsd_answer_error("flows query failed: %s", strerror(-err));
	a = json_object_new_object();
	add_distinct(qc, a, q);
	add_span(qc, a, &span);
	/* The same span of the connection frontend: who opened TCP
	 * connections, and how many (after the directions' distinct counts:
	 * it reuses q). */
	if (*qc->conn_ready &&
	    !fsd_history_distinct(qc->conn, &qj->sel_conn, q, unused, &one)) {
		struct json_object *c = json_object_new_object();

		fsd_add_u64(c, FS_KEY_OPENED, one.totals.packets);
		fsd_add_u64(c, FS_KEY_ESTABLISHED, one.totals.bytes);
		fsd_add_u64(c, FS_KEY_DISTINCT_SOURCES, (__u64)llround(unused[FS_HLL_SOURCES]));
		fsd_add_u64(c, FS_KEY_DISTINCT_DESTINATIONS, (__u64)llround(unused[FS_HLL_DESTS]));
		json_object_object_add(a, FS_KEY_CONNECTIONS, c);
	}
	fsd_add_string(a, FS_KEY_DIRECTION, direction_name(r->direction));
	return a;
}

/* export.c: the span's sketches themselves, from the same windows. */
struct json_object *fsd_query_export(const struct fsd_query_ctx *qc, const void *job,
				     struct fsd_query_scratch *q)
{
	const struct query_job *qj = job;

	return fsd_answer_export(qc, qj->r.direction, &qj->sel, &qj->sel_out, q);
}

/* One direction's windows of a span, oldest first (fsd_history_series()). */
static int add_series(struct json_object *arr, struct fsd_history *h,
		      const struct fsd_span_select *sel, const char *direction)
{
	struct fsd_window_point *pts = calloc(h->capacity, sizeof(*pts));
	struct json_object *s, *ws, *w;
	int n, i;

	if (!pts)
		return -ENOMEM;
	n = fsd_history_series(h, sel, pts, h->capacity);
	if (n < 0) {
		free(pts);
		return n;
	}
	s = json_object_new_object();
	ws = json_object_new_array();
	for (i = n - 1; i >= 0; i--) {
		w = json_object_new_object();
		fsd_add_u64(w, FS_KEY_START_NS, fsd_wall_ns(pts[i].start_ns));
		fsd_add_u64(w, FS_KEY_END_NS, fsd_wall_ns(pts[i].end_ns));
		fsd_add_u64(w, FS_KEY_PACKETS, pts[i].totals.packets);
		fsd_add_u64(w, FS_KEY_BYTES, pts[i].totals.bytes);
		fsd_add_u64(w, FS_KEY_DISTINCT_FLOWS, (__u64)llround(pts[i].distinct[FS_HLL_FLOWS]));
		fsd_add_u64(w, FS_KEY_DISTINCT_SOURCES, (__u64)llround(pts[i].distinct[FS_HLL_SOURCES]));
		fsd_add_u64(w, FS_KEY_DISTINCT_DESTINATIONS, (__u64)llround(pts[i].distinct[FS_HLL_DESTS]));
		json_object_array_add(ws, w);
	}
	free(pts);
	fsd_add_string(s, FS_KEY_DIRECTION, direction);
	json_object_object_add(s, FS_KEY_WINDOWS, ws);
	json_object_array_add(arr, s);
	return 0;
}

/* windows: the span window by window, per direction (`flowsketch plot`). */
struct json_object *fsd_query_windows(const struct fsd_query_ctx *qc, const void *job,
				      struct fsd_query_scratch *q)
{
	const struct query_job *qj = job;
	unsigned int dirs = directions(qc, qj->r.direction);
	struct json_object *a = json_object_new_object(), *arr = json_object_new_array();
	int err = 0;

	if (dirs & FSD_DIR_IN)
		err = add_series(arr, qc->in, &qj->sel, "in");
	if (!err && (dirs & FSD_DIR_OUT))
		err = add_series(arr, qc->out, &qj->sel_out, "out");
	if (err) {
		json_object_put(arr);
		json_object_put(a);
		return fsd_answer_error("windows query failed: %s", strerror(-err));
	}
	fsd_add_u64(a, FS_KEY_WINDOW_SECONDS, qc->window_sec);
	fsd_add_string(a, FS_KEY_DIRECTION, direction_name(qj->r.direction));
	json_object_object_add(a, FS_KEY_SERIES, arr);
	return a;
}

void fsd_span_job(const struct fsd_query_ctx *qc, const struct fsd_request *r,
		  __u64 client, fsd_job_fn run, struct json_object **now,
		  struct fsd_job **job)
{
	struct query_job *qj = calloc(1, sizeof(*qj));
	struct fsd_job *j = calloc(1, sizeof(*j));

	if (!qj || !j) {
		*now = fsd_answer_error("out of memory");
		goto fail;
	}
	qj->r = *r;
	*now = span_select(qc, qc->in, r->span, &qj->sel);
	if (!*now && *qc->out_ready)
		*now = span_select(qc, qc->out, r->span, &qj->sel_out);
	if (!*now && *qc->conn_ready)
		*now = span_select(qc, qc->conn, r->span, &qj->sel_conn);
	if (*now)
		goto fail;
	j->client = client;
	j->run = run;
	j->request = qj;
	*job = j;
	return;
fail:
	free(qj);
	free(j);
}
