// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * request.c - parse and check one request (request.h).
 *
 * Checked strictly: an unknown command, an unknown key or a value of the
 * wrong type is an error, so a typo never silently returns the default
 * answer.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "base/jsoncheck.h"
#include "request.h"
#include "utf8.h"

/* Format the error (cut between characters when too long); -EINVAL. */
static int fail(char *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(char *err, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	vsnprintf(err, FSD_REQUEST_ERROR_MAX, fmt, ap);
	va_end(ap);
	len = strlen(err);
	err[fs_utf8_prefix(err, len, len)] = 0;
	return -EINVAL;
}

/* How much of s to quote in a message: at most 64 bytes, whole
 * characters (a request's strings are valid UTF-8 by now). */
static int quoted(const char *s)
{
	return (int)fs_utf8_prefix(s, strlen(s), 64);
}

/* Every key of req is "cmd" or one of allowed[] (NULL-terminated). */
static int check_keys(struct json_object *req, const char *cmd,
		      const char *const *allowed, char *err)
{
	json_object_object_foreach(req, key, val) {
		const char *const *a;

		(void)val;
		if (!strcmp(key, FS_KEY_CMD))
			continue;
		for (a = allowed; *a && strcmp(*a, key); a++)
			;
		if (!*a)
			return fail(err, "unknown key \"%.*s\" for cmd \"%s\"",
				    quoted(key), key, cmd);
	}
	return 0;
}

static int parse_seconds(struct json_object *req, struct fsd_request *r,
			 char *err)
{
	struct json_object *v;

	r->span = 0;
	if (!json_object_object_get_ex(req, FS_KEY_SPAN, &v))
		return 0;
	if ((!json_object_is_type(v, json_type_int) &&
	     !json_object_is_type(v, json_type_double)) ||
	    !(json_object_get_double(v) > 0) ||
	    !isfinite(json_object_get_double(v)))
		return fail(err, "\"span\" must be a positive number of seconds");
	r->span = json_object_get_double(v);
	return 0;
}

const char *fsd_direction_name(enum fsd_direction dir)
{
	return dir == FSD_DIR_IN ? "in" : dir == FSD_DIR_OUT ? "out" : "both";
}

static int parse_direction(struct json_object *req, struct fsd_request *r,
			   char *err)
{
	struct json_object *v;
	const char *s;

	r->direction = FSD_DIR_BOTH;
	if (!json_object_object_get_ex(req, FS_KEY_DIRECTION, &v))
		return 0;
	s = json_object_get_string(v);
	if (!json_object_is_type(v, json_type_string) ||
	    (strcmp(s, "in") && strcmp(s, "out") && strcmp(s, "both")))
		return fail(err, "\"direction\" must be \"in\", \"out\" or \"both\"");
	r->direction = !strcmp(s, "in") ? FSD_DIR_IN :
		       !strcmp(s, "out") ? FSD_DIR_OUT : FSD_DIR_BOTH;
	return 0;
}

/* flows, export, windows: "span" and "direction". */
static int parse_span(struct json_object *req, struct fsd_request *r,
		      char *err)
{
	return parse_seconds(req, r, err) ?: parse_direction(req, r, err);
}

/* "n", optional: how many entries an answer lists. */
static int parse_n(struct json_object *req, struct fsd_request *r, char *err)
{
	struct json_object *v;

	r->n = FSD_TOP_DEFAULT;
	if (!json_object_object_get_ex(req, FS_KEY_N, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 1 ||
	    json_object_get_int64(v) > FSD_TOP_MAX)
		return fail(err, "\"n\" must be an integer from 1 to %d",
			    FSD_TOP_MAX);
	r->n = (size_t)json_object_get_int64(v);
	return 0;
}

/* "sort", optional: the words allowed[] (NULL-terminated; the first is
 * the default), named by enum fsd_sort's order. */
static int parse_sort(struct json_object *req, struct fsd_request *r,
		      const char *const *allowed, const char *say, char *err)
{
	static const char *const names[] = { "packets", "bytes", "connections" };
	struct json_object *v;
	const char *s;
	size_t i;

	r->sort = FSD_SORT_PACKETS;
	if (!json_object_object_get_ex(req, FS_KEY_SORT, &v))
		return 0;
	s = json_object_get_string(v);
	for (; json_object_is_type(v, json_type_string) && *allowed; allowed++) {
		if (strcmp(s, *allowed))
			continue;
		for (i = 0; strcmp(names[i], s); i++)
			;
		r->sort = (enum fsd_sort)i;
		return 0;
	}
	return fail(err, "\"sort\" must be %s", say);
}

static int parse_top(struct json_object *req, struct fsd_request *r,
		     char *err)
{
	static const char *const sorts[] = { "packets", "bytes", "connections", NULL };
	int ret;

	if ((ret = parse_span(req, r, err)) || (ret = parse_n(req, r, err)) ||
	    (ret = parse_sort(req, r, sorts,
			      "\"packets\", \"bytes\" or \"connections\"", err)))
		return ret;
	/* A connection is keyed by who opened it (bpf/conn.bpf.c), not by
	 * the direction of its packets. */
	if (r->sort == FSD_SORT_CONNECTIONS && r->direction != FSD_DIR_BOTH)
		return fail(err, "\"direction\" does not apply to \"sort\": \"connections\" (a connection's source is the side that opened it)");
	return 0;
}

/* "by", required: what a detection query counts by (keyspec.h). */
static int parse_by(struct json_object *req, struct fsd_request *r, char *err)
{
	struct json_object *v;
	const char *s, *why;

	if (!json_object_object_get_ex(req, FS_KEY_BY, &v) ||
	    !json_object_is_type(v, json_type_string))
		return fail(err, "\"by\" must be a string such as \"src\", \"dst4/24\" or \"src6/48\"");
	s = json_object_get_string(v);
	if (fs_keyspec_parse(s, &r->by, &why))
		return fail(err, "\"by\" \"%.*s\": %s", quoted(s), s, why);
	return 0;
}

/* prefixes: "by" any key, "n", "sort" by packets or bytes, a span. */
static int parse_prefixes(struct json_object *req, struct fsd_request *r,
			  char *err)
{
	static const char *const sorts[] = { "packets", "bytes", NULL };

	return parse_span(req, r, err) ?: parse_n(req, r, err) ?:
	       parse_sort(req, r, sorts, "\"packets\" or \"bytes\"", err) ?:
	       parse_by(req, r, err);
}

/* spread: "by" a side's hosts (the sketch keeps hosts, not prefixes),
 * "n", a span. */
static int parse_spread(struct json_object *req, struct fsd_request *r,
			char *err)
{
	int ret = parse_span(req, r, err) ?: parse_n(req, r, err) ?:
		  parse_by(req, r, err);

	if (!ret && r->by.family)
		return fail(err, "\"by\" must be \"src\" or \"dst\" for spread (spreaders are hosts)");
	return ret;
}

/* "cidrs": a non-empty array of CIDR strings, each valid (blocklist.h);
 * an error names the first bad one by its index. */
static int parse_cidrs(struct json_object *req, struct fsd_request *r,
		       char *err)
{
	struct json_object *v;
	size_t i, n;

	if (!json_object_object_get_ex(req, FS_KEY_CIDRS, &v) ||
	    !json_object_is_type(v, json_type_array) ||
	    !(n = json_object_array_length(v)))
		return fail(err, "\"cidrs\" must be a non-empty array of CIDR strings");
	if (n > FSD_BLOCK_REQUEST_MAX)
		return fail(err, "at most %d CIDRs a request (block load sends a list in parts)",
			    FSD_BLOCK_REQUEST_MAX);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		const char *s, *why;

		if (!json_object_is_type(e, json_type_string))
			return fail(err, "cidrs[%zu] is not a string", i);
		s = json_object_get_string(e);
		if (fs_cidr_parse(s, &r->cidrs[i], &why))
			return fail(err, "cidrs[%zu] \"%.*s\": %s", i, quoted(s), s, why);
	}
	r->ncidrs = n;
	return 0;
}

/* "load": the token block_load_begin answered, 16 hex digits. */
static int parse_token(struct json_object *req, struct fsd_request *r,
		       char *err)
{
	struct json_object *v;
	const char *s;
	char *end;

	if (!json_object_object_get_ex(req, FS_KEY_LOAD, &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) != 16)
		return fail(err, "\"load\" must be the 16 hex digits block_load_begin answered");
	s = json_object_get_string(v);
	if (strspn(s, "0123456789abcdef") != 16)
		return fail(err, "\"load\" must be the 16 hex digits block_load_begin answered");
	r->load = strtoull(s, &end, 16);
	return 0;
}

/* block_add: "cidrs", and "for", optional: whole seconds. */
static int parse_block_add(struct json_object *req, struct fsd_request *r,
			   char *err)
{
	struct json_object *v;

	if (json_object_object_get_ex(req, FS_KEY_FOR, &v)) {
		if (!json_object_is_type(v, json_type_int) ||
		    json_object_get_int64(v) < 1 ||
		    json_object_get_int64(v) > FS_BLOCK_FOR_MAX)
			return fail(err, "\"for\" must be a whole number of seconds from 1 to %d (365 days)",
				    FS_BLOCK_FOR_MAX);
		r->for_sec = (__u32)json_object_get_int64(v);
	}
	return parse_cidrs(req, r, err);
}

/* block_list: "offset", optional. */
static int parse_offset(struct json_object *req, struct fsd_request *r,
			char *err)
{
	struct json_object *v;

	if (json_object_object_get_ex(req, FS_KEY_OFFSET, &v)) {
		if (!json_object_is_type(v, json_type_int) ||
		    json_object_get_int64(v) < 0)
			return fail(err, "\"offset\" must be a whole number, 0 or more");
		r->offset = (size_t)json_object_get_int64(v);
	}
	return 0;
}

/* block_load_begin: "total", the CIDRs that the parts will send. */
static int parse_total(struct json_object *req, struct fsd_request *r,
		       char *err)
{
	struct json_object *v;

	if (!json_object_object_get_ex(req, FS_KEY_TOTAL, &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 1 ||
	    json_object_get_int64(v) > FS_BLOCK_LOAD_MAX)
		return fail(err, "\"total\" must be the number of CIDRs to send, 1 to %d",
			    FS_BLOCK_LOAD_MAX);
	r->total = (size_t)json_object_get_int64(v);
	return 0;
}

/* block_load_part: the load's token, then its CIDRs. */
static int parse_part(struct json_object *req, struct fsd_request *r,
		      char *err)
{
	return parse_token(req, r, err) ?: parse_cidrs(req, r, err);
}

/* What request.c reads of each row of commands.h. */
typedef int parse_fn(struct json_object *req, struct fsd_request *r,
		     char *err);
#define SYNTAX(id, name, keys, parse, ...) { name, keys, parse },
static const struct {
	const char *name;
	const char *const *keys;
	parse_fn *parse;
} syntax[FSD_CMD_COUNT] = { FSD_COMMANDS(SYNTAX) };
#undef SYNTAX

/* "unknown cmd", listing every command: "a, b or c". */
static int unknown(const char *name, char *err)
{
	char list[FSD_REQUEST_ERROR_MAX] = "";
	size_t i, len = 0;

	for (i = 0; i < FSD_CMD_COUNT && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					!i ? "" : i + 1 < FSD_CMD_COUNT ? ", " : " or ",
					syntax[i].name);
	return fail(err, "unknown cmd \"%.*s\" (%s)", quoted(name), name, list);
}

static int parse_cmd(struct json_object *req, struct fsd_request *r,
		     char *err)
{
	struct json_object *cmd;
	const char *name;
	size_t i;

	if (!json_object_is_type(req, json_type_object))
		return fail(err, "request is not a JSON object");
	if (!json_object_object_get_ex(req, FS_KEY_CMD, &cmd) ||
	    !json_object_is_type(cmd, json_type_string))
		return fail(err, "request has no \"cmd\" string");
	name = json_object_get_string(cmd);
	for (i = 0; i < FSD_CMD_COUNT; i++) {
		if (strcmp(name, syntax[i].name))
			continue;
		r->cmd = (enum fsd_cmd)i;
		return check_keys(req, name, syntax[i].keys, err) ?:
		       (syntax[i].parse ? syntax[i].parse(req, r, err) : 0);
	}
	/* The daemon opens no file a request names (it would read any file
	 * as root and quote its lines): the CLI reads the list. */
	if (!strcmp(name, "block_load"))
		return fail(err, "block_load takes no file: the client reads the list and sends it (block_load_begin, block_load_part, block_load_commit)");
	return unknown(name, err);
}

int fsd_request_parse(const char *text, size_t len, struct fsd_request *r,
		      char err[FSD_REQUEST_ERROR_MAX])
{
	struct json_tokener *tok = NULL;
	struct json_object *req = NULL;
	struct fsd_json_fault fault;
	size_t start = 0;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = fsd_json_check(text, len, &fault);
	if (ret) {
		snprintf(err, FSD_REQUEST_ERROR_MAX, "%s", fault.msg);
		goto out;
	}
	/* Only an object is a request; said before json-c runs, which
	 * cannot tell where a bare number at the end of the text stops. */
	while (start < len && strchr(" \t\r\n", text[start]))
		start++;
	if (start == len || text[start] != '{') {
		ret = fail(err, "request is not a JSON object");
		goto out;
	}
	tok = json_tokener_new();
	if (!tok) {
		snprintf(err, FSD_REQUEST_ERROR_MAX, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	req = json_tokener_parse_ex(tok, text, (int)len);
	/* Plain JSON by now: json-c fails only on what jsoncheck does not
	 * know, such as running out of memory. */
	if (!req || json_tokener_get_error(tok) != json_tokener_success) {
		ret = fail(err, "request could not be parsed: %s",
			   json_tokener_error_desc(json_tokener_get_error(tok)));
		goto out;
	}
	ret = parse_cmd(req, r, err);
out:
	json_object_put(req);
	if (tok)	/* json-c 0.16 does not take NULL here */
		json_tokener_free(tok);
	return ret;
}
