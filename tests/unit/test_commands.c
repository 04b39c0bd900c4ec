// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_commands.c - the daemon's command list (user/flowsketchd/service/commands.h)
 * against the protocol text and the request parser built from it.
 *
 * Oracles: user/lib/protocol.h's list of requests (every {"cmd":"NAME"}
 * it shows is a row, and every row is shown there), and the parser's
 * error texts as released before the list existed, written out here in
 * full: clients match on them, so they stay byte for byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "service/request.h"

#define NAME_HELP(id, name, keys, parse, where, need, handler, who, help) \
	{ name, who, help, keys },
static const struct {
	const char *name, *who, *help;
	const char *const *keys;
} rows[] = { FSD_COMMANDS(NAME_HELP) };

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static void every_row_is_described(void **state)
{
	size_t i;

	assert_int_equal(NROWS, FSD_CMD_COUNT);
	for (i = 0; i < NROWS; i++) {
		assert_true(rows[i].name && rows[i].name[0]);
		assert_true(rows[i].who && rows[i].who[0]);
		assert_non_null(rows[i].keys);
		assert_true(rows[i].help && strlen(rows[i].help) > 10);
		assert_null(strchr(rows[i].help, '\n'));
	}
}

static char *read_protocol(void)
{
	FILE *f = fopen("user/lib/protocol.h", "r");
	static char text[1 << 16];
	size_t n;

	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	return text;
}

/* Every {"cmd":"NAME" of protocol.h is a row, and every row is there. */
static void protocol_text_matches_rows(void **state)
{
	const char *text = read_protocol(), *p;
	char want[64];
	size_t i, shown = 0;

	for (p = text; (p = strstr(p, "{\"cmd\":\"")); p++) {
		const char *name = p + 8;
		size_t len = strcspn(name, "\"");

		for (i = 0; i < NROWS; i++)
			if (strlen(rows[i].name) == len &&
			    !strncmp(rows[i].name, name, len))
				break;
		if (i == NROWS)
			fail_msg("protocol.h shows cmd %.*s, which has no row",
				 (int)len, name);
		shown++;
	}
	assert_true(shown >= NROWS);
	for (i = 0; i < NROWS; i++) {
		snprintf(want, sizeof(want), "{\"cmd\":\"%s\"", rows[i].name);
		if (!strstr(text, want))
			fail_msg("cmd %s is not in protocol.h", rows[i].name);
	}
}

static void parse_error(const char *req, const char *want)
{
	char err[FSD_REQUEST_ERROR_MAX];
	struct fsd_request r;

	assert_int_not_equal(fsd_request_parse(req, strlen(req), &r, err), 0);
	assert_string_equal(err, want);
}

static void error_texts_unchanged(void **state)
{
	parse_error("{\"cmd\":\"nope\"}",
		    "unknown cmd \"nope\" (top, flows, export, windows, status, block_add, block_del, block_list, block_clear, block_load_begin, block_load_part, block_load_commit, policy, policy_reload, prefixes, spread or accuracy)");
	parse_error("{\"cmd\":\"flows\",\"n\":3}",
		    "unknown key \"n\" for cmd \"flows\"");
	parse_error("{\"cmd\":\"block_clear\",\"cidrs\":[]}",
		    "unknown key \"cidrs\" for cmd \"block_clear\"");
	parse_error("{\"cmd\":\"block_load\"}",
		    "block_load takes no file: the client reads the list and sends it (block_load_begin, block_load_part, block_load_commit)");
	parse_error("{\"cmd\":\"top\",\"n\":0}",
		    "\"n\" must be an integer from 1 to 10000");
	parse_error("{\"cmd\":\"block_load_part\",\"load\":\"0123456789abcdef\"}",
		    "\"cidrs\" must be a non-empty array of CIDR strings");
}

/* Each row's name parses to its own command. */
static void names_parse_to_their_row(void **state)
{
	static const char *const args[FSD_CMD_COUNT] = {
		[FSD_CMD_BLOCK_ADD] = ",\"cidrs\":[\"10.0.0.0/8\"]",
		[FSD_CMD_BLOCK_DEL] = ",\"cidrs\":[\"10.0.0.0/8\"]",
		[FSD_CMD_BLOCK_LOAD_BEGIN] = ",\"total\":2",
		[FSD_CMD_BLOCK_LOAD_PART] = ",\"load\":\"0123456789abcdef\",\"cidrs\":[\"::/0\"]",
		[FSD_CMD_BLOCK_LOAD_COMMIT] = ",\"load\":\"0123456789abcdef\"",
		[FSD_CMD_PREFIXES] = ",\"by\":\"src\"",
		[FSD_CMD_SPREAD] = ",\"by\":\"dst\"",
	};
	char err[FSD_REQUEST_ERROR_MAX], req[256];
	struct fsd_request r;
	size_t i;

	for (i = 0; i < NROWS; i++) {
		snprintf(req, sizeof(req), "{\"cmd\":\"%s\"%s}", rows[i].name,
			 args[i] ? args[i] : "");
		if (fsd_request_parse(req, strlen(req), &r, err))
			fail_msg("%s: %s", req, err);
		assert_int_equal(r.cmd, i);
	}
}

static void parses(const char *req, struct fsd_request *r)
{
	char err[FSD_REQUEST_ERROR_MAX];

	if (fsd_request_parse(req, strlen(req), r, err))
		fail_msg("%s: %s", req, err);
}

/* prefixes and spread: "by" read into its side, family and length (the
 * levels of prefix.h, written out here), the rest as top reads it, and
 * each wrong value named. */
static void detect_requests(void **state)
{
	struct fsd_request r;

	parses("{\"cmd\":\"prefixes\",\"by\":\"dst6/48\",\"n\":3,\"sort\":\"bytes\",\"span\":5,\"direction\":\"in\"}", &r);
	assert_int_equal(r.cmd, FSD_CMD_PREFIXES);
	assert_int_equal(r.by.side, FS_PREFIX_DST);
	assert_int_equal(r.by.family, FS_FAMILY_IPV6);
	assert_int_equal(r.by.len, 48);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.sort, FSD_SORT_BYTES);
	assert_int_equal(r.direction, FSD_DIR_IN);
	assert_true(r.span == 5);
	parses("{\"cmd\":\"prefixes\",\"by\":\"src4/8\"}", &r);
	assert_int_equal(r.by.side, FS_PREFIX_SRC);
	assert_int_equal(r.by.family, FS_FAMILY_IPV4);
	assert_int_equal(r.by.len, 8);
	assert_int_equal(r.n, 10);
	assert_int_equal(r.sort, FSD_SORT_PACKETS);
	assert_int_equal(r.direction, FSD_DIR_BOTH);
	parses("{\"cmd\":\"spread\",\"by\":\"src\",\"n\":10000}", &r);
	assert_int_equal(r.cmd, FSD_CMD_SPREAD);
	assert_int_equal(r.by.side, FS_PREFIX_SRC);
	assert_int_equal(r.by.family, 0);
	assert_int_equal(r.n, 10000);
	parse_error("{\"cmd\":\"prefixes\"}",
		    "\"by\" must be a string such as \"src\", \"dst4/24\" or \"src6/48\"");
	parse_error("{\"cmd\":\"prefixes\",\"by\":\"src4/12\"}",
		    "\"by\" \"src4/12\": IPv4 lengths are 8, 16, 24 and 32");
	parse_error("{\"cmd\":\"prefixes\",\"by\":\"src6/24\"}",
		    "\"by\" \"src6/24\": IPv6 lengths are 32, 48, 64 and 128");
	parse_error("{\"cmd\":\"prefixes\",\"by\":\"from\"}",
		    "\"by\" \"from\": does not start with src or dst");
	parse_error("{\"cmd\":\"prefixes\",\"by\":\"src\",\"sort\":\"connections\"}",
		    "\"sort\" must be \"packets\" or \"bytes\"");
	parse_error("{\"cmd\":\"prefixes\",\"by\":\"src\",\"n\":0}",
		    "\"n\" must be an integer from 1 to 10000");
	parse_error("{\"cmd\":\"spread\",\"by\":\"src4/24\"}",
		    "\"by\" must be \"src\" or \"dst\" for spread (spreaders are hosts)");
	parse_error("{\"cmd\":\"spread\",\"by\":\"src\",\"sort\":\"bytes\"}",
		    "unknown key \"sort\" for cmd \"spread\"");
	parse_error("{\"cmd\":\"spread\",\"by\":\"dst\",\"direction\":\"up\"}",
		    "\"direction\" must be \"in\", \"out\" or \"both\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_row_is_described),
		cmocka_unit_test(protocol_text_matches_rows),
		cmocka_unit_test(error_texts_unchanged),
		cmocka_unit_test(names_parse_to_their_row),
		cmocka_unit_test(detect_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
