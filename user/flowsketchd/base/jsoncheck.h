/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * jsoncheck.h - is a request exactly one RFC 8259 JSON value?
 *
 * json-c 0.16 parses more than JSON, even with JSON_TOKENER_STRICT:
 * single-quoted strings, NaN, "1.", raw control characters in strings,
 * invalid UTF-8, and a key given twice (the last one wins, silently), and
 * it stops at a NUL byte with a vague "unexpected end of data".  A request
 * that two readers could understand differently is refused here first,
 * with a sentence that names the problem and its byte offset; json-c then
 * only builds the tree of text known to be plain JSON.
 *
 * Pure: no daemon, no allocation, so that it can be fuzzed (fuzz/).
 */
#ifndef FLOWSKETCHD_JSONCHECK_H
#define FLOWSKETCHD_JSONCHECK_H

#include <stddef.h>
#include "protocol.h"

/* Objects and arrays nest at most this deep (requests are flat). */
#define FSD_JSON_DEPTH_MAX 16
/* Longest text checked: the daemon reads no longer request. */
#define FSD_JSON_TEXT_MAX FS_REQUEST_MAX

struct fsd_json_fault {
	char msg[256];		/* "request ...": one sentence, valid UTF-8 */
};

/*
 * 0 when text[0..len) is one JSON value, white space around it allowed,
 * with no NUL byte, valid UTF-8 only, no duplicate key in any object and
 * no deeper nesting than FSD_JSON_DEPTH_MAX.  Else -E2BIG (longer than
 * FSD_JSON_TEXT_MAX) or -EINVAL, with f->msg saying what and where.
 */
int fsd_json_check(const char *text, size_t len, struct fsd_json_fault *f);

#endif /* FLOWSKETCHD_JSONCHECK_H */
