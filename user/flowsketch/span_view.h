/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * span_view.h - the span an answer sums (top, top --by, spread): its keys
 * read from the answer, and the words that open each table's header.
 */
#ifndef FLOWSKETCH_CLI_SPAN_VIEW_H
#define FLOWSKETCH_CLI_SPAN_VIEW_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include <json-c/json.h>

/* The daemon's longest window (flowsketchd --window); also keeps the
 * sleep between top's screens a representable time. */
#define FS_SPAN_MAX_WINDOW_S (24 * 3600)

struct fs_span_view {
	__u64 span_seconds, windows, window_seconds, window_end;
	char window_end_str[16];	/* HH:MM:SS, local time */
};

/* span_seconds, windows, window_seconds and window_end of answer a: 0, or
 * -EPROTO having said which is missing or out of range. */
int fs_span_parse(struct json_object *a, struct fs_span_view *s);

/*
 * "flowsketch WHAT: last 10 s (2 windows of 5 s, ending 12:00:00), " for
 * the caller to end with its totals; true.  Before the first window has
 * finished there is nothing to sum: a whole line saying so, and false.
 */
bool fs_span_print(FILE *out, const char *what, const struct fs_span_view *s);

/* What a header says of direction ("in", "out", "both"): ", received
 * only", ", sent only" or nothing. */
const char *fs_span_direction_words(const char *direction);

#endif /* FLOWSKETCH_CLI_SPAN_VIEW_H */
