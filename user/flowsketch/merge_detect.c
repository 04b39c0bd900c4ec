// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * merge_detect.c - the fleet's top prefixes and spreaders out of merged
 * export files (merge_detect.h), in the daemon's answers' shapes.
 *
 * The files hold no hash secret, so a candidate's buckets cannot be found
 * from its hash: each is estimated from its own buckets, those it is the
 * candidate of (fs_prefix_top_own(), fs_spread_top_own()), and says in
 * "rows" how many of the d rows that was.  The merged buckets are those of
 * one sketch of the union stream (prefix.h and spread.h, "Merge"), so the
 * bounds are those of one daemon, with rows in place of d in the
 * probability of the one-sided term:
 *
 *   prefixes (prefix.h, "Error"; N the union's packets, V the scale):
 *       C = ceil(4 e N / w), U = ceil(z sqrt((V - 1) E)), O = C + U,
 *       packets_low = max(0, E - O):  E - O <= truth <= E + U
 *       with probability about 1 - e^-rows - Phi(-z);
 *   spreaders (spread.h, "Error"; F the union's distinct flows):
 *       S = ceil(e F / w), sigma(X) = sqrt(1.04^2 / 90 + (R - 1) / X),
 *       distinct_low = max(0, floor(X / (1 + z sigma) - S)).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "keys.h"
#include "cidr.h"
#include "client.h"
#include "flow_fmt.h"
#include "merge_detect.h"
#include "prefix_estimate.h"
#include "reply.h"
#include "spread_estimate.h"

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

/* One prefix as the daemon's prefixes answer has it (protocol.h), and
 * its rows; total: the span's packets, or bytes when sorted by bytes. */
static struct json_object *prefix_json(const struct fs_heavy_prefix *h,
				       __u64 total, bool by_bytes, __u64 scale,
				       __u64 collisions)
{
	struct fs_cidr c = { .family = (__u8)fs_prefix_tag_family(h->tag) };
	struct json_object *e = json_object_new_object(), *eb;
	__u64 under, over, v = by_bytes ? h->bytes : h->packets;
	char text[FS_CIDR_TEXT_MAX];

	c.len = (__u8)fs_prefix_level_len(c.family, fs_prefix_tag_level(h->tag));
	memcpy(c.addr, h->addr, sizeof(c.addr));
	fs_cidr_format(&c, text, sizeof(text));
	under = (__u64)ceil(FS_MERGE_DETECT_Z * sqrt((double)(scale - 1) * (double)h->packets));
	over = collisions + under;
	add_string(e, FS_KEY_PREFIX, text);
	add_u64(e, FS_KEY_PACKETS, h->packets);
	add_u64(e, FS_KEY_BYTES, h->bytes);
	add_double(e, FS_KEY_SHARE, total ? (double)v / (double)total : 0);
	add_u64(e, FS_KEY_PACKETS_LOW, h->packets > over ? h->packets - over : 0);
	eb = json_object_new_object();
	add_u64(eb, FS_KEY_PACKETS_OVER, over);
	add_u64(eb, FS_KEY_PACKETS_UNDER, under);
	json_object_object_add(e, FS_KEY_ERROR_BOUND, eb);
	add_u64(e, FS_KEY_ROWS, h->rows);
	return e;
}

int fs_merge_prefixes(struct json_object *a, const struct fs_sketch *sum,
		      const struct fs_keyspec *k, bool by_bytes, __u32 n)
{
	enum fs_prefix_order order = by_bytes ? FS_PREFIX_BY_BYTES : FS_PREFIX_BY_PACKETS;
	__u64 total = sum->totals.packets, scale, collisions;
	struct json_object *eb, *list;
	struct fs_heavy_prefix *top;
	struct fs_prefix_params p;
	char by[FS_KEYSPEC_TEXT_MAX];
	int ntags, t, got = 0, m;
	__u8 tags[2];

	fs_params_prefix(&sum->params, &p);
	scale = fs_prefix_scale(&p);
	/* 4 e N / w: the mean of a bucket's other sampled packets is at most
	 * N_s / w = 8 N / (V w), half of which can lift the vote's bound,
	 * scaled by V (prefix.h, "Error"). */
	collisions = (__u64)ceil(4.0 * M_E * (double)total / ldexp(1, (int)p.log2_width));
	ntags = fs_keyspec_tags(k, tags);
	top = calloc((size_t)n * 2, sizeof(*top));
	if (!top)
		return -ENOMEM;
	/* Hosts of either family: each family's n heaviest, then the n
	 * heaviest of both. */
	for (t = 0; t < ntags; t++) {
		m = fs_prefix_top_own(sum->prefix, &p, tags[t], order, top + got, n);
		if (m < 0) {
			free(top);
			return m;
		}
		got += m;
	}
	fs_prefix_sort(top, (size_t)got, order);
	if ((__u32)got > n)
		got = (int)n;

	fs_keyspec_format(k, by, sizeof(by));
	add_string(a, FS_KEY_BY, by);
	add_string(a, FS_KEY_SORT, by_bytes ? "bytes" : "packets");
	add_u64(a, FS_KEY_TOTAL_PACKETS, total);
	add_u64(a, FS_KEY_TOTAL_BYTES, sum->totals.bytes);
	eb = json_object_new_object();
	add_u64(eb, FS_KEY_Z, FS_MERGE_DETECT_Z);
	add_u64(eb, FS_KEY_SCALE, scale);
	add_u64(eb, FS_KEY_DEPTH, p.depth);
	add_u64(eb, FS_KEY_WIDTH, 1ULL << p.log2_width);
	add_u64(eb, FS_KEY_COLLISIONS, collisions);
	/* Bytes are a Count-Min cell of the sampled bytes (no vote): twice
	 * the packets' share of B (protocol.h). */
	add_u64(eb, FS_KEY_BYTES_COLLISIONS,
		(__u64)ceil(8 * M_E * (double)sum->totals.bytes / ldexp(1, (int)p.log2_width)));
	add_double(eb, FS_KEY_COLLISIONS_PROBABILITY, exp(-(double)p.depth));
	json_object_object_add(a, FS_KEY_ERROR_BOUND, eb);
	list = json_object_new_array();
	for (t = 0; t < got; t++)
		json_object_array_add(list, prefix_json(&top[t],
			by_bytes ? sum->totals.bytes : total, by_bytes, scale, collisions));
	json_object_object_add(a, FS_KEY_PREFIXES, list);
	free(top);
	return 0;
}

int fs_merge_spreaders(struct json_object *a, const struct fs_sketch *sum,
		       __u32 side, __u32 n)
{
	const char *key = side == FS_SPREAD_SRC ? FS_KEY_SRC : FS_KEY_DST;
	double flows = fs_sketch_distinct(sum, FS_HLL_FLOWS), miss, sharing;
	struct json_object *eb, *list;
	struct fs_spread_params p;
	struct fs_spreader *top;
	int got, i;

	fs_params_spread(&sum->params, &p);
	sharing = ceil(fs_spread_sharing(&p, flows, &miss));
	top = calloc(n, sizeof(*top));
	if (!top)
		return -ENOMEM;
	got = fs_spread_top_own(sum->spread, &p, side, top, n);
	if (got < 0) {
		free(top);
		return got;
	}
	add_string(a, FS_KEY_BY, key);
	eb = json_object_new_object();
	add_u64(eb, FS_KEY_Z, FS_MERGE_DETECT_Z);
	add_u64(eb, FS_KEY_SAMPLE_RATE, 1ULL << p.sample_shift);
	add_u64(eb, FS_KEY_REGISTERS, FS_SPREAD_REGS);
	add_u64(eb, FS_KEY_DEPTH, p.depth);
	add_u64(eb, FS_KEY_WIDTH, 1ULL << p.log2_width);
	add_u64(eb, FS_KEY_SHARING, (__u64)sharing);
	add_double(eb, FS_KEY_SHARING_PROBABILITY, miss);
	json_object_object_add(a, FS_KEY_ERROR_BOUND, eb);
	list = json_object_new_array();
	for (i = 0; i < got; i++) {
		struct json_object *e = json_object_new_object();
		double x = top[i].distinct, sigma = fs_spread_sigma(&p, x);
		double low = floor(x / (1 + FS_MERGE_DETECT_Z * sigma) - sharing);
		char addr[64];

		fs_addr_str(top[i].family, top[i].addr, addr, sizeof(addr));
		add_string(e, key, addr);
		add_u64(e, FS_KEY_DISTINCT, (__u64)llround(x));
		add_double(e, FS_KEY_ERROR, sigma);
		add_u64(e, FS_KEY_DISTINCT_LOW, low > 0 ? (__u64)low : 0);
		add_u64(e, FS_KEY_ROWS, top[i].rows);
		json_object_array_add(list, e);
	}
	json_object_object_add(a, FS_KEY_SPREADERS, list);
	free(top);
	return 0;
}

/* ------------------------------------------------------------ tables */

/* The span line both tables start with. */
static int show_span(struct json_object *a, FILE *out)
{
	__u64 span, windows, window_s, files;
	const char *dir;
	int err;

	if ((err = fs_reply_u64(a, FS_KEY_SPAN_SECONDS, &span)) ||
	    (err = fs_reply_u64(a, FS_KEY_WINDOWS, &windows)) ||
	    (err = fs_reply_u64(a, FS_KEY_WINDOW_SECONDS, &window_s)) ||
	    (err = fs_reply_u64(a, "files", &files)) ||
	    (err = fs_reply_string(a, FS_KEY_DIRECTION, &dir)))
		return err;
	if (out)
		fprintf(out, "span %llu s (up to %llu windows of %llu s) on %llu hosts, direction %s\n",
			(unsigned long long)span, (unsigned long long)windows,
			(unsigned long long)window_s, (unsigned long long)files, dir);
	return 0;
}

int fs_merge_prefixes_show(struct json_object *a, bool print)
{
	__u64 total, tbytes, depth, z, coll, packets, bytes, low, rows, over, under;
	FILE *out = print ? stdout : NULL;
	struct json_object *list, *e;
	const char *by, *sort, *prefix;
	double share;
	size_t i, n;
	int err;

	if ((err = show_span(a, out)) ||
	    (err = fs_reply_string(a, FS_KEY_BY, &by)) ||
	    (err = fs_reply_string(a, FS_KEY_SORT, &sort)) ||
	    (err = fs_reply_u64(a, FS_KEY_TOTAL_PACKETS, &total)) ||
	    (err = fs_reply_u64(a, FS_KEY_TOTAL_BYTES, &tbytes)) ||
	    (err = fs_reply_u64(a, "error_bound.z", &z)) ||
	    (err = fs_reply_u64(a, "error_bound.collisions", &coll)) ||
	    (err = fs_reply_u64_in(a, "error_bound.depth", 1, FS_PREFIX_MAX_DEPTH, &depth)) ||
	    (err = fs_reply_array(a, FS_KEY_PREFIXES, &list)))
		return err;
	if (out) {
		fprintf(out, "top prefixes by %s, %s: %llu packets, %llu bytes; each within [low, packets + %llu sqrt((V-1) packets)], collisions up to %llu\n",
			by, sort, (unsigned long long)total, (unsigned long long)tbytes,
			(unsigned long long)z, (unsigned long long)coll);
		fprintf(out, "%4s  %-44s %12s %12s %14s %7s %5s\n", "#", "prefix",
			"packets", "low", "bytes", "share", "rows");
	}
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(list, i);
		if ((err = fs_reply_string(e, FS_KEY_PREFIX, &prefix)) ||
		    (err = fs_reply_u64(e, FS_KEY_PACKETS, &packets)) ||
		    (err = fs_reply_u64(e, FS_KEY_BYTES, &bytes)) ||
		    (err = fs_reply_double(e, FS_KEY_SHARE, &share)) ||
		    (err = fs_reply_u64(e, FS_KEY_PACKETS_LOW, &low)) ||
		    (err = fs_reply_u64(e, "error_bound.packets_over", &over)) ||
		    (err = fs_reply_u64(e, "error_bound.packets_under", &under)) ||
		    (err = fs_reply_u64_in(e, FS_KEY_ROWS, 1, depth, &rows)))
			return err;
		if (out)
			fprintf(out, "%4zu  %-44s %12llu %12llu %14llu %6.2f%% %3llu/%llu\n",
				i + 1, prefix, (unsigned long long)packets,
				(unsigned long long)low, (unsigned long long)bytes,
				100 * share, (unsigned long long)rows,
				(unsigned long long)depth);
	}
	if (out && !n)
		fprintf(out, "(no prefix of this key in the merged sketch)\n");
	return 0;
}

int fs_merge_spread_show(struct json_object *a, bool print)
{
	__u64 flows, depth, z, sharing, distinct, low, rows;
	FILE *out = print ? stdout : NULL;
	struct json_object *list, *e;
	const char *by, *key;
	double sigma;
	size_t i, n;
	int err;

	if ((err = show_span(a, out)) ||
	    (err = fs_reply_string(a, FS_KEY_BY, &by)) ||
	    (err = fs_reply_u64(a, FS_KEY_DISTINCT_FLOWS, &flows)) ||
	    (err = fs_reply_u64(a, "error_bound.z", &z)) ||
	    (err = fs_reply_u64(a, "error_bound.sharing", &sharing)) ||
	    (err = fs_reply_u64_in(a, "error_bound.depth", 1, FS_SPREAD_MAX_DEPTH, &depth)) ||
	    (err = fs_reply_array(a, FS_KEY_SPREADERS, &list)))
		return err;
	if (strcmp(by, FS_KEY_SRC) && strcmp(by, FS_KEY_DST)) {
		fprintf(stderr, "flowsketch: the merge's answer spreads by '%s', not src or dst\n", by);
		return -EPROTO;
	}
	if (out) {
		fprintf(out, "widest %s by distinct %s: %llu distinct flows; low = distinct / (1 + %llu error) - %llu shared\n",
			!strcmp(by, FS_KEY_SRC) ? "sources" : "destinations",
			!strcmp(by, FS_KEY_SRC) ? "(destination, port) peers" : "sources",
			(unsigned long long)flows, (unsigned long long)z,
			(unsigned long long)sharing);
		fprintf(out, "%4s  %-40s %10s %8s %10s %5s\n", "#", by, "distinct",
			"error", "low", "rows");
	}
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(list, i);
		if ((err = fs_reply_string(e, by, &key)) ||
		    (err = fs_reply_u64(e, FS_KEY_DISTINCT, &distinct)) ||
		    (err = fs_reply_double(e, FS_KEY_ERROR, &sigma)) ||
		    (err = fs_reply_u64(e, FS_KEY_DISTINCT_LOW, &low)) ||
		    (err = fs_reply_u64_in(e, FS_KEY_ROWS, 1, depth, &rows)))
			return err;
		if (out)
			fprintf(out, "%4zu  %-40s %10llu %7.1f%% %10llu %3llu/%llu\n",
				i + 1, key, (unsigned long long)distinct, 100 * sigma,
				(unsigned long long)low, (unsigned long long)rows,
				(unsigned long long)depth);
	}
	if (out && !n)
		fprintf(out, "(no spreader in the merged sketch)\n");
	return 0;
}
