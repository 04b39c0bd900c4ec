// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * top_table.c - `flowsketch top`'s request and its table: what the plain
 * view (top.c), the full-screen one (top_screen.c) and `flowsketch merge
 * --top` (fs_top_show()) print of a "top" answer.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "keys.h"
#include "args.h"
#include "client.h"
#include "format.h"
#include "reply.h"
#include "show.h"
#include "span_view.h"
#include "top_table.h"
#include "flowsketch/flow_key.h"

/* With --sort connections, packets holds the connections opened and
 * bytes those established (the answer's "connections", "established"). */
struct top_flow {
	const char *src, *dst, *proto;
	__u64 family, sport, dport, proto_num, packets, bytes;
	double share;
	bool blocked;		/* the source is on the blocklist now */
	bool sent;		/* direction "out": the host sent it */
};

struct top_view {
	struct fs_span_view span;
	__u64 total_packets, total_bytes, bound_packets, bound_bytes;
	__u64 distinct_flows, distinct_sources, distinct_dests;
	double epsilon, delta, distinct_rse;
	const char *sort;
	bool conns;			/* sort "connections" (top_flow) */
	const char *direction;		/* "in", "out", "both" */
	size_t nflows;
	struct top_flow *flows;
};

struct json_object *fs_top_request(const struct top_opts *o)
{
	/* --by asks for prefixes (top_prefixes.c's table) the same way. */
	struct json_object *req = fs_request(o->by ? "prefixes" : "top");

	if (o->by)
		json_object_object_add(req, FS_KEY_BY, json_object_new_string(o->by));
	json_object_object_add(req, FS_KEY_N, json_object_new_int64(o->n));
	json_object_object_add(req, FS_KEY_SORT, json_object_new_string(o->sort));
	return fs_request_span(req, o->span, o->direction);
}

/* fs_reply_row_fn: one of the answer's flows; ctx the view. */
static int parse_flow(struct json_object *f, void *row, void *ctx)
{
	bool conns = ((const struct top_view *)ctx)->conns;
	struct top_flow *out = row;
	const char *count = conns ? FS_KEY_CONNECTIONS : FS_KEY_PACKETS;
	const char *size = conns ? FS_KEY_ESTABLISHED : FS_KEY_BYTES;
	int err;

	if ((err = fs_reply_string(f, FS_KEY_SRC, &out->src)) ||
	    (err = fs_reply_string(f, FS_KEY_DST, &out->dst)) ||
	    (err = fs_reply_string(f, FS_KEY_PROTO, &out->proto)) ||
	    (err = fs_reply_u64(f, FS_KEY_SPORT, &out->sport)) ||
	    (err = fs_reply_u64(f, FS_KEY_DPORT, &out->dport)) ||
	    (err = fs_reply_u64(f, FS_KEY_PROTO_NUM, &out->proto_num)) ||
	    (err = fs_reply_u64(f, FS_KEY_FAMILY, &out->family)) ||
	    (err = fs_reply_u64(f, count, &out->packets)) ||
	    (err = fs_reply_u64(f, size, &out->bytes)) ||
	    (err = fs_reply_double(f, FS_KEY_SHARE, &out->share)))
		return err;
	/* Absent from daemons without a blocklist. */
	if (json_object_object_get_ex(f, FS_KEY_BLOCKED, NULL) &&
	    (err = fs_reply_bool(f, FS_KEY_BLOCKED, &out->blocked)))
		return err;
	/* Absent from daemons that count one direction. */
	if (json_object_object_get_ex(f, FS_KEY_DIRECTION, NULL)) {
		const char *d;

		if ((err = fs_reply_string(f, FS_KEY_DIRECTION, &d)))
			return err;
		if (strcmp(d, "in") && strcmp(d, "out"))
			return fs_bad_answer("flowsketchd's answer has a flow of direction '%s', not in or out", d);
		out->sent = !strcmp(d, "out");
	}
	/* A flow key holds 16-bit ports and an 8-bit protocol (flow_key.h);
	 * anything larger would print as a different flow. */
	if (out->sport > 0xffff || out->dport > 0xffff ||
	    out->proto_num > 0xff ||
	    (out->family != FS_FAMILY_IPV4 && out->family != FS_FAMILY_IPV6))
		return fs_bad_answer("flowsketchd's answer has a flow with a port, protocol or family out of range");
	return 0;
}

/* Everything rendered is read and type-checked first: a bad answer is
 * refused before any line of the table is printed. */
static int parse_top(struct json_object *a, struct top_view *v)
{
	void *rows;
	int err;

	if ((err = fs_span_parse(a, &v->span)) ||
	    (err = fs_reply_string(a, FS_KEY_SORT, &v->sort)))
		return err;
	/* --sort connections names its two counts for what they are. */
	v->conns = !strcmp(v->sort, "connections");
	if ((err = fs_reply_u64(a, v->conns ? FS_KEY_TOTAL_CONNECTIONS : FS_KEY_TOTAL_PACKETS,
				&v->total_packets)) ||
	    (err = fs_reply_u64(a, v->conns ? FS_KEY_TOTAL_ESTABLISHED : FS_KEY_TOTAL_BYTES,
				&v->total_bytes)) ||
	    (err = fs_reply_double(a, "error_bound.epsilon", &v->epsilon)) ||
	    (err = fs_reply_double(a, "error_bound.delta", &v->delta)) ||
	    (err = fs_reply_u64(a, v->conns ? "error_bound.connections" :
				"error_bound.packets", &v->bound_packets)) ||
	    (err = fs_reply_u64(a, v->conns ? "error_bound.established" :
				"error_bound.bytes", &v->bound_bytes)) ||
	    (err = fs_reply_u64(a, FS_KEY_DISTINCT_FLOWS, &v->distinct_flows)) ||
	    (err = fs_reply_u64(a, FS_KEY_DISTINCT_SOURCES, &v->distinct_sources)) ||
	    (err = fs_reply_u64(a, FS_KEY_DISTINCT_DESTINATIONS, &v->distinct_dests)) ||
	    (err = fs_reply_double(a, FS_KEY_RSE, &v->distinct_rse)))
		return err;
	v->direction = "both";
	if (json_object_object_get_ex(a, FS_KEY_DIRECTION, NULL) &&
	    (err = fs_reply_string(a, FS_KEY_DIRECTION, &v->direction)))
		return err;
	err = fs_reply_rows(a, FS_KEY_FLOWS, sizeof(*v->flows), parse_flow, v,
			    &rows, &v->nflows);
	v->flows = rows;	/* the caller frees it, error or not */
	return err;
}

/* The datapath keys ports for TCP and UDP only (bpf/parse.bpf.h); every
 * other protocol has ports 0, which are no ports to print. */
static bool has_ports(const struct top_flow *f)
{
	return f->proto_num == IPPROTO_TCP || f->proto_num == IPPROTO_UDP;
}

/* The family's own ICMP carries type << 8 | code in "dport"; ICMPv4 in
 * an IPv6 packet (or the reverse) is keyed like any other protocol. */
static bool is_icmp(const struct top_flow *f)
{
	return f->family == FS_FAMILY_IPV4 ? f->proto_num == IPPROTO_ICMP :
					     f->proto_num == IPPROTO_ICMPV6;
}

struct top_row {
	char rank[24], src[FS_FMT_MAX], dst[FS_FMT_MAX], proto[FS_FMT_MAX];
	char packets[FS_FMT_MAX], bytes[FS_FMT_MAX], share[FS_FMT_MAX];
};

static void format_row(const struct top_flow *f, size_t rank, bool conns,
		       struct top_row *r)
{
	bool ports = has_ports(f);

	snprintf(r->rank, sizeof(r->rank), "%zu", rank);
	/* A connection's key has no source port (bpf/conn.bpf.c). */
	fs_fmt_endpoint(r->src, f->src, ports && !conns ? (int)f->sport : -1);
	fs_fmt_endpoint(r->dst, f->dst, ports ? (int)f->dport : -1);
	if (is_icmp(f))
		snprintf(r->proto, sizeof(r->proto), "%s %llu/%llu", f->proto,
			 (unsigned long long)(f->dport >> 8),
			 (unsigned long long)(f->dport & 0xff));
	else
		snprintf(r->proto, sizeof(r->proto), "%s", f->proto);
	fs_fmt_count(r->packets, (double)f->packets);
	if (conns)
		fs_fmt_count(r->bytes, (double)f->bytes);
	else
		fs_fmt_bytes(r->bytes, (double)f->bytes);
	fs_fmt_percent(r->share, f->share, 1);
}

static void print_header(FILE *out, const struct top_view *v)
{
	char pk[FS_FMT_MAX], by[FS_FMT_MAX], bp[FS_FMT_MAX], bb[FS_FMT_MAX];
	char eps[FS_FMT_MAX], prob[FS_FMT_MAX];
	char df[FS_FMT_MAX], ds[FS_FMT_MAX], dd[FS_FMT_MAX], rse[FS_FMT_MAX];

	if (!fs_span_print(out, "top", &v->span))
		return;
	/* --sort connections: connections opened and established, where
	 * the others have packets and bytes. */
	if (v->conns)
		fprintf(out, "%s TCP connections opened, %s established\n",
			fs_fmt_grouped(pk, v->total_packets),
			fs_fmt_grouped(by, v->total_bytes));
	else
		fprintf(out, "%s packets, %s, by %s%s\n", fs_fmt_grouped(pk, v->total_packets),
			fs_fmt_bytes(by, (double)v->total_bytes), v->sort,
			fs_span_direction_words(v->direction));
	fprintf(out, "counts are upper bounds, at most +%s %s (+%s%s) over the truth with probability %s (epsilon %s of the total)\n",
		fs_fmt_grouped(bp, v->bound_packets), v->conns ? "opened" : "packets",
		v->conns ? fs_fmt_grouped(bb, v->bound_bytes) :
			   fs_fmt_bytes(bb, (double)v->bound_bytes),
		v->conns ? " established" : "",
		fs_fmt_percent(prob, 1 - v->delta, 1),
		fs_fmt_percent(eps, v->epsilon, 3));
	fprintf(out, "distinct: %s %s, %s sources%s %s destinations (HyperLogLog, ±%s at 1 sigma)\n",
		fs_fmt_grouped(df, v->distinct_flows),
		v->conns ? "source-service pairs" : "flows",
		fs_fmt_grouped(ds, v->distinct_sources),
		v->conns ? " opened connections to" : ",",
		fs_fmt_grouped(dd, v->distinct_dests),
		fs_fmt_percent(rse, v->distinct_rse, 2));
}

static int print_top(FILE *out, const struct top_view *v)
{
	struct top_row *rows = calloc(v->nflows ? v->nflows : 1, sizeof(*rows));
	int wr = 1, ws = 6, wd = 11, wp = 5, wk = 7, wb = v->conns ? 11 : 5, wh = 5;
	size_t i;

	if (!rows)
		return fs_no_memory();
	for (i = 0; i < v->nflows; i++) {
		format_row(&v->flows[i], i + 1, v->conns, &rows[i]);
		wr = fs_fmt_widest(wr, rows[i].rank);
		ws = fs_fmt_widest(ws, rows[i].src);
		wd = fs_fmt_widest(wd, rows[i].dst);
		wp = fs_fmt_widest(wp, rows[i].proto);
		wk = fs_fmt_widest(wk, rows[i].packets);
		wb = fs_fmt_widest(wb, rows[i].bytes);
		wh = fs_fmt_widest(wh, rows[i].share);
	}
	print_header(out, v);
	if (!v->span.windows)
		goto out;
	fprintf(out, "\n%*s  %-*s  %-*s  %-*s  %*s  %*s  %*s\n", wr, "#", ws, "source",
	       wd, "destination", wp, "proto", wk, v->conns ? "opened" : "packets",
	       wb, v->conns ? "established" : "bytes", wh, "share");
	for (i = 0; i < v->nflows; i++)
		fprintf(out, "%*s  %-*s  %-*s  %-*s  %*s  %*s  %*s%s%s\n", wr, rows[i].rank,
		       ws, rows[i].src, wd, rows[i].dst, wp, rows[i].proto,
		       wk, rows[i].packets, wb, rows[i].bytes, wh, rows[i].share,
		       v->flows[i].sent ? "  sent" : "",
		       v->flows[i].blocked ? "  blocked" : "");
	if (!v->nflows)
		fprintf(out, "(no flow above the report threshold in this span)\n");
out:
	free(rows);
	return 0;
}

/* Check answer and, given out, print its table there. */
static int show_top(struct json_object *answer, FILE *out, __u64 *window_end,
		    __u64 *window_seconds)
{
	struct top_view v = { 0 };
	int err;

	err = parse_top(answer, &v);
	if (!err && out)
		err = print_top(out, &v);
	*window_end = v.span.window_end;
	*window_seconds = v.span.window_seconds;
	free(v.flows);
	return err;
}

int fs_top_show(struct json_object *answer, bool print)
{
	__u64 end, seconds;

	return show_top(answer, print ? stdout : NULL, &end, &seconds);
}

int fs_top_table(const struct fs_cli *cli, const struct top_opts *o, FILE *out,
		 __u64 *window_end, __u64 *window_seconds)
{
	struct json_object *answer = NULL;
	int err;

	*window_end = *window_seconds = 0;
	err = fs_client_call(cli, fs_top_request(o), &answer);
	if (!err)
		err = show_top(answer, out, window_end, window_seconds);
	json_object_put(answer);
	return err;
}
