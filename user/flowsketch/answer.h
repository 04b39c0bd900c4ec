/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * answer.h - the daemon's answer as text: is it one JSON object?
 *
 * Pure (no socket), so the fuzz target can feed it any bytes.  Each
 * function prints one line saying what is wrong and returns -EPROTO (or
 * -ENOMEM); the text never reaches the terminal as it came.
 */
#ifndef FLOWSKETCH_CLI_ANSWER_H
#define FLOWSKETCH_CLI_ANSWER_H

#include <stddef.h>
#include <json-c/json.h>

/* buf[0..len) is exactly one JSON object, white space around it allowed,
 * with no NUL byte and valid UTF-8 only: 0 with *out set, or -errno. */
int fs_answer_parse(const char *buf, size_t len, struct json_object **out);

/* {"error": "sentence"}: print the daemon's sentence (made printable) and
 * return -EREMOTEIO; -EPROTO when "error" is not a string; 0 otherwise. */
int fs_answer_check_error(struct json_object *answer);

#endif /* FLOWSKETCH_CLI_ANSWER_H */
