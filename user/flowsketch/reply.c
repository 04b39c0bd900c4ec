// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* reply.c - typed fields of a daemon answer, found by dotted path. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "printable.h"
#include "reply.h"

#define FS_PATH_MAX 128

/* The command whose answer is being read, for the messages: the CLI asks
 * one thing at a time, so one file-wide name is enough.  A copy, as the
 * request it comes from is freed after each exchange. */
static char reply_cmd[16];

void fs_reply_context(const char *cmd)
{
	snprintf(reply_cmd, sizeof(reply_cmd), "%s", cmd ? cmd : "");
}

/* "flowsketchd's answer to status" or, before any request, "...answer";
 * returns -EPROTO. */
static int say_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int say_bad(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (reply_cmd[0])
		return fs_bad_answer("flowsketchd's answer to %s %s", reply_cmd, msg);
	return fs_bad_answer("flowsketchd's answer %s", msg);
}

/* The value at a dotted path, or NULL when a component is missing. */
static struct json_object *lookup(struct json_object *obj, const char *path)
{
	char buf[FS_PATH_MAX], *key, *save = NULL;

	if (strlen(path) >= sizeof(buf))
		return NULL;
	strcpy(buf, path);
	for (key = strtok_r(buf, ".", &save); key;
	     key = strtok_r(NULL, ".", &save)) {
		if (!json_object_is_type(obj, json_type_object) ||
		    !json_object_object_get_ex(obj, key, &obj))
			return NULL;
	}
	return obj;
}

static int bad_field(const char *path, const char *what)
{
	return say_bad("has no %s \"%s\"", what, path);
}

int fs_reply_u64(struct json_object *obj, const char *path, __u64 *out)
{
	struct json_object *v = lookup(obj, path);

	/* json-c keeps integers above INT64_MAX as uint64; get_int64 clamps
	 * those to INT64_MAX, so only real negatives read below zero. */
	if (!json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return bad_field(path, "non-negative integer");
	*out = json_object_get_uint64(v);
	return 0;
}

int fs_reply_u64_in(struct json_object *obj, const char *path, __u64 min,
		    __u64 max, __u64 *out)
{
	__u64 v;
	int err;

	err = fs_reply_u64(obj, path, &v);
	if (err)
		return err;
	if (v < min || v > max)
		return say_bad("has \"%s\" %llu, not %llu to %llu", path,
			       (unsigned long long)v, (unsigned long long)min,
			       (unsigned long long)max);
	*out = v;
	return 0;
}

int fs_reply_double(struct json_object *obj, const char *path, double *out)
{
	struct json_object *v = lookup(obj, path);

	if ((!json_object_is_type(v, json_type_double) &&
	     !json_object_is_type(v, json_type_int)) ||
	    !isfinite(json_object_get_double(v)))
		return bad_field(path, "number");
	*out = json_object_get_double(v);
	return 0;
}

int fs_reply_bool(struct json_object *obj, const char *path, bool *out)
{
	struct json_object *v = lookup(obj, path);

	if (!json_object_is_type(v, json_type_boolean))
		return bad_field(path, "boolean");
	*out = json_object_get_boolean(v);
	return 0;
}

int fs_reply_string(struct json_object *obj, const char *path,
		    const char **out)
{
	struct json_object *v = lookup(obj, path);
	size_t len, clean;
	char *copy;

	if (!json_object_is_type(v, json_type_string))
		return bad_field(path, "string");
	/* The whole length: a \u0000 inside would end the C string early
	 * and hide the rest. */
	len = (size_t)json_object_get_string_len(v);
	copy = malloc(len + 1);
	if (!copy)
		return fs_no_memory();
	memcpy(copy, json_object_get_string(v), len);
	clean = fs_printable(copy, len);
	/* Never fall back to the raw string: out of memory is an error. */
	if ((clean != len || memcmp(copy, json_object_get_string(v), len)) &&
	    !json_object_set_string_len(v, copy, (int)clean)) {
		free(copy);
		return fs_no_memory();
	}
	free(copy);
	*out = json_object_get_string(v);
	return 0;
}

int fs_reply_array(struct json_object *obj, const char *path,
		   struct json_object **out)
{
	struct json_object *v = lookup(obj, path);

	if (!json_object_is_type(v, json_type_array))
		return bad_field(path, "array");
	*out = v;
	return 0;
}

int fs_reply_object(struct json_object *obj, const char *path,
		    struct json_object **out)
{
	struct json_object *v = lookup(obj, path);

	if (!json_object_is_type(v, json_type_object))
		return bad_field(path, "object");
	*out = v;
	return 0;
}

int fs_reply_rows(struct json_object *obj, const char *path, size_t size,
		  fs_reply_row_fn *parse, void *ctx, void **rows, size_t *n)
{
	struct json_object *list = NULL;
	size_t i;
	int err;

	*rows = NULL;
	*n = 0;
	err = fs_reply_array(obj, path, &list);
	if (err)
		return err;
	/* One element at least: a table with no row still has an array. */
	*n = json_object_array_length(list);
	*rows = calloc(*n ? *n : 1, size);
	if (!*rows) {
		*n = 0;
		return fs_no_memory();
	}
	for (i = 0; i < *n; i++) {
		err = parse(json_object_array_get_idx(list, i),
			    (char *)*rows + i * size, ctx);
		if (err)
			return err;
	}
	return 0;
}

void fs_reply_print_json(struct json_object *obj)
{
	fs_print_json_text(stdout, json_object_to_json_string_ext(obj,
			   JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	putchar('\n');
}
