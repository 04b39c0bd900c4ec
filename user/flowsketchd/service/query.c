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
void fsd_query_add_span(const struct fsd_query_ctx *qc, struct json_object *a,
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
 * The span of each direction the job asks for, as one (span_add), with
 * top's candidates (top NULL: the distinct counts only).  The distinct
 * counts are those of the union: the HyperLogLog of the first direction's
 * sum kept (hll) and merged by register max into the next one's sum in q,
 * which is then the sketch of the union.  0 or -errno.
 */
static int span_directions(const struct fsd_query_ctx *qc, const struct query_job *qj,
			   struct fsd_query_scratch *q, struct fsd_topk *top,
			   struct fsd_span *span)
{
	static const enum fsd_direction dir[] = { FSD_DIR_IN, FSD_DIR_OUT };
	struct fsd_history *const h[] = { qc->in, qc->out };
	const struct fsd_span_select *const sel[] = { &qj->sel, &qj->sel_out };
	unsigned int dirs = directions(qc, qj->r.direction), d;
	size_t hll_n = (size_t)FS_HLL_NSKETCH << qc->params->hll_p, i;
	double unused[FS_HLL_NSKETCH];
	struct fsd_span one;
	__u8 *hll = NULL;
	int err = 0;

	memset(span, 0, sizeof(*span));
	if (dirs == FSD_DIR_BOTH && !(hll = malloc(hll_n)))
		return -ENOMEM;
	for (d = 0; d < 2 && !err; d++) {
		if (!(dirs & dir[d]))
			continue;
		if (top)
			top->direction = dir[d];
		err = top ? fsd_history_top(h[d], sel[d], q, top, &one) :
		      fsd_history_distinct(h[d], sel[d], q, unused, &one);
		if (err)
			break;
		span_add(span, &one, !(dirs & dir[0]) || !d);
		for (i = 0; hll && i < hll_n; i++) {
			if (!d)
				hll[i] = q->sum.hll[i];
			else if (hll[i] > q->sum.hll[i])
				q->sum.hll[i] = hll[i];
		}
	}
	free(hll);
	return err;
}

const struct fsd_request *fsd_query_request(const void *job)
{
	return &((const struct query_job *)job)->r;
}

int fsd_query_span_each(const struct fsd_query_ctx *qc, const void *job,
			struct fsd_query_scratch *q, fsd_span_each_fn *each,
			void *arg, struct fsd_span *span)
{
	const struct query_job *qj = job;
	struct fsd_history *const h[] = { qc->in, qc->out };
	const struct fsd_span_select *const sel[] = { &qj->sel, &qj->sel_out };
	unsigned int dirs = directions(qc, qj->r.direction), d;
	double unused[FS_HLL_NSKETCH];
	struct fsd_span one;
	bool first = true;
	int err;

	memset(span, 0, sizeof(*span));
	for (d = 0; d < 2; d++) {
		if (!(dirs & (d ? FSD_DIR_OUT : FSD_DIR_IN)))
			continue;
		err = fsd_history_distinct(h[d], sel[d], q, unused, &one);
		if (err)
			return err;
		span_add(span, &one, first);
		first = false;
		err = each(&q->sum, arg);
		if (err)
			return err;
	}
	return 0;
}

/* A top answer's two metrics, as named in the answer (protocol.h). */
struct top_names {
	const char *sort[2];		/* by the first, by the second */
	const char *total[2];
	const char *metric[2];		/* the error bound's and each flow's */
};

static const struct top_names flow_names = {
	{ "packets", "bytes" },
	{ FS_KEY_TOTAL_PACKETS, FS_KEY_TOTAL_BYTES },
	{ FS_KEY_PACKETS, FS_KEY_BYTES },
};

/* The connection frontend's: its packets metric is connections opened
 * and its bytes metric connections established (bpf/conn.bpf.c). */
static const struct top_names connection_names = {
	{ "connections", "connections" },
	{ FS_KEY_TOTAL_CONNECTIONS, FS_KEY_TOTAL_ESTABLISHED },
	{ FS_KEY_CONNECTIONS, FS_KEY_ESTABLISHED },
};

/*
 * The answer of a top query that gathered into top (err: it failed),
 * its metrics named by m; direction NULL for the connections, whose
 * flows have none.
 */
static struct json_object *top_answer(const struct fsd_query_ctx *qc,
				      struct fsd_query_scratch *q, struct fsd_topk *top,
				      int err, const struct fsd_span *span,
				      const struct top_names *m, const char *direction)
{
	double eps = fs_cms_epsilon(qc->params);
	__u64 total[2] = { span->totals.packets, span->totals.bytes };
	int by = top->sort == FSD_SORT_BYTES;
	struct json_object *a, *flows, *eb, *f;
	size_t i, got;

	if (err) {
		fsd_topk_free(top);
		if (err == -E2BIG)
			return fsd_answer_error("the span holds more than %u distinct candidates; ask a shorter span",
						FSD_QUERY_CANDIDATES);
		return fsd_answer_error("top query failed: %s", strerror(-err));
	}
	got = fsd_topk_finish(top);
	a = json_object_new_object();
	fsd_query_add_span(qc, a, span);
	if (direction)
		fsd_add_string(a, FS_KEY_DIRECTION, direction);
	fsd_add_string(a, FS_KEY_SORT, m->sort[by]);
	fsd_add_u64(a, m->total[0], total[0]);
	fsd_add_u64(a, m->total[1], total[1]);
	eb = json_object_new_object();
	fsd_add_double(eb, FS_KEY_EPSILON, eps);
	fsd_add_double(eb, FS_KEY_DELTA, fs_cms_delta(qc->params));
	fsd_add_u64(eb, m->metric[0], bound(eps, total[0]));
	fsd_add_u64(eb, m->metric[1], bound(eps, total[1]));
	json_object_object_add(a, FS_KEY_ERROR_BOUND, eb);
	flows = json_object_new_array();
	for (i = 0; i < got; i++) {
		const struct fsd_flow_count *c = &top->heap[i];
		__u64 v[2] = { c->packets, c->bytes };

		f = flow_json(qc, c, total[by] ? (double)v[by] / (double)total[by] : 0);
		if (!direction) {
			json_object_object_del(f, FS_KEY_PACKETS);
			json_object_object_del(f, FS_KEY_BYTES);
			json_object_object_del(f, FS_KEY_DIRECTION);
			fsd_add_u64(f, m->metric[0], v[0]);
			fsd_add_u64(f, m->metric[1], v[1]);
		}
		json_object_array_add(flows, f);
	}
	json_object_object_add(a, FS_KEY_FLOWS, flows);
	fsd_add_u64(a, FS_KEY_CANDIDATES, span->candidates);
	fsd_topk_free(top);
	/* The same span's distinct counts, so that a live `top` shows them
	 * without a second request that could see another window. */
	add_distinct(qc, a, q);
	return a;
}

/* top: the directions asked, or with --sort connections the connection
 * frontend's history. */
struct json_object *fsd_query_top(const struct fsd_query_ctx *qc, const void *job,
				  struct fsd_query_scratch *q)
{
	const struct query_job *qj = job;
	bool conns = qj->r.sort == FSD_SORT_CONNECTIONS;
	struct fsd_span span;
	struct fsd_topk top;
	int err;

	if (conns && !*qc->conn_ready)
		return fsd_answer_error("this daemon counts no connections");
	if (fsd_topk_init(&top, qj->r.n, conns ? FSD_SORT_PACKETS : qj->r.sort))
		return fsd_answer_error("out of memory");
	if (conns) {
		err = fsd_history_top(qc->conn, &qj->sel_conn, q, &top, &span);
		return top_answer(qc, q, &top, err, &span, &connection_names, NULL);
	}
	err = span_directions(qc, qj, q, &top, &span);
	return top_answer(qc, q, &top, err, &span, &flow_names,
			  fsd_direction_name(qj->r.direction));
}

struct json_object *fsd_query_flows(const struct fsd_query_ctx *qc, const void *job,
				    struct fsd_query_scratch *q)
{
	const struct query_job *qj = job;
	double unused[FS_HLL_NSKETCH];
	struct fsd_span span, one;
	struct json_object *a;
	int err;

	err = span_directions(qc, qj, q, NULL, &span);
	if (err)
		return fsd_answer_error("flows query failed: %s", strerror(-err));
	a = json_object_new_object();
	add_distinct(qc, a, q);
	fsd_query_add_span(qc, a, &span);
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
	fsd_add_string(a, FS_KEY_DIRECTION, fsd_direction_name(qj->r.direction));
	return a;
}

/* export.c: the span's sketches themselves, from the same windows. */
struct json_object *fsd_query_export(const struct fsd_query_ctx *qc, const void *job,
				     struct fsd_query_scratch *q)
{
	const struct query_job *qj = job;

	return fsd_answer_export(qc, directions(qc, qj->r.direction), &qj->sel,
				 &qj->sel_out, q);
}

static int series_each(struct fsd_history *h, const struct fsd_span_select *sel,
		       const char *direction, fsd_series_each_fn *each, void *arg)
{
	struct fsd_window_point *pts = calloc(h->capacity, sizeof(*pts));
	int n;

	if (!pts)
		return -ENOMEM;
	n = fsd_history_series(h, sel, pts, h->capacity);
	if (n >= 0)
		n = each(pts, n, direction, arg);
	free(pts);
	return n;
}

int fsd_query_series_each(const struct fsd_query_ctx *qc, const void *job,
			  fsd_series_each_fn *each, void *arg)
{
	const struct query_job *qj = job;
	unsigned int dirs = directions(qc, qj->r.direction);
	int err = 0;

	if (dirs & FSD_DIR_IN)
		err = series_each(qc->in, &qj->sel, "in", each, arg);
	if (!err && (dirs & FSD_DIR_OUT))
		err = series_each(qc->out, &qj->sel_out, "out", each, arg);
	return err;
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
	fsd_add_string(a, FS_KEY_DIRECTION, fsd_direction_name(qj->r.direction));
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
