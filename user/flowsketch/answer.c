// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* answer.c - the daemon's answer as text: is it one JSON object? */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "keys.h"
#include "answer.h"
#include "args.h"
#include "reply.h"
#include "utf8.h"

/*
 * Checked before json-c sees the text: json-c stops at a NUL byte (so a
 * string could hide what follows it) and keeps invalid UTF-8 as it is,
 * which a terminal then decodes its own way.
 */
static int check_bytes(const char *buf, size_t len)
{
	const char *nul = memchr(buf, 0, len);
	size_t bad;

	if (nul)
		return fs_bad_answer("flowsketchd's answer contains a NUL byte at byte %zu",
				     (size_t)(nul - buf));
	bad = fs_utf8_check(buf, len);
	if (bad != len)
		return fs_bad_answer("flowsketchd's answer is not valid UTF-8 at byte %zu",
				     bad);
	return 0;
}

/* The first offset from `from` on that is not JSON white space, or len;
 * buf need not be NUL-terminated. */
static size_t white_to(const char *buf, size_t from, size_t len)
{
	while (from < len && buf[from] && strchr(" \t\r\n", buf[from]))
		from++;
	return from;
}

int fs_answer_parse(const char *buf, size_t len, struct json_object **out)
{
	struct json_tokener *tok = NULL;
	struct json_object *obj = NULL;
	enum json_tokener_error jerr;
	size_t end;
	int err = -EPROTO;

	if (white_to(buf, 0, len) == len) {
		fs_error("flowsketchd closed the connection without answering");
		goto out;
	}
	if ((err = check_bytes(buf, len)))
		goto out;
	tok = json_tokener_new();
	if (!tok) {
		err = fs_no_memory();
		goto out;
	}
	err = -EPROTO;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	if (jerr == json_tokener_continue) {
		fs_error("flowsketchd's answer ends in the middle of a JSON value");
		goto out;
	}
	if (jerr != json_tokener_success) {
		fs_error("flowsketchd sent malformed JSON: %s at byte %zu",
			 json_tokener_error_desc(jerr),
			 json_tokener_get_parse_end(tok));
		goto out;
	}
	end = json_tokener_get_parse_end(tok);
	if (white_to(buf, end, len) != len) {
		fs_error("flowsketchd sent more than one JSON value");
		goto out;
	}
	if (!json_object_is_type(obj, json_type_object)) {
		fs_error("flowsketchd's answer is not a JSON object");
		goto out;
	}
	*out = obj;
	obj = NULL;
	err = 0;
out:
	json_object_put(obj);
	if (tok)	/* json-c 0.16 does not take NULL here */
		json_tokener_free(tok);
	return err;
}

int fs_answer_check_error(struct json_object *answer)
{
	struct json_object *msg;
	const char *text;
	int err;

	if (!json_object_object_get_ex(answer, FS_KEY_ERROR, &msg))
		return 0;
	if (!json_object_is_type(msg, json_type_string))
		return fs_bad_answer("flowsketchd's error answer has no message string");
	/* The daemon's own words, but through the same filter as every
	 * other string it sends. */
	err = fs_reply_string(answer, FS_KEY_ERROR, &text);
	if (err)
		return err;
	fprintf(stderr, "flowsketchd: %s\n", text);
	return -EREMOTEIO;
}
