// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * merge_detect.c - the fleet's top prefixes and spreaders out of merged
 * export files (merge_detect.h), in the daemon's answers' shapes.
 *
 * The files hold no hash secret, so a candidate's buckets cannot be found
 * from its hash: each is estimated from its own buckets, and says in
 * "rows" over how many of the d rows (detect_json.h, which makes the
 * daemon's answers too).  The merged buckets are those of one sketch of
 * the union stream (prefix.h and spread.h, "Merge"), so the bounds are
 * those of one daemon, with rows in place of d in the probability of the
 * one-sided term.
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
#include "detect_json.h"
#include "reply.h"

int fs_merge_prefixes(struct json_object *a, const struct fs_sketch *sum,
		      const struct fs_keyspec *k, bool by_bytes, __u32 n)
{
	struct fs_prefix_params p;

	fs_params_prefix(&sum->params, &p);
	return fs_prefixes_json(a, sum->prefix, &p, NULL, k, by_bytes, n,
				sum->totals.packets, sum->totals.bytes);
}

int fs_merge_spreaders(struct json_object *a, const struct fs_sketch *sum,
		       __u32 side, __u32 n)
{
	struct fs_spread_params p;

	fs_params_spread(&sum->params, &p);
	return fs_spreaders_json(a, sum->spread, &p, NULL, side, n,
				 fs_sketch_distinct(sum, FS_HLL_FLOWS));
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
