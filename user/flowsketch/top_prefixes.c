// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * top_prefixes.c - `flowsketch top --by KEY`: the heaviest prefixes (or
 * hosts) of the prefix sketch (include/flowsketch/prefix.h).
 *
 * A packet updates one of V levels drawn at random, so an estimate E is V
 * times a sampled count: two-sided, with standard error about
 * sqrt((V - 1) E).  The daemon states for each prefix
 *   U = ceil(z sqrt((V - 1) E))   the most E can be below the truth,
 *   O = C + U                     the most it can be above it, C the
 *                                 collisions' overcount, ceil(4 e N / w),
 * so that E - O <= truth <= E + U with probability about
 * 1 - e^-d - Phi(-z), Phi the standard normal distribution: the table's
 * "packets >=" column is E - O, what a mitigation may act on.  The
 * request is top's (fs_top_request()).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "flowsketch/prefix.h"
#include "keys.h"
#include "args.h"
#include "format.h"
#include "reply.h"
#include "show.h"
#include "span_view.h"

struct prefix_entry {
	const char *prefix;
	__u64 packets, bytes, low, over, under;
	__u64 rows;		/* a merge's: rows estimated over, 0 all */
	double share;
};

struct prefixes_view {
	struct fs_span_view span;
	const char *by, *sort, *direction;
	__u64 total_packets, total_bytes, scale, collisions, bytes_collisions;
	__u64 depth, files;	/* files: a merge's (merge.c), 0 live */
	double z, collisions_p;
	size_t n;
	struct prefix_entry *entries;
};

/* fs_reply_row_fn: one of the answer's prefixes. */
static int parse_entry(struct json_object *e, void *row, void *ctx)
{
	struct prefix_entry *out = row;
	int err;

	if ((err = fs_reply_string(e, FS_KEY_PREFIX, &out->prefix)) ||
	    (err = fs_reply_u64(e, FS_KEY_PACKETS, &out->packets)) ||
	    (err = fs_reply_u64(e, FS_KEY_BYTES, &out->bytes)) ||
	    (err = fs_reply_double(e, FS_KEY_SHARE, &out->share)) ||
	    (err = fs_reply_u64(e, FS_KEY_PACKETS_LOW, &out->low)) ||
	    (err = fs_reply_u64(e, FS_REPLY_BOUND(FS_KEY_PACKETS_OVER), &out->over)) ||
	    (err = fs_reply_u64(e, FS_REPLY_BOUND(FS_KEY_PACKETS_UNDER), &out->under)) ||
	    (json_object_object_get_ex(e, FS_KEY_ROWS, NULL) &&
	     (err = fs_reply_u64_in(e, FS_KEY_ROWS, 1, *(__u64 *)ctx, &out->rows))))
		return err;
	if (out->low > out->packets)
		return fs_bad_answer("flowsketchd's answer has %s at %llu packets, at least %llu",
				     out->prefix, (unsigned long long)out->packets,
				     (unsigned long long)out->low);
	return 0;
}

/* Everything rendered is read and type-checked first: a bad answer is
 * refused before any line of the table is printed. */
static int parse_prefixes(struct json_object *a, struct prefixes_view *v)
{
	void *rows;
	int err;

	if ((err = fs_span_parse(a, &v->span)) ||
	    (err = fs_reply_string(a, FS_KEY_BY, &v->by)) ||
	    (err = fs_reply_string(a, FS_KEY_SORT, &v->sort)) ||
	    (err = fs_reply_string(a, FS_KEY_DIRECTION, &v->direction)) ||
	    (err = fs_reply_u64(a, FS_KEY_TOTAL_PACKETS, &v->total_packets)) ||
	    (err = fs_reply_u64(a, FS_KEY_TOTAL_BYTES, &v->total_bytes)) ||
	    (err = fs_reply_double(a, FS_REPLY_BOUND(FS_KEY_Z), &v->z)) ||
	    (err = fs_reply_u64(a, FS_REPLY_BOUND(FS_KEY_SCALE), &v->scale)) ||
	    (err = fs_reply_u64(a, FS_REPLY_BOUND(FS_KEY_COLLISIONS), &v->collisions)) ||
	    (err = fs_reply_u64(a, FS_REPLY_BOUND(FS_KEY_BYTES_COLLISIONS),
				&v->bytes_collisions)) ||
	    (err = fs_reply_double(a, FS_REPLY_BOUND(FS_KEY_COLLISIONS_PROBABILITY),
				   &v->collisions_p)) ||
	    (err = fs_reply_u64_in(a, FS_REPLY_BOUND(FS_KEY_DEPTH), 1,
				   FS_PREFIX_MAX_DEPTH, &v->depth)) ||
	    (json_object_object_get_ex(a, "files", NULL) &&
	     (err = fs_reply_u64(a, "files", &v->files))))
		return err;
	err = fs_reply_rows(a, FS_KEY_PREFIXES, sizeof(*v->entries), parse_entry,
			    &v->depth, &rows, &v->n);
	v->entries = rows;	/* the caller frees it, error or not */
	return err;
}

static void print_header(FILE *out, const struct prefixes_view *v)
{
	char what[96], pk[FS_FMT_MAX], by[FS_FMT_MAX], c[FS_FMT_MAX];
	char cb[FS_FMT_MAX], cp[FS_FMT_MAX], all[FS_FMT_MAX];
	/* Phi(-z) = erfc(z / sqrt 2) / 2: the chance sampling alone puts
	 * the truth outside [E - U, E + U]'s one side. */
	double p = 1 - v->collisions_p - erfc(v->z / M_SQRT2) / 2;

	if (v->files)
		snprintf(what, sizeof(what), "merge of %llu files: top --by %s",
			 (unsigned long long)v->files, v->by);
	else
		snprintf(what, sizeof(what), "top --by %s", v->by);
	if (!fs_span_print(out, what, &v->span))
		return;
	fprintf(out, "%s packets, %s, by %s%s\n", fs_fmt_grouped(pk, v->total_packets),
		fs_fmt_bytes(by, (double)v->total_bytes), v->sort,
		fs_span_direction_words(v->direction));
	fprintf(out, "each count is one of %llu levels sampled, scaled up: the truth is within -over/+under of it with probability about %s\n",
		(unsigned long long)v->scale, fs_fmt_percent(all, p > 0 ? p : 0, 1));
	fprintf(out, "(z = %g standard errors of sampling; collisions add at most %s packets and %s, more with probability %s)\n",
		v->z, fs_fmt_grouped(c, v->collisions),
		fs_fmt_bytes(cb, (double)v->bytes_collisions),
		fs_fmt_percent(cp, v->collisions_p, 2));
}

struct prefix_row {
	char rank[24], packets[FS_FMT_MAX], low[FS_FMT_MAX], rows[48];
	char bound[2 * FS_FMT_MAX + 4], bytes[FS_FMT_MAX], share[FS_FMT_MAX];
};

static void format_row(const struct prefix_entry *e, size_t rank, __u64 depth,
		       struct prefix_row *r)
{
	char over[FS_FMT_MAX], under[FS_FMT_MAX];

	snprintf(r->rows, sizeof(r->rows), "%llu/%llu",
		 (unsigned long long)(e->rows ? e->rows : depth),
		 (unsigned long long)depth);
	snprintf(r->rank, sizeof(r->rank), "%zu", rank);
	fs_fmt_count(r->packets, (double)e->packets);
	fs_fmt_count(r->low, (double)e->low);
	snprintf(r->bound, sizeof(r->bound), "-%s/+%s",
		 fs_fmt_count(over, (double)e->over),
		 fs_fmt_count(under, (double)e->under));
	fs_fmt_bytes(r->bytes, (double)e->bytes);
	fs_fmt_percent(r->share, e->share, 1);
}

#define LOW_TITLE "packets \u2265"

static int print_prefixes(FILE *out, const struct prefixes_view *v)
{
	struct prefix_row *rows = calloc(v->n ? v->n : 1, sizeof(*rows));
	int wr = 1, wp = 6, wk = 7, wl = 9, wo = 12, wb = 5, wh = 5;
	/* A merge's estimates, over the rows a prefix is a candidate of
	 * (detect_json.h): said a row, as "rows/d". */
	int wn = v->files ? 4 : 0;
	size_t i;

	if (!rows)
		return fs_no_memory();
	for (i = 0; i < v->n; i++) {
		format_row(&v->entries[i], i + 1, v->depth, &rows[i]);
		wr = fs_fmt_widest(wr, rows[i].rank);
		wp = fs_fmt_widest(wp, v->entries[i].prefix);
		wk = fs_fmt_widest(wk, rows[i].packets);
		wl = fs_fmt_widest(wl, rows[i].low);
		wo = fs_fmt_widest(wo, rows[i].bound);
		wb = fs_fmt_widest(wb, rows[i].bytes);
		wh = fs_fmt_widest(wh, rows[i].share);
	}
	print_header(out, v);
	if (!v->span.windows)
		goto out;
	fprintf(out, "\n%*s  %-*s  %*s  %*s  %*s  %*s  %*s%s%*s\n", wr, "#", wp, "prefix",
		wk, "packets", fs_fmt_pad(wl, LOW_TITLE), LOW_TITLE,
		wo, "-over/+under", wb, "bytes", wh, "share", wn ? "  " : "",
		wn, wn ? "rows" : "");
	for (i = 0; i < v->n; i++)
		fprintf(out, "%*s  %-*s  %*s  %*s  %*s  %*s  %*s%s%*s\n", wr, rows[i].rank,
			wp, v->entries[i].prefix, wk, rows[i].packets, wl, rows[i].low,
			wo, rows[i].bound, wb, rows[i].bytes, wh, rows[i].share,
			wn ? "  " : "", wn, wn ? rows[i].rows : "");
	if (!v->n)
		fprintf(out, "(no %s prefix seen in this span)\n", v->by);
out:
	free(rows);
	return 0;
}

int fs_prefixes_show(struct json_object *answer, bool print)
{
	struct prefixes_view v = { 0 };
	int err;

	err = parse_prefixes(answer, &v);
	if (!err && print)
		err = print_prefixes(stdout, &v);
	free(v.entries);
	return err;
}
