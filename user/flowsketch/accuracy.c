// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * accuracy.c - `flowsketch accuracy`: the sketches' error measured live
 * against the daemon's keyed sample of flows, each counted exactly
 * (flowsketchd --sample-rate; include/flowsketch/sample.h).
 *
 * Count-Min never undercounts and overcounts a flow by more than eps N
 * with probability at most delta (params.h), so a healthy sketch shows no
 * undercount and a share of sampled flows over eps N near or below delta.
 * The HyperLogLog's distinct flows against the sample's own estimate of
 * them (its flows times the inverse rate) differ by z standard errors, and
 * about 95 % of windows land within 2.  The daemon says when any of these
 * leaves its design (sample.h, fs_sample_alarms()): the alarm.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "flowsketch/sample.h"
#include "keys.h"
#include "args.h"
#include "cli.h"
#include "client.h"
#include "format.h"
#include "reply.h"
#include "show.h"
#include "span_view.h"

#define ACCURACY_ROWS 10	/* sampled flows listed, the heaviest */

struct accuracy_opts {
	__u32 span;
	const char *direction;
	bool json;
};

struct sampled {
	const char *src, *dst, *proto;
	__u64 sport, dport, exact[2], est[2];
};

struct accuracy_view {
	struct fs_span_view span;
	const char *direction;
	__u64 rate, buckets, flows, full, undercounts, windows;
	double rate_eff, over_max, over_share, delta, hll, n_hat, z, within;
	struct json_object *alarms;
	size_t n;
	struct sampled *rows;
};

#define OFF(field) offsetof(struct accuracy_opts, field)

static const struct fs_opt accuracy_opts[] = {
	{ "span", 't', "SECONDS", fs_opt_span, OFF(span), 0, 0, NULL,
	  "span to measure over, rounded up to whole windows\n"
	  "(default one window); units s, m, h accepted" },
	{ "direction", 'd', "D", fs_opt_direction, OFF(direction), 0, 0, NULL,
	  "in (received), out (sent) or both (default)" },
	{ "json", 'j', NULL, NULL, OFF(json), 0, 0, NULL,
	  "print the daemon's answer as JSON, every sampled flow" },
	{ "help", 'h', NULL, fs_opt_show_help, 0, 0, 0, NULL, "this text" },
	{ 0 }
};

const struct fs_optset fs_accuracy_optset = {
	.name = "accuracy",
	.usage =
	"Usage: flowsketch [--socket PATH] [--timeout SECONDS] accuracy [--span SECONDS]\n"
	"                  [--direction in|out|both] [--json]\n"
	"\n"
	"The sketches' error, measured against a keyed sample of flows the\n"
	"datapath also counts exactly (flowsketchd --sample-rate 1/N):\n"
	"Count-Min's undercounts (never allowed) and overcounts against its\n"
	"bound eps N, the HyperLogLog's distance from the sample's distinct\n"
	"count, and whether any left its design.\n"
	"\n",
	.opts = accuracy_opts,
	.help_col = FS_CLI_HELP_COL,
	.getopt_error = fs_cli_getopt_error,
};

static int parse_row(struct json_object *e, void *row, void *ctx)
{
	struct sampled *r = row;

	(void)ctx;
	return fs_reply_string(e, FS_KEY_SRC, &r->src) ||
	       fs_reply_string(e, FS_KEY_DST, &r->dst) ||
	       fs_reply_string(e, FS_KEY_PROTO, &r->proto) ||
	       fs_reply_u64(e, FS_KEY_SPORT, &r->sport) ||
	       fs_reply_u64(e, FS_KEY_DPORT, &r->dport) ||
	       fs_reply_u64(e, FS_KEY_EXACT_PACKETS, &r->exact[0]) ||
	       fs_reply_u64(e, FS_KEY_EXACT_BYTES, &r->exact[1]) ||
	       fs_reply_u64(e, FS_KEY_PACKETS, &r->est[0]) ||
	       fs_reply_u64(e, FS_KEY_BYTES, &r->est[1]) ? -EPROTO : 0;
}

/* Everything printed is read and checked first. */
static int parse_accuracy(struct json_object *a, struct accuracy_view *v)
{
	void *rows;
	int err;

	if ((err = fs_span_parse(a, &v->span)) ||
	    (err = fs_reply_string(a, FS_KEY_DIRECTION, &v->direction)) ||
	    (err = fs_reply_u64(a, FS_KEY_SAMPLE "." FS_KEY_RATE, &v->rate)) ||
	    (err = fs_reply_u64(a, FS_KEY_SAMPLE "." FS_KEY_BUCKETS, &v->buckets)) ||
	    (err = fs_reply_u64(a, FS_KEY_SAMPLE "." FS_KEY_FLOWS, &v->flows)) ||
	    (err = fs_reply_u64(a, FS_KEY_SAMPLE "." FS_KEY_FULL, &v->full)) ||
	    (err = fs_reply_double(a, FS_KEY_SAMPLE "." FS_KEY_RATE_EFFECTIVE, &v->rate_eff)) ||
	    (err = fs_reply_u64(a, FS_KEY_UNDERCOUNTS, &v->undercounts)) ||
	    (err = fs_reply_double(a, FS_KEY_OVERCOUNT_MAX_EPS, &v->over_max)) ||
	    (err = fs_reply_double(a, FS_KEY_OVER_BOUND_SHARE, &v->over_share)) ||
	    (err = fs_reply_double(a, FS_KEY_DELTA, &v->delta)) ||
	    (err = fs_reply_double(a, FS_KEY_HLL, &v->hll)) ||
	    (err = fs_reply_double(a, FS_KEY_SAMPLE_DISTINCT, &v->n_hat)) ||
	    (err = fs_reply_double(a, FS_KEY_HLL_Z, &v->z)) ||
	    (err = fs_reply_u64(a, FS_KEY_HLL_WINDOWS, &v->windows)) ||
	    (err = fs_reply_double(a, FS_KEY_HLL_WITHIN_2SE, &v->within)))
		return err;
	if (!json_object_object_get_ex(a, FS_KEY_ALARMS, &v->alarms) ||
	    !json_object_is_type(v->alarms, json_type_array))
		return fs_bad_answer("flowsketchd's answer has no list of alarms");
	err = fs_reply_rows(a, FS_KEY_FLOWS, sizeof(*v->rows), parse_row, v, &rows, &v->n);
	v->rows = rows;		/* the caller frees it, error or not */
	return err;
}

static int by_exact(const void *x, const void *y)
{
	const struct sampled *a = x, *b = y;

	return a->exact[0] < b->exact[0] ? 1 : a->exact[0] > b->exact[0] ? -1 : 0;
}

static void print_alarm(FILE *out, const struct accuracy_view *v)
{
	size_t i, n = json_object_array_length(v->alarms);

	if (!n) {
		fprintf(out, "alarm: none (the measured error is within its design)\n");
		return;
	}
	fprintf(out, "ALARM:");
	for (i = 0; i < n; i++)
		fprintf(out, " %s", json_object_get_string(json_object_array_get_idx(v->alarms, i)));
	fprintf(out, " (see flowsketch accuracy --help)\n");
}

static void print_accuracy(FILE *out, const struct accuracy_view *v)
{
	char a[FS_FMT_MAX], b[FS_FMT_MAX], c[FS_FMT_MAX], d[FS_FMT_MAX];
	size_t i;

	if (!fs_span_print(out, "accuracy", &v->span))
		return;
	fprintf(out, "%s sampled flows%s, 1 in %llu (effective 1 in %.0f), %llu buckets, %llu full\n",
		fs_fmt_grouped(a, v->flows), fs_span_direction_words(v->direction),
		(unsigned long long)v->rate, v->rate_eff, (unsigned long long)v->buckets,
		(unsigned long long)v->full);
	fprintf(out, "Count-Min: %llu undercounts; largest overcount %.2f eps N; %s of flows over eps N (design: at most %s; packets or bytes, the larger)\n",
		(unsigned long long)v->undercounts, v->over_max,
		fs_fmt_percent(b, v->over_share, 2), fs_fmt_percent(c, v->delta, 2));
	fprintf(out, "HyperLogLog: %s distinct flows, the sample says %s: z = %.2f (alarm beyond %g)",
		fs_fmt_grouped(a, (__u64)llround(v->hll)), fs_fmt_grouped(d, (__u64)llround(v->n_hat)),
		v->z, FS_SAMPLE_ALARM_Z);
	/* A merge of export files holds one span, no windows to count. */
	if (v->windows)
		fprintf(out, "; %s of %llu windows within 2 standard errors (design: about 95 %%)",
			fs_fmt_percent(b, v->within, 1), (unsigned long long)v->windows);
	fputc('\n', out);
	print_alarm(out, v);
	if (!v->n)
		return;
	qsort(v->rows, v->n, sizeof(*v->rows), by_exact);
	fprintf(out, "\n%-48s  %12s  %12s  %14s  %14s\n", "sampled flow (heaviest)", "packets",
		"estimate", "bytes", "estimate");
	for (i = 0; i < v->n && i < ACCURACY_ROWS; i++) {
		const struct sampled *r = &v->rows[i];
		bool v6 = strchr(r->src, ':') != NULL;
		char flow[160];

		/* IPv6 addresses in brackets, so the port stands apart. */
		snprintf(flow, sizeof(flow), v6 ? "%s [%s]:%llu > [%s]:%llu" : "%s %s:%llu > %s:%llu",
			 r->proto, r->src, (unsigned long long)r->sport, r->dst,
			 (unsigned long long)r->dport);
		fprintf(out, "%-48s  %12s  %12s  %14s  %14s\n", flow,
			fs_fmt_grouped(a, r->exact[0]), fs_fmt_grouped(b, r->est[0]),
			fs_fmt_grouped(c, r->exact[1]), fs_fmt_grouped(d, r->est[1]));
	}
}

int fs_accuracy_show(struct json_object *answer, bool print)
{
	struct accuracy_view v = { 0 };
	int err;

	err = parse_accuracy(answer, &v);
	if (!err && print)
		print_accuracy(stdout, &v);
	free(v.rows);
	return err;
}

int fs_cmd_accuracy(const struct fs_cli *cli, int argc, char **argv)
{
	struct accuracy_opts o = { 0 };
	int ret;

	ret = fs_cli_parse_all(&fs_accuracy_optset, argc, argv, &o);
	if (ret)
		return ret == FS_HELP_SHOWN ? FS_EXIT_OK : ret;
	return fs_client_show(cli, fs_request_span(fs_request("accuracy"), o.span, o.direction),
			      o.json, fs_accuracy_show);
}
