/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench_detect.h - the detection sketches' rows of the benchmarks
 * (fs-bench.c, fs-livebench.c): the full program loaded with both
 * detection sketches, with the prefix sketch alone and with the spread
 * sketch alone (detect.h), each against the full program without them.
 *
 * Issue 20 ("Cost"): detection is on by default only if the whole
 * datapath with both stays within BD_TARGET of it without them, live,
 * steady and bursty.  The shapes are flowsketchd --detect's (the
 * FS_DEFAULT_PREFIX_* and FS_DEFAULT_SPREAD_* sizes) unless
 * --detect-prefix or --detect-spread give others, "D,L,T": depth, log2
 * width and the prefix sketch's skip shift t or the spread sketch's
 * sample shift s.
 */
#ifndef FLOWSKETCH_BENCH_DETECT_H
#define FLOWSKETCH_BENCH_DETECT_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "flowsketch/params.h"

#define BD_TARGET 1.25		/* with both / without, at most */

enum bd_variant { BD_BOTH, BD_PREFIXES, BD_SPREAD, BD_MAX };

static const char *const bd_names[BD_MAX] = {
	"full+both", "full+prefixes", "full+spread",
};

struct bd_shape {
	struct fs_prefix_params prefix;
	struct fs_spread_params spread;
};

#define BD_DEFAULTS {								\
	.prefix = { FS_DEFAULT_PREFIX_DEPTH, FS_DEFAULT_PREFIX_LOG2W,		\
		    FS_DEFAULT_PREFIX_SKIP },					\
	.spread = { FS_DEFAULT_SPREAD_DEPTH, FS_DEFAULT_SPREAD_LOG2W,		\
		    FS_DEFAULT_SPREAD_SHIFT },					\
}

static inline void bd_usage(FILE *out)
{
	fprintf(out,
		"  --detect-prefix D,L,T  the prefix sketch of the full+both and\n"
		"                      full+prefixes rows: depth, log2 width, skip shift\n"
		"                      (default %u,%u,%u, flowsketchd --detect's)\n"
		"  --detect-spread D,L,S  the spread sketch of full+both and full+spread:\n"
		"                      depth, log2 width, sample shift (default %u,%u,%u)\n",
		FS_DEFAULT_PREFIX_DEPTH, FS_DEFAULT_PREFIX_LOG2W, FS_DEFAULT_PREFIX_SKIP,
		FS_DEFAULT_SPREAD_DEPTH, FS_DEFAULT_SPREAD_LOG2W, FS_DEFAULT_SPREAD_SHIFT);
}

/* "D,L,T": three whole numbers, 0 or -EINVAL (nothing printed). */
static inline int bd_parse_triple(const char *arg, __u32 v[3])
{
	const char *at = arg;
	char *end;
	int i;

	for (i = 0; i < 3; i++) {
		unsigned long n;

		if (*at < '0' || *at > '9')
			return -EINVAL;
		errno = 0;
		n = strtoul(at, &end, 10);
		if (errno || n > 64 || *end != (i < 2 ? ',' : '\0'))
			return -EINVAL;
		v[i] = (__u32)n;
		at = end + 1;
	}
	return 0;
}

/* --detect-prefix (prefix) or --detect-spread's argument into *s, checked
 * as params.h checks a record; one line on stderr when refused. */
static inline int bd_parse(const char *tool, bool prefix, const char *arg,
			   struct bd_shape *s)
{
	__u32 v[3];
	int err = bd_parse_triple(arg, v);

	if (prefix) {
		fs_prefix_params_init(&s->prefix, v[0], v[1], v[2]);
		if (!err)
			err = fs_prefix_params_check(&s->prefix) ? -EINVAL : 0;
	} else {
		fs_spread_params_init(&s->spread, v[0], v[1], v[2]);
		if (!err)
			err = fs_spread_params_check(&s->spread) ? -EINVAL : 0;
	}
	if (err)
		fprintf(stderr, "%s: --detect-%s must be D,L,%c: depth 1..%u, log2 width %u..%u, "
			"shift 0..%u, not \"%s\".\n", tool,
			prefix ? "prefix" : "spread", prefix ? 'T' : 'S',
			prefix ? FS_PREFIX_MAX_DEPTH : FS_SPREAD_MAX_DEPTH,
			prefix ? FS_PREFIX_MIN_LOG2W : FS_SPREAD_MIN_LOG2W,
			prefix ? FS_PREFIX_MAX_LOG2W : FS_SPREAD_MAX_LOG2W,
			prefix ? FS_PREFIX_MAX_SKIP : FS_SPREAD_MAX_SHIFT, arg);
	return err;
}

/* The parameters p with variant v's detection sketches on (and the
 * other's off), as flowsketchd --detect sets them. */
static inline void bd_apply(struct fs_sketch_params *p, const struct bd_shape *s,
			    enum bd_variant v)
{
	p->prefix_log2w = p->prefix_shape = 0;
	p->spread_log2w = p->spread_shape = 0;
	if (v == BD_BOTH || v == BD_PREFIXES)
		fs_params_set_prefix(p, &s->prefix);
	if (v == BD_BOTH || v == BD_SPREAD)
		fs_params_set_spread(p, &s->spread);
}

#endif /* FLOWSKETCH_BENCH_DETECT_H */
