// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * query.c - answer a request: top and flows here, status in status.c.
 *
 * The request is parsed and checked in request.c, which needs no daemon;
 * what is left here depends on the daemon's state (the history kept).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "flow_fmt.h"
#include "hll_estimate.h"
#include "daemon.h"
#include "request.h"
#include "utf8.h"

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

/* The request's span (seconds, 0: none given) in whole windows; NULL or
 * an error answer. */
static struct json_object *span_windows(struct fsd_daemon *d, double span,
					__u32 *windows)
{
	unsigned int window = d->opts.window_sec;

	*windows = 1;
	if (!span)
		return NULL;
	if (span > (double)d->history.capacity * window)
		return fsd_answer_error("span of %g s is more than the %u s of history kept",
					span, d->history.capacity * window);
	*windows = (__u32)ceil(span / window);
	return NULL;
}

static struct json_object *flow_json(const struct fsd_flow_count *c,
				     double share)
{
	struct json_object *f = json_object_new_object();
	char src[FS_ADDR_STR_MAX] = "?", dst[FS_ADDR_STR_MAX] = "?", num[4];

	fs_addr_str(c->key.family, c->key.src, src, sizeof(src));
	fs_addr_str(c->key.family, c->key.dst, dst, sizeof(dst));
	add_string(f, "src", src);
	add_string(f, "dst", dst);
	add_u64(f, "sport", fs_flow_sport(&c->key));
	add_u64(f, "dport", fs_flow_dport(&c->key));
	add_string(f, "proto", fs_proto_str(c->key.proto, num, sizeof(num)));
	add_u64(f, "proto_num", c->key.proto);
	add_u64(f, "family", c->key.family);
	add_u64(f, "packets", c->packets);
	add_u64(f, "bytes", c->bytes);
	add_double(f, "share", share);
	return f;
}

/* The span's description common to top and flows. */
static void add_span(struct fsd_daemon *d, struct json_object *a,
		     const struct fsd_span *span)
{
	__u64 end = span->windows ? span->end_ns : d->started_ns;

	add_u64(a, "span_seconds", (__u64)span->windows * d->opts.window_sec);
	add_u64(a, "windows", span->windows);
	add_u64(a, "window_seconds", d->opts.window_sec);
	add_u64(a, "window_end", end / 1000000000ULL);
}

static __u64 bound(double eps, __u64 total)
{
	return (__u64)ceil(eps * (double)total);
}

/* The distinct counts of the last `windows` windows into a; 0 or -errno. */
static int add_distinct(struct fsd_daemon *d, struct json_object *a,
			__u32 windows, struct fsd_span *span)
{
	double distinct[FS_HLL_NSKETCH];
	int err;

	err = fsd_history_distinct(&d->history, windows, distinct, span);
	if (err)
		return err;
	add_u64(a, "distinct_flows", (__u64)llround(distinct[FS_HLL_FLOWS]));
	add_u64(a, "distinct_sources", (__u64)llround(distinct[FS_HLL_SOURCES]));
	add_u64(a, "distinct_destinations",
		(__u64)llround(distinct[FS_HLL_DESTS]));
	add_double(a, "relative_standard_error",
		   fs_hll_rse(d->opts.params.hll_p));
	add_u64(a, "hll_precision", d->opts.params.hll_p);
	return 0;
}

static struct json_object *answer_top(struct fsd_daemon *d,
				      const struct fsd_request *r)
{
	const struct fs_sketch_params *p = &d->opts.params;
	enum fsd_sort sort = r->sort;
	struct json_object *a, *flows, *eb;
	size_t i, got;
	struct fsd_span span;
	struct fsd_topk top;
	__u32 windows;
	__u64 total;
	int err;

	if ((a = span_windows(d, r->span, &windows)))
		return a;
	if (fsd_topk_init(&top, r->n, sort))
		return fsd_answer_error("out of memory");
	err = fsd_history_top(&d->history, windows, &top, &span);
	if (err) {
		fsd_topk_free(&top);
		return fsd_answer_error("top query failed: %s", strerror(-err));
	}
	got = fsd_topk_finish(&top);

	a = json_object_new_object();
	add_span(d, a, &span);
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

		json_object_array_add(flows, flow_json(c, total ?
					(double)m / (double)total : 0));
	}
	json_object_object_add(a, "flows", flows);
	add_u64(a, "candidates", span.candidates);
	fsd_topk_free(&top);
	/* The same span's distinct counts, so that a live `top` shows them
	 * without a second request that could see another window. */
	err = add_distinct(d, a, windows, &span);
	if (err) {
		json_object_put(a);
		return fsd_answer_error("top query failed: %s", strerror(-err));
	}
	return a;
}

static struct json_object *answer_flows(struct fsd_daemon *d,
					const struct fsd_request *r)
{
	struct fsd_span span;
	struct json_object *a;
	__u32 windows;
	int err;

	if ((a = span_windows(d, r->span, &windows)))
		return a;
	a = json_object_new_object();
	err = add_distinct(d, a, windows, &span);
	if (err) {
		json_object_put(a);
		return fsd_answer_error("flows query failed: %s", strerror(-err));
	}
	add_span(d, a, &span);
	return a;
}

struct json_object *fsd_answer(struct fsd_daemon *d, const char *request,
			       size_t len)
{
	char err[FSD_REQUEST_ERROR_MAX];
	struct fsd_request r;

	if (fsd_request_parse(request, len, &r, err))
		return fsd_answer_error("%s", err);
	switch (r.cmd) {
	case FSD_CMD_TOP:
		return answer_top(d, &r);
	case FSD_CMD_FLOWS:
		return answer_flows(d, &r);
	case FSD_CMD_STATUS:
		return fsd_answer_status(d);
	}
	return fsd_answer_error("unknown cmd");
}
