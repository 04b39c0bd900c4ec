// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * spread.c - `flowsketch spread`: the sources with the most distinct
 * (destination address, destination port) peers, scanners; or the
 * destinations with the most distinct sources, victims and services.
 *
 * A key's spread X is R times a HyperLogLog estimate of the elements
 * sampled 1 in R (include/flowsketch/spread.h), with relative standard
 * error sigma(n) = sqrt(1.04^2 / 90 + (R - 1) / n) (the registers' error,
 * then the sampling's).  The least of a key's buckets also holds the
 * elements of keys sharing it, at most S = ceil(e F / w) with probability
 * 1 - e^-d (F distinct flows, w buckets a row, d rows), hence the lower
 * end the daemon states: max(0, floor(X / (1 + z sigma(X)) - S)).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "flowsketch/spread.h"
#include "keys.h"
#include "args.h"
#include "cli.h"
#include "client.h"
#include "format.h"
#include "reply.h"
#include "show.h"
#include "span_view.h"

#define SPREAD_DEFAULT_N 10
#define SPREAD_MAX_N 10000

struct spread_opts {
	__u32 n;
	__u32 span;
	const char *by;		/* "src" or "dst" */
	const char *direction;
	bool json;
};

struct spreader {
	const char *key;
	double distinct, error;
	__u64 low;
	__u64 rows;		/* a merge's: rows estimated over, 0 all */
};

struct spread_view {
	struct fs_span_view span;
	const char *by, *direction;
	__u64 distinct_flows, sharing, sample_rate, registers;
	__u64 depth, files;	/* files: a merge's (merge.c), 0 live */
	double z, sharing_p;
	size_t n;
	struct spreader *keys;
};

static int opt_by(const struct fs_optset *set, const struct fs_opt *opt,
		  const char *arg, void *o)
{
	static const char *const words[] = { "src", "dst", NULL };
	int i = fs_opt_word(set, opt, arg, words,
			    "src (scanners) or dst (the most contacted)");

	if (i >= 0)
		((struct spread_opts *)o)->by = arg;
	return i < 0 ? i : 0;
}

#define OFF(field) offsetof(struct spread_opts, field)

static const struct fs_opt spread_opts[] = {
	{ "by", 'b', "KEY", opt_by, 0, 0, 0, NULL,
	  "src: sources by distinct (destination, port) peers;\n"
	  "dst: destinations by distinct sources (required)" },
	{ "number", 'n', "N", fs_opt_number, OFF(n), 1, SPREAD_MAX_N, NULL,
	  "keys to list (default " FS_STR(SPREAD_DEFAULT_N) ", at most " FS_STR(SPREAD_MAX_N) ")" },
	{ "span", 't', "SECONDS", fs_opt_span, OFF(span), 0, 0, NULL,
	  "span to count over, rounded up to whole windows\n"
	  "(default one window); units s, m, h accepted" },
	{ "direction", 'd', "D", fs_opt_direction, OFF(direction), 0, 0, NULL,
	  "in (received), out (sent) or both (default)" },
	{ "json", 'j', NULL, NULL, OFF(json), 0, 0, NULL,
	  "print the daemon's answer as JSON" },
	{ "help", 'h', NULL, fs_opt_show_help, 0, 0, 0, NULL, "this text" },
	{ 0 }
};

const struct fs_optset fs_spread_optset = {
	.name = "spread",
	.usage =
	"Usage: flowsketch [--socket PATH] [--timeout SECONDS] spread --by src|dst [-n N]\n"
	"                  [--span SECONDS] [--direction in|out|both] [--json]\n"
	"\n"
	"The keys with the most distinct peers (flowsketchd --detect spread):\n"
	"sources that reach many destinations and ports (scanners), or\n"
	"destinations reached by many sources.  Each estimate comes with its\n"
	"relative standard error and the least the truth can be.\n"
	"\n",
	.opts = spread_opts,
	.help_col = FS_CLI_HELP_COL,
	.getopt_error = fs_cli_getopt_error,
};

/* fs_reply_row_fn: one of the answer's spreaders; ctx the view (its key,
 * "src" or "dst", and depth). */
static int parse_key(struct json_object *e, void *row, void *ctx)
{
	const struct spread_view *v = ctx;
	struct spreader *out = row;
	int err;

	if ((err = fs_reply_string(e, v->by, &out->key)) ||
	    (err = fs_reply_double(e, FS_KEY_DISTINCT, &out->distinct)) ||
	    (err = fs_reply_double(e, FS_KEY_ERROR, &out->error)) ||
	    (err = fs_reply_u64(e, FS_KEY_DISTINCT_LOW, &out->low)) ||
	    (json_object_object_get_ex(e, FS_KEY_ROWS, NULL) &&
	     (err = fs_reply_u64_in(e, FS_KEY_ROWS, 1, v->depth, &out->rows))))
		return err;
	if (out->distinct < 0 || out->error < 0)
		return fs_bad_answer("flowsketchd's answer has a negative spread or error for %s",
				     out->key);
	return 0;
}

/* Everything rendered is read and type-checked first: a bad answer is
 * refused before any line of the table is printed. */
static int parse_spread(struct json_object *a, struct spread_view *v)
{
	void *rows;
	int err;

	if ((err = fs_span_parse(a, &v->span)) ||
	    (err = fs_reply_string(a, FS_KEY_BY, &v->by)) ||
	    (err = fs_reply_string(a, FS_KEY_DIRECTION, &v->direction)) ||
	    (err = fs_reply_u64(a, FS_KEY_DISTINCT_FLOWS, &v->distinct_flows)) ||
	    (err = fs_reply_double(a, FS_REPLY_BOUND(FS_KEY_Z), &v->z)) ||
	    (err = fs_reply_u64(a, FS_REPLY_BOUND(FS_KEY_SHARING), &v->sharing)) ||
	    (err = fs_reply_double(a, FS_REPLY_BOUND(FS_KEY_SHARING_PROBABILITY),
				   &v->sharing_p)) ||
	    (err = fs_reply_u64(a, FS_REPLY_BOUND(FS_KEY_SAMPLE_RATE), &v->sample_rate)) ||
	    (err = fs_reply_u64(a, FS_REPLY_BOUND(FS_KEY_REGISTERS), &v->registers)) ||
	    (err = fs_reply_u64_in(a, FS_REPLY_BOUND(FS_KEY_DEPTH), 1,
				   FS_SPREAD_MAX_DEPTH, &v->depth)) ||
	    (json_object_object_get_ex(a, "files", NULL) &&
	     (err = fs_reply_u64(a, "files", &v->files))))
		return err;
	if (strcmp(v->by, FS_KEY_SRC) && strcmp(v->by, FS_KEY_DST))
		return fs_bad_answer("flowsketchd's answer is by '%s', not src or dst",
				     v->by);
	err = fs_reply_rows(a, FS_KEY_SPREADERS, sizeof(*v->keys), parse_key,
			    v, &rows, &v->n);
	v->keys = rows;	/* the caller frees it, error or not */
	return err;
}

static void print_header(FILE *out, const struct spread_view *v)
{
	char what[96], f[FS_FMT_MAX], s[FS_FMT_MAX], sp[FS_FMT_MAX];
	bool src = !strcmp(v->by, FS_KEY_SRC);

	if (v->files)
		snprintf(what, sizeof(what), "merge of %llu files: spread --by %s",
			 (unsigned long long)v->files, v->by);
	else
		snprintf(what, sizeof(what), "spread --by %s", v->by);
	if (!fs_span_print(out, what, &v->span))
		return;
	fprintf(out, "%s distinct flows, %s%s\n",
		fs_fmt_grouped(f, v->distinct_flows),
		src ? "sources by distinct (destination, port) peers" :
		      "destinations by distinct sources",
		fs_span_direction_words(v->direction));
	fprintf(out, "error: relative standard error at 1 sigma (HyperLogLog of %llu registers, 1 in %llu peers sampled)\n",
		(unsigned long long)v->registers, (unsigned long long)v->sample_rate);
	fprintf(out, "distinct \u2265: the least the truth can be, at z = %g and less up to %s peers of keys sharing a bucket (more with probability %s)\n",
		v->z, fs_fmt_grouped(s, v->sharing), fs_fmt_percent(sp, v->sharing_p, 2));
}

struct spread_row {
	char rank[24], distinct[FS_FMT_MAX], error[FS_FMT_MAX + 4], low[FS_FMT_MAX];
	char rows[48];
};

static void format_row(const struct spreader *k, size_t rank, __u64 depth,
		       struct spread_row *r)
{
	char pct[FS_FMT_MAX];

	snprintf(r->rows, sizeof(r->rows), "%llu/%llu",
		 (unsigned long long)(k->rows ? k->rows : depth),
		 (unsigned long long)depth);
	snprintf(r->rank, sizeof(r->rank), "%zu", rank);
	fs_fmt_grouped(r->distinct, (__u64)llround(k->distinct));
	snprintf(r->error, sizeof(r->error), "\u00b1%s",
		 fs_fmt_percent(pct, k->error, 1));
	fs_fmt_grouped(r->low, k->low);
}

#define LOW_TITLE "distinct \u2265"

static int print_spread(FILE *out, const struct spread_view *v)
{
	struct spread_row *rows = calloc(v->n ? v->n : 1, sizeof(*rows));
	const char *title = strcmp(v->by, FS_KEY_SRC) ? "destination" : "source";
	int wr = 1, wk = (int)strlen(title), wd = 8, we = 5, wl = 10;
	int wn = v->files ? 4 : 0;	/* a merge's rows (detect_json.h) */
	size_t i;

	if (!rows)
		return fs_no_memory();
	for (i = 0; i < v->n; i++) {
		format_row(&v->keys[i], i + 1, v->depth, &rows[i]);
		wr = fs_fmt_widest(wr, rows[i].rank);
		wk = fs_fmt_widest(wk, v->keys[i].key);
		wd = fs_fmt_widest(wd, rows[i].distinct);
		we = fs_fmt_widest(we, rows[i].error);
		wl = fs_fmt_widest(wl, rows[i].low);
	}
	print_header(out, v);
	if (!v->span.windows)
		goto out;
	fprintf(out, "\n%*s  %-*s  %*s  %*s  %*s%s%*s\n", wr, "#", wk, title, wd, "distinct",
		we, "error", fs_fmt_pad(wl, LOW_TITLE), LOW_TITLE, wn ? "  " : "",
		wn, wn ? "rows" : "");
	for (i = 0; i < v->n; i++)
		fprintf(out, "%*s  %-*s  %*s  %*s  %*s%s%*s\n", wr, rows[i].rank,
			wk, v->keys[i].key, wd, rows[i].distinct,
			fs_fmt_pad(we, rows[i].error), rows[i].error, wl, rows[i].low,
			wn ? "  " : "", wn, wn ? rows[i].rows : "");
	if (!v->n)
		fprintf(out, "(no %s seen in this span)\n", title);
out:
	free(rows);
	return 0;
}

int fs_spread_show(struct json_object *answer, bool print)
{
	struct spread_view v = { 0 };
	int err;

	err = parse_spread(answer, &v);
	if (!err && print)
		err = print_spread(stdout, &v);
	free(v.keys);
	return err;
}

static struct json_object *spread_request(const struct spread_opts *o)
{
	struct json_object *req = fs_request("spread");

	json_object_object_add(req, FS_KEY_BY, json_object_new_string(o->by));
	json_object_object_add(req, FS_KEY_N, json_object_new_int64(o->n));
	return fs_request_span(req, o->span, o->direction);
}

int fs_cmd_spread(const struct fs_cli *cli, int argc, char **argv)
{
	struct spread_opts o = { .n = SPREAD_DEFAULT_N };
	int ret;

	ret = fs_cli_parse_all(&fs_spread_optset, argc, argv, &o);
	if (ret)
		return ret == FS_HELP_SHOWN ? FS_EXIT_OK : ret;
	if (!o.by)
		return fs_usage_error("spread", "--by is required: src (sources by distinct peers) or dst (destinations by distinct sources)");
	return fs_client_show(cli, spread_request(&o), o.json, fs_spread_show);
}
