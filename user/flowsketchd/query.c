// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * query.c - answer a request: top and flows here, status in status.c,
 * export in export.c.
 *
 * The request is parsed and checked in request.c, which needs no daemon;
 * what is left here depends on the daemon's state (the history kept).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "flow_json.h"
#include "flow_fmt.h"
#include "hll_estimate.h"
#include "daemon.h"
#include "export.h"
#include "blockreq.h"
#include "request.h"
#include "server.h"
#include "utf8.h"
#include "workers.h"

struct json_object *fsd_answer_error(const char *fmt, ...)
{
	struct json_object *o = json_object_new_object();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Cut between characters: the CLI refuses an answer that is not
	 * valid UTF-8. */
	msg[fs_utf8_prefix(msg, strlen(msg), strlen(msg))] = 0;
	json_object_object_add(o, "error", json_object_new_string(msg));
	return o;
}

static void add_u64(struct json_object *o, const char *key, __u64 v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void add_double(struct json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, json_object_new_double(v));
}

static void add_string(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

/*
 * The windows a span asks for (history.h, fsd_span_select): none given,
 * the last window; S seconds, the windows that ended in the last S
 * seconds, measured when the request arrived.  NULL or an error answer.
 */
static struct json_object *span_select(struct fsd_daemon *d,
				       const struct fsd_history *h, double span,
				       struct fsd_span_select *sel)
{
	unsigned int window = d->opts.window_sec;
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

static struct json_object *flow_json(const struct fsd_daemon *d,
				     const struct fsd_flow_count *c, double share)
{
	struct json_object *f = fs_flow_key_json(&c->key);

	add_u64(f, "packets", c->packets);
	add_u64(f, "bytes", c->bytes);
	add_double(f, "share", share);
	add_string(f, "direction", c->direction == FSD_DIR_OUT ? "out" : "in");
	/* The source as the blocklist stands now (its packets were counted
	 * before the verdict dropped them). */
	json_object_object_add(f, "blocked", json_object_new_boolean(
			fsd_blocklist_covers(&d->blocklist, c->key.family, c->key.src)));
	return f;
}

/*
 * The span's description common to top and flows: the time its windows
 * really cover, from the first one's start to the last one's end (longer
 * than whole windows when a rotation was late, see status).
 */
static void add_span(struct fsd_daemon *d, struct json_object *a,
		     const struct fsd_span *span)
{
	__u64 end = span->windows ? span->end_ns : d->started_ns;
	__u64 start = span->windows ? span->start_ns : d->started_ns;

	if (end < start)	/* cannot happen on one monotonic clock */
		end = start;
	add_u64(a, "span_seconds", (end - start + 500000000ULL) / 1000000000ULL);
	add_u64(a, "windows", span->windows);
	add_u64(a, "window_seconds", d->opts.window_sec);
	add_u64(a, "window_start", fsd_wall_ns(start) / 1000000000ULL);
	add_u64(a, "window_end", fsd_wall_ns(end) / 1000000000ULL);
	/* To the ns, for lining windows up across hosts (daemon.c: they end
	 * on wall-clock multiples of their length). */
	add_u64(a, "window_start_ns", fsd_wall_ns(start));
	add_u64(a, "window_end_ns", fsd_wall_ns(end));
}

static __u64 bound(double eps, __u64 total)
{
	return (__u64)ceil(eps * (double)total);
}

/* The distinct counts of a span (summed into q) into a. */
static void add_distinct(struct fsd_daemon *d, struct json_object *a,
			 const struct fsd_query_scratch *q)
{
	double distinct[FS_HLL_NSKETCH];
	__u32 i;

	for (i = 0; i < FS_HLL_NSKETCH; i++)
		distinct[i] = fs_sketch_distinct(&q->sum, i);
	add_u64(a, "distinct_flows", (__u64)llround(distinct[FS_HLL_FLOWS]));
	add_u64(a, "distinct_sources", (__u64)llround(distinct[FS_HLL_SOURCES]));
	add_u64(a, "distinct_destinations",
		(__u64)llround(distinct[FS_HLL_DESTS]));
	add_double(a, "relative_standard_error",
		   fs_hll_rse(d->opts.params.hll_p));
	add_u64(a, "hll_precision", d->opts.params.hll_p);
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
static unsigned int directions(const struct fsd_daemon *d, enum fsd_direction dir)
{
	return (unsigned int)dir & (d->fe[FSD_FE_OUT].history_ready ? FSD_DIR_BOTH : FSD_DIR_IN);
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
static struct json_object *answer_top_connections(struct fsd_daemon *d,
						  const struct query_job *qj,
						  struct fsd_query_scratch *q)
{
	const struct fs_sketch_params *p = &d->opts.params;
	struct json_object *a, *flows, *eb, *f;
	struct fsd_span span;
	struct fsd_topk top;
	size_t i, got;
	int err;

	if (!d->fe[FSD_FE_CONN].history_ready)
		return fsd_answer_error("this daemon counts no connections");
	if (fsd_topk_init(&top, qj->r.n, FSD_SORT_PACKETS))
		return fsd_answer_error("out of memory");
	err = fsd_history_top(&d->fe[FSD_FE_CONN].history, &qj->sel_conn, q, &top, &span);
	if (err) {
		fsd_topk_free(&top);
		if (err == -E2BIG)
			return fsd_answer_error("the span holds more than %u distinct candidates; ask a shorter span",
						FSD_QUERY_CANDIDATES);
		return fsd_answer_error("top query failed: %s", strerror(-err));
	}
	got = fsd_topk_finish(&top);
	a = json_object_new_object();
	add_span(d, a, &span);
	add_string(a, "sort", "connections");
	add_u64(a, "total_connections", span.totals.packets);
	add_u64(a, "total_established", span.totals.bytes);
	eb = json_object_new_object();
	add_double(eb, "epsilon", fs_cms_epsilon(p));
	add_double(eb, "delta", fs_cms_delta(p));
	add_u64(eb, "connections", bound(fs_cms_epsilon(p), span.totals.packets));
	add_u64(eb, "established", bound(fs_cms_epsilon(p), span.totals.bytes));
	json_object_object_add(a, "error_bound", eb);
	flows = json_object_new_array();
	for (i = 0; i < got; i++) {
		const struct fsd_flow_count *c = &top.heap[i];

		f = flow_json(d, c, span.totals.packets ?
			      (double)c->packets / (double)span.totals.packets : 0);
		json_object_object_del(f, "packets");
		json_object_object_del(f, "bytes");
		json_object_object_del(f, "direction");
		add_u64(f, "connections", c->packets);
		add_u64(f, "established", c->bytes);
		json_object_array_add(flows, f);
	}
	json_object_object_add(a, "flows", flows);
	add_u64(a, "candidates", span.candidates);
	fsd_topk_free(&top);
	add_distinct(d, a, q);
	return a;
}

static struct json_object *answer_top(struct fsd_daemon *d, const void *job,
				      struct fsd_query_scratch *q)
{
	const struct fsd_request *r = &((const struct query_job *)job)->r;
	const struct fs_sketch_params *p = &d->opts.params;
	enum fsd_sort sort = r->sort;
	struct json_object *a, *flows, *eb;
	size_t i, got;
	struct fsd_span span;
	struct fsd_topk top;
	__u64 total;
	int err;

	const struct query_job *qj = job;
	unsigned int dirs = directions(d, r->direction);
	size_t hll_n = (size_t)FS_HLL_NSKETCH << p->hll_p;
	__u8 *hll = NULL;
	struct fsd_span one;
	bool first = true;

	if (sort == FSD_SORT_CONNECTIONS)
		return answer_top_connections(d, qj, q);
	if (fsd_topk_init(&top, r->n, sort))
		return fsd_answer_error("out of memory");
	err = 0;
	memset(&span, 0, sizeof(span));
	if (dirs == FSD_DIR_BOTH && !(hll = malloc(hll_n)))
		err = -ENOMEM;
	if (!err && (dirs & FSD_DIR_IN)) {
		top.direction = FSD_DIR_IN;
		err = fsd_history_top(&d->fe[FSD_FE_IN].history, &qj->sel, q, &top, &one);
		if (!err)
			span_add(&span, &one, first);
		first = false;
		if (!err && hll)
			hll_keep(q, hll, hll_n);
	}
	if (!err && (dirs & FSD_DIR_OUT)) {
		top.direction = FSD_DIR_OUT;
		err = fsd_history_top(&d->fe[FSD_FE_OUT].history, &qj->sel_out, q, &top, &one);
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
	add_span(d, a, &span);
	add_string(a, "direction", direction_name(r->direction));
	add_string(a, "sort", sort == FSD_SORT_BYTES ? "bytes" : "packets");
	add_u64(a, "total_packets", span.totals.packets);
	add_u64(a, "total_bytes", span.totals.bytes);
	eb = json_object_new_object();
	add_double(eb, "epsilon", fs_cms_epsilon(p));
	add_double(eb, "delta", fs_cms_delta(p));
	add_u64(eb, "packets", bound(fs_cms_epsilon(p), span.totals.packets));
	add_u64(eb, "bytes", bound(fs_cms_epsilon(p), span.totals.bytes));
	json_object_object_add(a, "error_bound", eb);
	total = sort == FSD_SORT_BYTES ? span.totals.bytes : span.totals.packets;
	flows = json_object_new_array();
	for (i = 0; i < got; i++) {
		const struct fsd_flow_count *c = &top.heap[i];
		__u64 m = sort == FSD_SORT_BYTES ? c->bytes : c->packets;

		json_object_array_add(flows, flow_json(d, c, total ?
					(double)m / (double)total : 0));
	}
	json_object_object_add(a, "flows", flows);
	add_u64(a, "candidates", span.candidates);
	fsd_topk_free(&top);
	/* The same span's distinct counts, so that a live `top` shows them
	 * without a second request that could see another window. */
	add_distinct(d, a, q);
	return a;
}

static struct json_object *answer_flows(struct fsd_daemon *d, const void *job,
					struct fsd_query_scratch *q)
{
	const struct query_job *qj = job;
	const struct fsd_request *r = &qj->r;
	unsigned int dirs = directions(d, r->direction);
	size_t hll_n = (size_t)FS_HLL_NSKETCH << d->opts.params.hll_p;
	double unused[FS_HLL_NSKETCH];
	struct fsd_span span, one;
	struct json_object *a;
	__u8 *hll = NULL;
	int err = 0;

	memset(&span, 0, sizeof(span));
	if (dirs == FSD_DIR_BOTH && !(hll = malloc(hll_n)))
		err = -ENOMEM;
	if (!err && (dirs & FSD_DIR_IN)) {
		err = fsd_history_distinct(&d->fe[FSD_FE_IN].history, &qj->sel, q, unused, &one);
		if (!err)
			span_add(&span, &one, true);
		if (!err && hll)
			hll_keep(q, hll, hll_n);
	}
	if (!err && (dirs & FSD_DIR_OUT)) {
		err = fsd_history_distinct(&d->fe[FSD_FE_OUT].history, &qj->sel_out, q, unused, &one);
		if (!err)
			span_add(&span, &one, !(dirs & FSD_DIR_IN));
		if (!err && hll)
			hll_union(q, hll, hll_n);
	}
	free(hll);
	if (err)
		return fsd_answer_error("flows query failed: %s", strerror(-err));
	a = json_object_new_object();
	add_distinct(d, a, q);
	add_span(d, a, &span);
	/* The same span of the connection frontend: who opened TCP
	 * connections, and how many (after the directions' distinct counts:
	 * it reuses q). */
	if (d->fe[FSD_FE_CONN].history_ready &&
	    !fsd_history_distinct(&d->fe[FSD_FE_CONN].history, &qj->sel_conn, q, unused, &one)) {
		struct json_object *c = json_object_new_object();

		add_u64(c, "opened", one.totals.packets);
		add_u64(c, "established", one.totals.bytes);
		add_u64(c, "distinct_sources", (__u64)llround(unused[FS_HLL_SOURCES]));
		add_u64(c, "distinct_destinations", (__u64)llround(unused[FS_HLL_DESTS]));
		json_object_object_add(a, "connections", c);
	}
	add_string(a, "direction", direction_name(r->direction));
	return a;
}

/* export.c: the span's sketches themselves, from the same windows. */
static struct json_object *answer_export(struct fsd_daemon *d, const void *job,
					 struct fsd_query_scratch *q)
{
	const struct query_job *qj = job;

	return fsd_answer_export(d, qj->r.direction, &qj->sel, &qj->sel_out, q);
}

/* One direction's windows of a span, oldest first (fsd_history_series()). */
static int add_series(struct fsd_daemon *d, struct json_object *arr,
		      struct fsd_history *h, const struct fsd_span_select *sel,
		      const char *direction)
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
		add_u64(w, "start_ns", fsd_wall_ns(pts[i].start_ns));
		add_u64(w, "end_ns", fsd_wall_ns(pts[i].end_ns));
		add_u64(w, "packets", pts[i].totals.packets);
		add_u64(w, "bytes", pts[i].totals.bytes);
		add_u64(w, "distinct_flows", (__u64)llround(pts[i].distinct[FS_HLL_FLOWS]));
		add_u64(w, "distinct_sources", (__u64)llround(pts[i].distinct[FS_HLL_SOURCES]));
		add_u64(w, "distinct_destinations", (__u64)llround(pts[i].distinct[FS_HLL_DESTS]));
		json_object_array_add(ws, w);
	}
	free(pts);
	add_string(s, "direction", direction);
	json_object_object_add(s, "windows", ws);
	json_object_array_add(arr, s);
	return 0;
}

/* windows: the span window by window, per direction (`flowsketch plot`). */
static struct json_object *answer_windows(struct fsd_daemon *d, const void *job,
					  struct fsd_query_scratch *q)
{
	const struct query_job *qj = job;
	unsigned int dirs = directions(d, qj->r.direction);
	struct json_object *a = json_object_new_object(), *arr = json_object_new_array();
	int err = 0;

	if (dirs & FSD_DIR_IN)
		err = add_series(d, arr, &d->fe[FSD_FE_IN].history, &qj->sel, "in");
	if (!err && (dirs & FSD_DIR_OUT))
		err = add_series(d, arr, &d->fe[FSD_FE_OUT].history, &qj->sel_out, "out");
	if (err) {
		json_object_put(arr);
		json_object_put(a);
		return fsd_answer_error("windows query failed: %s", strerror(-err));
	}
	add_u64(a, "window_seconds", d->opts.window_sec);
	add_string(a, "direction", direction_name(qj->r.direction));
	json_object_object_add(a, "series", arr);
	return a;
}

static struct json_object *now_status(struct fsd_daemon *d,
				      const struct fsd_request *r)
{
	return fsd_answer_status(d);
}

/*
 * The command table: what answers each command, where, and who may ask
 * it (access.h).  Status reads the loop's own state (BPF maps, interfaces,
 * counters) and is cheap, so the loop answers it; span queries go to the
 * query threads (workers.h), and so do the blocklist's changes and pages,
 * which blockreq.h routes (block).  A command that changes anything (the
 * blocklist, its file) needs root; one that only reads is open to the read
 * group.  A row that says nothing is root only.
 */
static const struct {
	enum fsd_cmd cmd;
	fsd_job_fn query;				/* on a query thread */
	struct json_object *(*now)(struct fsd_daemon *d,
				   const struct fsd_request *r);	/* in the loop */
	enum fsd_cmd_need need;
	const char *name;				/* as the CLI says it */
	bool block;					/* fsd_block_request() */
} commands[] = {
	{ FSD_CMD_TOP, answer_top, NULL, FSD_NEED_READ, "top", false },
	{ FSD_CMD_FLOWS, answer_flows, NULL, FSD_NEED_READ, "flows", false },
	{ FSD_CMD_EXPORT, answer_export, NULL, FSD_NEED_READ, "export", false },
	{ FSD_CMD_WINDOWS, answer_windows, NULL, FSD_NEED_READ, "windows", false },
	{ FSD_CMD_STATUS, NULL, now_status, FSD_NEED_READ, "status", false },
	{ FSD_CMD_BLOCK_LIST, .block = true, .need = FSD_NEED_READ, .name = "block list" },
	{ FSD_CMD_BLOCK_ADD, .block = true, .need = FSD_NEED_ROOT, .name = "block add" },
	{ FSD_CMD_BLOCK_DEL, .block = true, .need = FSD_NEED_ROOT, .name = "block del" },
	{ FSD_CMD_BLOCK_CLEAR, .block = true, .need = FSD_NEED_ROOT, .name = "block clear" },
	{ FSD_CMD_BLOCK_LOAD_BEGIN, .block = true, .need = FSD_NEED_ROOT, .name = "block load" },
	{ FSD_CMD_BLOCK_LOAD_PART, .block = true, .need = FSD_NEED_ROOT, .name = "block load" },
	{ FSD_CMD_BLOCK_LOAD_COMMIT, .block = true, .need = FSD_NEED_ROOT, .name = "block load" },
};

/* The refusal for a peer that may not ask this (NULL: it may). */
static struct json_object *refusal(const struct fsd_daemon *d,
				   const struct fsd_peer *peer,
				   enum fsd_cmd_need need, const char *name)
{
	const char *group = d->opts.read_group;

	if (peer->access == FSD_ACCESS_ALL ||
	    (peer->access == FSD_ACCESS_READ && need == FSD_NEED_READ))
		return NULL;
	if (peer->access == FSD_ACCESS_READ)
		return fsd_answer_error("permission denied: %s needs root (this socket gives group %s read-only access)",
					name, group);
	if (group)
		return fsd_answer_error("permission denied: uid %u is neither root nor in group %s",
					(unsigned int)peer->uid, group);
	return fsd_answer_error("permission denied: this socket is for root only (flowsketchd --read-group GROUP lets a group read)");
}

void fsd_request_start(struct fsd_daemon *d, const char *text, size_t len,
		       __u64 client, const struct fsd_peer *peer,
		       struct json_object **now, struct fsd_job **job)
{
	char err[FSD_REQUEST_ERROR_MAX];
	struct query_job *qj;
	struct fsd_request r;
	struct fsd_job *j;
	size_t i;

	*now = NULL;
	*job = NULL;
	/* Nothing of a stranger's request is parsed. */
	if (peer->access == FSD_ACCESS_NONE) {
		*now = refusal(d, peer, FSD_NEED_READ, NULL);
		return;
	}
	if (fsd_request_parse(text, len, &r, err)) {
		*now = fsd_answer_error("%s", err);
		return;
	}
	for (i = 0; i < FS_ARRAY_SIZE(commands) && commands[i].cmd != r.cmd; i++)
		;
	if (i == FS_ARRAY_SIZE(commands)) {
		*now = fsd_answer_error("unknown cmd");
		return;
	}
	*now = refusal(d, peer, commands[i].need, commands[i].name);
	if (*now)
		return;
	if (commands[i].block) {
		fsd_block_request(d, &r, client, now, job);
		return;
	}
	if (commands[i].now) {
		*now = commands[i].now(d, &r);
		return;
	}
	qj = calloc(1, sizeof(*qj));
	j = calloc(1, sizeof(*j));
	if (!qj || !j) {
		free(qj);
		free(j);
		*now = fsd_answer_error("out of memory");
		return;
	}
	qj->r = r;
	*now = span_select(d, &d->fe[FSD_FE_IN].history, r.span, &qj->sel);
	if (!*now && d->fe[FSD_FE_OUT].history_ready)
		*now = span_select(d, &d->fe[FSD_FE_OUT].history, r.span, &qj->sel_out);
	if (!*now && d->fe[FSD_FE_CONN].history_ready)
		*now = span_select(d, &d->fe[FSD_FE_CONN].history, r.span, &qj->sel_conn);
	if (*now) {
		free(qj);
		free(j);
		return;
	}
	j->client = client;
	j->run = commands[i].query;
	j->request = qj;
	*job = j;
}
