// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * query.c - parse a request and answer top and flows (protocol.h).
 *
 * Requests are checked strictly: an unknown command, an unknown key or a
 * value of the wrong type is an error, so a typo never silently returns
 * the default answer.
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

/* Largest "n" of a top request: the answer must stay a few MB. */
#define FSD_TOP_MAX 10000
#define FSD_TOP_DEFAULT 10

struct json_object *fsd_answer_error(const char *fmt, ...)
{
	struct json_object *o = json_object_new_object();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
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

/* Every key of req is one of allowed[] (NULL-terminated) or "cmd". */
static struct json_object *check_keys(struct json_object *req, const char *cmd,
				      const char *const *allowed)
{
	json_object_object_foreach(req, key, val) {
		const char *const *a;

		(void)val;
		if (!strcmp(key, "cmd"))
			continue;
		for (a = allowed; *a && strcmp(*a, key); a++)
			;
		if (!*a)
			return fsd_answer_error("unknown key \"%s\" for cmd \"%s\"",
						key, cmd);
	}
	return NULL;
}

/* "span" in seconds -> whole windows; NULL or an error answer. */
static struct json_object *span_windows(struct fsd_daemon *d,
					struct json_object *req, __u32 *windows)
{
	unsigned int window = d->opts.window_sec;
	struct json_object *v;
	double span;

	*windows = 1;
	if (!json_object_object_get_ex(req, "span", &v))
		return NULL;
	if ((!json_object_is_type(v, json_type_int) &&
	     !json_object_is_type(v, json_type_double)) ||
	    !(json_object_get_double(v) > 0) ||
	    !isfinite(json_object_get_double(v)))
		return fsd_answer_error("\"span\" must be a positive number of seconds");
	span = json_object_get_double(v);
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
				      struct json_object *req)
{
	static const char *const keys[] = { "n", "sort", "span", NULL };
	const struct fs_sketch_params *p = &d->opts.params;
	enum fsd_sort sort = FSD_SORT_PACKETS;
	struct json_object *a, *v, *flows, *eb;
	size_t n = FSD_TOP_DEFAULT, i, got;
	struct fsd_span span;
	struct fsd_topk top;
	__u32 windows;
	__u64 total;
	int err;

	if ((a = check_keys(req, "top", keys)) || (a = span_windows(d, req, &windows)))
		return a;
	if (json_object_object_get_ex(req, "n", &v)) {
		if (!json_object_is_type(v, json_type_int) ||
		    json_object_get_int64(v) < 1 ||
		    json_object_get_int64(v) > FSD_TOP_MAX)
			return fsd_answer_error("\"n\" must be an integer from 1 to %d",
						FSD_TOP_MAX);
		n = (size_t)json_object_get_int64(v);
	}
	if (json_object_object_get_ex(req, "sort", &v)) {
		const char *s = json_object_get_string(v);

		if (!json_object_is_type(v, json_type_string) ||
		    (strcmp(s, "packets") && strcmp(s, "bytes")))
			return fsd_answer_error("\"sort\" must be \"packets\" or \"bytes\"");
		sort = strcmp(s, "bytes") ? FSD_SORT_PACKETS : FSD_SORT_BYTES;
	}

	if (fsd_topk_init(&top, n, sort))
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
					struct json_object *req)
{
	static const char *const keys[] = { "span", NULL };
	struct fsd_span span;
	struct json_object *a;
	__u32 windows;
	int err;

	if ((a = check_keys(req, "flows", keys)) || (a = span_windows(d, req, &windows)))
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
	struct json_tokener *tok = json_tokener_new();
	struct json_object *req, *cmd, *a;
	const char *name;
	size_t used;

	if (!tok)
		return fsd_answer_error("out of memory");
	req = json_tokener_parse_ex(tok, request, (int)len);
	used = json_tokener_get_parse_end(tok);
	if (!req || json_tokener_get_error(tok) != json_tokener_success) {
		a = fsd_answer_error("request is not valid JSON");
		goto out;
	}
	while (used < len && strchr(" \t\r\n", request[used]))
		used++;
	if (used != len) {
		a = fsd_answer_error("request has data after its JSON object");
		goto out;
	}
	if (!json_object_is_type(req, json_type_object)) {
		a = fsd_answer_error("request is not a JSON object");
		goto out;
	}
	if (!json_object_object_get_ex(req, "cmd", &cmd) ||
	    !json_object_is_type(cmd, json_type_string)) {
		a = fsd_answer_error("request has no \"cmd\" string");
		goto out;
	}
	name = json_object_get_string(cmd);
	if (!strcmp(name, "top")) {
		a = answer_top(d, req);
	} else if (!strcmp(name, "flows")) {
		a = answer_flows(d, req);
	} else if (!strcmp(name, "status")) {
		static const char *const none[] = { NULL };

		a = check_keys(req, "status", none);
		if (!a)
			a = fsd_answer_status(d);
	} else {
		a = fsd_answer_error("unknown cmd \"%s\" (top, flows or status)",
				     name);
	}
out:
	json_object_put(req);
	json_tokener_free(tok);
	return a;
}
