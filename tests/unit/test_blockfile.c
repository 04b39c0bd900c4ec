// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_blockfile.c - the daemon's list file (blockfile.h): what is
 * written reads back the same, entry by entry (times and origins too); a
 * file of one CIDR a line reads as manual entries kept for good; CRLF
 * files read; a NUL byte, a long line, a bad field or more than max
 * distinct entries are refused naming the line; repeats do not count
 * against max, and many of them read fast (one sort per max lines).
 * The oracle is the texts written here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <cmocka.h>

#include "blocklist/blockfile.h"

static char dir[] = "/tmp/test_blockfile.XXXXXX";

static const char *path_of(const char *name)
{
	static char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

/* Write len bytes of text to name: its path. */
static const char *put(const char *name, const char *text, size_t len)
{
	const char *p = path_of(name);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
	return p;
}

static int read_text(const char *text, size_t len, unsigned int max,
		     struct fsd_block_origins *o, struct fsd_block_entry **e,
		     size_t *n, char *msg)
{
	return fsd_blockfile_read(put("list", text, len), max, o, e, n, msg, 256);
}

static void test_round_trip(void **state)
{
	struct fsd_block_origins o = { 0 }, o2 = { 0 };
	struct fsd_block_entry in[3] = { 0 }, *out;
	const char *why;
	char msg[256];
	size_t n, i;

	(void)state;
	/* In the file's order (sorted): 10.0.0.0/8, 198.51.100.7/32, 2001:db8::/32. */
	assert_int_equal(fs_cidr_parse("10.0.0.0/8", &in[0].c, &why), 0);
	assert_int_equal(fs_cidr_parse("198.51.100.7", &in[1].c, &why), 0);
	assert_int_equal(fs_cidr_parse("2001:db8::/32", &in[2].c, &why), 0);
	in[0].added_at = 1796289499;
	in[1].added_at = 1796289500;
	in[1].expires_at = 1796290100;
	in[2].added_at = 1796289501;
	in[2].expires_at = 1796293101;
	in[2].origin = (__u32)fsd_block_origin_intern(&o, "block src6/32 if packets > 50k/s for 3s ban 1h");
	assert_int_equal(in[2].origin, 1);
	assert_int_equal(fsd_blockfile_write(path_of("rt"), in, 3, &o), 0);
	assert_int_equal(fsd_blockfile_read(path_of("rt"), 10, &o2, &out, &n, msg, sizeof(msg)), 0);
	assert_int_equal(n, 3);
	for (i = 0; i < 3; i++) {
		assert_true(fs_cidr_equal(&out[i].c, &in[i].c));
		assert_int_equal(out[i].added_at, in[i].added_at);
		assert_int_equal(out[i].expires_at, in[i].expires_at);
		assert_int_equal(out[i].id, 0);
		assert_string_equal(fsd_block_origin_text(&o2, out[i].origin),
				    fsd_block_origin_text(&o, in[i].origin));
	}
	assert_string_equal(fsd_block_origin_text(&o2, out[0].origin), "manual");
	free(out);
	fsd_block_origins_free(&o);
	fsd_block_origins_free(&o2);
}

static void test_old_format_and_crlf(void **state)
{
	static const char text[] = "# an old list\r\n10.1.0.0/16\r\n\r\n  fd00::/8  # note\n10.1.0.0/16\n";
	struct fsd_block_origins o = { 0 };
	struct fsd_block_entry *e;
	char msg[256];
	size_t n, i;

	(void)state;
	assert_int_equal(read_text(text, sizeof(text) - 1, 10, &o, &e, &n, msg), 0);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		assert_int_equal(e[i].added_at, 0);
		assert_int_equal(e[i].expires_at, 0);
		assert_int_equal(e[i].origin, 0);
	}
	free(e);
	fsd_block_origins_free(&o);
}

static void test_refused(void **state)
{
	static const struct {
		const char *text;
		size_t len;
		const char *line;	/* ":N:" the message names */
	} bads[] = {
		{ "10.0.0.1\n\0junk\n", 15, ":2:" },
		{ "10.0.0.1\n10.0.0.2\0", 18, ":2:" },
		{ "10.0.0.1\rgarbage\n", 17, ":1:" },
		{ "10.0.0.1 expires=soon\n", 22, ":1:" },
		{ "10.0.0.1 added=1 added=2\n", 25, ":1:" },
		{ "10.0.0.1 added=0\n", 17, ":1:" },
		{ "10.0.0.1 bogus\n", 15, ":1:" },
		{ "10.0.0.1/33\n", 12, ":1:" },
		{ "10.0.0.1 by #rule\n", 18, NULL },	/* '#' starts a comment: "by" empty */
	};
	char msg[256], longl[400];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct fsd_block_origins o = { 0 };
		struct fsd_block_entry *e = NULL;
		int err = read_text(bads[i].text, bads[i].len, 10, &o, &e, &n, msg);

		if (!bads[i].line) {
			/* "by" with nothing after it, the comment cut: refused. */
			assert_int_equal(err, -EINVAL);
		} else if (err != -EINVAL || !strstr(msg, bads[i].line)) {
			print_error("bad %zu taken or misnamed: %d %s\n", i, err, msg);
			fail();
		}
		assert_null(e);
		fsd_block_origins_free(&o);
	}
	memset(longl, 'x', sizeof(longl));
	memcpy(longl, "10.0.0.1 by ", 12);
	longl[sizeof(longl) - 1] = '\n';
	{
		struct fsd_block_origins o = { 0 };
		struct fsd_block_entry *e = NULL;

		assert_int_equal(read_text(longl, sizeof(longl), 10, &o, &e, &n, msg), -EINVAL);
		assert_non_null(strstr(msg, ":1: line longer than 256 bytes"));
	}
}

/* max distinct entries read; one more is -E2BIG; repeats, as many as the
 * file's size cap lets in (about 19 a distinct entry, at 13 bytes a line),
 * do not count against max. */
static void test_max_and_repeats(void **state)
{
	const unsigned int max = 1000;
	size_t cap = 16 * 22000, len = 0, n, i;
	char *text = malloc(cap), msg[256];
	struct fsd_block_origins o = { 0 };
	struct fsd_block_entry *e;

	(void)state;
	assert_non_null(text);
	for (i = 0; i < max; i++)
		len += (size_t)sprintf(text + len, "10.%zu.%zu.0/24\n", i / 256, i % 256);
	assert_int_equal(read_text(text, len, max, &o, &e, &n, msg), 0);
	assert_int_equal(n, max);
	free(e);
	for (i = 0; i < 15000; i++)
		len += (size_t)sprintf(text + len, "10.0.%zu.0/24\n", i % 256);
	assert_int_equal(read_text(text, len, max, &o, &e, &n, msg), 0);
	assert_int_equal(n, max);
	free(e);
	len += (size_t)sprintf(text + len, "192.0.2.0/24\n");
	assert_int_equal(read_text(text, len, max, &o, &e, &n, msg), -E2BIG);
	assert_non_null(strstr(msg, "more than 1000 entries"));
	free(text);
	fsd_block_origins_free(&o);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_old_format_and_crlf),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_max_and_repeats),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
