// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* span_view.c - the span an answer sums, and its header words. */
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "keys.h"
#include "args.h"
#include "reply.h"
#include "span_view.h"

/* localtime_r() fails for a time_t past the year 2^31, which a u64 from
 * the socket can be. */
static int format_window_end(struct fs_span_view *s)
{
	time_t t = (time_t)s->window_end;
	struct tm tm;

	if (s->window_end > (__u64)INT64_MAX || !localtime_r(&t, &tm) ||
	    !strftime(s->window_end_str, sizeof(s->window_end_str),
		      "%H:%M:%S", &tm))
		return fs_bad_answer("flowsketchd's answer has a window_end that is not a time: %llu",
				     (unsigned long long)s->window_end);
	return 0;
}

int fs_span_parse(struct json_object *a, struct fs_span_view *s)
{
	int err;

	if ((err = fs_reply_u64(a, FS_KEY_SPAN_SECONDS, &s->span_seconds)) ||
	    (err = fs_reply_u64(a, FS_KEY_WINDOWS, &s->windows)) ||
	    (err = fs_reply_u64(a, FS_KEY_WINDOW_SECONDS, &s->window_seconds)) ||
	    (err = fs_reply_u64(a, FS_KEY_WINDOW_END, &s->window_end)))
		return err;
	if (!s->window_seconds || s->window_seconds > FS_SPAN_MAX_WINDOW_S)
		return fs_bad_answer("flowsketchd's answer has a window of %llu seconds, not 1 s to a day",
				     (unsigned long long)s->window_seconds);
	return format_window_end(s);
}

bool fs_span_print(FILE *out, const char *what, const struct fs_span_view *s)
{
	if (!s->windows) {
		/* Right after the daemon starts. */
		fprintf(out, "flowsketch %s: no %llu s window has finished yet\n",
			what, (unsigned long long)s->window_seconds);
		return false;
	}
	fprintf(out, "flowsketch %s: last %llu s (%llu window%s of %llu s, ending %s), ",
		what, (unsigned long long)s->span_seconds,
		(unsigned long long)s->windows, s->windows == 1 ? "" : "s",
		(unsigned long long)s->window_seconds, s->window_end_str);
	return true;
}

const char *fs_span_direction_words(const char *direction)
{
	if (!strcmp(direction, "in"))
		return ", received only";
	if (!strcmp(direction, "out"))
		return ", sent only";
	return "";
}
