/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * answer.h - the pieces every answer of protocol.h is made of.
 *
 * At the bottom of the request service: the modules that answer a command
 * (query.c, status.c, export.c, blocklist.c, blockreq.c) and the server
 * that sends the answers build them from these, and none of them has to
 * include another to say "error".
 */
#ifndef FLOWSKETCHD_ANSWER_H
#define FLOWSKETCHD_ANSWER_H

#include <linux/types.h>

struct json_object;

/* {"error": one sentence}: fmt's text, cut between characters to at most
 * 511 bytes (the CLI refuses an answer that is not valid UTF-8). */
struct json_object *fsd_answer_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* o[key] = v, the three kinds of member answers carry. */
void fsd_add_u64(struct json_object *o, const char *key, __u64 v);
void fsd_add_double(struct json_object *o, const char *key, double v);
void fsd_add_string(struct json_object *o, const char *key, const char *v);

#endif /* FLOWSKETCHD_ANSWER_H */
