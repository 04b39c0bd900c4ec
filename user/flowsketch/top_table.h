/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * top_table.h - `flowsketch top`'s request and table (top_table.c), shared
 * by the plain view (top.c) and the full-screen one (top_screen.c).
 */
#ifndef FLOWSKETCH_CLI_TOP_TABLE_H
#define FLOWSKETCH_CLI_TOP_TABLE_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include <json-c/json.h>
#include "cli.h"

struct top_opts {
	__u32 n;
	__u32 span;		/* 0: the daemon's default, one window */
	const char *sort;	/* "packets", "bytes", "connections" */
	const char *direction;	/* NULL: the daemon's default, both */
	const char *by;		/* NULL: flows; else a KEY (keyspec.h) */
	bool once;
	bool json;
};

/* The request for o, "top" or with o->by "prefixes" (released by the
 * call it is given to). */
struct json_object *fs_top_request(const struct top_opts *o);
/* Ask for o's table and print it to out; the window it ended and the
 * window length, for the next redraw.  0 or -errno, having said why. */
int fs_top_table(const struct fs_cli *cli, const struct top_opts *o, FILE *out,
		 __u64 *window_end, __u64 *window_seconds);

#endif /* FLOWSKETCH_CLI_TOP_TABLE_H */
