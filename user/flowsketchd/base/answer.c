// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* answer.c - the pieces of an answer (answer.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "answer.h"
#include "keys.h"
#include "utf8.h"

struct json_object *fsd_answer_error(const char *fmt, ...)
{
	struct json_object *o = json_object_new_object();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	msg[fs_utf8_prefix(msg, strlen(msg), strlen(msg))] = 0;
	fsd_add_string(o, FS_KEY_ERROR, msg);
	return o;
}

void fsd_add_u64(struct json_object *o, const char *key, __u64 v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

void fsd_add_double(struct json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, json_object_new_double(v));
}

void fsd_add_string(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}
